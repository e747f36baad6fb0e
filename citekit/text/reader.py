"""The one reader of an answer's text: markers, code, links and definition lines.

Every output and every table asks this module the same question, "is this ``[1]`` a
footnote marker?", and gets the same answer, because the answer comes from one place: the
inline rule :func:`marker_plugin`, run by markdown-it-py over the text, exactly as the HTML
renderer parses it (CommonMark, plus tables and strikethrough; no images; links only to
``http(s)`` URLs; see :func:`make_parser`).

Markers
    ``[^N]`` (caret), ``[N]`` (bracket) and GPTBots' corner citations ``$[N]$`` (corner: the
    whole ``$[1]$`` is one marker), N from 1 to 9999 (``N - 1 == document_index``). A bracket
    marker followed by ``(`` is a link (``[1](url)``), one followed by ``[`` is a reference
    link unless that bracket opens another marker (``[1][ref]`` is a link, ``[^1][^3]`` two
    markers), and ``[N]:``/``[^N]:`` at the start of a line of a block's text (only spaces or
    tabs before it, once the block's own markup is read: ``[^1]: text``, ``> [1]: x``,
    ``- [2]: x``, ``## [^3]: x``, a table cell) is a definition, not a marker. Elsewhere a
    colon or a parenthesis after a space (``see [2]: ...``, ``[1] (CCC 1730)``) does not stop
    a marker.

Code and links
    Whatever markdown-it reads as code (fenced blocks, indented blocks, code spans) holds
    literal text, and so does a link: its text keeps ``[1]`` as written (``[see [1]](url)``),
    its destination and autolinks (``<https://e.org/[1]>``) are not read at all. A backslash
    escapes a marker (``\\[1]``, ``\\$[1]$`` leaves the bracket marker ``[1]``), as it
    escapes any Markdown.

Definition lines
    A line ``[^N]: text`` (at most three spaces before it) outside code is a footnote
    definition: :attr:`Reading.definitions` holds its text and :attr:`Reading.body` is the text
    without those lines (trailing blank lines trimmed), which is what the outputs render.
    A definition-like line inside a code block or a code span is code and stays in the body.

Positions
    :class:`Marker` and code spans are positions in the text handed to :func:`read`, as written:
    ``\\r\\n`` and lone ``\\r`` line ends are read as markdown-it reads them (as ``\\n``), but
    positions are not shifted by that normalisation. Markers of a definition line are not
    markers of the answer (the line is not part of the body).

Speed
    :func:`read` is cached on the text (several outputs read the same answer). Text that can
    hold no code, link, table, reference definition or deep nesting (see :func:`_needs_parse`)
    is read by a scan of its characters (:func:`_scan`) that finds what the parse would find,
    without parsing. Other text is parsed into blocks by markdown-it, and the text of each
    block is parsed inline only if it may hold code or a link; the other blocks are scanned.
    ``tests/text/test_reader.py`` checks both shortcuts against the full parse. :func:`numbers`
    (the numbers alone, as the frames ask for every answer) skips even the scan's markers where
    every ``]`` of the text closes a plain marker and nothing may hide one.

This module imports nothing of citekit (only the standard library and markdown-it-py), so every
layer can use it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from .parser import (
    BRACKET,
    MARKER_TOKEN,
    Link,
    Marker,
    MarkerStyle,
    bracket_marker,
    marker_at,
    reader_parser,
)
from .source_map import MD_TRIM, Lines, Shift, identity, locate, locator, normalise

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["Reading", "carets_only", "first_markers", "marker_digits", "numbers", "read"]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """The reader's parser, made (and markdown-it imported) on the first text that needs a
    parse: text the scan reads, and ``import citekit``, never load markdown-it."""
    return reader_parser()


# -- the reading --------------------------------------------------------------------------------

Span = tuple[int, int]


@dataclass(frozen=True, slots=True, eq=False)
class Reading:
    """What an answer's text says: its markers, code, definition lines and body.

    Positions (:attr:`markers`, :attr:`code_spans`, :attr:`code_blocks`) are in :attr:`text`.
    ``read(reading.body)`` is the same reading in the body's own positions (it is cached, and
    the body reads as itself: no definitions, the same markers).
    """

    text: str
    #: ``text`` without its definition lines: what the outputs render.
    body: str
    #: Footnote definitions by number, the first one of a number kept (read-only).
    definitions: Mapping[int, str]
    #: Every marker of the body, in order (outside code, links and definition lines).
    markers: tuple[Marker, ...]
    _code: _LazyCode = field(repr=False)

    @property
    def numbers(self) -> frozenset[int]:
        """The footnote numbers cited inline."""
        return frozenset(m.number for m in self.markers)

    @property
    def code_spans(self) -> tuple[Span, ...]:
        """``(start, end)`` of every code block and code span of the body, in order. A block
        spans whole lines (fences included); a span runs from its first backtick to past its
        last; a block left open runs to the end of the text."""
        return self._code.get()[0]

    @property
    def code_blocks(self) -> tuple[Span, ...]:
        """The fenced and indented code blocks among :attr:`code_spans`."""
        return self._code.get()[1]

    @property
    def links(self) -> tuple[Link, ...]:
        """Every link of the text, in order (:class:`Link`: ``start``, ``end``, ``url``,
        ``label``); code holds no link, and only ``http``/``https`` targets are links (as the
        HTML renders them). Definition lines are read too: a link there is a link of the text.

        >>> from citekit.text.reader import read
        >>> read("See [Pix](https://www.bcb.gov.br/pix), not `[x](https://e.org)`.").links
        (Link(start=4, end=37, url='https://www.bcb.gov.br/pix', label='Pix'),)
        """
        return _links(self.text)

    def in_code(self, pos: int) -> bool:
        """Whether ``text[pos]`` is inside a code block or a code span."""
        spans = self.code_spans
        i = bisect_right(spans, (pos, len(self.text) + 1)) - 1
        return i >= 0 and spans[i][0] <= pos < spans[i][1]

    def segments(self) -> Iterator[str | Marker]:
        """The text cut into plain strings and markers, in order (definition lines are plain
        text here; iterate ``read(reading.body).segments()`` for the body alone)."""
        text = self.text
        pos = 0
        for m in self.markers:
            if m.start > pos:
                yield text[pos : m.start]
            yield m
            pos = m.end
        if pos < len(text):
            yield text[pos:]


class _LazyCode:
    """Code spans, computed on first use: most callers only want markers, and a text whose
    markers came from the scan (or that has none) needs no parse for them."""

    __slots__ = ("_compute", "_value")

    def __init__(
        self,
        compute: Callable[[], tuple[tuple[Span, ...], tuple[Span, ...]]] | None = None,
        value: tuple[tuple[Span, ...], tuple[Span, ...]] | None = None,
    ) -> None:
        self._compute = compute
        self._value = value

    def get(self) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        value = self._value
        if value is None:
            assert self._compute is not None
            value = self._value = self._compute()
            self._compute = None
        return value


_NO_CODE: Final = _LazyCode(value=((), ()))
_EMPTY: Final[Mapping[int, str]] = MappingProxyType({})


@lru_cache(maxsize=512)
def read(text: str) -> Reading:
    """The reading of an answer's text (cached on the text)."""
    body, definitions, removed = split_definitions(text)
    if body == text:
        return _plain_reading(text)
    inner = read(body)
    shift = Shift(removed)
    whole = len(text)
    tail_blank = not text[shift(len(body)) :].strip("\r\n")

    def to_text(pos: int, *, end: bool = False) -> int:
        # Code left open at the end of the body runs to the end of the text: only blank lines
        # (trimmed off the body) come after it.
        if end and pos == len(body) and tail_blank:
            return whole
        return shift(pos)

    def code() -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        spans, blocks = inner._code.get()
        return (
            tuple((to_text(a), to_text(b, end=True)) for a, b in spans),
            tuple((to_text(a), to_text(b, end=True)) for a, b in blocks),
        )

    markers = inner.markers
    if removed:  # (else only blank lines were trimmed off the end: positions stand)
        markers = tuple(Marker(shift(m.start), shift(m.end), m.number, m.style) for m in markers)
    return Reading(text, inner.body, MappingProxyType(definitions), markers, _LazyCode(code))


