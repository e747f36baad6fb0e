"""Request bodies as the log sees them: canonical JSON, the cache key, the question asked,
and what never reaches the file (API keys, key-like fields, token-shaped strings)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.secrets import KEY_ENVS as KEY_ENVS
from ..core.secrets import scrub

#: Body fields that do not change the answer (a streamed and a blocking call share a row).
_TRANSPORT_FIELDS = ("stream", "stream_options", "response_mode")


#: ``json.dumps``'s encoder for these options, made once (``dumps`` makes one per call).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode


def canonical_json(body: Any) -> str:
    """``body`` as compact JSON with sorted keys: equal requests give equal text."""
    return _CANONICAL(body)


def request_key(provider: str, body: Any, base_url: str | None = None) -> str:
    """The cache key: a hash of provider, base URL and canonical body (transport fields out)."""
    if isinstance(body, Mapping):
        body = {k: v for k, v in body.items() if k not in _TRANSPORT_FIELDS}
    text = canonical_json({"provider": provider, "base_url": base_url, "body": body})
    return hashlib.sha256(text.encode()).hexdigest()


def question_of(request: Mapping[str, Any]) -> str | None:
    """The last user message of a chat body, or a GPTBots body's ``question``."""
    messages = request.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role", "user") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else None
    question = request.get("question")
    return question if isinstance(question, str) else None


_SECRET_FIELDS = frozenset(
    {"authorization", "api_key", "apikey", "api-key", "x-api-key", "password", "secret"}
)


def _scrub(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: "***" if str(k).lower() in _SECRET_FIELDS else _scrub(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


#: ``Bearer <token>`` / ``Key <token>`` as an Authorization value would carry it.
_TOKEN_RE = re.compile(r"(?i)\b(bearer|key)(\s+)(?=[^\s\d]*\d)[A-Za-z0-9._~+/=-]{8,}")


def redacted(text: str | None, secrets: Sequence[str], *, tokens: bool = False) -> str | None:
    """``text`` without the secrets; with ``tokens``, without anything shaped like one.

    Only request bodies and error messages are searched for token shapes: answer text is
    prose, where "key" and "bearer" are words.
    """
    if text is None:
        return None
    text = scrub(text, secrets)
    if tokens:
        text = _TOKEN_RE.sub(r"\1\2***", text)
    return text


def dumps(value: Any, secrets: Sequence[str], *, request: bool = False) -> str | None:
    """JSON text for a column: a request is walked for key-like fields and token shapes; a
    response (large, and written by the provider) only has the known secrets replaced."""
    if value is None:
        return None
    if request:
        return redacted(canonical_json(_scrub(value)), secrets, tokens=True)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return redacted(text, secrets)
