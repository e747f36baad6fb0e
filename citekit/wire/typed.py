"""Typed decoding of the wire's hot paths with msgspec: the usual shapes at C speed.

A stream's events are decoded straight from their bytes into the Structs below, which hold
exactly the shape the accumulators read in the usual case: a chat completion chunk whose
fields are what the field checks want (``id``, ``model`` strings, ``created`` an integer, each
choice's ``index`` an integer, ``delta.content`` a string), a GPTBots Text event. msgspec
checks those types while it decodes, in C, so nothing is checked again in Python. The Structs
are left out of the garbage collector's tracking (``gc=False``): decoded from JSON, they hold
strings, numbers and each other, never a cycle, and a stream makes tens of thousands of them,
which would otherwise set off a collection every few hundred.

Anything else is refused here (``None``): another shape, a wrong type, an unknown top-level
key (kept in ``raw``, so it goes the general way that keeps it), bytes that are not JSON, JSON
that msgspec reads otherwise than ``json`` does (``NaN``, ``1e400``, lone surrogates, invalid
UTF-8: it refuses each). The caller then decodes the event with ``json`` and reads it as a
``dict``, the one reader of every shape and the one that raises every ``ResponseFormatError``,
so a typed route and the general one give the same answer and the same error for any bytes
(a property test holds them to it).

A read of a stream usually holds a hundred chunks or more of one shape alone, text for the
first choice: ``PLAIN_DECODER`` decodes each into a ``PlainChunk``, which admits that shape
only, so a read whose every event decodes (one C call each, no Python per event) is read
whole at once; a read with any other event goes event by event.

``decode_body`` is a whole response body decoded by msgspec into the same values ``json.loads``
gives, or None where msgspec refuses it (the caller's ``json`` then reads it as before).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "CHUNK_DECODER",
    "PLAIN_DECODER",
    "REFUSED",
    "TEXT_EVENT_DECODER",
    "ChatChunk",
    "ChunkChoice",
    "ChunkDelta",
    "PlainChoice",
    "PlainChunk",
    "PlainDelta",
    "TextEvent",
    "decode_body",
    "decode_chunk",
    "decode_text_event",
]


class ChunkDelta(msgspec.Struct, gc=False):
    """A choice's ``delta`` as text streams send it. Tool-call fragments and annotations
    (any non-null value) are read the general way."""

    content: str | None = None
    role: str | None = None
    tool_calls: None = None
    annotations: None = None


class ChunkChoice(msgspec.Struct, gc=False):
    """One ``choices[]`` item; ``index`` is an integer here (a missing one is 0, as the
    general reader has it; ``null`` or a string go the general way)."""

    index: int = 0
    delta: ChunkDelta | None = None
    finish_reason: str | None = None


class ChatChunk(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``chat.completion.chunk`` of the usual shape. Any other top-level key (citations,
    usage, an error) makes it go the general way, which keeps that key in ``raw``."""

    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    choices: list[ChunkChoice] | None = None
    system_fingerprint: str | None = None
    usage: None = None


class PlainDelta(msgspec.Struct, gc=False):
    """A delta of text alone: ``content`` a string, no role, no tool call, no annotation."""

    content: str
    role: None = None
    tool_calls: None = None
    annotations: None = None


class PlainChoice(msgspec.Struct, gc=False):
    """The first choice (``index`` 0), a ``PlainDelta`` and no ``finish_reason``."""

    delta: PlainDelta
    index: Literal[0] = 0
    finish_reason: None = None


class PlainChunk(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The chunk of a stream's middle: the four header fields set, one ``PlainChoice``, no
    other top-level field (no ``system_fingerprint``, no ``usage``)."""

    id: str
    object: str
    created: int
    model: str
    choices: tuple[PlainChoice]
    system_fingerprint: None = None
    usage: None = None


class TextEvent(msgspec.Struct, gc=False):
    """A GPTBots stream event with a string ``data``: a Text (code 3) event when its code is."""

    code: int
    data: str


#: The decoders, for the hot paths that call them in line (``decode_*`` below otherwise).
CHUNK_DECODER = msgspec.json.Decoder(ChatChunk)
PLAIN_DECODER = msgspec.json.Decoder(PlainChunk)
TEXT_EVENT_DECODER = msgspec.json.Decoder(TextEvent)
_ANY = msgspec.json.Decoder()
#: What msgspec raises for bytes it does not decode into the type asked.
REFUSED = msgspec.MsgspecError


def decode_chunk(data: bytes) -> ChatChunk | None:
    """``data`` as a ``ChatChunk``, or None when it is not one."""
    try:
        return CHUNK_DECODER.decode(data)
    except REFUSED:
        return None


def decode_text_event(data: bytes) -> TextEvent | None:
    """``data`` as a ``TextEvent``, or None when it is not one."""
    try:
        return TEXT_EVENT_DECODER.decode(data)
    except REFUSED:
        return None


def decode_body(body: bytes) -> Any:
    """``body``'s JSON value as ``json.loads`` reads it, or None where msgspec cannot say
    (``null`` itself included: the caller's ``json`` reads it then, as it reads every
    refusal)."""
    try:
        return _ANY.decode(body)
    except (REFUSED, RecursionError):
        return None
