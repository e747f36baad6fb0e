"""The support fixture's shape: enough pairs, languages, cross-lingual pairs and traps, and labels
consistent with the texts they label."""

from __future__ import annotations

import re

import polars as pl

from tests.data.corpus.support_scoring import LABELS, TRAPS, load_fixture

_QUOTES = str.maketrans({c: '"' for c in "“”„«»″"} | {c: "'" for c in "‘’‚‹›′`"})


def normal(text: str) -> str:
    """Quotes, case and spaces normalised, as ``quote_in_passage`` is judged."""
    return re.sub(r"\s+", " ", text.translate(_QUOTES).casefold()).strip()


def test_pairs_are_many_in_five_languages_a_third_across() -> None:
    pairs = load_fixture()
    assert pairs.height >= 300
    assert pairs["id"].n_unique() == pairs.height
    for lang in ("en", "pt", "es", "it", "la"):
        assert pairs.filter(pl.col("sentence_lang") == lang).height >= 10, lang
    assert pairs["cross"].sum() >= pairs.height / 3


def test_labels_and_traps_are_valid() -> None:
    pairs = load_fixture()
    assert set(pairs["label"]) <= set(LABELS)
    assert set(pairs["trap"].drop_nulls()) <= set(TRAPS)


def test_quote_in_passage_agrees_with_the_texts() -> None:
    for row in load_fixture().iter_rows(named=True):
        if row["quote"] is None:
            assert row["quote_in_passage"] is None, row["id"]
            continue
        assert normal(row["quote"]) in normal(row["sentence"]), row["id"]
        assert (normal(row["quote"]) in normal(row["passage"])) is row["quote_in_passage"], row[
            "id"
        ]
