"""The support fixture's figures: ROC AUC, precision and recall, grouped by language pair, and
quote accuracy, checked by hand and against a brute-force count of pairs."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.data.corpus.support_scoring import (
    auc_by_trap,
    auc_table,
    groups,
    pr_table,
    precision_recall,
    quote_scores,
    roc_auc,
)


def brute_auc(scores: list[float], positive: list[bool]) -> float:
    """Every (positive, negative) pair: 1 when the positive scores higher, 1/2 on a tie."""
    pos = [s for s, p in zip(scores, positive, strict=True) if p]
    neg = [s for s, p in zip(scores, positive, strict=True) if not p]
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def test_a_perfect_score_has_auc_one_a_reversed_one_zero_ties_one_half() -> None:
    positive = [True, True, False, False, True]
    perfect = [0.9, 0.8, 0.1, 0.2, 0.7]
    assert roc_auc(perfect, positive) == 1.0
    assert roc_auc([-s for s in perfect], positive) == 0.0
    assert roc_auc([0.5] * 5, positive) == 0.5


def test_auc_counts_a_tie_across_classes_as_one_half() -> None:
    # Positives 0.9 and 0.5, negatives 0.5 and 0.1: pairs 1, 1, 1/2, 1 of 4.
    assert roc_auc([0.9, 0.5, 0.5, 0.1], [True, True, False, False]) == 3.5 / 4


@pytest.mark.parametrize(
    ("scores", "positive"),
    [
        ([0.1, 0.2], [True, True]),  # no negative
        ([0.1, 0.2], [False, False]),  # no positive
        ([0.1, float("nan")], [True, False]),  # a score missing
        ([0.1, 0.2, 0.3], [True, False]),  # lengths differ
    ],
)
def test_auc_refuses_what_it_cannot_count(scores: list[float], positive: list[bool]) -> None:
    with pytest.raises(ValueError, match=r"score|positive|label"):
        roc_auc(scores, positive)


@settings(max_examples=examples(300))
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(-1e6, 1e6), st.booleans()),
        min_size=2,
        max_size=40,
    ).filter(lambda items: len({p for _, p in items}) == 2)
)
def test_auc_equals_the_brute_force_pair_count(items: list[tuple[float, bool]]) -> None:
    scores = [s for s, _ in items]
    positive = [p for _, p in items]
    assert math.isclose(roc_auc(scores, positive), brute_auc(scores, positive), abs_tol=1e-9)


def test_precision_and_recall_by_hand() -> None:
    got = precision_recall([True, True, False, True, False], [True, False, False, True, True])
    assert (got.precision, got.recall) == (2 / 3, 2 / 3)
    assert (got.predicted, got.actual, got.both) == (3, 3, 2)
    nothing = precision_recall([False, False], [True, False])
    assert (nothing.precision, nothing.recall) == (1.0, 0.0)


def small() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "label": ["supports", "does_not_support", "partial", "supports", "does_not_support"],
            "sentence_lang": ["en", "en", "en", "pt", "pt"],
            "passage_lang": ["en", "en", "en", "la", "la"],
            "score": [0.9, 0.2, 0.0, 0.1, 0.4],
            "trap": [None, "negation", None, None, "changed_year"],
        }
    ).with_columns(
        pair=pl.col("sentence_lang") + ">" + pl.col("passage_lang"),
        cross=pl.col("sentence_lang") != pl.col("passage_lang"),
    )


def test_groups_are_overall_within_across_and_each_pair() -> None:
    assert list(groups(small())) == [
        "overall",
        "within language",
        "across languages",
        "en>en",
        "pt>la",
    ]


def test_auc_table_leaves_partial_out_and_splits_by_language() -> None:
    table = {r["group"]: r for r in auc_table(small()).iter_rows(named=True)}
    assert table["within language"]["auc"] == 1.0  # 0.9 over 0.2
    assert table["across languages"]["auc"] == 0.0  # 0.1 under 0.4
    # Overall: 0.9 beats both, 0.1 beats neither: 2 of 4; the partial 0.0 is not counted.
    assert table["overall"]["auc"] == 0.5
    assert (table["overall"]["supports"], table["overall"]["does_not_support"]) == (2, 2)
    traps = {r["group"]: r["auc"] for r in auc_by_trap(small()).iter_rows(named=True)}
    assert traps == {"negation": 0.5, "changed_year": 0.5}


def test_auc_table_is_null_where_a_group_lacks_a_label() -> None:
    frame = small().filter(pl.col("score") != 0.4)  # pt>la keeps only a "supports" pair
    table = {r["group"]: r["auc"] for r in auc_table(frame).iter_rows(named=True)}
    assert table["pt>la"] is None and table["en>en"] == 1.0


def test_pr_table_per_group() -> None:
    frame = small().with_columns(
        predicted=pl.col("score") < 0.3, actual=pl.col("label") == "does_not_support"
    )
    table = {r["group"]: r for r in pr_table(frame, "predicted", "actual").iter_rows(named=True)}
    # Predicted: 0.2 (right), 0.0 (a partial), 0.1 (a supports pair); actual: 0.2 and 0.4.
    assert (table["overall"]["precision"], table["overall"]["recall"]) == (1 / 3, 1 / 2)
    assert (table["within language"]["precision"], table["within language"]["recall"]) == (0.5, 1)


def test_quote_scores_count_altered_quotes_called_found() -> None:
    frame = pl.DataFrame(
        {
            "quote": ["a b", "c d", "e f", None],
            "quote_in_passage": [True, False, False, None],
            "trap": ["exact_quote", "altered_quote", "altered_quote", None],
            "quote_found": [True, True, None, None],
        }
    )
    got = quote_scores(frame)
    # Right: the exact one; wrong: an altered one called found, and one not seen (null).
    assert (got.pairs, got.correct, got.altered, got.false_found_altered) == (3, 1, 2, 1)
    assert got.accuracy == 1 / 3
