"""Markdown for answers (``[^n]`` footnotes with their definitions) and reference lists.

The answer text is Markdown already; it passes through with two changes: every marker that
has a citation becomes ``[^n]``, and raw HTML tags outside code are backslash-escaped so a
front end that allows HTML in Markdown shows them as text. Everything citekit adds (titles,
authors, passages) is escaped, and links are written only for http(s) URLs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from .._markers import Marker, split_definitions
from .._models import Answer, References
from ._safe import safe_url
from ._sources import (
    Footnote,
    answer_notes,
    code_regions,
    footnotes,
    format_score,
    inline_markers,
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


def neutralize(text: str, marker: Callable[[Marker], str | None]) -> str:
    """``text`` with raw HTML tags escaped (outside code) and markers rewritten by ``marker``
    (``None`` keeps a marker as it is)."""
    edits: list[tuple[int, int, str]] = []
    for m in inline_markers(text):
        replacement = marker(m)
        if replacement is not None:
            edits.append((m.start, m.end, replacement))
    if "<" in text:
        regions = code_regions(text)
        autolinks = [(a.start(), a.end()) for a in _AUTOLINK.finditer(text)]
        for lt in _TAG_START.finditer(text):
            pos = lt.start()
            if any(a <= pos < b for a, b in regions) or any(a == pos for a, _ in autolinks):
                continue
            edits.append((pos, pos + 1, "\\<"))
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


def _quote(text: str, indent: str) -> list[str]:
    body = neutralize(text, lambda m: "\\" + text[m.start : m.end])
    lines = body.strip("\n").split("\n") or [""]
    return [f"{indent}> {line}".rstrip() for line in lines]


def _notes_md(notes: list[tuple[str, str]]) -> list[str]:
    return [
        f"> **{md_escape(text)}**" if kind != "note" else f"> {md_escape(text)}"
        for kind, text in notes
    ]


def _footnote_lines(note: Footnote, indent: str) -> list[str]:
    lines: list[str] = []
    for k, citation in enumerate(note.passages):
        if k:
            lines.append("")
        lines.append(f"{indent}> *{md_escape(passage_caption(citation, note))}*")
        lines.append(f"{indent}>")
        lines.extend(_quote(citation.cited_text, indent))
    return lines


def _head(note: Footnote) -> str:
    byline = note.byline()
    title = md_link(note.url, note.display_title)
    return f"{title} — {md_escape(byline)}" if byline else title


def _sources_md(notes: Mapping[int, Footnote], cited: set[int]) -> list[str]:
    lines: list[str] = []
    for n, note in sorted(notes.items()):
        if n not in cited:
            continue
        lines.append("")
        lines.append(f"[^{n}]: {_head(note)}")
        lines.append("")
        lines.extend(_footnote_lines(note, "    "))
    uncited = [note for n, note in sorted(notes.items()) if n not in cited]
    if uncited:
        lines += ["", "**Sources not cited inline**", ""]
        for note in uncited:
            lines.append(f"- \\[{note.number}\\] {_head(note)}")
            lines.append("")
            lines.extend(_footnote_lines(note, "  "))
            lines.append("")
    return lines


def _references_md(refs: References) -> list[str]:
    lines: list[str] = []
    for ref in refs.items:
        score = format_score(ref.score)
        suffix = f" — score {score}" if score is not None else ""
        lines.append(f"{ref.rank}. {md_link(ref.source_url, reference_title(ref))}{suffix}")
        lines.append("")
        lines.extend(_quote(ref.content, "   ") if ref.content.strip() else [])
        lines.append("")
    return lines


def _related_md(questions: Iterable[str]) -> list[str]:
    items = [f"- {md_escape(q)}" for q in questions if isinstance(q, str) and q.strip()]
    return ["", "**Related questions**", "", *items] if items else []


def answer_markdown(answer: Answer) -> str:
    """The answer as Markdown: markers as ``[^n]`` footnotes, definitions with the cited
    passages at the end, then related questions and ranked references."""
    notes = footnotes(answer.citations)
    body, definitions = split_definitions(answer.text)
    cited: set[int] = set()

    def rewrite(m: Marker) -> str | None:
        if m.number not in notes:
            return None
        cited.add(m.number)
        return f"[^{m.number}]"

    lines = _notes_md(answer_notes(answer))
    if lines:
        lines.append("")
    text = neutralize(body, rewrite).strip("\n")
    lines.append(text)
    for n, definition in sorted(definitions.items()):
        if n not in notes and definition:
            lines.append(f"\n[^{n}]: {md_escape(definition)}")
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
