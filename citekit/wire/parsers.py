"""The parsers of each provider, by name: what rebuilds an ``Answer`` from saved JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..core.models import Answer, StreamEvent
from ..core.names import ENTRIES, unknown_provider
from .gptbots import SPEC as GPTBOTS_SPEC
from .openai_compat import SPECS as CHAT_SPECS

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


def _specs(*specs: ProviderSpec) -> dict[str, ProviderSpec]:
    found = {spec.name: spec for spec in specs}
    missing = [entry.name for entry in ENTRIES if entry.name not in found]
    if missing or len(found) != len(specs):  # pragma: no cover - checked at import
        raise RuntimeError(f"providers without exactly one parser spec: {missing or specs}")
    return found


#: provider name -> its parsers, as each wire module declares them.
_SPECS = _specs(*CHAT_SPECS, GPTBOTS_SPEC)


def get_spec(provider: str) -> ProviderSpec:
    """The parsers of ``provider`` ("magisterium", "maritaca" or "gptbots")."""
    spec = _SPECS.get(provider) if isinstance(provider, str) else None
    if spec is None:
        raise unknown_provider(provider)
    return spec