# -- definition lines ---------------------------------------------------------------------------

_DEFINITION = re.compile(r"^[ ]{0,3}\[\^([1-9][0-9]{0,3})\]:[ \t]?(.*)$", re.MULTILINE)


def split_definitions(text: str) -> tuple[str, dict[int, str], list[tuple[int, int]]]:
    """The body, the definitions and where the definition lines were cut: ``(position in the
    body, characters cut)`` pairs."""
    if "[^" not in text or "]:" not in text:
        return _trim_end(text), {}, []
    norm, shift = normalise(text)
    found = list(_DEFINITION.finditer(norm))
    if not found:
        return _trim_end(text), {}, []
    in_code: Callable[[int], bool] = lambda pos: False  # noqa: E731
    if "`" in norm or "~~~" in norm:  # only fences and code spans can hold such a line
        in_code = _plain_reading(text).in_code
    definitions: dict[int, str] = {}
    pieces: list[str] = []
    removed: list[tuple[int, int]] = []
    kept = 0  # length of the body so far
    last = 0
    for m in found:
        start, end = shift(m.start()), shift(m.end())
        if in_code(start):
            continue
        definitions.setdefault(int(m[1]), m[2].strip())
        pieces.append(text[last:start])
        kept += start - last
        removed.append((kept, end - start))
        last = end
    if not removed:
        return _trim_end(text), {}, []
    pieces.append(text[last:])
    return _trim_end("".join(pieces), text), definitions, removed


