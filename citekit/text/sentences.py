"""An answer's text cut into sentences, each with the footnote markers it carries.

:func:`sentences` is the one splitter: citation health (``citekit.data.corpus.health``) counts the
sentences of an answer and those that cite something. It reads the text with
:func:`citekit.text.reader.read`, so markers, code and definition lines are what every output
sees.

Blocks
    Paragraphs, list items, headings, table rows and block quotes are separate: no sentence
    runs from one into the next. Code blocks are skipped (their text is no sentence), code
    spans stay inside their sentence and are never cut, and footnote definition lines
    (``[^1]: ...``) are not sentences. A table row is one sentence; a table's delimiter row
    (``|---|---|``), thematic breaks and setext underlines are none.

Sentence ends
    ``.``, ``!`` and ``?`` followed by white space and by something that is not a lowercase
    letter; the CJK ``。``, ``！`` and ``？`` wherever they stand. Closing quotes, brackets and
    emphasis after the mark stay with the sentence, and so do markers written after it,
    separated by white space or not (``... dignity.[^1]``, ``... dignity. [1]``,
    ``...尊严。$[1]$``): a marker after a sentence's final punctuation cites that sentence.
    There is no end at an ellipsis (``...``, ``…``), inside a number (``3.5``), after a single
    letter (initials, ``a.``, ``q.``), after the abbreviations that citations use
    (:data:`ABBREVIATIONS`: "cf.", "St.", "Dr.", "e.g.", "i.e." ...), after those that come
    before a number (:data:`NUMBERED`: "n. 34", "no. 5", "p. 12", "pp. 3-4", "art. 2",
    "vol. II" ...), nor after a short capitalised word before a chapter and verse (a book of
    the Bible: "Gen. 1:27", "1 Cor. 13:4", "Rm. 5,12").

What is a sentence
    A stretch with at least one character that is not white space nor Markdown markup
    (``#*_-=+>|:~``, backticks) nor a separator (``,;``), or a marker. A stretch holding only
    markers (a marker alone on its line) joins the sentence before it, if there is one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import Final, NamedTuple

from .parser import Marker
from .reader import read, split_definitions
from .source_map import Shift

__all__ = ["ABBREVIATIONS", "NUMBERED", "Sentence", "sentences"]


class Sentence(NamedTuple):
    """One sentence: its span in the text given to :func:`sentences`, its text as written
    (markup and markers included) and the markers it carries (positions in that text)."""

    start: int
    end: int
    text: str
    markers: tuple[Marker, ...]


#: Words that a period follows without ending the sentence (compared in lowercase, with the
#: dots inside them: "e.g", "z.b"). Single letters are always abbreviations.
# fmt: off
ABBREVIATIONS: Final = frozenset((
    "cf", "cfr", "vgl", "st", "sts", "ste", "sta", "sto", "ss", "dr", "dra", "drs", "mr", "mrs",
    "ms", "mme", "mlle", "prof", "fr", "sr", "sra", "srta", "jr", "mons", "msgr", "card", "rev",
    "e.g", "i.e", "z.b", "d.h", "u.a", "bzw", "usw", "vs", "al", "ibid", "ibidem", "op", "cit",
    "ca", "approx", "hl", "hll", "sel", "s.s", "ss.mm", "pe", "mgr", "p.ej", "p.e", "v.g",
))
#: Words that a period follows without ending the sentence when a number (digits or a Roman
#: numeral) comes next: "n. 34", "no. 5", "p. 12", "art. 2", "vol. II", "c. 1270".
NUMBERED: Final = frozenset((
    "n", "nn", "no", "nos", "nr", "nº", "núm", "p", "pp", "pg", "pgs", "pág", "págs", "art",
    "arts", "q", "qq", "c", "cc", "can", "vol", "vols", "ch", "chap", "cap", "capp", "sec",
    "sect", "par", "para", "fig", "lib", "sess", "ed", "tit", "d", "dist", "v", "vv", "ad",
    "resp", "obj", "s", "ss", "a", "ff", "col", "cols",
))
# fmt: on

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_QUOTE = re.compile(r"[ ]{0,3}>[ ]?")
_HEADING = re.compile(r"[ ]{0,3}#{1,6}(?=[ \t]|$)")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?=[ \t]|$)")
_BREAK = re.compile(r"[ ]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)$")
_DELIMITER = re.compile(r"[ ]{0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
# A run of sentence-ending marks; CJK ones end a sentence wherever they stand.
# What a line opening a block other than a paragraph starts with (after spaces).
_LEADS = frozenset("#>-*+_=|0123456789")
_ENDS = re.compile(r"[.!?。！？．…]+")
_CJK_ENDS = frozenset("。！？．")
_CLOSERS = "\"'”’»)」』】〕）*_~"
_CLOSE = re.compile(f"[{re.escape(_CLOSERS)}]*")
_SPACE = re.compile(r"\s*")
# What a sentence needs beside markers: a character that is none of these (white space,
# Markdown markup, separators). _WORDY finds one, markers' own characters aside.
_QUIET = frozenset(" \t\r\n\f\v#*_-=+>|:~`,;")
_WORDY = re.compile(r"[^\s#*_\-=+>|:~`,;\[\]^$0-9]")
_WORD_BEFORE = re.compile(r"(?:[^\W\d_]+\.)*[^\W_]+$")
# A number after "n." / "vol.": digits, or a Roman numeral ("vol. II", "cap. iv", "q. I,").
_VERSE = re.compile(r"[0-9]{1,3}[:,.][0-9]")
_NUMBER_AFTER = re.compile(r"[0-9]|[IVXLCDMivxlcdm]{2,}\b|[IVXLCDMivxlcdm](?![\w\s])")


def sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of an answer's text, in order (see the module's rules).

    Positions are in ``text``; markers in code or on definition lines are not markers (as
    :func:`citekit.text.reader.read` says), so every marker of ``read(text).markers`` is in
    exactly one sentence.

    >>> from citekit.text.sentences import sentences
    >>> for s in sentences("Work has dignity (cf. n. 34).[^1] St. Joseph worked. Why? [2]"):
    ...     print(repr(s.text), [m.number for m in s.markers])
    'Work has dignity (cf. n. 34).[^1]' [1]
    'St. Joseph worked.' []
    'Why? [2]' [2]
    """
    return _sentences(text)


