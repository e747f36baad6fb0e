"""Saved responses read straight into frame columns, without building ``Answer`` objects.

The frame loaders read a saved chat completion (Magisterium's, Maritaca's) field by field into
columns when it has the plain shape every such response has (:func:`chat_header`: one choice
whose message holds a string, no tool calls, no generated files, ids and model strings); its
citation array is read column-wise (:func:`citation_columns`). Anything else (another shape,
a GPTBots body, a field of an unexpected type) is parsed into an ``Answer`` by the provider's
parser, so the frames are the same either way, and so is any error.

Exactness rests on two rules of the parsers, applied here to whole columns and checked by
``tests/data/frames/test_columnar.py`` against the ``Answer`` path:

* the plain shape: what ``citekit.wire.openai_compat.parse_chat_completion`` reads from a
  body of that shape, read here with the same shared functions (``valid_text``,
  ``parse_created``, ``Usage.from_dict``, ``citekit.wire.maritaca.sources``);
* citation fields: a column whose values are all strings (or null) is what
  ``Citation.from_dict`` keeps of them, once ``decode_entities`` (the one entity rule) has
  been applied to the values holding an ``&``; polars refuses strings that are not valid
  Unicode, and such a column, or one holding any other type, goes through ``Citation``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from itertools import chain, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ...core.fields import MAX_INDEX, opt_text, parse_created
from ...core.names import CHAT_PROVIDERS, WEB_SOURCE_PROVIDERS
from ...core.unicode import decode_entities, valid_text
from ...model import SAMPLE_FIELD, Answer, Citation, References, Usage
from ...wire.maritaca import sources as maritaca_sources
from ...wire.openai_compat import parse_citations
from .sources import Saved, iter_items
from .typed import Plain, TypedCitation

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "Header",
    "Item",
    "chat_header",
    "citation_columns",
    "plain_columns",
    "read_items",
    "read_source",
    "read_typed",
]


class Header(NamedTuple):
    """What a frame reads of a plain chat completion besides its citations."""

    body: Mapping[str, Any]
    provider: str
    question: str | None
    id: str | None
    model: str | None
    text: str
    finish_reason: str | None
    message: Mapping[str, Any]

    @property
    def citations_raw(self) -> list[Any] | None:
        """The body's citation array (``None`` when it has none or it is not an array)."""
        raw = self.body.get("citations")
        return raw if type(raw) is list else None

    @property
    def web_sources(self) -> bool:
        """Maritaca's sources are the answer's links (or annotations), not a citation array."""
        return self.provider in WEB_SOURCE_PROVIDERS and "citations" not in self.body

    def citations(self) -> tuple[Citation, ...]:
        """The citations as ``Citation`` objects (as the parser builds them)."""
        if self.web_sources:
            return maritaca_sources(self.text, self.message)
        return parse_citations(self.body.get("citations"))

    def n_citations(self) -> int:
        """How many citations the answer has (without building them from a plain array)."""
        raw = self.citations_raw
        if not self.web_sources and (raw is None or all(type(c) is dict for c in raw)):
            return len(raw or ())  # parse_citations keeps every object
        return len(self.citations())

    @property
    def sample(self) -> str | None:
        """``Answer.sample``: the body's sample label."""
        return opt_text(self.body.get(SAMPLE_FIELD))

    def created(self) -> datetime | None:
        return parse_created(self.body.get("created"))

    def usage(self) -> Usage | None:
        return Usage.from_dict(self.body.get("usage"))


#: What :func:`read_items` yields: a parsed answer, bare references, or a plain response.
Item = Answer | References | Header
#: What it yields from ``typed`` items: also a line of a JSON Lines file decoded with its
#: types (``Plain``), which only the citation rows read.
TypedItem = Item | Plain


def chat_header(unit: Saved) -> Header | None:
    """The header of a saved chat completion of the plain shape; ``None`` for any other body
    (which the parser then reads, raising where it raises).

    The plain shape is one where ``parse_chat_completion`` checks pass by construction: an
    object whose only choice (index 0 or none) is an object with a ``message`` object holding
    ``content`` as a string, ``role`` and ``finish_reason`` strings or null, no tool calls;
    ``id`` and ``model`` strings or null; no ``generated_files``. Its answer's text is that
    content, its finish reason the choice's.
    """
    body = unit.body
    if unit.provider not in CHAT_PROVIDERS or type(body) is not dict:
        return None
    choices = body.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict:
        return None
    index = choice.get("index")
    if index is not None and (type(index) is not int or not 0 <= index <= MAX_INDEX):
        return None
    finish = choice.get("finish_reason")
    message = choice.get("message")
    if (finish is not None and type(finish) is not str) or type(message) is not dict:
        return None
    content, role, calls = message.get("content"), message.get("role"), message.get("tool_calls")
    if type(content) is not str or (role is not None and type(role) is not str):
        return None
    if calls is not None and (type(calls) is not list or calls):
        return None
    ident, model = body.get("id"), body.get("model")
    if (ident is not None and type(ident) is not str) or (
        model is not None and type(model) is not str
    ):
        return None
    if body.get("generated_files") is not None:
        return None
    return Header(
        body, unit.provider, unit.question, ident, model, valid_text(content), finish, message
    )


