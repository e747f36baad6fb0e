"""Where a markdown-it token's text stands in the source it was parsed from.

markdown-it hands inline rules the text of a block without its container prefixes (``>``, list
indentation), heading marks or table pipes, and without source positions. The reader needs
positions in the answer's text, so these helpers map a position in an inline token's content
back to the source, and positions in a text with normalised line ends or cut-out lines back to
the text as written. Private to the text package (:mod:`citekit.text.reader`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

#: What markdown-it's ``mdTrim`` strips (JavaScript's ``trim`` set, CommonMark whitespace).
MD_TRIM = " \t\n\x0b\x0c\r\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
MD_TRIM += "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

_LINE_END = re.compile(r"\r\n?|\n")


class Shift:
    """Positions in a string with pieces cut out -> positions in the string it was cut from.

    ``cuts`` are ``(position in the shorter string, characters cut there)``, in order; a
    position at a cut maps to before the cut piece."""

    __slots__ = ("_at", "_total")

    def __init__(self, cuts: Sequence[tuple[int, int]]) -> None:
        self._at = [at for at, _ in cuts]
        totals = [0]
        for _, size in cuts:
            totals.append(totals[-1] + size)
        self._total = totals

    def __call__(self, pos: int) -> int:
        return pos + self._total[bisect_left(self._at, pos)]


def identity(pos: int) -> int:
    return pos


def normalise(text: str) -> tuple[str, Callable[[int], int]]:
    """``text`` as markdown-it reads it (line ends ``\\n``, NUL replaced, which keeps
    positions), and the map from its positions back to positions in ``text``."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if "\r" not in text:
        return text, identity
    cuts: list[tuple[int, int]] = []
    dropped = 0
    for m in _LINE_END.finditer(text):
        if m.end() - m.start() == 2:  # \r\n -> \n: the \r is cut
            cuts.append((m.start() - dropped, 1))
            dropped += 1
    return _LINE_END.sub("\n", text), Shift(cuts)


class Lines:
    """Line starts of a text whose line ends are ``\\n``."""

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str) -> None:
        starts = [0]
        pos = text.find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        self._starts = starts
        self._text = text

    def start(self, line: int) -> int:
        """Where ``line`` starts (the text's length past the last line)."""
        return self._starts[line] if line < len(self._starts) else len(self._text)

    def end(self, line: int) -> int:
        """Where ``line``'s text ends (its ``\\n``, or the end of the text)."""
        return self._starts[line + 1] - 1 if line + 1 < len(self._starts) else len(self._text)


def locator(inline: Token, opener: Token, norm: str, lines: Lines) -> Callable[[int], int]:
    """Maps a position in an inline token's content (what the inline rules see: the block's
    lines without their container prefixes) to a position in ``norm``. ``opener`` is the token
    before it (paragraph or heading); a table cell's token carries ``meta`` ``row`` (where its
    row's text starts) and ``cell`` (its index), which the reader's table rule records."""
    assert inline.map is not None
    content = inline.content
    first = inline.map[0]
    if "row" in inline.meta:  # a table cell
        positions = cell_positions(norm, inline.meta["row"], lines.end(first), inline.meta["cell"])
        return positions.__getitem__
    if opener.type == "heading_open" and opener.markup.startswith("#"):
        pos = norm.index("#", lines.start(first))
        while norm.startswith("#", pos):
            pos += 1
        while pos < len(norm) and norm[pos] in MD_TRIM:
            pos += 1
        return lambda p: pos + p
    # A paragraph or setext heading: content line k is the end of a source line (its start
    # may have lost container prefixes and indentation, its end only the final trim). Blank-
    # looking lines (no-break spaces) trimmed off the ends can offset the pairing.
    starts = [0]
    nl = content.find("\n")
    while nl >= 0:
        starts.append(nl + 1)
        nl = content.find("\n", nl + 1)
    last = len(starts) - 1
    offset = 0
    for candidate in range(inline.map[1] - first - last):
        if all(
            norm[lines.start(first + candidate + k) : lines.end(first + candidate + k)]
            .rstrip(MD_TRIM)
            .endswith(content[starts[k] : starts[k + 1] - 1 if k < last else None].strip(MD_TRIM))
            for k in range(last + 1)
        ):
            offset = candidate
            break

    def to_source(p: int) -> int:
        k = bisect_right(starts, p) - 1
        content_end = starts[k + 1] - 1 if k < last else len(content)
        line = first + offset + k
        end = lines.end(line)
        if k == last:
            line_start = lines.start(line)
            while end > line_start and norm[end - 1] in MD_TRIM:
                end -= 1
        return end - (content_end - p)

    return to_source


def cell_positions(norm: str, row: int, row_end: int, cell: int) -> list[int]:
    """Source positions of the characters of one table cell's content, as markdown-it's table
    rule cuts the row (``escapedSplit``: an unescaped ``|`` separates, ``\\|`` is a ``|``)."""
    start, end = row, row_end
    while start < end and norm[start] in MD_TRIM:
        start += 1
    while end > start and norm[end - 1] in MD_TRIM:
        end -= 1
    cells: list[list[int]] = []
    current: list[int] = []
    last = start
    escaped = False
    for pos in range(start, end):
        ch = norm[pos]
        if ch == "|":
            if not escaped:
                cells.append(current + list(range(last, pos)))
                current = []
                last = pos + 1
            else:
                current += range(last, pos - 1)
                last = pos
        escaped = ch == "\\"
    cells.append(current + list(range(last, end)))
    if cells and not cells[0]:
        cells.pop(0)
    if cells and not cells[-1]:
        cells.pop()
    positions = cells[cell] if cell < len(cells) else []
    while positions and norm[positions[0]] in MD_TRIM:
        positions = positions[1:]
    while positions and norm[positions[-1]] in MD_TRIM:
        positions = positions[:-1]
    return positions


def locate(
    to_source: Callable[[int], int],
    pos: int,
    norm: str,
    inline: Token,
    lines: Lines,
    source: str,
    *,
    last: bool = False,
) -> int:
    """``to_source(pos)``, checked against the source (``source``: the marker's text, or a
    backtick for code); if the mapping ever failed (it should not: the tests compare every
    marker with its source text), the nearest occurrence in the block's lines is taken."""
    offset = len(source) - 1 if last else 0
    try:
        found = to_source(pos)
    except IndexError:
        found = -1
    if found >= 0 and norm.startswith(source, found - offset):
        return found
    assert inline.map is not None
    region_start, region_end = lines.start(inline.map[0]), lines.end(inline.map[1] - 1)
    hits = [
        region_start + m.start() + offset
        for m in re.finditer(re.escape(source), norm[region_start:region_end])
    ]
    if not hits:
        return max(found, region_start)
    return min(hits, key=lambda hit: abs(hit - found))
