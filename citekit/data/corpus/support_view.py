"""An answer shown with its support: each sentence with its verdict, each citation with its score
and the passage that fits best, counted in one line.

``show_support(answer)`` reads ``support_frame`` (the one place that scores) and arranges its
rows for a reader: :class:`SupportView` holds one :class:`SentenceSupport` per sentence, each
with one :class:`SourceSupport` per source citing it (a footnote's several passages are one
source: the best of them is kept), and where in that passage the words it shares with the
sentence stand. ``citekit.render.support`` draws it (HTML with tinted sentences, a legend and
a summary; plain or styled text for a terminal). Nothing here scores: a sentence's verdict is
the best of its sources' verdicts, as ALCE counts a sentence supported when one of its
citations supports it.

Answer (the model) cannot reach ``support_frame`` (data sits above it), so the view is made
here, with ``ck.show_support(answer)``, rather than as an ``Answer`` method.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from ...model import Answer
from .lexicon import marks
from .support import VERDICTS, support_frame

__all__ = [
    "SentenceSupport",
    "SourceSupport",
    "SupportView",
    "passage_marks",
    "sentence_verdict",
    "show_support",
    "support_section_html",
]

#: Verdicts from the best to the least: a sentence takes the best of its sources'.
_RANK: Final = {v: i for i, v in enumerate(VERDICTS)}


def sentence_verdict(verdicts: Iterable[str]) -> str:
    """The verdict of a sentence from those of its sources: the best one (``"uncited"`` for
    none)."""
    return min(verdicts, key=lambda v: _RANK.get(v, len(_RANK)), default="uncited")


@dataclass(frozen=True, slots=True)
class SourceSupport:
    """One source citing one sentence: the best of its passages, as ``support_frame`` scored it.

    ``marker`` is the footnote number (None for a web source cited by a link or annotation,
    whose ``title`` says which); ``passage`` the passage that fits the sentence best (None for a
    source with no passage), ``passages`` how many the source gives; ``marks`` the spans of
    ``passage`` holding a word the sentence has too. ``best_source`` is the marker of the
    answer's source that fits the sentence best, and ``misattributed`` whether it fits clearly
    better than this one (both from ``support_frame`` when it has them).
    """

    marker: int | None
    title: str | None
    origin: str | None
    reference: str | None
    support: float | None
    verdict: str
    passage: str | None
    passages: int
    marks: tuple[tuple[int, int], ...]
    quote_found: bool | None
    numbers_found: tuple[str, ...]
    numbers_contradicted: tuple[str, ...]
    shared_words: tuple[str, ...]
    best_source: int | None
    misattributed: bool


@dataclass(frozen=True, slots=True)
class SentenceSupport:
    """One sentence of the answer: where it stands in ``answer.text``, its verdict and
    support (the best of its sources'), and its sources."""

    index: int
    text: str
    start: int
    end: int
    verdict: str
    support: float | None
    sources: tuple[SourceSupport, ...]

    @property
    def misattributed(self) -> bool:
        return any(s.misattributed for s in self.sources)


@dataclass(frozen=True, slots=True)
class SupportView:
    """An answer with the support of each of its sentences (see the module).

    In a notebook it shows as the answer with each sentence tinted by its verdict, a legend,
    a one-line summary, and under the text each sentence's sources with their score and best
    passage, the shared words marked; ``str(view)`` and ``print(view)`` give it as text.

    Examples
    --------
    >>> ans = ck.Magisterium().ask("What does the Church teach about Sunday rest?")
    >>> view = ck.show_support(ans)
    >>> view.summary()
    '3 of 8 sentences supported; 1 citation fits another source better'
    >>> view.counts()["uncited"]
    3
    >>> print(str(view).splitlines()[4])
      ◐ partial      0.35  The Lord's Day also leaves room for the works of mercy ... [2]→[1]
    """

    answer: Answer
    sentences: tuple[SentenceSupport, ...]
    #: The ``support_frame`` rows of the answer the view was made from.
    frame: pl.DataFrame = field(compare=False)
    #: Markers none of whose passages supports any sentence even partly (``health_frame``).
    unfit_citations: tuple[int, ...] = ()
    #: Ranks of the knowledge chunks (GPTBots) no citation carries; None when none were fetched.
    unused_chunks: tuple[int, ...] | None = None

    def counts(self) -> dict[str, int]:
        """How many sentences have each verdict (every verdict a key, in legend order)."""
        out = dict.fromkeys(VERDICTS, 0)
        for s in self.sentences:
            out[s.verdict] = out.get(s.verdict, 0) + 1
        return out

    @property
    def misattributed(self) -> int:
        """How many citations another of the answer's sources fits clearly better."""
        return sum(1 for s in self.sentences for c in s.sources if c.misattributed)

    def summary(self) -> str:
        """``"9 of 12 sentences supported; 1 citation fits another source better"``."""
        n = len(self.sentences)
        line = f"{self.counts()['supported']} of {n} sentence{'' if n == 1 else 's'} supported"
        wrong = self.misattributed
        if wrong:
            line += f"; {wrong} citation{' fits' if wrong == 1 else 's fit'} another source better"
        return line

    def to_html(self, *, strict: bool = False) -> str:
        """The view as one self-contained HTML fragment (``strict``: only the tags nbconvert's
        ``sanitize_html=True`` keeps)."""
        from ...render.support import support_html

        return support_html(self, strict=strict)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from ...render.support import support_bundle

        return support_bundle(self, include=include, exclude=exclude)

    def __str__(self) -> str:
        from ...render.support import support_text

        return support_text(self)

    def __repr__(self) -> str:
        return f"<SupportView: {self.summary()}>"


def show_support(answer: Answer) -> SupportView:
    """``answer`` with the support of each sentence, to display (see :class:`SupportView`).

    Parameters
    ----------
    answer
        One answer (live, saved, logged or a recorded sample).
    """
    if not isinstance(answer, Answer):
        raise TypeError(
            f"show_support takes one Answer, not {type(answer).__name__}; for many answers "
            "use ck.support_frame(answers), or [ck.show_support(a) for a in answers]"
        )
    from .health import health_frame, unused_chunks

    frame = support_frame([answer])
    health = health_frame([answer])
    unfit = health["unfit_citations"][0] if health.height else None
    chunks = unused_chunks(answer)
    return SupportView(
        answer,
        tuple(_sentences(answer, frame)),
        frame,
        unfit_citations=tuple(unfit) if unfit is not None else (),
        unused_chunks=tuple(chunks) if chunks is not None else None,
    )


def _sentences(answer: Answer, frame: pl.DataFrame) -> Iterable[SentenceSupport]:
    titles = _titles(answer)
    rows = frame.to_dicts()
    by_sentence: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_sentence.setdefault(row["sentence_index"], []).append(row)
    for index, own in sorted(by_sentence.items()):
        first = own[0]
        sources = _sources([r for r in own if r["verdict"] != "uncited"], titles)
        verdict = sentence_verdict(s.verdict for s in sources)
        scores = [s.support for s in sources if s.support is not None]
        yield SentenceSupport(
            index=index,
            text=first["sentence"],
            start=first["span_start"],
            end=first["span_end"],
            verdict=verdict,
            support=max(scores) if scores else None,
            sources=sources,
        )


def _titles(answer: Answer) -> dict[int, str]:
    out: dict[int, str] = {}
    for c in sorted(answer.citations, key=lambda c: c.document_index):
        title = (c.document_title or "").strip()
        if title and c.marker not in out:
            out[c.marker] = title
    return out


def _sources(
    rows: Sequence[dict[str, Any]], titles: Mapping[int, str]
) -> tuple[SourceSupport, ...]:
    """One source per marker (or per web source), the best of its passages kept."""
    groups: dict[object, list[dict[str, Any]]] = {}
    for row in rows:
        key = row["marker"] if row["marker"] is not None else ("web", row["cited_text"])
        groups.setdefault(key, []).append(row)
    out: list[SourceSupport] = []
    for group in groups.values():
        best = max(group, key=lambda r: (r["support"] is not None, r["support"] or 0.0))
        marker = best["marker"]
        passage = best["cited_text"] if best["support"] is not None else None
        shared = tuple(best["shared_words"] or ())
        out.append(
            SourceSupport(
                marker=marker,
                title=titles.get(marker) if marker is not None else best["cited_text"],
                origin=best["origin"],
                reference=best["document_reference"],
                support=best["support"],
                verdict=best["verdict"],
                passage=passage,
                passages=len(group),
                marks=passage_marks(passage, shared) if passage else (),
                quote_found=best["quote_found"],
                numbers_found=tuple(best["numbers_found"] or ()),
                numbers_contradicted=tuple(best["numbers_contradicted"] or ()),
                shared_words=shared,
                best_source=_marker_of(best.get("best_source")),
                misattributed=bool(best.get("misattributed")),
            )
        )
    return tuple(out)


def _marker_of(value: object) -> int | None:
    """``best_source`` as a marker number (``support_frame`` may give it as ``"[3]"``)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    found = re.search(r"[0-9]+", str(value))
    return int(found.group()) if found else None


def passage_marks(passage: str, shared: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The spans of ``passage`` (code points) holding one of ``shared``: the stems
    ``support_frame`` found in both the sentence and the passage (``shared_words``), read as
    the scorer reads them (:func:`citekit.data.corpus.lexicon.marks`)."""
    return marks(passage, shared)


def support_section_html(answers: Iterable[Answer], *, heading: bool = True) -> str:
    """A page's section "Does the source say so?": what the tints mean, then each answer's
    support view (:meth:`SupportView.to_html`), for a whole HTML page such as ``citekit demo``'s
    (``heading=False``: without its own heading, under the page's).
    """
    from ...text.escape import esc

    views = [show_support(a).to_html() for a in answers if isinstance(a, Answer)]
    intro = (
        "Each sentence is tinted by how well the passage it cites says the same thing: green "
        "supported, amber partial, red unsupported, grey for a source with no passage to "
        "read; a sentence no source cites is left plain. Hover a marker for its score and the "
        "passage that fits best; under the text, each cited sentence shows that passage with "
        "the words it shares marked, and a marker another source fits clearly better is "
        "flagged. Support counts shared words, quotes and numbers: it is not verification."
    )
    return (
        '<section class="citekit-support-section">\n'
        + ("<h2>Does the source say so?</h2>\n" if heading else "")
        + f"<p>{esc(intro)}</p>\n"
        + "".join(views)
        + "</section>\n"
    )