def read_source(source: Any, *, provider: str | None, caller: str) -> Iterator[Item]:
    """What every frame of many sources reads: the answers and bare references of ``source``
    in source order, a saved chat completion of the plain shape as its :class:`Header`, any
    other saved answer parsed into its ``Answer``. ``caller`` names the public function in
    the errors."""
    items = iter_items(source, provider=provider, caller=caller, saved=True)
    return read_items(items)  # type: ignore[return-value]  # no Plain without typed


def read_typed(source: Any, *, provider: str | None, caller: str) -> Iterator[TypedItem]:
    """:func:`read_source`, with the plain chat completions of JSON Lines files decoded with
    their types into ``Plain`` (``citekit.data.frames.typed``): what a citations frame reads."""
    items = iter_items(source, provider=provider, caller=caller, saved=True, typed=True)
    return read_items(items)


def read_items(items: Iterator[Answer | References | Saved | Plain]) -> Iterator[TypedItem]:
    """``items`` (``iter_items(..., saved=True)``) with every saved answer either read as a
    :class:`Header` or parsed into its ``Answer``, in source order (so the first bad body
    raises where the ``Answer`` path raises)."""
    for item in items:
        if isinstance(item, Saved):
            header = chat_header(item)
            yield header if header is not None else item.answer()
        else:
            yield item


# -- citation columns -----------------------------------------------------------------------

#: The fields read off each citation object, ``document_index`` first, then the ones read as
#: strings: those of ``TypedCitation``, the one list of them (msgspec decodes a JSON Lines
#: file's citations into it, field for field what a dict's give here).
_FIELDS: Final[tuple[str, ...]] = TypedCitation.__struct_fields__
#: The string fields ``decode_entities`` applies to (those ``Citation.from_dict`` decodes).
_DECODED: Final = frozenset(
    {"cited_text", "cited_text_heading", "document_title", "document_author"}
)


def citation_columns(lists: list[list[Any]]) -> dict[str, pl.Series] | None:
    """The citation columns of citation arrays ``lists``, one row per citation in order:
    ``document_index`` and the string fields of ``Citation``, as ``Citation.from_dict`` (by
    way of ``parse_citations``) would give them. ``None`` when a value is not of the plain
    kind (an item that is not an object, an index that is not an integer from 0 to
    ``MAX_INDEX - 1``, a missing ``cited_text``, a field that is not a string, text that is
    not valid Unicode): the caller then builds ``Citation`` objects."""
    flat = list(chain.from_iterable(lists))
    if flat and set(map(type, flat)) != {dict}:
        return None  # parse_citations skips what is not an object, and counts its place
    # one pass in C per field (dict.get over the objects): no per-citation Python code
    return _columns([list(map(dict.get, flat, repeat(name))) for name in _FIELDS])


def plain_columns(citations: list[TypedCitation]) -> dict[str, pl.Series]:
    """:func:`citation_columns` of citations msgspec decoded with their types
    (``citekit.data.frames.typed``): every one of the plain kind by its type, so the same
    columns always come out."""
    columns = _columns([list(map(attrgetter(name), citations)) for name in _FIELDS])
    if columns is None:  # decode_line let through only what makes columns
        raise AssertionError("a typed citation that does not make columns")
    return columns


def _columns(values: list[list[Any]]) -> dict[str, pl.Series] | None:
    """The columns of the fields' values (in ``_FIELDS`` order), or ``None`` when a value is
    not of the plain kind."""
    import polars as pl

    indexes = values[0]
    # bool is an int to polars: only plain integers are kept as they are
    if set(map(type, indexes)) - {int}:
        return None
    index = pl.Series("document_index", indexes, dtype=pl.Int64)
    if index.len() and (index.min() < 0 or index.max() > MAX_INDEX - 1):  # type: ignore[operator]
        return None
    columns = {"document_index": index.cast(pl.Int32)}
    for name, column in zip(_FIELDS[1:], values[1:], strict=True):
        try:
            series = pl.Series(name, column, dtype=pl.String, strict=True)
        except (TypeError, UnicodeEncodeError, pl.exceptions.PolarsError):
            return None  # a number, an object... or a lone surrogate: Citation decides
        if name == "cited_text" and series.null_count():
            return None
        columns[name] = _decoded(series) if name in _DECODED else series
    return columns


def _decoded(series: pl.Series) -> pl.Series:
    """``decode_entities`` of every value: valid Unicode text without an ``&`` is its own
    decoding, so only the distinct values holding one are decoded (in Python, by the rule)."""
    import polars as pl

    has = series.str.contains("&", literal=True)
    if not has.any():
        return series
    distinct = series.filter(has).unique()
    decoded = pl.Series([decode_entities(v) for v in distinct], dtype=pl.String)
    return series.replace(distinct, decoded)
