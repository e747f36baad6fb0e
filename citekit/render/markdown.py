"""Markdown for answers (``[^n]`` footnotes with their definitions) and reference lists.

The answer text is Markdown already; it passes through with two changes: every marker that
has a citation becomes ``[^n]``, and raw HTML tags outside code are backslash-escaped so a
front end that allows HTML in Markdown shows them as text. Everything citekit adds (titles,
authors, passages) is escaped, and links are written only for http(s) URLs.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping

from ..core.models import Answer, References
from ..core.text import Marker, read
from ._safe import safe_url
from ._sources import (
    Footnote,
    answer_notes,
    file_facts,
    footnotes,
    format_score,
    marked,
    passage_caption,
    reference_title,
    references_notes,
)

__all__ = ["answer_markdown", "references_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~!&])")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_AUTOLINK = re.compile(r"<https?://[^\s<>]*>", re.IGNORECASE)


def md_escape(text: str) -> str:
    """``text`` as literal Markdown inline text, on one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def md_link(url: str | None, text: str) -> str:
    href = safe_url(url)
    label = md_escape(text)
    if href is not None:
        return f"[{label}](<{href}>)"
    if url and url.strip():
        return f"{label} ({md_escape(url.strip()[:120])})"
    return label


# An angle destination holds no "<" (CommonMark), so "[^<>\n]" stops at the next one: a text
# of many "](<" without ">" is scanned once, not once per "](<" (quadratic).
_LINK_OPEN = re.compile(r"\]\(\s*(<[^<>\n]*>|[^\s)]*)")
# A link reference definition, also inside block quotes and list items (CommonMark applies it
# to the whole document), with a label that may span lines and a destination on the next line.
# A label holds at most 999 characters (CommonMark): the bound keeps each line's attempt short,
# where an unbounded one ran to the next "]" for every line that opens with "[" (quadratic).
_REFERENCE = re.compile(
    r"^(?:[ \t]*(?:>|[-+*]|\d{1,9}[.)]))*[ \t]*\[[^\]]{1,999}\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|\S*)",
    re.MULTILINE,
)
_IMAGE = re.compile(r"(?<!\\)!\[")
_HTTP = re.compile(r"<?https?://", re.IGNORECASE)


def neutralize(text: str, marker: Callable[[Marker, str], str | None]) -> str:
    """``text`` with markers rewritten by ``marker`` (called with the marker and its source
    text; ``None`` keeps it as it is) and, outside
    code blocks, raw HTML tags, images and links to anything but http(s) made literal text,
    so a front end that renders Markdown permissively shows them instead of acting on them.

    Markers are those :func:`citekit.core.text.read` finds (none in code or links). Code
    blocks are spared the escaping; inline code spans are not (a ``<`` in one gets a visible
    backslash): a front end whose Markdown reads a span differently would let HTML through.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    edits: list[tuple[int, int, str]] = []
    reading = read(text)
    spans = reading.code_blocks
    starts = [a for a, _ in spans]

    def in_code(pos: int) -> bool:
        i = bisect_right(starts, pos) - 1
        return i >= 0 and pos < spans[i][1]

    for m in reading.markers:
        replacement = marker(m, text[m.start : m.end])
        if replacement is not None:
            edits.append((m.start, m.end, replacement))
    if "<" in text or "](" in text or "]:" in text or "![" in text:
        autolinks = {a.start() for a in _AUTOLINK.finditer(text)}
        for lt in _TAG_START.finditer(text):
            pos = lt.start()
            if pos not in autolinks and not in_code(pos):
                edits.append((pos, pos + 1, "\\<"))
        for link in _LINK_OPEN.finditer(text):
            if not _HTTP.match(link.group(1)) and not in_code(link.start()):
                edits.append((link.start() + 1, link.start() + 2, "\\("))
        # Images become links, as in the HTML: no remote content loads with the answer.
        for image in _IMAGE.finditer(text):
            if not in_code(image.start()):
                edits.append((image.start(), image.start() + 1, "\\!"))
        for ref in _REFERENCE.finditer(text):
            if not _HTTP.match(ref.group(1)) and not in_code(ref.start()):
                bracket = text.index("[", ref.start())
                edits.append((bracket, bracket + 1, "\\["))
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


def _literal_marker(marker: Marker, source: str) -> str:
    """The marker's source with its bracket escaped: shown as written, never a footnote."""
    bracket = source.index("[")
    return f"{source[:bracket]}\\{source[bracket:]}"


def _quote(text: str, indent: str) -> list[str]:
    body = neutralize(text, _literal_marker)
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
        lines.append(f"{indent}> *{md_escape(passage_caption(citation, note))}*")
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


def _references_md(refs: References) -> list[str]:
    lines: list[str] = []
    for ref in refs.items:
        score = format_score(ref.score)
        suffix = f" — score {score}" if score is not None else ""
        item = f"{ref.rank}. "
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
    if "```" not in text and "~~~" not in text:
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
    text = _close_open_fence(neutralize(body, rewrite).strip("\n"))
    lines.append(text)
    for n, definition in sorted(definitions.items()):
        if n not in notes and definition:
            # Not a citation: kept as literal text (its marker stays plain text too).
            lines.append(f"\n\\[^{n}\\]: {md_escape(definition)}")
    if answer.files:
        lines += ["", "**Files**", ""]
        for file in answer.files:
            note = f" — {md_escape(file.note)}" if file.note else ""
            lines.append(f"- `{file.name.replace('`', '')}` ({md_escape(file_facts(file))}){note}")
    lines.extend(_sources_md(notes, cited))
    lines.extend(_related_md(answer.related_questions))
    if answer.references is not None and answer.references.items:
        lines += ["", "**Sources (ranked by relevance)**", ""]
        lines.extend(_references_md(answer.references))
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
