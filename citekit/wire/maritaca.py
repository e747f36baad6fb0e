"""What Maritaca's chat completions say beyond OpenAI's shape, read without I/O.

Sources
    Maritaca's Chat Completions has no citation array: the sources are the links the answer's
    text gives. Every ``http``/``https`` link (as :func:`citekit.text.reader.read` finds it: not
    in code) becomes a :class:`~citekit.model.Citation`, one per distinct URL, numbered
    by first appearance (``marker`` 1, 2, ...; ``document_index = marker - 1``), with the link
    text as ``document_title`` and as ``cited_text``. Its ``raw`` holds the first appearance as
    an annotation would: ``{"type": "url_citation", "url", "title", "start_index",
    "end_index"}``.

    When the message carries OpenAI-style ``url_citation`` annotations (chat completions'
    ``{"type": "url_citation", "url_citation": {...}}`` or the flat Responses form ``{"type",
    "url", "title", "start_index", "end_index"}``), they are the sources instead: one citation
    per annotation (annotations of one URL share its ``document_index``), ``cited_text`` the
    span of the answer it covers (its title when the span does not fit the text), ``raw`` the
    annotation itself, spans included.

Errors
    A 429 is a rate limit, or a full flex queue (``service_tier="flex"``); :func:`classify`
    names the second when the body says so (it speaks of the flex tier and of a queue or of
    being full, in English or Portuguese), and leaves every other error to the generic rules.

Files
    Code execution's files come in a top-level ``generated_files`` array: each object becomes
    a :class:`~citekit.model.GeneratedFile` (broken base64 keeps the file, with a note).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import ProviderError, RateLimitError
from ..model import Citation, GeneratedFile
from ..text.parser import link_allowed
from ..text.reader import read

__all__ = [
    "FLEX_READ_TIMEOUT",
    "annotations_of",
    "classify",
    "generated_files",
    "link_citations",
    "sources",
]

#: Maritaca documents that a flex request may wait in a queue up to 5 minutes before it is
#: answered (or refused with a 429): a read timeout under that cuts it off while it waits.
FLEX_READ_TIMEOUT = 330.0


_QUEUE_WORDS = ("queue", "fila", "full", "cheia", "lotad", "capacity", "capacidade")


def classify(
    status: int | None, parsed: Any, message: str, request_id: str | None
) -> ProviderError | None:
    """A ``RateLimitError`` that says the flex queue is full, for a 429 whose body says so;
    ``None`` (the generic rules) for anything else."""
    low = message.lower()
    if status != 429 or "flex" not in low or not any(w in low for w in _QUEUE_WORDS):
        return None
    return RateLimitError(
        message,
        provider="maritaca",
        status=status,
        request_id=request_id,
        hint=(
            "Maritaca's flex queue is full (service_tier='flex'): retry later, or send the "
            "request without service_tier='flex' (the default tier does not queue)"
        ),
    )


def annotations_of(message: Any) -> list[dict[str, Any]]:
    """The ``url_citation`` annotations of a message, flattened to the Responses form; any
    item that is not one (or whose URL is not ``http``/``https``) is left out."""
    raw = message.get("annotations") if isinstance(message, Mapping) else None
    if not isinstance(raw, list):
        return []
    out: list[dict[str, Any]] = []
    for item in raw:
        if not isinstance(item, Mapping) or item.get("type") != "url_citation":
            continue
        inner = item.get("url_citation")
        fields: Mapping[str, Any] = inner if isinstance(inner, Mapping) else item
        url = fields.get("url")
        if not isinstance(url, str) or not link_allowed(url):
            continue
        title = fields.get("title")
        out.append(
            {
                "type": "url_citation",
                "url": url.strip(),
                "title": title if isinstance(title, str) else None,
                "start_index": _index(fields.get("start_index")),
                "end_index": _index(fields.get("end_index")),
            }
        )
    return out


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def link_citations(text: str) -> tuple[Citation, ...]:
    """One citation per distinct link target of ``text``, in order of first appearance."""
    seen: dict[str, int] = {}
    out: list[Citation] = []
    for link in read(text).links:
        if link.url in seen:
            continue
        seen[link.url] = len(seen)
        label = link.label or link.url
        out.append(
            Citation(
                cited_text=label,
                document_index=seen[link.url],
                document_title=label,
                source_url=link.url,
                raw={
                    "type": "url_citation",
                    "url": link.url,
                    "title": label,
                    "start_index": link.start,
                    "end_index": link.end,
                },
            )
        )
    return tuple(out)


def _annotation_citations(text: str, annotations: list[dict[str, Any]]) -> tuple[Citation, ...]:
    seen: dict[str, int] = {}
    out: list[Citation] = []
    for note in annotations:
        url = note["url"]
        index = seen.setdefault(url, len(seen))
        start, end = note["start_index"], note["end_index"]
        fits = start is not None and end is not None and 0 <= start < end <= len(text)
        span = text[start:end] if fits else ""  # a span past the text cites nothing of it
        title = note["title"]
        out.append(
            Citation(
                cited_text=span.strip() or title or url,
                document_index=index,
                document_title=title,
                source_url=url,
                raw=note,
            )
        )
    return tuple(out)


def sources(text: str, message: Any) -> tuple[Citation, ...]:
    """The sources of a Maritaca answer: its annotations when it has any, else its links."""
    annotations = annotations_of(message)
    if annotations:
        return _annotation_citations(text, annotations)
    return link_citations(text)


def generated_files(raw: Any) -> tuple[GeneratedFile, ...]:
    """The files of a top-level ``generated_files`` array (items that are not objects skipped)."""
    if not isinstance(raw, list):
        return ()
    return tuple(
        GeneratedFile.from_dict(item, position=i)
        for i, item in enumerate(raw)
        if isinstance(item, Mapping)
    )
