"""Saved chat completions decoded with their types, straight into what the citation columns need.

A line of a JSON Lines corpus (a sample record ``{"question", "response"}`` or a bare
``chat.completion`` body) is decoded by msgspec into :class:`_Line`: only the fields a frame
reads, each with the one type the plain shape has (``citekit.data.frames.columnar.chat_header``),
every citation an object whose ``document_index`` is an integer and ``cited_text`` a string.
No ``dict`` per object is built, and the citations come out as small structs whose fields
become the columns (:func:`citekit.data.frames.columnar.plain_columns`).

Anything msgspec does not decode into that shape (another shape, a field of another type,
``NaN``, a lone surrogate, text that is not UTF-8, a line that is not JSON at all) is ``None``
here, and the caller reads the line as before (``json.loads`` and the provider's parser): the
typed route is taken only where it gives what that route gives, and every error, skipped line
and warning is that route's. ``tests/data/frames/test_typed.py`` checks the two routes give
equal frames on every sample and on arbitrary JSON.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec

from ...core.fields import MAX_INDEX
from ...core.names import CHAT_PROVIDERS
from ...core.unicode import valid_text
from ...model import SAMPLE_FIELD

__all__ = ["Plain", "TypedCitation", "decode_line"]


class TypedCitation(msgspec.Struct, gc=False):
    """A citation object of the plain kind: the fields ``Citation`` reads, as sent.

    The one list of the citation fields a frame reads, in column order: the column-wise
    reader of saved dicts reads the same fields off each object
    (``citekit.data.frames.columnar``, by ``__struct_fields__``)."""

    document_index: int
    cited_text: str
    cited_text_heading: str | None = None
    document_title: str | None = None
    document_author: str | None = None
    document_year: str | None = None
    document_reference: str | None = None
    source_url: str | None = None


class _Message(msgspec.Struct, gc=False):
    content: str
    role: str | None = None
    tool_calls: list[Any] | None = None


class _Choice(msgspec.Struct, gc=False):
    message: _Message
    index: int | None = None
    finish_reason: str | None = None


class _Body(msgspec.Struct, gc=False):
    """A chat completion body: what ``chat_header`` and the provider rule read of it."""

    choices: list[_Choice] | None = None
    citations: list[TypedCitation] | None = None
    id: str | None = None
    model: str | None = None
    generated_files: None = None
    sample: Any = msgspec.field(default=None, name=SAMPLE_FIELD)


class _Line(_Body, gc=False):
    """A line: a sample record (``response`` set) or a body itself (its fields above).
    ``message`` is read only to tell a GPTBots record (an object there) apart."""

    response: _Body | None = None
    question: Any = None
    message: Any = None


class Plain(NamedTuple):
    """A saved chat completion of the plain shape, decoded with its types: what a citations
    frame reads of it (its ``Header`` less the body, the citations as structs)."""

    provider: str
    id: str | None
    question: str | None
    model: str | None
    text: str
    citations: list[TypedCitation]


_DECODER: Final = msgspec.json.Decoder(_Line)


def decode_line(line: bytes, *, provider: str | None, provider_of: Any) -> Plain | None:
    """The plain chat completion a JSON Lines ``line`` holds, decoded with its types; ``None``
    when it holds anything else (the caller then reads it as any line).

    ``provider`` is the caller's ``provider=``; ``provider_of(label, model, citations)`` is
    the rule that tells a response's provider from its sample label, model and citation
    array (``citekit.data.frames.sources``)."""
    try:
        line_ = _DECODER.decode(line)
    except msgspec.MsgspecError:
        return None
    outer = line_
    if line_.response is not None:  # a sample record: its question and response
        body: _Body = line_.response
        question = line_.question if isinstance(line_.question, str) else None
        name = (
            provider
            or provider_of(body.sample, body.model, body.citations)
            or provider_of(outer.sample, outer.model, outer.citations)
        )
    elif line_.choices is not None and not isinstance(line_.message, dict):
        body, question = line_, None  # a bare body (an object "message": a GPTBots record)
        name = provider or provider_of(body.sample, body.model, body.citations)
    else:
        return None
    if name not in CHAT_PROVIDERS:  # unknown (an error to raise) or another provider's body
        return None
    choices, citations = body.choices, body.citations
    if choices is None or len(choices) != 1 or citations is None:
        # Maritaca's web sources (no "citations"), an answer with none: read as before
        return None
    choice = choices[0]
    index = choice.index
    if index is not None and not 0 <= index <= MAX_INDEX:
        return None
    if choice.message.tool_calls:
        return None
    indexes = [c.document_index for c in citations]
    if indexes and (min(indexes) < 0 or max(indexes) > MAX_INDEX - 1):
        return None  # Citation keeps its position for such an index: the object route
    return Plain(name, body.id, question, body.model, valid_text(choice.message.content), citations)
