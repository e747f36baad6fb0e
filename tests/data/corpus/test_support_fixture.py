"""The support fixture's shape: enough pairs, languages, cross-lingual pairs and traps, labels
consistent with the texts they label, and answers whose every marker has a source."""

from __future__ import annotations

import re
from collections import Counter

import polars as pl
import pytest

import citekit as ck
from citekit.text.sentences import sentences
from tests.data.corpus.support_scoring import (
    LABELS,
    STYLES,
    TRAPS,
    answer_objects,
    citations_frame,
    load_answers,
    load_fixture,
)

_QUOTES = str.maketrans({c: '"' for c in "“”„«»″"} | {c: "'" for c in "‘’‚‹›′`"})
FIVE = ("en", "pt", "es", "it", "la")


def normal(text: str) -> str:
    """Quotes, case and spaces normalised, as ``quote_in_passage`` is judged."""
    return re.sub(r"\s+", " ", text.translate(_QUOTES).casefold()).strip()


@pytest.fixture(scope="module")
def pairs() -> pl.DataFrame:
    return load_fixture()


def test_pairs_are_many_unique_and_a_third_cross_lingual(pairs: pl.DataFrame) -> None:
    assert pairs.height >= 330
    assert pairs["id"].n_unique() == pairs.height
    assert pairs["cross"].sum() >= pairs.height / 3
    assert pairs.filter(pl.col("sentence") == "").height == 0
    assert pairs.filter(pl.col("passage").str.len_chars() < 40).height == 0


@pytest.mark.parametrize("lang", FIVE)
def test_each_of_five_languages_writes_sentences_and_passages(
    pairs: pl.DataFrame, lang: str
) -> None:
    assert pairs.filter(pl.col("sentence_lang") == lang).height >= 15
    assert pairs.filter(pl.col("passage_lang") == lang).height >= 15
    # Each language is met across languages too, on both sides.
    assert pairs.filter(pl.col("cross") & (pl.col("sentence_lang") == lang)).height >= 5
    assert pairs.filter(pl.col("cross") & (pl.col("passage_lang") == lang)).height >= 5


def test_labels_are_valid_and_roughly_balanced(pairs: pl.DataFrame) -> None:
    counts = Counter(pairs["label"])
    assert set(counts) == set(LABELS)
    share = {label: n / pairs.height for label, n in counts.items()}
    assert 0.35 <= share["supports"] <= 0.50
    assert 0.12 <= share["partial"] <= 0.25
    assert 0.35 <= share["does_not_support"] <= 0.50
    for label in LABELS:  # every label across languages too
        assert pairs.filter(pl.col("cross") & (pl.col("label") == label)).height >= 20


@pytest.mark.parametrize("trap", TRAPS)
def test_every_trap_is_set_many_times(pairs: pl.DataFrame, trap: str) -> None:
    assert pairs.filter(pl.col("trap") == trap).height >= 20


def test_traps_carry_the_labels_they_stand_for(pairs: pl.DataFrame) -> None:
    by = {t: Counter(pairs.filter(pl.col("trap") == t)["label"]) for t in TRAPS}
    for trap in ("negation", "changed_number", "changed_year", "same_topic_other_claim"):
        assert set(by[trap]) == {"does_not_support"}, trap
    assert set(by["paraphrase_no_shared_words"]) == {"supports"}
    assert "supports" not in by["altered_quote"]
    assert by["exact_quote"]["supports"] >= 20


def test_quote_in_passage_agrees_with_the_texts(pairs: pl.DataFrame) -> None:
    for row in pairs.iter_rows(named=True):
        if row["quote"] is None:
            assert row["quote_in_passage"] is None, row["id"]
            assert row["trap"] not in {"exact_quote", "altered_quote"}, row["id"]
            continue
        assert normal(row["quote"]) in normal(row["sentence"]), row["id"]
        assert (normal(row["quote"]) in normal(row["passage"])) is row["quote_in_passage"], row[
            "id"
        ]
        if row["trap"] == "exact_quote":
            assert row["quote_in_passage"], row["id"]
        if row["trap"] == "altered_quote":
            assert not row["quote_in_passage"], row["id"]


def test_some_quotes_are_verbatim_across_languages(pairs: pl.DataFrame) -> None:
    across = pairs.filter(pl.col("cross") & (pl.col("trap") == "exact_quote"))
    assert across.height >= 5


_SMALL = frozenset(
    ["that", "this", "with", "from", "have", "their", "they", "which", "what", "when"]
)


def _long_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W\d_]+", text.casefold()) if len(w) >= 4} - _SMALL


def test_paraphrases_share_no_word(pairs: pl.DataFrame) -> None:
    for row in pairs.filter(pl.col("trap") == "paraphrase_no_shared_words").iter_rows(named=True):
        assert not _long_words(row["sentence"]) & _long_words(row["passage"]), row["id"]


def test_a_changed_year_is_a_year_the_passage_does_not_have(pairs: pl.DataFrame) -> None:
    for row in pairs.filter(pl.col("trap") == "changed_year").iter_rows(named=True):
        years = set(re.findall(r"\b1[0-9]{3}\b|\b20[0-9]{2}\b", row["sentence"]))
        passage = set(re.findall(r"\b[0-9]{4}\b", row["passage"]))
        assert years - passage and passage, row["id"]


# -- answers with a misattributed marker --------------------------------------------------------


def test_answers_are_many_in_both_marker_styles_and_several_languages() -> None:
    answers = load_answers()
    assert len([a for a in answers if a["misattributed"]]) >= 45
    assert len({a["id"] for a in answers}) == len(answers)
    assert Counter(a["style"] for a in answers).keys() == STYLES.keys()
    assert len({a["language"] for a in answers} & set(FIVE)) == 5
    cross = [a for a in answers if any(s["lang"] != a["language"] for s in a["sources"])]
    assert len(cross) >= 15


def test_every_marker_has_a_source_of_its_answer() -> None:
    for a in load_answers():
        style = STYLES[a["style"]]
        numbers = {m.number for s in sentences(a["text"]) for m in s.markers}
        assert numbers, a["id"]
        assert numbers <= {s["marker"] for s in a["sources"]}, a["id"]
        for n in numbers:  # written in the answer's own style
            assert style.format(n) in a["text"], a["id"]


def test_misattributions_name_a_cited_marker_and_a_better_source() -> None:
    for a in load_answers():
        split = sentences(a["text"])
        markers = {s["marker"] for s in a["sources"]}
        for m in a["misattributed"]:
            sentence = split[m["sentence_index"]]
            assert m["sentence"] in sentence.text, a["id"]
            assert m["marker"] in {k.number for k in sentence.markers}, a["id"]
            assert m["best_marker"] in markers and m["best_marker"] != m["marker"], a["id"]


def test_answers_hold_correct_citations_too() -> None:
    gold = citations_frame(load_answers())
    wrong = int(gold["misattributed"].sum())
    assert wrong >= 45
    assert gold.height - wrong >= 1.5 * wrong
    per_answer = gold.group_by("answer_id").agg((~pl.col("misattributed")).sum().alias("right"))
    assert per_answer.filter(pl.col("right") == 0).height == 0


def test_citekit_reads_each_gold_citation_of_the_answers() -> None:
    answers = load_answers()
    gold = citations_frame(answers)
    support = ck.support_frame(answer_objects(answers)).filter(pl.col("marker").is_not_null())
    keys = ["answer_id", "sentence_index", "marker"]
    assert support.height == gold.height
    assert gold.join(support, on=keys, how="anti").height == 0
    # The provider each style imitates is the answer's provider.
    assert set(support["provider"]) == set(STYLES)
