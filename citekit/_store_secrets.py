"""What never reaches the log file: API keys, key-like fields and token-shaped strings."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._store_requests import canonical_json

#: Environment variables whose values never reach the file, whatever a caller passes.
KEY_ENVS = ("MAGISTERIUM_API_KEY", "MARITACA_API_KEY", "GPTBOTS_API_KEY")
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
    if tokens:
        text = _TOKEN_RE.sub(r"\1\2***", text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
            escaped = json.dumps(secret)[1:-1]
            if escaped != secret:
                text = text.replace(escaped, "***")
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
