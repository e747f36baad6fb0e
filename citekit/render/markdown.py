"""Markdown for answers (``[^n]`` footnotes with their definitions) and reference lists.

The answer text is Markdown already; it passes through with two changes: every marker that
has a citation becomes ``[^n]``, and what a permissive front end would act on is made literal
text (see :func:`neutralize`). Everything citekit adds (titles, authors, passages, the
question) is escaped by :func:`md_escape`, and links are written only for http(s) URLs.

Nothing a provider sends becomes HTML, an attribute or a handler in the renderers that read
this Markdown (markdown-it with HTML on, mistune as nbconvert uses it, python-markdown with
``attr_list``): every ``<`` outside code is written ``&lt;`` (a backslash is no escape for
``<`` in python-markdown), and a ``{`` is written ``\\{`` (python-markdown's ``attr_list``
reads ``{: onclick=...}`` as attributes). Code keeps its ``<`` and ``{`` as written where every
renderer reads it as code alike (see :func:`_verbatim_code`); elsewhere code is escaped as
text is, a visible ``&lt;`` being the price of safety.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from ..text.escape import safe_url
from ..text.parser import Marker, make_parser
from ..text.reader import carets_only, read
from ._sources import (
    Footnote,
    answer_notes,
    chunk_markers,
    file_facts,
    footnotes,
    format_score,
    marked,
    passage_caption,
    reference_title,
    references_notes,
)

if TYPE_CHECKING:
    from ..model import Answer, References

__all__ = ["answer_markdown", "references_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]>#|~!{}])|(<)|(&)")
# Every "<", with the backslashes before it (an odd run: the provider escaped it, which
# python-markdown does not honour): not only one that could open a tag, a comment or a
# processing instruction, since any other opens an autolink somewhere (python-markdown's
# e-mail rule takes "<[r]\n&lt;x@e.org>" across lines and an entity; CommonMark's "<1@e.org>").
_TAG_START = re.compile(r"(\\*)<")
_BRACE = re.compile(r"(\\*)\{")
_AUTOLINK = re.compile(r"<https?://[^\s<>]*>", re.IGNORECASE)


def _escape_special(m: re.Match[str]) -> str:
    if m.group(2):
        return "&lt;"
    if m.group(3):
        return "&amp;"
    return "\\" + m.group(1)


def md_escape(text: str) -> str:
    """``text`` as literal Markdown inline text, on one line: ``<`` and ``&`` as entities (the
    one escape every Markdown honours for them), other punctuation backslash-escaped."""
    return _SPECIAL.sub(_escape_special, " ".join(text.split()))


def _md_code(text: str) -> str:
    """``text`` as an inline code span on one line (backticks dropped), which every renderer
    reads as code, so its ``<`` stays as written; as escaped text when it holds what
    python-markdown reads as raw HTML even there (see ``_RAW_TEXT``)."""
    plain = " ".join(text.replace("`", "").split())
    if not plain:
        return "(no name)"
    risky = _RAW_TEXT.search(plain) or _LOOSE_CHARREF.search(plain)
    return md_escape(plain) if risky else f"`{plain}`"


def md_link(url: str | None, text: str) -> str:
    href = safe_url(url)
    label = md_escape(text)
    if href is not None:
        return f"[{label}](<{href}>)"
    if url and url.strip():
        return f"{label} ({md_escape(url.strip()[:120])})"
    return label


# Lookaheads: a match never hides the next one ("](x ... [y](javascript:z)"). Only whether a
# destination starts "http(s)://" (or "<http(s)://") is asked, so nine characters are read past
# the spaces: each "](" costs the same however long the text after it (never quadratic).
_LINK_OPEN = re.compile(r"\]\((?=\s*([^\s)]{0,9}))")
# A link reference definition, also inside block quotes and list items (CommonMark applies it
# to the whole document), with a label that may span lines and a destination on the next line.
# A label holds at most 999 characters (CommonMark): the bound keeps each line's attempt short,
# where an unbounded one ran to the next "]" for every line that opens with "[" (quadratic).
_REFERENCE = re.compile(
    r"^(?=(?:[ \t]*(?:>|[-+*]|\d{1,9}[.)]))*[ \t]*\[[^\]]{1,999}\]:[ \t]*\n?[ \t]*(\S{0,9}))",
    re.MULTILINE,
)
_IMAGE = re.compile(r"(?<!\\)!\[")
_HTTP = re.compile(r"<?https?://", re.IGNORECASE)


def neutralize(
    text: str, marker: Callable[[Marker, str], str | None] | None, *, nested: bool = False
) -> str:
    """``text`` with markers rewritten by ``marker`` (called with the marker and its source
    text; ``None`` keeps it as it is; no ``marker`` keeps them all) and what a permissive
    Markdown front end would act on made literal text: outside code, every ``<`` becomes
    ``&lt;`` (a backslash the provider put before it is dropped: ``\\<`` read as CommonMark
    shows ``<``, the same as ``&lt;``), a ``{`` becomes ``\\{``, an ``&#`` that starts no character
    reference becomes ``&amp;#``, and images and links to anything but http(s) are escaped;
    autolinks to http(s) are kept.

    Markers are those :func:`citekit.text.reader.read` finds (none in code or links). Code that
    every renderer reads as code (:func:`_verbatim_code`; none when ``nested``: the text is
    written inside a block quote or a list) keeps its ``<`` and ``{``; other code is escaped
    as text is. Links and images in inline code spans are escaped too.
    """
    if "\r" in text:  # (a single character is looked for far faster than two)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    edits: list[tuple[int, int, str]] = []
    reading = read(text)
    if marker is not None:
        for m in reading.markers:
            replacement = marker(m, text[m.start : m.end])
            if replacement is not None:
                edits.append((m.start, m.end, replacement))
    escapes = "<" in text or "{" in text or ("&" in text and "&#" in text)
    links = _may_link(text, reading.markers) or ("!" in text and "![" in text)
    if not (escapes or links):  # the code's extent matters only to these
        return _apply(text, edits)
    verbatim = _verbatim_code(text, nested=nested)
    blocks = set(reading.code_blocks)
    in_block = _inside([span for span in verbatim if span in blocks])
    if escapes:
        literal = _inside(verbatim + [(a.start(), a.end()) for a in _AUTOLINK.finditer(text)])
        for found in _LOOSE_CHARREF.finditer(text):
            if not literal(found.start()):
                edits.append((found.start(), found.start() + 1, "&amp;"))
        for found in _TAG_START.finditer(text):
            pos = found.end() - 1
            if not literal(pos):
                escaped = len(found.group(1)) % 2  # drop the provider's escaping backslash
                edits.append((pos - escaped, pos + 1, "&lt;"))
        for found in _BRACE.finditer(text):
            pos = found.end() - 1
            if len(found.group(1)) % 2 == 0 and not literal(pos):
                edits.append((pos, pos + 1, "\\{"))
    if links:
        for link in _LINK_OPEN.finditer(text):
            if not _HTTP.match(link.group(1)) and not in_block(link.start()):
                edits.append((link.start() + 1, link.start() + 2, "\\("))
        # Images become links, as in the HTML: no remote content loads with the answer.
        for image in _IMAGE.finditer(text):
            if not in_block(image.start()):
                edits.append((image.start(), image.start() + 1, "\\!"))
        for ref in _REFERENCE.finditer(text):
            if not _HTTP.match(ref.group(1)) and not in_block(ref.start()):
                bracket = text.index("[", ref.start())
                edits.append((bracket, bracket + 1, "\\["))
    return _apply(text, edits)


def _may_link(text: str, markers: tuple[Marker, ...]) -> bool:
    """Whether ``text`` holds ``](`` or ``]:`` (a link, a reference definition). Where every
    ``]`` closes one of its ``markers`` (none is followed by ``(``: that makes a link, not a
    marker), only a marker followed by ``:`` can: one count and a look after each marker
    instead of two scans for two characters (each far slower than for one)."""
    if text.count("]") == len(markers):  # (a corner marker's "]" is followed by its "$")
        return any(text.startswith(":", m.end - (m.style == "corner")) for m in markers)
    return "](" in text or "]:" in text


def _inside(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """Whether a position falls in one of ``spans``."""
    spans = sorted(spans)
    starts = [a for a, _ in spans]

    def inside(pos: int) -> bool:
        i = bisect_right(starts, pos) - 1
        return i >= 0 and pos < spans[i][1]

    return inside


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, replacement)`` made (an edit overlapping an earlier
    one is dropped)."""
    if not edits:
        return text
    edits.sort()
    out: list[str] = []
    last = 0
    for start, end, replacement in edits:
        if start < last:
            continue
        out.append(text[last:start])
        out.append(replacement)
        last = end
    out.append(text[last:])
    return "".join(out)


# A fence python-markdown's fenced_code reads as CommonMark does: at the start of a line, with
# a language name or nothing after it (python-markdown reads "{...}" there as attributes).
_VERBATIM_FENCE = re.compile(r"(`{3,}|~{3,})[ ]*[\w#.+-]*[ ]*\n")
# What python-markdown's raw HTML reader (Python's html.parser, run before inline code is
# read) takes for a comment, a declaration or the start of raw text even inside a code span,
# and then reads the rest of the line unlike CommonMark.
_RAW_TEXT = re.compile(
    r"<(?:[!?]|/?(?:script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext)"
    r"(?![A-Za-z0-9-]))",
    re.IGNORECASE,
)
# "&#" that starts no character reference: Python's html.parser, which python-markdown runs
# over the whole text, loses its place there, and raw HTML after it (in a code span too) can
# come out live. Written "&amp;#" it shows the same.
_LOOSE_CHARREF = re.compile(r"&#(?![0-9]{1,7};|[xX][0-9a-fA-F]{1,6};)")
# A line python-markdown's fenced_code may take for a fence, wherever CommonMark puts it.
_FENCE_LINE = re.compile(r"^(?:`{3,}|~{3,})", re.MULTILINE)


def _verbatim_code(text: str, *, nested: bool = False) -> list[tuple[int, int]]:
    """The code of ``text`` (positions) that markdown-it, mistune and python-markdown all read
    as code, so a ``<`` in it can stay as written: inline code spans on one line, and fenced
    blocks at the start of a line (not ``nested``) whose closing fence repeats the opening one
    (or that run to the end of the text, where :func:`_close_open_fence` closes them so),
    up to the first other fence-like line (after it, python-markdown may pair fences unlike
    CommonMark).

    Other code (indented blocks, fences in lists or quotes, spans over several lines) is read
    differently by some renderer (python-markdown wants four spaces in a list item, and no
    fence inside one), so it is escaped as text is."""
    reading = read(text)
    blocks = reading.code_blocks
    tables = _tables(text) if "|" in text else []
    spans = [
        (a, b)
        for a, b in reading.code_spans
        if (a, b) not in blocks
        and "\n" not in text[a:b]
        and not _RAW_TEXT.search(text, a, b)
        and not _LOOSE_CHARREF.search(text, a, b)
        and not any(t <= a < u for t, u in tables)
    ]
    out = _paired_alone(text, spans, blocks)
    if nested:
        return out
    if not blocks:
        return sorted(out)
    # (A MULTILINE "^" is tried at every character: scanned only when there are blocks.)
    fence_lines = [m.start() for m in _FENCE_LINE.finditer(text)]
    clean = 0  # python-markdown pairs the fences before this as CommonMark does
    for start, end in blocks:
        if any(clean <= pos < start for pos in fence_lines):
            break
        if _verbatim_block(text, start, end):
            out.append((start, end))
            clean = end
        elif any(start <= pos < end for pos in fence_lines):
            break
    return sorted(out)


_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_BACKTICKS = re.compile(r"`+")


def _paired_alone(
    text: str, spans: list[tuple[int, int]], blocks: tuple[tuple[int, int], ...]
) -> list[tuple[int, int]]:
    """The ``spans`` whose paragraph (the lines between two blank lines) has no backtick
    outside them and no code block: python-markdown joins lines CommonMark reads as separate
    blocks (a list item after a paragraph, a table row) and would pair their backticks in
    another way, leaving some ``<`` outside code."""
    if not spans:
        return []
    in_span = _inside(spans)
    in_block = _inside(list(blocks))
    cuts = [0, *(m.start() + 1 for m in _BLANK_LINE.finditer(text)), len(text)]
    out: list[tuple[int, int]] = []
    for lo, hi in itertools.pairwise(cuts):
        mine = [span for span in spans if lo <= span[0] < hi]
        if mine and all(
            in_span(run.start()) and not in_block(run.start())
            for run in _BACKTICKS.finditer(text, lo, hi)
        ):
            out.extend(mine)
    return out


def _tables(text: str) -> list[tuple[int, int]]:
    """Where markdown-it reads tables in ``text``: renderers end a table at different lines."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    found = []
    for token in _BLOCKS.parse(text):
        if token.type == "table_open" and token.map:
            first, last = token.map
            found.append((starts[first], starts[last] if last < len(starts) else len(text)))
    return found


_BLOCKS = make_parser()


def _verbatim_block(text: str, start: int, end: int) -> bool:
    opening = _VERBATIM_FENCE.match(text, start)
    if opening is None or (start and text[start - 1] != "\n"):
        return False
    fence = opening.group(1)
    last = text[text.rfind("\n", start, end - 1) + 1 : end].rstrip("\n")
    closes = end > opening.end() and set(last.strip(" ")) == {fence[0]}
    if closes and len(last.strip(" ")) >= len(fence):
        return last.rstrip(" ") == fence
    return end == len(text)  # left open: closed with this very fence at the end


def _literal_marker(marker: Marker, source: str) -> str:
    """The marker's source with its bracket escaped: shown as written, never a footnote."""
    bracket = source.index("[")
    return f"{source[:bracket]}\\{source[bracket:]}"


def _quote(text: str, indent: str) -> list[str]:
    body = neutralize(text, _literal_marker, nested=True)
    lines = body.strip("\n").split("\n") or [""]
    return [f"{indent}> {line}".rstrip() for line in lines]


def _notes_md(notes: list[tuple[str, str]]) -> list[str]:
    return [
        f"> **{md_escape(text)}**" if kind != "note" else f"> {md_escape(text)}"
        for kind, text in notes
    ]


def _footnote_lines(note: Footnote, indent: str) -> list[str]:
    lines: list[str] = []
    for k, citation in enumerate(note.quoted()):
        if k:
            lines.append("")
        caption = passage_caption(citation, note, fallback=False)
        if caption:  # else the passage follows alone: its start repeated would say nothing
            lines.append(f"{indent}> *{md_escape(caption)}*")
            lines.append(f"{indent}>")
        lines.extend(_quote(citation.cited_text, indent))
    return lines


def _head(note: Footnote) -> str:
    # Always "title — something": in CommonMark without footnotes, "[^2]: one-token" would
    # be a link reference definition turning the marker into a link; the dash prevents it.
    byline = note.byline() or f"source {note.number}"
    return f"{md_link(note.url, note.display_title)} — {md_escape(byline)}"


def _sources_md(notes: Mapping[int, Footnote], cited: set[int]) -> list[str]:
    lines: list[str] = []
    for n, note in sorted(notes.items()):
        if n not in cited:
            continue
        lines.append("")
        lines.append(f"[^{n}]: {_head(note)}")
        lines.append("")
        lines.extend(_footnote_lines(note, "    "))
    rest = [note for n, note in sorted(notes.items()) if n not in cited]
    # Sources the text links to are cited by their link; the others are cited nowhere.
    for title, group in (
        ("**Sources linked in the text**", [note for note in rest if note.linked]),
        ("**Sources not cited inline**", [note for note in rest if not note.linked]),
    ):
        if not group:
            continue
        lines += ["", title, ""]
        for note in group:
            byline = note.byline()
            head = md_link(note.url, note.display_title)
            lines.append(
                f"- \\[{note.number}\\] {head}" + (f" — {md_escape(byline)}" if byline else "")
            )
            quoted = _footnote_lines(note, "  ")
            lines.extend(["", *quoted, ""] if quoted else [])
    return lines


def _references_md(refs: References, notes: Mapping[int, Footnote] | None = None) -> list[str]:
    """The chunks, rank 1 first; beside an answer's footnotes a bulleted list where a chunk of
    a footnoted source carries that source's number (one number per source), its rank in words."""
    lines: list[str] = []
    numbers = chunk_markers(refs.items, notes or {})
    for ref, number in zip(refs.items, numbers, strict=True):
        score = format_score(ref.score)
        suffix = f" — score {score}" if score is not None else ""
        item = f"{ref.rank}. "
        if notes:
            item = "- "
            label = f"\\[{number}\\]" if number is not None else "(not cited)"
            suffix = f" — rank {ref.rank}" + (f" · score {score}" if score is not None else "")
            lines.append(f"{item}{label} {md_link(ref.source_url, reference_title(ref))}{suffix}")
            lines.append("")
            lines.extend(_quote(ref.content, "  ") if ref.content.strip() else [])
            lines.append("")
            continue
        lines.append(f"{item}{md_link(ref.source_url, reference_title(ref))}{suffix}")
        lines.append("")
        # The quote is indented as deep as the item's text ("10. " needs four spaces).
        lines.extend(_quote(ref.content, " " * len(item)) if ref.content.strip() else [])
        lines.append("")
    return lines


def _related_md(questions: Iterable[str]) -> list[str]:
    items = [f"- {md_escape(q)}" for q in questions if isinstance(q, str) and q.strip()]
    return ["", "**Related questions**", "", *items] if items else []


_OPEN_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})", re.MULTILINE)


