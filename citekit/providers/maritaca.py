"""Maritaca AI (Sabiá models): OpenAI-style chat completions with the full parameter set."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from ..core.errors import ResponseFormatError
from ..core.models import parse_created
from ..wire.flow import RequestSpec, fetch_json
from ._chat import ChatClient

__all__ = ["Maritaca", "MaritacaModel", "Model"]

#: Provider tools that run server side and need a non-streaming request.
_NON_STREAMING_EXTRAS = ("web_search", "code_execution", "data_ocean")
_SERVICE_TIERS = ("flex", "default", "auto")


@dataclass(frozen=True, slots=True)
class MaritacaModel:
    """One entry of ``GET /models``."""

    id: str
    created: datetime | None = None
    owned_by: str | None = None
    context_length: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


#: The name before 0.2.
Model = MaritacaModel


def parse_models(data: Any) -> list[MaritacaModel]:
    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise ResponseFormatError("maritaca sent a model list without a 'data' array")
    models = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            continue
        ctx = item.get("context_length")
        models.append(
            MaritacaModel(
                id=item["id"],
                created=parse_created(item.get("created")),
                owned_by=item.get("owned_by"),
                context_length=ctx if isinstance(ctx, int) else None,
                raw=dict(item),
            )
        )
    return models


class Maritaca(ChatClient):
    """Client for Maritaca AI's Sabiá models (``MARITACA_API_KEY``).

    The default model is ``MARITACA_MODEL`` or ``sabia-4``; ``models()`` lists what the
    server offers. Provider extras (``service_tier="flex"``, ``web_search=True`` ...) go in
    ``extra_body=``.
    """

    name: ClassVar[str] = "maritaca"
    default_base_url: ClassVar[str] = "https://chat.maritaca.ai/api"
    api_key_env: ClassVar[str] = "MARITACA_API_KEY"
    default_model: ClassVar[str | None] = "sabia-4"
    model_env: ClassVar[str | None] = "MARITACA_MODEL"

    def _provider_body(self, body: dict[str, Any], options: dict[str, Any]) -> None:
        super()._provider_body(body, options)
        tier = body.get("service_tier")
        if tier is not None and tier not in _SERVICE_TIERS:
            raise ValueError(
                f"service_tier={tier!r} is not allowed; use one of {', '.join(_SERVICE_TIERS)}"
            )
        for name in _NON_STREAMING_EXTRAS:
            value = body.get(name)
            if value is None:
                continue
            if not isinstance(value, bool):
                raise ValueError(f"{name}={value!r} must be True or False")
            if value and body.get("stream"):
                raise ValueError(
                    f"{name}=True needs stream=False (Maritaca refuses it in a stream)"
                )

    def models(self) -> list[MaritacaModel]:
        """The models this key can use (``GET /models``)."""
        return self._run(fetch_json(self._wire, _MODELS, parse_models))

    async def amodels(self) -> list[MaritacaModel]:
        """Async twin of ``models``."""
        return await self._arun(fetch_json(self._wire, _MODELS, parse_models))


_MODELS = RequestSpec("GET", "/models")
