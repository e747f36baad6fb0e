"""GPTBots error envelopes: ``{code, message}`` (sometimes ``msg``), with HTTP 200 or an
error status; an envelope is an error only when its code is 10000 or more (stream events use
small codes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import (
    AuthenticationError,
    BadRequestError,
    InsufficientCreditsError,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ServerError,
    TokenLimitError,
    UnsupportedFeatureError,
)
from ...core.fields import int_or_none, text_or_none

__all__ = ["NO_REFERENCES_CODE", "check_body", "classify", "error_from_code"]

_CODES: dict[int, tuple[type[ProviderError], str | None]] = {
    40000: (BadRequestError, "Check the request parameters (message_id, user_id, messages)"),
    40379: (InsufficientCreditsError, "Top up the GPTBots account's credits"),
    20022: (InsufficientCreditsError, "Top up the GPTBots account's credits"),
    200222: (UnsupportedFeatureError, "This agent does not offer knowledge references"),
    20055: (UnsupportedFeatureError, "Enable this API in the agent's settings"),
    40364: (UnsupportedFeatureError, "The agent's model does not take image input"),
    40378: (NotFoundError, "The agent was deleted"),
    40356: (NotFoundError, "Omit conversation_id= to start a new conversation"),
    40358: (NotFoundError, "The conversation belongs to another agent or user"),
    40127: (AuthenticationError, "Check the key in GPTBOTS_API_KEY or the api_key= you passed"),
    20040: (TokenLimitError, "Shorten the question"),
    50000: (ServerError, None),
}
NO_REFERENCES_CODE = 200222


def error_from_code(
    code: int, message: str, *, status: int | None, request_id: str | None
) -> ProviderError:
    """The typed error for a GPTBots ``{code, message}`` envelope."""
    cls, hint = _CODES.get(code, (ProviderError, None))
    low = message.lower()
    if cls is ProviderError and ("rate" in low or "too many" in low or "frequen" in low):
        return RateLimitError(
            message,
            provider="gptbots",
            status=status,
            code=code,
            request_id=request_id,
            hint="The free plan allows 3 requests per minute",
        )
    return cls(
        message, provider="gptbots", status=status, code=code, request_id=request_id, hint=hint
    )


def _envelope(data: Any) -> tuple[int, str] | None:
    """``(code, message)`` when ``data`` is an error envelope (event codes are below 10000)."""
    if not isinstance(data, Mapping):
        return None
    code = int_or_none(data.get("code"), lo=10000, hi=2**63 - 1)
    if code is None or isinstance(data.get("code"), float):
        return None
    message = text_or_none(data.get("message")) or text_or_none(data.get("msg"))
    return code, message or f"error code {code}"


def classify(
    status: int | None, parsed: Any, message: str, request_id: str | None
) -> ProviderError | None:
    found = _envelope(parsed)
    if found is None or status == 429:
        return None
    return error_from_code(found[0], found[1], status=status, request_id=request_id)


def check_body(data: Any, request_id: str | None) -> ProviderError | None:
    found = _envelope(data)
    if found is None:
        return None
    return error_from_code(found[0], found[1], status=200, request_id=request_id)
