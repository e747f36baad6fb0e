"""The parsers of each provider, by name: what rebuilds an ``Answer`` from saved JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..core.models import Answer, StreamEvent
from ..core.names import PROVIDERS

__all__ = ["Accumulator", "ProviderSpec", "get_spec"]


class Accumulator(Protocol):
    @property
    def finished(self) -> bool: ...
    def feed(self, chunk: Any) -> list[StreamEvent]: ...
    def answer(self, *, partial: bool = False) -> Answer: ...


class ProviderSpec(Protocol):
    name: str

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer: ...
    def new_accumulator(self, *, question: str | None = None) -> Accumulator: ...


class _ChatSpec:
    def __init__(self, name: str) -> None:
        self.name = name

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer:
        from ..wire.openai_compat import parse_chat_completion

        return parse_chat_completion(data, provider=self.name, question=question)

    def new_accumulator(self, *, question: str | None = None) -> Accumulator:
        from ..wire.openai_compat import ChatAccumulator

        return ChatAccumulator(provider=self.name, question=question)


def get_spec(provider: str) -> ProviderSpec:
    """The parsers of ``provider`` ("magisterium", "maritaca" or "gptbots")."""
    if provider in ("magisterium", "maritaca"):
        return _ChatSpec(provider)
    if provider == "gptbots":
        from ..wire.gptbots import SPEC

        return SPEC
    raise ValueError(f"unknown provider {provider!r}; use one of {', '.join(PROVIDERS)}")
