"""What every output format says about an answer's sources, before any markup.

A footnote is one document (one ``document_index``): its number is the one-based marker, and
it groups every passage the answer cites from that document. HTML, Markdown and plain text
all build on :func:`footnotes` and :func:`answer_notes`, and read the answer's text with
:func:`citekit.text.reader.read`, so the three formats always agree on numbering, grouping and
which citations are cited inline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ..model import Answer, Citation, GeneratedFile, Reference, References

__all__ = [
    "CUT_SHORT",
    "Footnote",
    "answer_notes",
    "chunk_markers",
    "empty_reason",
    "file_facts",
    "footnotes",
    "format_size",
    "listed_sources",
    "marked",
    "reference_label",
    "score_fractions",
    "snippet",
    "unmatched_notice",
]


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


def reference_label(reference: str) -> str:
    """``"no. 34"`` for a paragraph number, the reference itself otherwise."""
    return f"no. {reference}" if re.fullmatch(r"[0-9][0-9.,\-–]*", reference) else reference


@dataclass(frozen=True, slots=True)
class Footnote:
    """One cited document with the passages the answer quotes from it."""

    number: int
    passages: tuple[Citation, ...]
    title: str | None
    author: str | None
    year: str | None
    references: tuple[str, ...]
    url: str | None

    @property
    def display_title(self) -> str:
        return self.title or f"Source {self.number}"

    @property
    def linked(self) -> bool:
        """A source the answer cites by linking to it (Maritaca: a link or a ``url_citation``
        annotation), not by a marker: it is cited in the text, and its link text is its title."""
        return bool(self.passages) and all(
            c.raw.get("type") == "url_citation" for c in self.passages
        )

    def quoted(self) -> tuple[Citation, ...]:
        """The passages worth quoting (a linked source's "passage" is often its link text)."""
        if not self.linked:
            return self.passages
        return tuple(c for c in self.passages if c.cited_text != c.document_title)

    def byline(self) -> str:
        """``"Author · 1993 · no. 34"`` from whatever is known (may be empty)."""
        parts = [p for p in (self.author, self.year) if p]
        if self.references:
            parts.append(", ".join(reference_label(r) for r in self.references))
        return " · ".join(parts)

    def tooltip(self) -> str:
        """Title, author, year and reference in one line, for a marker's ``title``."""
        byline = self.byline()
        text = f"{self.display_title} — {byline}" if byline else self.display_title
        return text if len(text) <= 300 else text[:299] + "…"


def _first(values: Iterable[str | None]) -> str | None:
    for value in values:
        cleaned = _clean(value)
        if cleaned:
            return cleaned
    return None


def marked(notes: Mapping[int, Footnote]) -> dict[int, Footnote]:
    """The footnotes a marker in the text may point to: not the sources the text cites by a
    link (a literal ``[1]`` in such an answer is the provider's own text, not a footnote)."""
    return {n: note for n, note in notes.items() if not note.linked}


def _passage_key(citation: Citation) -> tuple[str, str, str]:
    return (
        _clean(citation.document_reference) or "",
        _clean(citation.cited_text_heading) or "",
        " ".join(citation.cited_text.split()),
    )


# The latest answer's citations and their footnotes: an answer's outputs (HTML, Markdown,
# text) each ask for them, one after the other.
_LATEST: tuple[tuple[Citation, ...], dict[int, Footnote]] = ((), {})


def footnotes(citations: Sequence[Citation]) -> dict[int, Footnote]:
    """Citations grouped by marker number, in number order; a passage the provider sent twice
    for one footnote (same reference, heading and text) is listed once."""
    global _LATEST
    latest = _LATEST
    if citations is latest[0]:  # the same tuple (immutable, of frozen citations)
        return dict(latest[1])
    out = _footnotes(citations)
    if type(citations) is tuple:
        _LATEST = (citations, out)
        return dict(out)
    return out


def _footnotes(citations: Sequence[Citation]) -> dict[int, Footnote]:
    groups: dict[int, list[Citation]] = {}
    seen: set[tuple[int, tuple[str, str, str]]] = set()
    for citation in sorted(citations, key=lambda c: c.document_index):
        key = (citation.marker, _passage_key(citation))
        if key in seen:
            continue
        seen.add(key)
        groups.setdefault(citation.marker, []).append(citation)
    out: dict[int, Footnote] = {}
    for number, passages in groups.items():
        refs: list[str] = []
        for c in passages:
            ref = _clean(c.document_reference)
            if ref and ref not in refs:
                refs.append(ref)
        out[number] = Footnote(
            number=number,
            passages=tuple(passages),
            title=_first(c.document_title for c in passages),
            author=_first(c.document_author for c in passages),
            year=_first(c.document_year for c in passages),
            references=tuple(refs),
            url=_first(c.source_url for c in passages),
        )
    return out


def _source_key(value: str | None) -> str | None:
    cleaned = _clean(value)
    return cleaned.casefold() if cleaned else None


def chunk_markers(items: Sequence[Reference], notes: Mapping[int, Footnote]) -> list[int | None]:
    """For each knowledge chunk, the footnote number of the source it comes from (the same
    document name or address), ``None`` for a chunk no footnote lists: one number for one
    source in every list of an answer."""
    by_key: dict[str, int] = {}
    for number, note in sorted(notes.items()):
        for key in (_source_key(note.title), _source_key(note.url)):
            if key is not None:
                by_key.setdefault(key, number)
    out: list[int | None] = []
    for ref in items:
        found = None
        for key in (_source_key(ref.data_name), _source_key(ref.source_url)):
            if key is not None and key in by_key:
                found = by_key[key]
                break
        out.append(found)
    return out


def listed_sources(answer: Answer) -> int:
    """How many sources ``answer`` lists (``core.columns.COUNTS``): its footnotes, and the
    knowledge chunks no footnote already lists."""
    notes = footnotes(answer.citations)
    chunks = answer.references.items if answer.references is not None else ()
    return len(notes) + sum(1 for n in chunk_markers(chunks, notes) if n is None)


def passage_caption(citation: Citation, footnote: Footnote, *, fallback: bool = True) -> str:
    """The line that introduces one passage: its reference (if the document has several)
    and its heading; without either, the passage's start (for a collapsed passage), or ""
    with ``fallback=False`` (where the passage itself follows in full)."""
    parts: list[str] = []
    ref = _clean(citation.document_reference)
    if ref:
        parts.append(reference_label(ref))
    heading = _clean(citation.cited_text_heading)
    if heading:
        parts.append(heading)
    if not parts:
        if not fallback:
            return ""
        parts.append(snippet(citation.cited_text, 70) or "Cited passage")
    return " · ".join(parts)


def snippet(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def format_size(n: int) -> str:
    """A byte count for people: ``437 bytes``, ``1.5 KB``, ``2.0 MB``, ``1.25 GB``."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    if n < 1024**3:
        return f"{n / (1024 * 1024):.1f} MB"
    return f"{n / 1024**3:.2f} GB"


def file_facts(file: GeneratedFile) -> str:
    """``image/png, 437 bytes``: a generated file's type and size, as every format shows them."""
    data = file.data
    size = len(data) if data is not None else file.size_bytes
    kind = (file.mime_type or "").strip().lower() or "unknown type"
    return ", ".join([kind] + ([format_size(size)] if size is not None else []))


#: The note of an answer the provider stopped at its token limit (finish_reason "length").
CUT_SHORT: Final = (
    "warn",
    "cut short: the answer reached its token limit (finish_reason 'length'); "
    "ask again with a higher max_tokens= for the rest",
)


def unmatched_notice(question: str) -> str:
    """The notice on top of a recorded answer served for a question it does not answer."""
    return f"No recorded answer for this question; showing the recorded answer to '{question}'"


def empty_reason(answer: Answer) -> str:
    """What an answer without text shows instead, saying why it has none."""
    if answer.tool_calls:
        calls = ", ".join(dict.fromkeys(c.name for c in answer.tool_calls if c.name))
        named = f" ({calls})" if calls else ""
        return (
            f"(no text: the answer is a tool call{named}; the model asks your code to run it "
            "and send back the result)"
        )
    if answer.files:
        return "(no text: the answer is the files below)"
    return "(empty answer: the provider sent no text)"


def answer_notes(answer: Answer) -> list[tuple[str, str]]:
    """``(kind, text)`` messages shown above an answer: kind is sample, warn, info or note."""
    notes: list[tuple[str, str]] = []
    other = answer.sample_question
    if other is not None:
        notes.append(("warn", unmatched_notice(other)))
    sample = answer.sample
    if sample:
        notes.append(("sample", f"recorded sample · {sample}"))
    if answer.content_filtered:
        notes.append(("warn", "withheld by the provider's content filter"))
    if answer.partial:
        notes.append(("warn", "incomplete: the stream was interrupted"))
    if answer.finish_reason == "length":
        notes.append(CUT_SHORT)
    if answer.cached:
        notes.append(("info", "from cache"))
    for note in answer.notes:
        if isinstance(note, str) and note.strip():
            notes.append(("note", note.strip()))
    return notes


def references_notes(refs: References) -> list[tuple[str, str]]:
    notes: list[tuple[str, str]] = []
    if refs.sample:
        notes.append(("sample", f"recorded sample · {refs.sample}"))
    if refs.note and refs.note.strip():
        notes.append(("note", refs.note.strip()))
    return notes


def score_fractions(items: Sequence[Reference]) -> list[float | None]:
    """Each reference's score as a bar length in [0, 1] (scaled by the largest score when
    the provider's scores are not already in [0, 1]); ``None`` where there is no score."""
    finite = [r.score for r in items if r.score is not None and math.isfinite(r.score)]
    top = max(finite, default=0.0)
    scale = top if top > 1.0 else 1.0
    out: list[float | None] = []
    for ref in items:
        score = ref.score
        if score is None or not math.isfinite(score):
            out.append(None)
        else:
            out.append(min(max(score / scale, 0.0), 1.0))
    return out


def reference_title(ref: Reference) -> str:
    return _first((ref.data_name, ref.data_id)) or f"Chunk {ref.rank}"


def format_score(score: float | None) -> str | None:
    if score is None or not math.isfinite(score):
        return None
    return f"{score:.3f}"
