"""Every sentence of an answer against every passage its citations give: which source fits a
sentence best, which citation another source fits clearly better, which passage fits nothing.

One :class:`AnswerFit` per answer holds the support of each (sentence, distinct passage) pair,
computed once: ``support_frame`` reads a row's support and its ``best_source`` from it, and
``health_frame`` its figures and its unfit citations. A passage cited under several markers is
judged once.

``best_source``
    The marker of the answer's own citation whose passage fits the sentence best; of a tie, one
    the sentence cites, else the lowest marker. Null when no citation of the answer has a
    passage (Maritaca's web sources, an answer without citations).
``misattributed``
    A citation is misattributed when a source the sentence does not cite fits it clearly better
    than every source it cites: by at least ``MARGIN``, and at least partly (``FITS``). The
    other source need not support the sentence on its own: what counts is that, judged by the
    same scorer, it fits clearly better than the cited one. Null when the cited source has no
    passage to judge by. It is never true when a cited source is the best.
Unfit citations
    Markers none of whose passages supports any sentence of the answer even partly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ...core.names import WEB_SOURCE_PROVIDERS
from ...model import Answer
from .evidence import PARTIAL, Evidence
from .scorers import Scorer

__all__ = ["MARGIN", "AnswerFit", "passage"]

#: How much better another source must fit a sentence than its cited ones for the citation to
#: be called misattributed.
MARGIN: Final = 0.2
#: The support from which that other source is taken to fit the sentence (at least partly).
FITS: Final = PARTIAL


def passage(answer: Answer, row: dict[str, Any] | None) -> str | None:
    """The passage a source gives to judge a sentence by; None for a web source (its text is
    the page's title) or an empty one."""
    if row is None or row["kind"] == "web source" or answer.provider in WEB_SOURCE_PROVIDERS:
        return None
    text = row["cited_text"]
    return text if isinstance(text, str) and text.strip() else None


class AnswerFit:
    """The support of the sentences of one answer by the distinct passages of its citations,
    each pair judged when first asked for, and once."""

    __slots__ = ("_cites", "_pairs", "_row_passage", "_said", "_scorer", "markers", "passages")

    def __init__(
        self,
        answer: Answer,
        said: Sequence[str],
        cites: Sequence[Sequence[int]],
        cited: Sequence[dict[str, Any]],
        scorer: Scorer,
    ) -> None:
        """``said``: what each sentence says; ``cites``: the rows of ``cited`` (the answer's
        sources) each sentence cites."""
        index: dict[str, int] = {}
        self.markers: list[list[int]] = []  # the markers giving each passage, ascending
        self._row_passage: list[int | None] = []
        for row in cited:
            text = passage(answer, row)
            if text is None:
                self._row_passage.append(None)
                continue
            at = index.setdefault(text, len(index))
            if at == len(self.markers):
                self.markers.append([])
            marker = row["marker"]
            if marker is not None and marker not in self.markers[at]:
                self.markers[at].append(marker)
            self._row_passage.append(at)
        for m in self.markers:
            m.sort()
        self.passages = list(index)
        self._said = said
        self._cites = cites
        self._scorer = scorer
        self._pairs: dict[tuple[int, int], tuple[Evidence, float]] = {}

    def passage_of(self, row: int) -> int | None:
        """The passage index of a cited row; None when it has no passage."""
        return self._row_passage[row]

    def judged(self, sentence: int, at: int) -> tuple[Evidence, float]:
        """The evidence and support passage ``at`` gives ``sentence``."""
        key = (sentence, at)
        got = self._pairs.get(key)
        if got is None:
            got = self._pairs[key] = self._scorer.pair(self._said[sentence], self.passages[at])
        return got

    def _own(self, sentence: int) -> set[int]:
        return {p for r in self._cites[sentence] if (p := self._row_passage[r]) is not None}

    def best_source(self, sentence: int) -> int | None:
        """The marker whose passage fits ``sentence`` best; of equal fits, the lowest marker
        the sentence cites, else the lowest marker."""
        line = [self.judged(sentence, p)[1] for p in range(len(self.passages))]
        if not line:
            return None
        top = max(line)
        best = [m for p, value in enumerate(line) if value == top for m in self.markers[p]]
        own = {m for p in self._own(sentence) for m in self.markers[p]}
        mine = [m for m in best if m in own]
        return min(mine or best, default=None)

    def misattributed(self, sentence: int) -> bool | None:
        """Whether a source ``sentence`` does not cite fits it clearly better than the ones it
        cites; None when none of them has a passage."""
        own = self._own(sentence)
        if not own:
            return None
        mine = max(self.judged(sentence, p)[1] for p in own)
        others = [self.judged(sentence, p)[1] for p in range(len(self.passages)) if p not in own]
        if not others:
            return False
        best = max(others)
        return best >= FITS and best - mine >= MARGIN

    def unfit(self) -> list[int] | None:
        """The markers none of whose passages supports any sentence even partly; None when
        no citation has a passage. The sentences citing a passage are tried first."""
        if not self.passages:
            return None
        citing: list[list[int]] = [[] for _ in self.passages]
        for i in range(len(self._said)):
            for p in self._own(i):
                citing[p].append(i)
        fit: set[int] = set()
        unfit: set[int] = set()
        for p, markers in enumerate(self.markers):
            order = [*citing[p], *(i for i in range(len(self._said)) if i not in citing[p])]
            fits = any(self.judged(i, p)[1] >= PARTIAL for i in order)
            (fit if fits else unfit).update(markers)
        return sorted(unfit - fit)
