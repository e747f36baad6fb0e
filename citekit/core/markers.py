"""Inline footnote markers in answer text.

Magisterium does not document its marker syntax; answers carry ``[^N]`` or ``[N]`` with N
one-based (``N - 1 == document_index``). Markers may be adjacent (``[^1][^3]``). A Markdown link
``[1](https://...)`` is not a marker, and ``[^N]: ...`` / ``[N]: ...`` at the start of a line is
a footnote or link reference definition, not a marker. Elsewhere a following colon or a
parenthesis after a space (``see [2]: ...``, ``[1] (CCC 1730)``) does not stop a marker:
CommonMark reads neither as a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Marker", "find_markers", "inline_numbers", "marker_numbers", "split_definitions"]

# A marker not followed by ``(`` (a link ``[1](url)``) nor by ``[`` unless that bracket opens
# another marker (``[1][2]`` are two markers, ``[1][ref]`` is a reference link). The pattern
# starts with a literal bracket so the regex engine can skip ahead to candidates; escaped
# brackets (``\\[1]``) are rejected in ``find_markers``, definitions in ``_at_definition``.
_MARKER_RE = re.compile(r"\[(\^?)([1-9][0-9]{0,3})\](?!\()(?!\[(?!\^?[1-9][0-9]{0,3}\]))")
_DEFINITION_RE = re.compile(r"^[ ]{0,3}\[\^([1-9][0-9]{0,3})\]:[ \t]?(.*)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Marker:
    """One inline marker: its span in the text and the one-based footnote number."""

    start: int
    end: int
    number: int
    caret: bool

    @property
    def document_index(self) -> int:
        return self.number - 1


def find_markers(text: str) -> list[Marker]:
    """Every inline marker in ``text``, in order; definition lines are skipped."""
    markers: list[Marker] = []
    for m in _MARKER_RE.finditer(text):
        start, end = m.span()
        if (start and text[start - 1] == "\\") or _at_definition(text, start, end):
            continue
        markers.append(Marker(start, end, int(m.group(2)), m.group(1) == "^"))
    return markers


# What may stand before a definition on its line: indentation, then block quote, list item
# and heading prefixes (a renderer sees the definition at the start of that block's text).
_BLOCK_PREFIX = re.compile(r"[ ]{0,3}(?:(?:>|[-+*]|\d{1,9}[.)]|#{1,6})[ \t]+|>)*")


def _at_definition(text: str, start: int, end: int) -> bool:
    """True for ``[^N]:`` or ``[N]:`` at the start of a line or of a block on it."""
    if not text.startswith(":", end):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    prefix = _BLOCK_PREFIX.match(text, line_start)
    return prefix is not None and prefix.end() == start


def marker_numbers(text: str) -> set[int]:
    """The set of footnote numbers used inline in ``text``."""
    return {m.number for m in find_markers(text)}


def inline_numbers(text: str) -> set[int]:
    """Footnote numbers used inline in ``text``, leaving out markers inside code.

    Fenced code blocks and backtick spans hold literal text: a ``[1]`` there is no footnote
    (the HTML renderer, which parses the Markdown, agrees).
    """
    if "`" not in text and "~~~" not in text:
        return marker_numbers(text)
    regions = code_regions(text)
    return {
        m.number
        for m in find_markers(text)
        if not any(start <= m.start < end for start, end in regions)
    }


def split_definitions(text: str) -> tuple[str, dict[int, str]]:
    """Remove ``[^N]: ...`` definition lines; return the body and the definitions by number."""
    defs: dict[int, str] = {}
    regions: list[tuple[int, int]] = []
    if "```" in text or "~~~" in text:  # a definition-like line inside code is code
        regions = code_regions(text)

    def take(m: re.Match[str]) -> str:
        if any(start <= m.start() < end for start, end in regions):
            return m.group(0)
        defs.setdefault(int(m.group(1)), m.group(2).strip())
        return ""

    body = _DEFINITION_RE.sub(take, text)
    return body.rstrip("\n") + ("\n" if text.endswith("\n") and body.strip() else ""), defs


def iter_segments(text: str) -> Iterator[str | Marker]:
    """The text cut into plain strings and markers, in order."""
    pos = 0
    for m in find_markers(text):
        if m.start > pos:
            yield text[pos : m.start]
        yield m
        pos = m.end
    if pos < len(text):
        yield text[pos:]


# A backtick fence's info string cannot hold a backtick (CommonMark 4.5).
_FENCE_RE = re.compile(r"^[ ]{0,3}(`{3,}(?=[^`\n]*$)|~{3,})", re.MULTILINE)
_BACKTICKS_RE = re.compile(r"`+")


def code_regions(text: str) -> list[tuple[int, int]]:
    """Spans of fenced code blocks and inline code spans, where markers are literal text.

    An approximation of CommonMark good enough for marker detection in Markdown and plain
    text output; the HTML renderer relies on markdown-it itself instead.
    """
    regions: list[tuple[int, int]] = []
    pos = 0
    while True:
        fence = _FENCE_RE.search(text, pos)
        if fence is None:
            _inline_code(text, pos, len(text), regions)
            break
        _inline_code(text, pos, fence.start(), regions)
        mark = fence.group(1)
        closing = re.compile(
            r"^[ ]{0,3}" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}[ \t]*$", re.M
        )
        line_end = text.find("\n", fence.end())
        if line_end < 0:
            regions.append((fence.start(), len(text)))
            break
        close = closing.search(text, line_end + 1)
        end = close.end() if close else len(text)
        regions.append((fence.start(), end))
        pos = end
    return regions


def _inline_code(text: str, start: int, end: int, regions: list[tuple[int, int]]) -> None:
    pos = start
    while True:
        opening = _BACKTICKS_RE.search(text, pos, end)
        if opening is None:
            return
        run = opening.group(0)
        search_from = opening.end()
        while True:
            closing = _BACKTICKS_RE.search(text, search_from, end)
            if closing is None:
                # An unmatched run is literal backticks; keep looking after it.
                pos = opening.end()
                break
            if closing.group(0) == run:
                regions.append((opening.start(), closing.end()))
                pos = closing.end()
                break
            search_from = closing.end()
