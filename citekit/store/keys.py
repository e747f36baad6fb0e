"""Request bodies as the log sees them: canonical JSON, the cache key, the question asked,
and what never reaches the file (API keys, key-like fields, token-shaped strings)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

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


class _Differs:
    """A float msgspec writes otherwise than ``json.dumps``: equal to nothing."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


_DIFFERS = _Differs()


def _float_as_written(literal: str) -> Any:
    """A float literal of msgspec's output, as read back: the float when ``json.dumps`` writes
    it so too (``repr``), else a value equal to nothing (``1e-05`` is ``0.00001`` there)."""
    value = float(literal)
    return value if repr(value) == literal else _DIFFERS


def _refuse(value: Any) -> Any:
    raise TypeError  # a type msgspec does not know: ``json.dumps`` writes its ``str``


_FAST_ENCODE = msgspec.json.Encoder(order="sorted", enc_hook=_refuse).encode
_READ_BACK = msgspec.json.Decoder(float_hook=_float_as_written).decode


def canonical_bytes(body: Any) -> bytes:
    """``canonical_json(body)`` as UTF-8, written by msgspec where that gives the same bytes.

    msgspec writes the same text as ``json.dumps`` for JSON values whose dicts have string
    keys (sorted the same way, strings escaped the same way), except some floats; it writes
    other types its own way (sets as arrays, bytes as base64, dates in ISO form, NaN as
    ``null``). Its text is taken when reading it back gives a value equal to ``body``, every
    float written as ``repr`` writes it: what was a set, a tuple, bytes, a date, an int key or
    NaN reads back as something else, and ``json.dumps`` writes it.
    """
    try:
        data = _FAST_ENCODE(body)
        if _READ_BACK(data) == body:
            return data
    except Exception:  # what msgspec cannot write or read back (a surrogate, deep nesting)
        pass
    return _CANONICAL(body).encode()


def request_key(provider: str, body: Any, base_url: str | None = None) -> str:
    """The cache key: a hash of provider, base URL and canonical body (transport fields out)."""
    if isinstance(body, Mapping):
        body = {k: v for k, v in body.items() if k not in _TRANSPORT_FIELDS}
    data = canonical_bytes({"provider": provider, "base_url": base_url, "body": body})
    return hashlib.sha256(data).hexdigest()


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
    """A request's value with key-like fields masked and token shapes out of its strings."""
    if isinstance(value, Mapping):
        return dict(_field(k, v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return _tokens(value)


def _field(name: Any, value: Any) -> tuple[Any, Any]:
    """One field of a mapping, ``_scrub``-bed: masked whole when its name is a key's."""
    return _tokens(name), "***" if str(name).lower() in _SECRET_FIELDS else _scrub(value)


def _scrub_request(request: Any) -> Any:
    """``_scrub`` of a request body, but what the user typed (a chat message's content, the
    text of its parts) is kept as typed: it is prose, where "key" is a word, and ``ask -c``
    sends it again. API keys are taken out of it like out of everything else (``redacted``)."""
    if not isinstance(request, Mapping):
        return _scrub(request)
    return dict(
        ("messages", [_typed(m, "content") for m in v])
        if k == "messages" and isinstance(v, list | tuple)
        else _field(k, v)
        for k, v in request.items()
    )


def _typed(item: Any, field: str) -> Any:
    """A message (``field`` "content") or a content part ("text"), ``_scrub``-bed but for
    that field, kept as typed when it is a string (a message's list of parts: each part)."""
    if not isinstance(item, Mapping):
        return _scrub(item)
    kept = {}
    for k, v in item.items():
        if k != field:
            name, value = _field(k, v)
            kept[name] = value
        elif isinstance(v, str):
            kept[k] = v
        elif field == "content" and isinstance(v, list | tuple):
            kept[k] = [_typed(part, "text") for part in v]
        else:
            kept[k] = _scrub(v)
    return kept


#: ``Bearer <token>`` / ``Key <token>`` as an Authorization value would carry it.
_TOKEN_RE = re.compile(r"(?i)\b(bearer|key)(\s+)(?=[^\s\d]*\d)[A-Za-z0-9._~+/=-]{8,}")


def _tokens(value: Any) -> Any:
    """A string with token shapes masked; anything else as it is."""
    return masked_tokens(value) if isinstance(value, str) else value


def masked_tokens(text: str) -> str:
    """``text`` with what is shaped like a token (``Bearer`` or ``key`` and a word with a
    digit) masked."""
    return _TOKEN_RE.sub(r"\1\2***", text)


def redacted(text: str | None, secrets: Sequence[str], *, tokens: bool = False) -> str | None:
    """``text`` without the secrets; with ``tokens``, without anything shaped like one.

    Only request bodies and error messages are searched for token shapes: answer text is
    prose, where "key" and "bearer" are words.
    """
    if text is None:
        return None
    text = scrub(text, secrets)
    if tokens:
        text = masked_tokens(text)
    return text


def dumps(value: Any, secrets: Sequence[str], *, request: bool = False) -> str | None:
    """JSON text for a column: a request is walked for key-like fields and token shapes (not
    in what the user typed, ``_scrub_request``); a response (large, and written by the
    provider) only has the known secrets replaced."""
    if value is None:
        return None
    if request:
        return redacted(canonical_json(_scrub_request(value)), secrets)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return redacted(text, secrets)
