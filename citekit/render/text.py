"""Plain text for answers and reference lists (``text/plain``, terminals, logs).

The answer text is kept as written (Markdown reads well as text), with markers normalised to
``[n]`` and definition lines moved into a numbered source list.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.models import Answer, References
from ..core.text import read
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
    snippet,
)

__all__ = ["answer_text", "body_text", "references_text", "sources_text"]

_SNIPPET = 240


def _notes_text(notes: list[tuple[str, str]]) -> list[str]:
    return [f"[{text}]" if kind != "note" else f"Note: {text}" for kind, text in notes]


def _footnote_text(note: Footnote, cited: bool) -> list[str]:
    head = f"  [{note.number}] {note.display_title}"
    byline = note.byline()
    if byline:
        head += f" — {byline}"
    if not cited:
        head += " (not cited inline)"
    lines = [head]
    if note.url:
        lines.append(f"      {note.url.strip()}")
    for citation in note.quoted():
        quote = snippet(citation.cited_text, _SNIPPET)
        if quote:
            lines.append(f"      {passage_caption(citation, note)}: “{quote}”")
    return lines


def _references_text(refs: References) -> list[str]:
    lines: list[str] = []
    for ref in refs.items:
        score = format_score(ref.score)
        head = f"  {ref.rank}. {reference_title(ref)}"
        if score is not None:
            head += f" (score {score})"
        lines.append(head)
        if ref.source_url:
            lines.append(f"      {ref.source_url.strip()}")
        excerpt = snippet(ref.content, _SNIPPET)
        if excerpt:
            lines.append(f"      {excerpt}")
    return lines


def sources_text(answer: Answer, *, cited: set[int] | None = None) -> str:
    """The numbered source list, related questions and references (no answer text)."""
    notes = footnotes(answer.citations)
    if cited is None:
        cited = set(read(answer.text).numbers)
    lines: list[str] = []
    if notes:
        lines.append("Sources:")
        for n, note in sorted(notes.items()):
            lines.extend(_footnote_text(note, n in cited or note.linked))
    questions = [q for q in answer.related_questions if isinstance(q, str) and q.strip()]
    if questions:
        lines.append("Related questions:")
        lines.extend(f"  - {q.strip()}" for q in questions)
    if answer.references is not None and answer.references.items:
        lines.append("Sources (ranked by relevance):")
        lines.extend(_references_text(answer.references))
    return "\n".join(lines)


def body_text(answer: Answer, notes: Mapping[int, Footnote] | None = None) -> tuple[str, set[int]]:
    """The answer's text without its definition lines, every marker that has a source written
    ``[n]`` (``$[1]$`` and ``[^1]`` alike); and the numbers so cited."""
    if notes is None:
        notes = footnotes(answer.citations)
    notes = marked(notes)
    body = read(answer.text).body
    pieces: list[str] = []
    pos = 0
    cited: set[int] = set()
    for m in read(body).markers:
        pieces.append(body[pos : m.start])
        if m.number in notes:
            cited.add(m.number)
            pieces.append(f"[{m.number}]")
        else:
            pieces.append(body[m.start : m.end])
        pos = m.end
    pieces.append(body[pos:])
    return "".join(pieces), cited


def answer_text(answer: Answer) -> str:
    """The answer as readable plain text with a numbered source list."""
    notes = footnotes(answer.citations)
    definitions = read(answer.text).definitions
    body, cited = body_text(answer, notes)
    lines = _notes_text(answer_notes(answer))
    text = body.strip("\n")
    if text:
        lines.append(text)
    elif not answer.content_filtered:
        lines.append("(empty answer)")
    for n, definition in sorted(definitions.items()):
        if n not in notes and definition:
            lines.append(f"[{n}] {definition}")
    if answer.files:
        lines += ["", "Files:"]
        for i, file in enumerate(answer.files):
            note = f" — {file.note}" if file.note else ""
            lines.append(f"  {file.name} ({file_facts(file)}){note}  [answer.files[{i}]]")
    sources = sources_text(answer, cited=cited)
    if sources:
        lines += ["", sources]
    return "\n".join(lines)


def references_text(refs: References) -> str:
    """A GPTBots reference list as numbered plain text, rank 1 first."""
    lines = _notes_text(references_notes(refs))
    lines.append("Sources (ranked by relevance):")
    if not refs.items:
        lines.append("  (none retrieved)")
    lines.extend(_references_text(refs))
    return "\n".join(lines)
