"""Growing Markdown rendered block by block, so a re-render parses only what is new.

Streamed text only grows. Once a blank line is followed by a line that cannot continue a
block above it (not indented, not a list item, outside any code fence), everything before
that line parses the same whatever comes next; its HTML is kept and only the rest is parsed
again at the next re-render. Markers are left as placeholders (``\\x00N:[^N]\\x00``; NUL
never survives markdown-it's input cleaning, so text cannot forge one) and filled in when
the HTML is shown: pending superscripts while streaming, footnote links at the end.

When the text holds something whose meaning depends on text far away (a link reference
definition, a fence indented under a list item), cutting stops: later re-renders parse all
the text after the last cut, and ``exact`` turns false, telling the caller that the joined
HTML may differ from a render of the whole text (so the final render must not reuse it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .markdown_html import render_markdown

__all__ = ["IncrementalMarkdown", "fill_markers", "placeholder"]

_PLACEHOLDER = re.compile("\x00([0-9]+):([^\x00]*)\x00")
_HELD = re.compile("[0-9]+:[^\x00]*")  # what a placeholder holds between its NULs
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_INDENTED_FENCE = re.compile(r"[ \t]+(`{3,}|~{3,})")
# A line that may hold (or start) a link reference definition, also inside a list item or a
# quote: a bracket after container marks only, with "]:" later on the line or no "]" at all
# (a label may go on over the next lines).
_REFERENCE_DEFINITION = re.compile(r"[ \t>*+\-0-9.)]*\[(?:.*\]:|[^\]]*$)")


def placeholder(number: int, source: str) -> str:
    """A marker kept for later (see :func:`fill_markers`)."""
    return f"\x00{number}:{source}\x00"


def fill_markers(html: str, render: Callable[[int, str], str]) -> str:
    """Replace every marker placeholder in ``html`` by ``render(number, source)``."""
    if "\x00" not in html:
        return html
    # NUL comes only from placeholders (markdown-it and the fast path never let one through),
    # so splitting on it puts every placeholder's "N:source" at an odd index.
    # One pass of str.split instead of a match object per marker (an answer has thousands).
    pieces = html.split("\x00")
    held = pieces[1::2]
    if len(pieces) % 2 == 0 or not all(map(_HELD.fullmatch, held)):
        return _PLACEHOLDER.sub(lambda m: render(int(m.group(1)), m.group(2)), html)
    for i, inner in enumerate(held, 1):
        number, _, source = inner.partition(":")
        pieces[2 * i - 1] = render(int(number), source)
    return "".join(pieces)


class IncrementalMarkdown:
    """Renders successive, growing versions of one Markdown text."""

    def __init__(self) -> None:
        self._html: list[str] = []  # HTML of the settled prefix, block group by group
        self._settled = 0  # text offset where the unsettled rest begins
        self._scanned = 0  # offset of the first line not yet scanned
        self._fence: str | None = None  # the open fence's marker run, if any
        self._previous_blank = False
        self._candidate = 0  # the latest safe cut found by the scan
        self.exact = True  # False once cutting stopped (see the module docstring)
        self._text = ""  # the text of the latest call
        # The settled blocks' HTML with markers drawn by ``_drawn_with``, as far as drawn.
        self._drawn_with: Callable[[int, str], str] | None = None
        self._drawn: list[str] = []

    @property
    def settled(self) -> int:
        """How much of the text (an offset) is settled: its HTML kept, never parsed again."""
        return self._settled

    def render(
        self,
        text: str,
        *,
        final: bool = False,
        markers: Callable[[int, str], str] | None = None,
    ) -> str:
        """Placeholder HTML of ``text``, which must extend the previous call's text;
        ``final`` says the text is complete (its last line is checked too), and then ``text``
        may also be the previous text without some of its trailing blank lines.

        With ``markers``, the HTML has its markers drawn by it instead of placeholders
        (:func:`fill_markers`): each settled block is drawn once for every later call with
        the same ``markers``, so a call costs the new text, not the whole."""
        if len(text) < self._scanned:
            dropped = self._text[len(text) :]
            if not (final and self._text.startswith(text)) or dropped.strip():
                raise ValueError("the text must extend the text rendered before")
            # Blank lines changed nothing but the blank-line flag, and no cut lies in them.
            self._scanned = len(text)
        self._text = text
        if self.exact:
            self._scan(text, final=final)
        if self._candidate > self._settled:
            chunk = text[self._settled : self._candidate]
            self._html.append(render_markdown(chunk, markers=placeholder))
            self._settled = self._candidate
        if markers is None:
            return "".join(self._html) + render_markdown(text[self._settled :], markers=placeholder)
        if markers is not self._drawn_with:
            self._drawn_with, self._drawn = markers, []
        drawn = self._drawn
        drawn += [fill_markers(html, markers) for html in self._html[len(drawn) :]]
        return "".join(drawn) + render_markdown(text[self._settled :], markers=markers)

    def _scan(self, text: str, *, final: bool) -> None:
        pos = self._scanned
        while True:
            end = text.find("\n", pos)
            if end < 0:
                if final and pos < len(text):
                    self._line(text, pos, len(text))
                break  # otherwise the last line may still grow
            self._line(text, pos, end)
            if not self.exact:
                return
            pos = end + 1
        self._scanned = pos

    def _line(self, text: str, start: int, end: int) -> None:
        line = text[start:end].rstrip("\r")
        if self._fence is not None:
            stripped = line.strip()
            if stripped and set(stripped) == {self._fence[0]} and len(stripped) >= len(self._fence):
                if line.startswith("    "):
                    self.exact = False
                self._fence = None
            self._previous_blank = False
            return
        if _INDENTED_FENCE.match(line) or _REFERENCE_DEFINITION.match(line):
            self.exact = False
            return
        if not line.strip():
            self._previous_blank = True
            return
        first = line[0]
        fence = _FENCE.match(line)
        if self._previous_blank and not (first in " \t-+*" or first.isdigit()):
            self._candidate = start
        if fence is not None and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            self._fence = fence.group(1)
        self._previous_blank = False
