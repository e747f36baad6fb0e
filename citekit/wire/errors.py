"""Reading a provider's error response: its message, request id and ``Retry-After``.

The body shape is undocumented for some providers, so the message is looked for in order:
``error.message``, ``message``, ``msg``, ``detail`` (FastAPI), then the raw text; an HTML page
(a proxy's error page) is reported as such. The status then picks the class in the error tree.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ..core.errors import (
    AuthenticationError,
    BadRequestError,
    InsufficientCreditsError,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ServerError,
    TokenLimitError,
)
from ..core.fields import text_or_none
from ..core.names import find_provider
from ..core.secrets import scrubber

__all__ = [
    "error_message",
    "generic_error",
    "parse_retry_after",
    "request_id",
    "retry_wait",
    "should_retry_header",
]


def request_id(headers: Mapping[str, str]) -> str | None:
    for name in ("x-request-id", "request-id", "x-trace-id", "cf-ray"):
        value = headers.get(name)
        if value:
            return str(value)
    return None


_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_RE = re.compile(r"\s+")


def error_message(
    body: bytes, content_type: str, *, secrets: Iterable[str] = ()
) -> tuple[Any, str]:
    """The provider's message: ``error.message``, ``message``, ``msg``, ``detail``, raw text;
    ``secrets`` are scrubbed out of it before it is shortened (a cut key would leave a part)."""
    clean = scrubber(secrets)
    text = body.decode("utf-8", "replace")
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
        parsed = None
    if isinstance(parsed, dict):
        # Only strings are messages: an object or a number there says nothing to a reader.
        err = parsed.get("error")
        if isinstance(err, dict) and text_or_none(err.get("message")):
            return parsed, clean(err["message"])
        if isinstance(err, str) and err:
            return parsed, clean(err)
        for key in ("message", "msg", "detail"):
            value = parsed.get(key)
            if isinstance(value, str) and value:
                return parsed, clean(value)
            if isinstance(value, list) and value:  # FastAPI validation errors
                found = "; ".join(filter(None, (_fastapi_item(v) for v in value[:20])))
                if found:
                    return parsed, clean(found)[:2000]
    if "html" in content_type or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        plain = title.group(1) if title else _TAG_RE.sub(" ", text)
        plain = clean(_SPACE_RE.sub(" ", plain).strip())[:200]
        return parsed, f"an HTML page instead of an API response ({plain or 'empty'})"
    plain = clean(_SPACE_RE.sub(" ", text).strip())
    return parsed, plain[:500] or "(empty body)"


def _fastapi_item(item: Any) -> str:
    """``"loc.path: msg"`` of one FastAPI validation error (``""`` when it has no message)."""
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return ""
    msg = text_or_none(item.get("msg")) or ""
    loc = item.get("loc")
    parts = loc if isinstance(loc, list) else []
    where = ".".join(p for p in (text_or_none(p, numbers=True) for p in parts) if p and p != "body")
    return f"{where}: {msg}" if where and msg else msg


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date (RFC 9110 10.2.3); None when it
    is neither (never negative, never raises)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return max((when - datetime.now(UTC)).total_seconds(), 0.0)
    except OverflowError:  # pragma: no cover - a date this far off cannot be subtracted
        return None


def retry_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds a reply asks to wait before a retry: ``retry-after-ms`` (milliseconds, as the
    openai SDK reads it), else ``Retry-After``; None when neither says a usable number.

    The caller caps it (``RetryPolicy.max_retry_after``), whichever header it came from.
    """
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(value, 0.0)
    return parse_retry_after(headers.get("retry-after"))


def should_retry_header(headers: Mapping[str, str]) -> bool | None:
    """A reply's ``x-should-retry``: True for ``true``, False for ``false``, else None."""
    value = (headers.get("x-should-retry") or "").strip().lower()
    return True if value == "true" else False if value == "false" else None


def generic_error(
    provider: str,
    status: int | None,
    message: str,
    request_id: str | None,
    *,
    code: int | str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """Map an HTTP status (and well-known messages) to the error tree."""
    low = message.lower()
    kw: dict[str, Any] = {
        "provider": provider,
        "status": status,
        "code": code,
        "request_id": request_id,
        "retry_after": retry_after,
    }
    entry = find_provider(provider)
    env = entry.api_key_env if entry is not None else "the provider's API key variable"
    if status == 429:
        return RateLimitError(
            message,
            hint="Wait and retry, lower the request rate, or raise max_retries=",
            **kw,
        )
    if status in (401, 403):
        # Magisterium documents three 401s: "Incorrect API key provided", "Invalid billing",
        # "Tier not found". All refuse the key; the hint says which fix each one needs.
        if "billing" in low:
            hint = "The key was refused over billing: check the billing of the key's account"
            return AuthenticationError(message, hint=hint, **kw)
        if "tier" in low:
            hint = "The key's plan (tier) was not found: check the plan of the key's account"
            return AuthenticationError(message, hint=hint, **kw)
        if "credit" in low:
            return InsufficientCreditsError(
                message, hint="Top up the credits of this API key's account", **kw
            )
        return AuthenticationError(
            message, hint=f"Check the key in {env} or the api_key= you passed", **kw
        )
    if status == 402:
        return InsufficientCreditsError(message, **kw)
    if status == 404:
        return NotFoundError(message, hint="Check base_url= and the model name", **kw)
    if status is not None and status >= 500:
        return ServerError(message, **kw)
    if status in (400, 413, 422):
        if "token limit" in low or "too long" in low or "context length" in low:
            return TokenLimitError(message, hint="Shorten the messages or lower max_tokens=", **kw)
        return BadRequestError(message, **kw)
    return ProviderError(message, **kw)