@lru_cache(maxsize=256)
def _sentences(text: str) -> tuple[Sentence, ...]:
    reading = read(text)
    body = reading.body
    inner = read(body)  # the same markers, in the body's positions
    spans = _split(body, inner.markers, inner.code_spans, inner.code_blocks)
    markers = inner.markers
    count = len(markers)
    out: list[Sentence] = []
    i = 0
    if not reading.definitions:  # the body is the text: positions stand
        for start, end in spans:
            j = i
            while j < count and markers[j].start < end:
                j += 1
            out.append(Sentence(start, end, text[start:end], markers[i:j]))
            i = j
        return tuple(out)
    to_text = Shift(split_definitions(text)[2])  # lines were cut out: positions shift back
    for start, end in spans:
        own: list[Marker] = []
        while i < count and markers[i].start < end:
            m = markers[i]
            own.append(Marker(to_text(m.start + 1) - 1, to_text(m.end), m.number, m.style))
            i += 1
        a, b = to_text(start + 1) - 1, to_text(end)
        out.append(Sentence(a, b, text[a:b], tuple(own)))
    return tuple(out)


def _split(
    body: str,
    markers: tuple[Marker, ...],
    code_spans: tuple[tuple[int, int], ...],
    code_blocks: tuple[tuple[int, int], ...],
) -> list[tuple[int, int]]:
    """Sentence spans of ``body`` (a text without definition lines)."""
    starts = {m.start: m for m in markers}
    spans: list[tuple[int, int]] = []
    pieces: list[tuple[int, int]] = []
    for a, b in _units(body, code_blocks):
        pieces.clear()
        _cut(body, a, b, starts, code_spans, pieces)
        for start, end in pieces:
            kind = _kind(body, start, end, starts)
            if kind == "text" or (kind == "markers" and not spans):
                spans.append((start, end))
            elif kind == "markers":  # markers alone cite the sentence before them
                spans[-1] = (spans[-1][0], end)
    return spans


