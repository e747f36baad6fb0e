"""The markdown-it parser every output shares, with citekit's marker rule: what a marker is,
judged at one position, and which link targets are allowed.

See :mod:`citekit.text.reader` for the rules a marker follows; this module holds the
parser rules, the reader holds the reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Literal, NamedTuple
from urllib.parse import urlsplit

# markdown-it is imported where a parser is made: what a marker is (``marker_at``,
# ``Marker``) needs none of it, and ``import citekit`` stays free of it.
if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_inline import StateInline

__all__ = [
    "BRACKET",
    "CORNER",
    "MARKER_TOKEN",
    "NO_MARKERS",
    "Link",
    "Marker",
    "MarkerStyle",
    "bracket_marker",
    "link_allowed",
    "make_parser",
    "marker_at",
    "marker_plugin",
    "reader_parser",
]

MarkerStyle = Literal["caret", "bracket", "corner"]

#: Type of the token :func:`marker_plugin` emits; its ``content`` is the marker's source text
#: and its ``meta`` holds ``number``, ``style``, and ``start``/``end`` in the inline source.
MARKER_TOKEN: Final = "citekit_marker"
#: An ``env`` key: ``md.parse(text, {NO_MARKERS: True})`` leaves every marker literal text
#: (cited passages are rendered so).
NO_MARKERS: Final = "citekit_no_markers"


class Marker(NamedTuple):
    """One inline marker: its span in the text, the one-based number and how it was written.

    An immutable value (a named tuple: markers are made by the thousand for frames)."""

    start: int
    end: int
    number: int
    style: MarkerStyle = "bracket"

    @property
    def caret(self) -> bool:
        """``[^N]`` (the form of Markdown footnotes)."""
        return self.style == "caret"

    @property
    def document_index(self) -> int:
        return self.number - 1


class Link(NamedTuple):
    """One link of the text, as markdown-it reads it: ``[label](url)``, a reference link
    ``[label][ref]`` / ``[ref]`` with its definition, or an autolink ``<url>``.

    ``start``/``end`` span the whole link in the text; ``url`` is the target as markdown-it
    gives it to the HTML (``href``: percent-encoded, always ``http``/``https``); ``label`` is
    the link's text without its Markdown (emphasis dropped, code kept as written)."""

    start: int
    end: int
    url: str
    label: str


# -- what a marker is, judged at one position ---------------------------------------------------

BRACKET = re.compile(r"\[(\^?)([1-9][0-9]{0,3})\]")
CORNER = re.compile(r"\$\[([1-9][0-9]{0,3})\]\$")


def marker_at(src: str, pos: int) -> Marker | None:
    """The marker starting at ``src[pos]``, if the characters there make one.

    Only the marker's own characters, the one right after it and what precedes it on its line
    count; whether ``src[pos]`` is escaped or inside code or a link is decided by whoever calls
    (markdown-it's inline parser, or :func:`_scan` where no code or link can occur).
    """
    if src.startswith("$", pos):
        corner = CORNER.match(src, pos)
        return None if corner is None else Marker(pos, corner.end(), int(corner[1]), "corner")
    found = BRACKET.match(src, pos)
    return None if found is None else bracket_marker(src, found)


def bracket_marker(src: str, found: re.Match[str]) -> Marker | None:
    """The bracket or caret marker ``found`` (a match of ``BRACKET``), unless what follows
    makes it a link or a definition."""
    end = found.end()
    after = src[end : end + 1]
    if after == "(":  # a link [1](url)
        return None
    if after == "[" and BRACKET.match(src, end) is None:  # a reference link [1][ref]
        return None
    pos = found.start()
    if after == ":" and not src[src.rfind("\n", 0, pos) + 1 : pos].strip(" \t"):
        return None  # [1]: opening a line of a block is a definition
    return Marker(pos, end, int(found[2]), "caret" if found[1] else "bracket")


def _marker_rule(state: StateInline, silent: bool) -> bool:
    # Silent calls come from a link label scan: there ``[1]`` is brackets inside the label, so
    # ``[see [1]](url)`` stays a link; inside a link's text (linkLevel > 0) markers stay text.
    if silent or state.linkLevel > 0 or state.src[state.pos] not in "[$":
        return False
    if state.env.get(NO_MARKERS):
        return False
    marker = marker_at(state.src, state.pos)
    if marker is None or marker.end > state.posMax:
        return False
    token = state.push(MARKER_TOKEN, "", 0)
    token.content = state.src[marker.start : marker.end]
    token.meta = {
        "number": marker.number,
        "style": marker.style,
        "start": marker.start,
        "end": marker.end,
    }
    state.pos = marker.end
    return True


