"""Request bodies as the log sees them: canonical JSON, the cache key, the question asked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: Body fields that do not change the answer (a streamed and a blocking call share a row).
_TRANSPORT_FIELDS = ("stream", "stream_options", "response_mode")


def canonical_json(body: Any) -> str:
    """``body`` as compact JSON with sorted keys: equal requests give equal text."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


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
