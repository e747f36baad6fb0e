"""Plain text for answers and reference lists (``text/plain``, terminals, logs).

The answer text is kept as written (Markdown reads well as text), with markers normalised to
``[n]`` and definition lines moved into a numbered source list.
"""

from __future__ import annotations

import re
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

__all__ = [
    "TerminalText",
    "answer_text",
    "body_text",
    "references_text",
    "sources_text",
    "terminal_safe",
]

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
            caption = passage_caption(citation, note, fallback=False)
            lines.append(f"      {caption}: “{quote}”" if caption else f"      “{quote}”")
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


# -- text for a terminal --------------------------------------------------------------------------
# Escape sequences whole (their parameters would otherwise print as text): CSI (colours, cursor
# moves), OSC / DCS / SOS / PM / APC strings up to their terminator (titles, clipboard writes,
# hyperlinks), and the two-character escapes; in their 7-bit (ESC ...) and 8-bit (C1) forms.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
# A sequence the text ends inside of (the rest may come with the next piece of a stream).
_UNFINISHED = re.compile(
    r"(?:(?:\x1b\[|\x9b)[0-?]*[ -/]*"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*\x1b?"
    r"|\x1b[ -/]*|\r)\Z"
)
# C0 controls but tab and newline, DEL, and C1 controls.
# C0 (but tab and newline), DEL, C1; and the bidirectional embeddings, overrides and isolates,
# which reorder what a terminal shows (text that reads one way and is another).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CARRY_LIMIT = 4096


def terminal_safe(text: str) -> str:
    """``text`` fit to print on a terminal: escape sequences (ESC and 8-bit C1 forms, with
    their parameters) removed, line ends made ``\\n``, and every other C0 control (but tab and
    newline), DEL, C1 control and bidirectional override dropped, so a provider's text can
    neither set the title, write the clipboard, hide text, move the cursor nor show itself
    reordered.

    >>> from citekit.render.text import terminal_safe
    >>> terminal_safe("red \\x1b[31mtext\\x1b[0m\\x1b]52;c;aGk=\\x07 ok\\r\\n")
    'red text ok\\n'
    """
    if text.isascii() and text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _ESCAPE.sub("", text))


class TerminalText:
    """:func:`terminal_safe` for text that comes in pieces (a stream): an escape sequence cut
    between two pieces is held back until it ends, so it is removed whole too.

    >>> from citekit.render.text import TerminalText
    >>> clean = TerminalText()
    >>> clean.feed("Title\x1b]0;ow"), clean.feed("ned\x07 text"), clean.flush()
    ('Title', ' text', '')
    """

    __slots__ = ("_carry",)

    def __init__(self) -> None:
        self._carry = ""

    def feed(self, piece: str) -> str:
        """What of ``text`` so far can be printed now."""
        text = self._carry + piece
        self._carry = ""
        unfinished = _UNFINISHED.search(text)
        if unfinished is not None and len(text) - unfinished.start() <= _CARRY_LIMIT:
            self._carry = text[unfinished.start() :]
            text = text[: unfinished.start()]
        return terminal_safe(text)

    def flush(self) -> str:
        """The rest, as :func:`terminal_safe` makes it (a sequence never finished loses its
        control characters; what followed them prints as text)."""
        text, self._carry = self._carry, ""
        return terminal_safe(text)