def _kind(body: str, start: int, end: int, starts: dict[int, Marker]) -> str:
    """``"text"``, ``"markers"`` (markers, white space and markup only) or ``"empty"``."""
    if _WORDY.search(body, start, end):
        return "text"  # the common case, found at once
    pos = start
    found = False
    while pos < end:
        m = starts.get(pos)
        if m is not None:
            pos = m.end
            found = True
            continue
        if body[pos] not in _QUIET:
            return "text"
        pos += 1
    return "markers" if found else "empty"


def _lines(body: str) -> list[tuple[int, int, str]]:
    """``(start, end, line)`` of every line of ``body``, line ends (``\\n``, ``\\r\\n``, ``\\r``)
    left out."""
    out: list[tuple[int, int, str]] = []
    if "\r" in body:
        for m in _LINE.finditer(body):
            line = m.group().rstrip("\r\n")
            out.append((m.start(), m.start() + len(line), line))
            if m.end() == len(body):
                break
        return out
    pos = 0
    for line in body.split("\n"):
        end = pos + len(line)
        out.append((pos, end, line))
        pos = end + 1
    return out


def _units(body: str, code_blocks: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """The blocks of ``body`` that hold sentences, as ``(start, end)``: paragraphs, list items,
    headings, table rows; without their leading markup, code blocks left out."""
    lines = _lines(body)
    units: list[tuple[int, int]] = []
    first = -1  # start of the open paragraph (-1: none)
    last = 0  # its end so far
    quoted = False
    table = False
    blocks = iter(code_blocks)
    block = next(blocks, None)
    for n, (start, end, line) in enumerate(lines):
        if block is not None:
            while block is not None and block[1] <= start:
                block = next(blocks, None)
            if block is not None and block[0] <= start < block[1]:
                if first >= 0:  # a line of a code block
                    units.append((first, last))
                    first = -1
                table = False
                continue
        text = line.lstrip()
        if text and text[0] not in _LEADS and not table and "|" not in line:
            # The common line: text that opens no block, in a paragraph.
            if quoted:
                if first >= 0:
                    units.append((first, last))
                    first = -1
                quoted = False
            if first < 0:
                first = end - len(text)
            last = end
            continue
        pos = start
        quote = _QUOTE.match(body, pos, end)
        is_quote = quote is not None
        while quote is not None:
            pos = quote.end()
            quote = _QUOTE.match(body, pos, end)
        rest = body[pos:end]
        blank = not rest.strip()
        opener = None
        header = False
        single = False
        if not blank and not _BREAK.match(body, pos, end):
            delimiter = "|" in rest and _DELIMITER.match(body, pos, end) is not None
            if delimiter:
                table = True
            else:
                opener = _HEADING.match(body, pos, end)
                single = opener is not None or table
                if opener is None:
                    opener = _ITEM.match(body, pos, end)
                if not table and "|" in rest and n + 1 < len(lines):
                    nxt_start, nxt_end, nxt = lines[n + 1]
                    header = (
                        "|" in nxt
                        and _DELIMITER.match(body, _after_quotes(body, nxt_start, nxt_end), nxt_end)
                        is not None
                    )
                single = single or header
                if opener is not None:
                    pos = opener.end()
                content = _skip_space(body, pos, end)
                if content < end and not single and opener is None and is_quote == quoted:
                    if first < 0:
                        first = content
                    last = end
                    continue
                if first >= 0:
                    units.append((first, last))
                    first = -1
                quoted = is_quote
                if content < end:
                    if single:
                        units.append((content, end))  # one line, one unit
                    else:
                        first, last = content, end
                continue
        # a blank line, a thematic break, an underline or a table's delimiter row
        if first >= 0:
            units.append((first, last))
            first = -1
        quoted = is_quote
        if blank:
            table = False
    if first >= 0:
        units.append((first, last))
    return units


def _after_quotes(body: str, start: int, end: int) -> int:
    quote = _QUOTE.match(body, start, end)
    while quote is not None:
        start = quote.end()
        quote = _QUOTE.match(body, start, end)
    return start


def _skip_space(body: str, pos: int, end: int) -> int:
    return _SPACE.match(body, pos, end).end()  # type: ignore[union-attr]  # (always matches)


def _skip_closers(body: str, pos: int, end: int) -> int:
    return _CLOSE.match(body, pos, end).end()  # type: ignore[union-attr]  # (always matches)


def _cut(
    body: str,
    a: int,
    b: int,
    starts: dict[int, Marker],
    code_spans: tuple[tuple[int, int], ...],
    out: list[tuple[int, int]],
) -> None:
    """Cut the block ``body[a:b]`` into sentence spans (appended to ``out``)."""
    start = a
    space = _skip_space
    close = _skip_closers
    for found in _ENDS.finditer(body, a, b):
        at = found.start()
        if at < start:
            continue
        mark = found.group()
        cjk = mark[-1] in _CJK_ENDS
        if not cjk:
            if "…" in mark or ".." in mark:
                continue  # an ellipsis
            after = body[found.end() : found.end() + 1]
            if after and not after.isspace() and after not in _CLOSERS and after not in "[$":
                continue  # "3.5", "e.g.,", a file name, a link's text
        if code_spans and _in(code_spans, at):
            continue
        end = close(body, found.end(), b)
        marked = False
        while True:  # markers after the mark cite this sentence ("[1] [2]", "[1], [2]")
            nxt = space(body, end, b)
            if marked and body[nxt : nxt + 1] in (",", ";"):
                nxt = space(body, nxt + 1, b)
            m = starts.get(nxt)
            if m is None:
                break
            end = close(body, m.end, b)
            marked = True
        nxt = space(body, end, b)
        if not cjk:
            if nxt == end < b:
                continue  # no space after the mark and what follows it
            if nxt < b and body[nxt].islower():
                continue
            if mark == "." and _abbreviation(body, a, at, nxt, b):
                continue
        out.append((start, end))
        start = nxt
    if start < b:
        out.append((start, b))


def _abbreviation(body: str, a: int, dot: int, nxt: int, b: int) -> bool:
    """Whether the period at ``dot`` closes an abbreviation (see :data:`ABBREVIATIONS`)."""
    if dot == a or body[dot - 1].isdigit():
        return False  # a number ends the sentence ("in 1999.")
    space = body.rfind(" ", max(a, dot - 8), dot)
    found = body[space + 1 : dot] if space >= 0 else ""
    if not found.isalpha():  # not a plain word after a space: "(cf", "e.g", "**word", ...
        word = _WORD_BEFORE.search(body, max(a, dot - 16), dot)
        if word is None:
            return False
        if word.start() > a and body[word.start() - 1].isalnum():
            return False  # the window cut a longer word
        found = word.group()
    elif len(found) > 6:
        return False  # longer than any abbreviation
    token = found.lower()
    if len(token) == 1:
        return token.isalpha()
    if token in ABBREVIATIONS:
        return True
    if token in NUMBERED:
        return _NUMBER_AFTER.match(body, nxt, b) is not None
    # A book of the Bible before chapter and verse: "Gen. 1:27", "1 Cor. 13:4", "Rm. 5,12".
    return len(found) <= 4 and found[0].isupper() and _VERSE.match(body, nxt, b) is not None


def _in(spans: tuple[tuple[int, int], ...], pos: int) -> bool:
    i = bisect_right(spans, (pos, 1 << 62)) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]