def _close_open_fence(text: str) -> str:
    """``text`` with a code fence it leaves open closed (a stream cut inside a code block),
    so the footnote definitions after it are not swallowed by the code block."""
    if ("`" not in text or "```" not in text) and ("~" not in text or "~~~" not in text):
        return text
    spans = read(text).code_blocks
    if not spans or spans[-1][1] < len(text):
        return text
    opening = _OPEN_FENCE.match(text, spans[-1][0])
    if opening is None:  # an indented code block: a blank line ends it
        return text
    mark = opening.group(1)
    last_line = text.rsplit("\n", 1)[-1].strip()
    closed = (
        text.count("\n", spans[-1][0]) > 0
        and set(last_line) == {mark[0]}
        and len(last_line) >= len(mark)
    )
    return text if closed else f"{text}\n{mark}"


def answer_markdown(answer: Answer) -> str:
    """The answer as Markdown: markers as ``[^n]`` footnotes, definitions with the cited
    passages at the end, then related questions and ranked references."""
    notes = footnotes(answer.citations)
    whole = read(answer.text)
    body, definitions = whole.body, whole.definitions
    cited: set[int] = set()

    markable = marked(notes)

    def rewrite(m: Marker, source: str) -> str | None:
        if m.number not in markable:
            return None
        cited.add(m.number)
        return f"[^{m.number}]"

    lines = _notes_md(answer_notes(answer))
    if lines:
        lines.append("")
    numbers = {m.number for m in read(body).markers}
    if "\r" not in body and carets_only(body) and all(n in markable for n in numbers):
        # The usual text: every marker a [^n] of a source, written as it is.
        cited.update(numbers)
        text = neutralize(body, None)
    else:
        text = neutralize(body, rewrite)
    text = _close_open_fence(text.strip("\n"))
    lines.append(text)
    for n, definition in sorted(definitions.items()):
        if n not in notes and definition:
            # Not a citation: kept as literal text (its marker stays plain text too).
            lines.append(f"\n\\[^{n}\\]: {md_escape(definition)}")
    if answer.files:
        lines += ["", "**Files**", ""]
        for file in answer.files:
            note = f" — {md_escape(file.note)}" if file.note else ""
            lines.append(f"- {_md_code(file.name)} ({md_escape(file_facts(file))}){note}")
    lines.extend(_sources_md(notes, cited))
    lines.extend(_related_md(answer.related_questions))
    if answer.references is not None and answer.references.items:
        lines += ["", "**Sources (ranked by relevance)**", ""]
        lines.extend(_references_md(answer.references, notes))
    return "\n".join(lines).rstrip() + "\n"


def references_markdown(refs: References) -> str:
    """A GPTBots reference list as a numbered Markdown list, rank 1 first."""
    lines = _notes_md(references_notes(refs))
    if lines:
        lines.append("")
    lines += ["**Sources (ranked by relevance)**", ""]
    if not refs.items:
        lines.append("No knowledge chunks were retrieved.")
    lines.extend(_references_md(refs))
    return "\n".join(lines).rstrip() + "\n"
