"""Error bodies in each provider's own shape, with the messages their documentation gives.

* Magisterium: ``{"error": {"message", "type", "code"}}`` (OpenAI style).
* Maritaca: FastAPI's ``{"detail": "..."}``.
* GPTBots: ``{"code": int, "message": str}``, often with HTTP 200.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from ._samples import ProviderName

__all__ = [
    "GPTBOTS_MESSAGES",
    "HTML_ERROR_PAGE",
    "error_body",
    "gptbots_body",
]

#: The texts GPTBots' documentation gives for its error codes.
GPTBOTS_MESSAGES: dict[int, str] = {
    40000: "invalid parameter",
    40379: "insufficient credits",
    200222: "the agent does not support this feature",
    40378: "agent deleted",
    20055: "API disabled",
    40127: "developer authentication failed",
    40356: "conversation does not exist",
    40358: "conversation does not belong to this agent/user",
    40364: "model lacks image input",
    50000: "internal error",
    20040: "question too long",
    20022: "insufficient credits",
}

_MAGISTERIUM: dict[int, tuple[str, str, str]] = {
    400: ("Token limit exceeded", "invalid_request_error", "token_limit_exceeded"),
    401: ("Incorrect API key provided", "authentication_error", "invalid_api_key"),
    429: ("Too many requests", "rate_limit_error", "rate_limit_exceeded"),
    500: ("Internal server error", "server_error", "internal_error"),
}

_MARITACA: dict[int, str] = {
    400: "Bad request",
    401: "Invalid API key",
    429: "Rate limit exceeded. Please try again later.",
    500: "Internal server error",
}

_GPTBOTS_CODES: dict[int, int] = {400: 40000, 401: 40127, 500: 50000}

HTML_ERROR_PAGE = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def gptbots_body(code: int, message: str | None = None) -> dict[str, Any]:
    """``{"code", "message"}`` with the documented text for ``code`` unless ``message`` is given."""
    return {"code": code, "message": message or GPTBOTS_MESSAGES.get(code, "error")}


def error_body(provider: ProviderName, status: int, message: str | None = None) -> dict[str, Any]:
    """The body ``provider`` sends with HTTP ``status``; ``message`` overrides the usual text."""
    if provider == "magisterium":
        default, kind, name = _MAGISTERIUM.get(
            status, (_phrase(status), "invalid_request_error" if status < 500 else "api_error", "")
        )
        return {"error": {"message": message or default, "type": kind, "code": name or str(status)}}
    if provider == "maritaca":
        return {"detail": message or _MARITACA.get(status, _phrase(status))}
    code = _GPTBOTS_CODES.get(status, status)
    return gptbots_body(code, message or GPTBOTS_MESSAGES.get(code) or _phrase(status))
