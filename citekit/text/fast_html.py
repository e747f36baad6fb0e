"""The HTML markdown-it gives, written without parsing, for the Markdown most answers are.

Answers are mostly headings, paragraphs and one-line bullet items, with ``*emphasis*``,
``**strong**`` and footnote markers in them. For text made only of that (see
:func:`fast_markdown` for the exact subset) the HTML is written straight from the lines,
some twenty times faster than markdown-it parses it (a 114 KB answer with 711 markers:
1.8-2 ms against 38-44 ms, measured side by side); anything else returns ``None`` and the
caller parses. Where every bracket of the text may open a plain marker (``[N]``, ``[^N]``),
a block's ``*`` runs are paired by one regular expression substitution and the markers are
drawn by one split of the whole HTML; elsewhere the inline text is read piece by piece.

The subset is chosen so that nothing in it can mean something else to markdown-it: no
character that opens code, a link, an entity, HTML, an escape, strikethrough, ``_`` emphasis
or a table; no indentation, no hard line break, no line that could start another kind of
block. Emphasis is accepted only as pairs of equal ``*`` runs (one or two) that markdown-it's
own flanking rules let open and close, one pair after another, never nested: those pair up
the same way under CommonMark's delimiter algorithm. Markers are read by the text reader's
rule (``citekit.text.parser.marker_at``), so ``[1]`` means the same here.

``tests/text/test_fast_html.py`` checks the result against markdown-it on generated text
built from the subset's pieces and from the characters just outside it, and the plain route
against the piece-by-piece one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace

from .escape import STYLE
from .parser import marker_at

__all__ = ["fast_markdown", "heading_tags"]

# Characters that open something other than text, emphasis or a marker inline (``!`` only
# before ``[``: an image, read as ``!`` and a link with images off), or that markdown-it
# rewrites before parsing (``\r``, NUL).
# (Looked for one character at a time: ``str.__contains__`` scans far faster than a regular
# expression, which tries an alternation at every position.)
_UNSAFE = "\\`_~<>&|\r\x00\t"
# What the inline pass stops at: a ``*`` (a run of them is read on from its first), a possible
# marker, a stray bracket. A single character class: the regular expression engine skips to
# its characters, where an alternation is tried at every position.
_STOP = re.compile(r"[*\[\]$]")
# ASCII punctuation but ``*`` (markdown-it's ``isMdAsciiPunct``): where a ``*`` run can be
# told to flank by a regular expression, without asking the Unicode classes.
_ASCII_PUNCT = r"!-)+-/:-@\[-`{-~"
# Two runs of one or two ``*`` that the inline pass pairs as ``<em>`` or ``<strong>``, the
# opening run in a shape that opens whatever Unicode says of its neighbours (a letter or digit
# after it; or punctuation after it and a space, a line end or punctuation before it), the
# closing one in a shape that closes (the mirror image), nothing but text between them.
# Where every run of a block is in such a pair, the pairs are those ``_inline`` makes.
_PAIR = re.compile(
    rf"\*(?<!\*\*)(?:(?=\*?[^\W_])|(?<![^ \n{_ASCII_PUNCT}]\*)(?=\*?[{_ASCII_PUNCT}]))(\*?)(?!\*)"
    rf"([^*]+)(?:(?<=[^\W_])|(?<=[{_ASCII_PUNCT}])(?=\*\1(?![^ \n{_ASCII_PUNCT}])))\*\1(?!\*)"
)  # (led by a "*": the engine skips to the next one)
_TAGS = {"": ("<em>", "</em>"), "*": ("<strong>", "</strong>")}
# A marker as the plain route draws it: where every bracket of the text is in such a match,
# each is a marker (nothing after it makes a link, a reference link or maybe a definition).
_MARK = re.compile(r"(\[\^?([1-9][0-9]{0,3})\])(?![(:])")
_HEADING_MARKS = frozenset("#" * n for n in range(1, 7))
# A line starting like this could open an ordered list item.
_ORDERED = re.compile(r"\d{1,9}[.)]")


@functools.lru_cache(maxsize=64)
def heading_tags(level: int, *, strict: bool, top_heading: int) -> tuple[str, str]:
    """Opening and closing HTML of a Markdown heading of ``level`` (1 for ``#``)."""
    # Answers use ``#``/``##`` freely; inside an output they must stay below the notebook's
    # own headings, so ``#`` and ``##`` become ``top_heading`` and the rest follow it.
    level = min(6, max(top_heading, level + top_heading - 2))
    if strict:
        return '<div style="margin:0.6em 0 0.3em 0"><strong>', "</strong></div>\n"
    return f'<h{level} style="{STYLE.HEADING}">', f"</h{level}>\n"


def _starts_text(line: str) -> bool:
    """Whether a line (or a list item's text) starting so can only be paragraph text."""
    first = line[0]
    if first.isalnum():
        return _ORDERED.match(line) is None
    if first in "&(":  # an escaped quote (a bare & is refused before), a parenthesis
        return True
    # ``*word``: not a list item (no space after) and, holding more than stars, not a rule.
    return first == "*" and len(line) > 1 and not line[1].isspace() and line.strip("*") != ""


# A marker: its place in the output, its number and source; drawn once the whole text is known.
_Mark = tuple[int, int, str]

_OTHER, _SPACE, _PUNCT = 1, 2, 3  # never 0: a cached class is truthy
_KINDS: dict[str, int] = {}  # character -> its class for emphasis flanking, filled as met


def _kind(char: str) -> int:
    kind = _KINDS.get(char)
    if kind is None:
        if isWhiteSpace(ord(char)):
            kind = _SPACE
        elif isMdAsciiPunct(ord(char)) or isPunctChar(char):
            kind = _PUNCT
        else:
            kind = _OTHER
        if len(_KINDS) < 4096:
            _KINDS[char] = kind
    return kind


def _inline(src: str, out: list[str], marks: list[_Mark]) -> bool:
    """Append the HTML pieces of inline text ``src`` (already escaped, see
    :func:`fast_markdown`) to ``out``, and each marker to ``marks``;
    False when it leaves the subset (``out`` then holds a partial result the caller drops)."""
    runs: list[tuple[int, int, bool, bool]] = []  # (index in out, length, opens, closes)
    pos = 0
    end = len(src)
    kinds = _KINDS
    for found in _STOP.finditer(src):
        start = found.start()
        if start < pos:
            continue  # inside the marker just read
        if start > pos:
            out.append(src[pos:start])
        if src[start] != "*":
            marker = marker_at(src, start)
            if marker is None:
                return False
            marks.append((len(out), marker.number, src[start : marker.end]))
            out.append("")
            pos = marker.end
            continue
        stop = start + 1
        if stop < end and src[stop] == "*":
            stop += 1
            if stop < end and src[stop] == "*":
                return False  # a run of three or more
        length = stop - start
        # markdown-it's scanDelims for "*" (which may split words); the ends of the text
        # count as spaces.
        last = (kinds.get(src[start - 1]) or _kind(src[start - 1])) if start > 0 else _SPACE
        after = (kinds.get(src[stop]) or _kind(src[stop])) if stop < end else _SPACE
        opens = after != _SPACE and not (after == _PUNCT and last == _OTHER)
        closes = last != _SPACE and not (last == _PUNCT and after == _OTHER)
        runs.append((len(out), length, opens, closes))
        out.append("")
        pos = stop
    if pos < end:
        out.append(src[pos:])
    if len(runs) % 2:
        return False
    for k in range(0, len(runs), 2):
        o_index, o_length, opens, _ = runs[k]
        c_index, c_length, _, closes = runs[k + 1]
        if not (opens and closes and o_length == c_length):
            return False
        tag = "em" if o_length == 1 else "strong"
        out[o_index] = f"<{tag}>"
        out[c_index] = f"</{tag}>"
    return True


def _pair(found: re.Match[str]) -> str:
    opening, closing = _TAGS[found[1]]
    return opening + found[2] + closing


def _inline_plain(src: str, out: list[str], marks: list[_Mark]) -> bool:
    """:func:`_inline` for text whose every bracket may open a plain marker (see
    :func:`fast_markdown`), markers left as written for the caller to draw (and judge): the
    ``*`` runs paired by one substitution where every run is in a pair of ``_PAIR``'s shape,
    by :func:`_inline` where one is not."""
    if "*" not in src:
        out.append(src)
        return True
    paired = _PAIR.sub(_pair, src)
    if "*" not in paired:
        out.append(paired)
        return True
    pieces: list[str] = []
    found: list[_Mark] = []
    if not _inline(src, pieces, found):
        return False
    for i, _, source in found:
        pieces[i] = source
    out.append("".join(pieces))
    return True


def _plain_brackets(text: str) -> int | None:
    """How many ``[`` ``text`` holds when each may open a plain marker (``[N]`` or ``[^N]``
    that nothing after makes a link or a definition): no ``$``, as many ``]`` as ``[``; else
    ``None``. Whether each does is told by the split that draws them (``_MARK``)."""
    if "$" in text:
        return None
    count = text.count("[")
    return count if text.count("]") == count else None


def fast_markdown(
    text: str,
    *,
    strict: bool,
    markers: Callable[[int, str], str],
    top_heading: int,
    plain_route: bool = True,
) -> str | None:
    """What :func:`~citekit.text.markdown_html.render_markdown` gives for ``text``, or ``None``
    when ``text`` is not only:

    * blank lines (empty), ATX headings ``#`` to ``######`` followed by one space and text
      (no closing ``#``), paragraphs, tight bullet lists of one-line ``- `` items (a blank
      line between two items would make the list loose);
    * lines without leading whitespace (nor trailing whitespace other than spaces; two
      spaces or more inside a paragraph would be a hard break) whose first character cannot
      start another block (a letter or digit, but not ``1.``/``1)``, a quote, ``(``,
      ``*word``);
    * inline text without ``\\ ` _ ~ < > & |``, tabs, ``\\r``, NUL or ``![``, where every
      ``[``, ``]`` and ``$`` belongs to a marker and ``*`` runs pair as described above.

    ``markers`` is called for each marker, in order, only once the whole text is known to
    fit (it may count them). ``plain_route=False`` reads every block piece by piece (the
    route taken where a bracket opens no plain marker; the tests compare the two).
    """
    if any(char in text for char in _UNSAFE) or ("!" in text and "![" in text):
        return None
    # With & < > refused, escaping leaves every character but the quotes alone, and turns a
    # quote into an entity made of punctuation: each character keeps its class (space,
    # punctuation, other) at both ends, so emphasis flanks the same, and the whole text is
    # escaped once.
    source = text
    text = text.replace('"', "&quot;").replace("'", "&#x27;")  # esc(text), & < > being absent
    # Where every bracket may open a plain marker, the blocks keep their markers as written
    # and one split of the whole HTML draws them; else _inline finds them block by block.
    plain = _plain_brackets(text) if plain_route else None
    inline = _inline if plain is None else _inline_plain
    out: list[str] = []
    marks: list[_Mark] = []
    paragraph: list[str] = []
    in_list = False  # a list is open (its last line was an item)
    list_before_blank = False  # the last block was a list, and only blank lines followed it
    block_open = f'<div style="{STYLE.BLOCK}">'
    hard_break = False  # the previous line ended with two spaces or more

    def close_paragraph() -> bool:
        if not paragraph:
            return True
        out.append(block_open)
        ok = inline("\n".join(paragraph), out, marks)
        out.append("</div>\n")
        paragraph.clear()
        return ok

    headings: dict[str, tuple[str, str]] = {}  # a heading's marks -> its tags
    for raw in text.split("\n"):
        # Trailing spaces end a block unseen; inside a paragraph one is dropped (two or more
        # would make a hard break, left to markdown-it).
        line = raw.rstrip(" ") if raw else raw
        broken, hard_break = hard_break, line is not raw and len(raw) - len(line) > 1
        if not line:
            if paragraph and not close_paragraph():
                return None
            if in_list:
                out.append("</ul>\n")
                in_list = False
                list_before_blank = True
            continue
        if line != line.strip():
            return None
        first = line[0]
        if first == "#":
            # "#" to "######", one space, then what is not a space, told without
            # a regular expression; no closing "#".
            level, _, content = line.partition(" ")
            if (
                level not in _HEADING_MARKS
                or not content
                or content[0].isspace()
                or line.endswith("#")
                or (paragraph and not close_paragraph())
            ):
                return None
            if in_list:
                out.append("</ul>\n")
                in_list = False
            tags = headings.get(level)
            if tags is None:
                tags = headings[level] = heading_tags(
                    len(level), strict=strict, top_heading=top_heading
                )
            out.append(tags[0])
            if not inline(content, out, marks):
                return None
            out.append(tags[1])
        elif first == "-":
            item = line[2:]
            if not (line.startswith("- ") and item and _starts_text(item)):
                return None
            if list_before_blank or (paragraph and not close_paragraph()):
                return None  # a blank line inside a list makes it loose
            if not in_list:
                out.append(f'<ul style="{STYLE.BULLETS}">\n')
                in_list = True
            out.append("<li>")
            if not inline(item, out, marks):
                return None
            out.append("</li>\n")
        elif not in_list and (first.isalpha() or _starts_text(line)):
            # (a letter: _starts_text's usual case, told without a call; after an item the
            # line would continue the item)
            if paragraph and broken:
                return None
            paragraph.append(line)
        else:
            return None
        list_before_blank = False
    if not close_paragraph():
        return None
    if in_list:
        out.append("</ul>\n")
    if plain is None:
        for i, number, source in marks:
            out[i] = markers(number, source)
        return "".join(out)
    html = "".join(out)
    if not plain:
        return html
    pieces = _MARK.split(html)  # text, then each marker's source and number, and its text
    if len(pieces) != 3 * plain + 1:
        # A bracket opens no plain marker ("[1]:" mid-line is a marker, "[1](" none, "[x]"
        # none): read piece by piece, where each is judged as markdown-it judges it.
        return fast_markdown(
            source, strict=strict, markers=markers, top_heading=top_heading, plain_route=False
        )
    # Each marker drawn in order, the loop in C: sources at 1, 4, 7..., numbers at 2, 5, 8...
    pieces[1::3] = map(markers, map(int, pieces[2::3]), pieces[1::3])
    pieces[2::3] = [""] * plain
    return "".join(pieces)