def marker_plugin(md: MarkdownIt) -> None:
    """Install the marker rule in ``md`` (once): each marker becomes a :data:`MARKER_TOKEN`.

    The rule runs before markdown-it's link rule, so ``[1]`` is a marker even where a
    reference ``[1]: url`` is defined; code spans, autolinks, escapes and links are parsed by
    markdown-it, so a marker never comes out of them.
    """
    md.inline.ruler.before("link", MARKER_TOKEN, _marker_rule)


# -- the parser every output shares -------------------------------------------------------------

# Browsers drop tabs and newlines inside URLs ("java\tscript:"), so any control character or
# space refuses a URL outright. citekit.text.escape.safe_url applies it to every link target.
_FORBIDDEN_URL_CHARS = frozenset(chr(c) for c in range(0x21)) | {"\x7f", '"', "<", ">", "`", "\\"}


def link_allowed(url: str) -> bool:
    """True for an absolute ``http``/``https`` URL with a host (surrounding space ignored).

    markdown-it refuses a link whose target fails this (``[x](javascript:...)`` stays text), and
    that decides whether a marker inside it is one, so the rule lives with the reader.
    """
    candidate = url.strip()
    if not candidate or not _FORBIDDEN_URL_CHARS.isdisjoint(candidate):
        return False
    try:
        parts = urlsplit(candidate)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def make_parser() -> MarkdownIt:
    """A new markdown-it parser as citekit reads answers: CommonMark with tables and
    strikethrough, raw HTML off, images off (they would load remote content; ``![x](u)`` reads
    as ``!`` and a link), links only to ``http(s)`` (:func:`link_allowed`), markers on
    (:func:`marker_plugin`). The HTML renderer and :func:`read` both use it."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    md.validateLink = link_allowed  # type: ignore[method-assign]
    marker_plugin(md)
    return md


# The reader's own parser also records where code spans and table rows start (token meta); that
# changes no token the renderer uses. Each wraps markdown-it's own rule, handed in by
# :func:`reader_parser` (markdown-it is imported only when a parser is made).
InlineRule = Callable[["StateInline", bool], bool]
BlockRule = Callable[["StateBlock", int, int, bool], bool]


def _code_spans(backtick: InlineRule) -> InlineRule:
    """markdown-it's backtick rule, recording on each ``code_inline`` token where it starts
    and ends in the inline source."""

    def code_span(state: StateInline, silent: bool) -> bool:
        start = state.pos
        count = len(state.tokens)
        if not backtick(state, silent):
            return False
        if not silent and len(state.tokens) > count and state.tokens[-1].type == "code_inline":
            state.tokens[-1].meta = {"start": start, "end": state.pos}
        return True

    return code_span


def _positioned(rule: InlineRule) -> InlineRule:
    """``rule`` (markdown-it's link or autolink rule), recording on each ``link_open`` token
    where the link starts and ends in the inline source."""

    def positioned(state: StateInline, silent: bool) -> bool:
        start = state.pos
        count = len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent:
            for token in state.tokens[count:]:
                if token.type == "link_open":
                    token.meta = {"start": start, "end": state.pos}
                    break
        return True

    return positioned


def _table_rows(table: BlockRule) -> BlockRule:
    """markdown-it's table rule, recording on each cell's ``inline`` token where its row
    starts and which cell it is."""

    def table_rows(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        count = len(state.tokens)
        if not table(state, start_line, end_line, silent):
            return False
        if not silent:
            cell = 0
            for token in state.tokens[count:]:
                if token.type == "tr_open":
                    cell = 0
                elif token.type == "inline" and token.map:
                    line = token.map[0]
                    token.meta = {"row": state.bMarks[line] + state.tShift[line], "cell": cell}
                    cell += 1
        return True

    return table_rows


def reader_parser() -> MarkdownIt:
    from markdown_it.rules_block.table import table
    from markdown_it.rules_inline.autolink import autolink
    from markdown_it.rules_inline.backticks import backtick
    from markdown_it.rules_inline.link import link

    md = make_parser()
    md.inline.ruler.at("backticks", _code_spans(backtick))
    md.inline.ruler.at("link", _positioned(link))
    md.inline.ruler.at("autolink", _positioned(autolink))
    md.block.ruler.at("table", _table_rows(table), {"alt": ["paragraph", "reference"]})
    md.disable(["inline", "text_join"])  # the reader runs the inline parser block by block
    return md