def _trim_end(body: str, text: str | None = None) -> str:
    """``body`` without trailing blank lines; one line end kept when the text ends with one
    (as ``split_definitions`` always did for ``\\n``)."""
    text = body if text is None else text
    stripped = body.rstrip("\r\n")
    if stripped == body:
        return body
    if not text.endswith(("\n", "\r")) or not stripped.strip():
        return stripped
    return stripped + ("\r\n" if text.endswith("\r\n") else text[-1])


# -- reading text without definition lines -------------------------------------------------------

_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^<>\x00-\x20]*>")
# A line whose text may start a block with "[": a reference definition, or a definition-like
# "[N]:" that the inline rule sees at the start of its line.
_LINE_OPENS_BRACKET = re.compile(
    "^[ >*+\\-#0-9.)" + re.escape(MD_TRIM.replace("\n", "")) + "]*\\[", re.MULTILINE
)
# Four container markers (">", a list item) at the start of one line: with neither tabs nor
# four spaces in the text, lines holding fewer cannot nest blocks deep enough to reach
# markdown-it's nesting limit (20 levels), past which it drops text unread.
_CONTAINERS = r"(?:[ ]*(?:>|[-+*](?=[ \n]|\Z)|[0-9]{1,9}[.)](?=[ \n]|\Z))){4}"
_DEEP_FIRST = re.compile(_CONTAINERS)
_DEEP = re.compile("\n" + _CONTAINERS)  # led by a literal: a fast search


def _needs_parse(text: str) -> bool:
    """Whether ``text`` may hold something that takes a marker away from the scan's reading:
    code (backticks, ``~~~``, indentation by a tab or four spaces), a link (``](``, an
    autolink), a table (``|``), a reference definition or a definition head (``]:`` with a
    line that opens with ``[``), or blocks nested deep enough to reach the nesting limit."""
    if "](" in text:
        return True
    if "]:" in text and _LINE_OPENS_BRACKET.search(text):
        return True
    return _may_hide(text)


def _may_hide(text: str) -> bool:
    """The part of :func:`_needs_parse` that is not about what follows a ``]``: code, a table,
    an autolink or deep nesting. (Single characters first: they are the fast searches.)"""
    if "`" in text or "|" in text or "\t" in text or ("~" in text and "~~~" in text):
        return True
    if "    " in text or ("<" in text and _AUTOLINK.search(text)):
        return True
    return bool(_DEEP_FIRST.match(text) or _DEEP.search(text))


def _could_hold_code(text: str) -> bool:
    return "`" in text or "~~~" in text or "    " in text or "\t" in text


def _escaped(text: str, pos: int) -> bool:
    """An odd run of backslashes before ``pos``: markdown-it reads the last one as an escape."""
    run = pos
    while run and text[run - 1] == "\\":
        run -= 1
    return (pos - run) % 2 == 1


def _scan(text: str) -> list[Marker]:
    """The markers of ``text`` read without parsing: the same markers markdown-it finds when
    :func:`_needs_parse` is false (``tests/text/test_reader.py`` checks it). Each marker is
    judged by :func:`marker_at`, as the inline rule judges it."""
    markers: list[Marker] = []
    taken = 0  # characters before this belong to a marker already
    # Every marker holds a bracket marker's shape, which a literal-led pattern finds fast.
    for found in BRACKET.finditer(text):
        start = found.start()
        before = text[start - 1 : start] if start > taken else ""
        marker = None
        if before == "$" and not _escaped(text, start - 1):
            marker = marker_at(text, start - 1)  # a corner $[N]$
        if marker is None and (before != "\\" or not _escaped(text, start)):
            marker = bracket_marker(text, found)
        if marker is not None:
            markers.append(marker)
            taken = marker.end
    return markers


# A bracket or caret marker as the scan judges it in the plain case: not after a backslash
# or a "$" (an escape, a corner mark), not before "(" (a link), ":" (maybe a definition) or a
# "[" that does not open another marker (a reference link); its number is the group. Any
# other ``BRACKET`` match is the second branch, where the group is empty. Where every match
# is plain, ``_scan`` makes a marker of each and of nothing else. (Led by "[": a fast search.)
_PLAIN_MARKER = re.compile(
    r"\[(?:(?<![\\$]\[)\^?([1-9][0-9]{0,3})\](?![(:]|\[(?!\^?[1-9][0-9]{0,3}\]))"
    r"|\^?[1-9][0-9]{0,3}\])"
)


@lru_cache(maxsize=64)
def carets_only(text: str) -> bool:
    """Whether ``text`` has markers, all written ``[^n]``, and every ``^`` of it is in one:
    the usual answer, whose markers the outputs can rewrite with ``str`` methods instead of
    one by one (each output asks it of the same text: cached)."""
    markers = read(text).markers
    return (
        bool(markers)
        and text.count("^") == len(markers)
        and all(m.style == "caret" for m in markers)
    )


def numbers(text: str) -> frozenset[int]:
    """The footnote numbers cited inline in ``text``: ``read(text).numbers``, found without
    building the reading where the scan applies and every marker candidate is plain (what
    the frames ask of every answer; ``tests/data/frames/test_columnar.py`` checks it against
    ``read`` and markdown-it's full parse on generated text).

    >>> from citekit.text.reader import numbers
    >>> sorted(numbers("Work is for man.[^1][^3] See `[2]`."))
    [1, 3]
    """
    if "[" not in text:
        return frozenset()
    found = marker_digits(text)
    return read(text).numbers if found is None else frozenset(map(int, found))


def marker_digits(text: str) -> list[str] | None:
    """The number of each marker of ``text`` as its digits, in order (a number cited twice
    comes twice), where :func:`numbers` finds them without building the reading; ``None``
    where the text must be read (:func:`read`). The frames turn the digits of every answer
    into numbers at once.

    >>> from citekit.text.reader import marker_digits
    >>> marker_digits("Work is for man.[^1][^3][1]"), marker_digits("See `[2]`.")
    (['1', '3', '1'], None)
    """
    found = _PLAIN_MARKER.findall(text)
    # Every "]" closes a plain marker (none before "(" or ":"): no link "](", no definition
    # or reference "]:" (so the text is its own body), no escaped or corner mark.
    if "" in found or text.count("]") != len(found) or "\r" in text or _may_hide(text):
        return None  # then read it
    return found


def first_markers(text: str) -> dict[int, Span]:
    """Where each footnote number cited inline in ``text`` is first cited: ``{number: (start,
    end)}`` of its first marker of ``read(text).markers``, in the order first cited. Found
    without building the reading where :func:`numbers` finds the numbers so (every marker
    candidate plain: each match is a marker, at its place in the text); the sources' spans ask
    this of every answer.

    >>> from citekit.text.reader import first_markers
    >>> first_markers("Work[^1] is for man.[^3][^1] See `[2]`.")
    {1: (4, 8), 3: (20, 24)}
    """
    first: dict[int, Span] = {}
    if "[" not in text:
        return first
    found = list(_PLAIN_MARKER.finditer(text))
    if (
        text.count("]") != len(found)
        or any(m[1] is None for m in found)
        or "\r" in text
        or _may_hide(text)
    ):
        for marker in read(text).markers:
            first.setdefault(marker.number, (marker.start, marker.end))
        return first
    for m in found:
        first.setdefault(int(m[1]), m.span())
    return first


@lru_cache(maxsize=64)
def _plain_reading(text: str) -> Reading:
    """The reading of ``text`` as it stands (no definition lines taken out)."""
    norm, shift = normalise(text)
    if "[" not in norm:
        code = _LazyCode(lambda: _parsed(norm, shift)[1]) if _could_hold_code(norm) else _NO_CODE
        return Reading(text, text, _EMPTY, (), code)
    if not _needs_parse(norm):
        markers = _scan(norm)
        if shift is not identity:
            markers = [Marker(shift(m.start), shift(m.end), m.number, m.style) for m in markers]
        return Reading(text, text, _EMPTY, tuple(markers), _NO_CODE)
    parsed_markers, code_value = _parsed(norm, shift)
    return Reading(text, text, _EMPTY, parsed_markers, _LazyCode(value=code_value))


def _parsed(
    norm: str, shift: Callable[[int], int], *, scan: bool = True
) -> tuple[tuple[Marker, ...], tuple[tuple[Span, ...], tuple[Span, ...]]]:
    """Markers and code of ``norm`` (line ends ``\\n``) from markdown-it's tokens, in positions
    of the original text (``shift``).

    markdown-it parses the blocks; the text of a block is then parsed inline only if it may
    hold code or a link, else :func:`_scan` reads it (what the inline parse would find there,
    when the document defines no link reference; ``scan=False`` parses every block's text).
    """
    env: dict[str, Any] = {}
    parser = _parser()
    tokens = parser.parse(norm, env)  # blocks only: the core "inline" rule is off
    scan = scan and not env.get("references")
    lines = Lines(norm)
    markers: list[Marker] = []
    spans: list[Span] = []
    blocks: list[Span] = []
    for i, token in enumerate(tokens):
        kind = token.type
        if kind in ("fence", "code_block") and token.map:
            end = lines.start(token.map[1])
            if kind == "fence" and not norm[end:].strip() and not _fence_closed(token, norm, lines):
                end = len(norm)  # left open: it runs to the end (markdown-it's map stops early)
            block = (lines.start(token.map[0]), end)
            blocks.append(block)
            spans.append(block)
            continue
        content = token.content
        if kind != "inline" or ("[" not in content and "`" not in content):
            continue
        found: list[tuple[int, int, int, MarkerStyle]] = []
        code: list[Span] = []
        if scan and not _inline_needs_parse(content):
            found = [(m.start, m.end, m.number, m.style) for m in _scan(content)]
        else:
            for child in parser.inline.parse(content, parser, env, []):
                meta = child.meta
                if child.type == MARKER_TOKEN:
                    found.append((meta["start"], meta["end"], meta["number"], meta["style"]))
                elif child.type == "code_inline" and meta:
                    code.append((meta["start"], meta["end"]))
        if not found and not code:
            continue
        to_source = locator(token, tokens[i - 1], norm, lines)
        for start, end, number, style in found:
            source = content[start:end]
            a = locate(to_source, start, norm, token, lines, source)
            b = locate(to_source, end - 1, norm, token, lines, source, last=True) + 1
            markers.append(Marker(shift(a), shift(b), number, style))
        for start, end in code:
            a = locate(to_source, start, norm, token, lines, "`")
            b = locate(to_source, end - 1, norm, token, lines, "`", last=True) + 1
            spans.append((a, b))
    spans.sort()
    code_value = (
        tuple((shift(a), shift(b)) for a, b in spans),
        tuple((shift(a), shift(b)) for a, b in blocks),
    )
    return tuple(markers), code_value


def _fence_closed(token: Token, norm: str, lines: Lines) -> bool:
    """Whether a fence token's last line is its closing fence (a run of its fence character at
    least as long as the opening one, after any indentation or block-quote marks)."""
    assert token.map is not None
    first, last = token.map[0], token.map[1] - 1
    if last <= first:
        return False
    line = norm[lines.start(last) : lines.end(last)].lstrip(" \t>").rstrip()
    mark = token.markup
    return len(line) >= len(mark) and set(line) == {mark[0]}


def _inline_needs_parse(content: str) -> bool:
    """Whether a block's text may hold code or a link (the inline-level part of
    :func:`_needs_parse`; references are checked on the whole document)."""
    return "`" in content or "](" in content or ("<" in content and bool(_AUTOLINK.search(content)))


# -- links ---------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _links(text: str) -> tuple[Link, ...]:
    """The links of ``text`` from markdown-it's tokens, in positions of ``text``."""
    norm, shift = normalise(text)
    if "](" not in norm and "]:" not in norm and not ("<" in norm and _AUTOLINK.search(norm)):
        return ()  # no inline link, no reference definition, no autolink: no link
    env: dict[str, Any] = {}
    parser = _parser()
    tokens = parser.parse(norm, env)
    lines = Lines(norm)
    links: list[Link] = []
    for i, token in enumerate(tokens):
        content = token.content
        if token.type != "inline" or ("[" not in content and "<" not in content):
            continue
        children = parser.inline.parse(content, parser, env, [])
        to_source: Callable[[int], int] | None = None
        for j, child in enumerate(children):
            if child.type != "link_open" or not child.meta:
                continue
            if to_source is None:
                to_source = locator(token, tokens[i - 1], norm, lines)
            start, end = child.meta["start"], child.meta["end"]
            a = locate(to_source, start, norm, token, lines, content[start])
            b = locate(to_source, end - 1, norm, token, lines, content[end - 1], last=True) + 1
            url = str(child.attrs.get("href", ""))
            links.append(Link(shift(a), shift(b), url, _label(children, j + 1)))
    return tuple(links)


def _label(children: list[Token], start: int) -> str:
    """The text of a link whose tokens begin at ``children[start]``, up to its ``link_close``."""
    parts: list[str] = []
    for token in children[start:]:
        kind = token.type
        if kind == "link_close":
            break
        if kind in ("text", "text_special", "code_inline", MARKER_TOKEN):
            parts.append(token.content)
        elif kind in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts).strip()
