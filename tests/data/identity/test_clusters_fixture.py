"""The identity fixture (tests/data/identity/identity_fixture.json): its shape, and its scorer."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from itertools import combinations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.data.identity.scoring import (
    FIXTURE,
    FIXTURE_SCHEMA,
    Errors,
    Merge,
    Scores,
    Split,
    errors,
    load_fixture,
    pairwise_scores,
)

TRAP_KINDS = {
    "translated-title",
    "commentary",
    "same-author-other-work",
    "same-title-other-work",
    "url-variant",
    "author-spelling",
    "similar-name",
    "edition",
    "part-of-work",
    "not-in-alias",
}
KINDS = {"magisterium": "citation", "maritaca": "web source", "gptbots": "knowledge chunk"}
SOURCE_KEYS = {
    "title",
    "author",
    "year",
    "url",
    "reference",
    "data_id",
    "kind",
    "work",
    "person",
    "trap",
}
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

# The works a table of Catholic documents could hold (generously: the popes', councils' and curia's
# documents, the Catechism and the Codes, the Fathers', Doctors' and saints' classics). The issue
# asks that at least 30% of the sources lie outside any such table.
_ALIAS_SCOPE_WORKS = """
    aeterni-patris amoris-laetitia annum-sacrum ascent-of-mount-carmel audience-1979-09-05
    audience-1980-01-16 audience-2015-02-04 audience-2015-02-11 canticle-of-creatures
    caritas-in-veritate casti-connubii catechism centesimus-annus cic-1917 cic-1983 city-of-god
    compendium-catechism compendium-social-doctrine confessions de-trinitate-augustine
    de-trinitate-hilary dei-filius dei-verbum deus-caritas-est devout-life dignitas-infinita
    dignitatis-humanae dilexi-te dilexit-nos erga-migrantes evangelii-gaudium evangelii-nuntiandi
    evangelium-vitae exsul-familia familiaris-consortio fidei-depositum fides-et-ratio
    fratelli-tutti gaudete-et-exsultate gaudium-et-spes great-catechism-nyssa haurietis-aquas
    homily-ciudad-juarez-2016 homily-inauguration-2013 homily-lampedusa-2013 humanae-vitae
    humani-generis interior-castle itc-natural-law iura-et-bona laborem-exercens laudate-deum
    laudato-si leo-sermon-21 letter-to-families libertatis-conscientia libertatis-nuntius
    lumen-fidei lumen-gentium making-of-man mater-et-magistra miserentissimus-redemptor mitis-iudex
    motu-compendium mulieris-dignitatem notification-boff pacem-in-terris pastoral-rule
    populorum-progressio quadragesimo-anno querida-amazonia regensburg-lecture rerum-novarum
    sacrosanctum-concilium samaritanus-bonus sollicitudo-rei-socialis spe-salvi story-of-a-soul
    summa-contra-gentiles summa-theologiae tome-of-leo treatise-love-of-god veritatis-splendor
    wdp-2009 wdp-2015 wdp-2020
"""
ALIAS_SCOPE = set(_ALIAS_SCOPE_WORKS.split())


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return load_fixture()


# ---- the fixture's shape ----


def test_fixture_is_as_large_and_varied_as_the_issue_asks(frame: pl.DataFrame) -> None:
    assert frame.height >= 150
    assert frame["answer_id"].n_unique() >= 40
    assert frame["language"].n_unique() >= 6
    assert frame["work"].n_unique() >= 60
    assert frame["person"].drop_nulls().n_unique() >= 25


def test_a_third_of_the_sources_lie_outside_any_alias_table(frame: pl.DataFrame) -> None:
    works = set(frame["work"].to_list())
    assert works >= ALIAS_SCOPE, ALIAS_SCOPE - works
    outside = frame.filter(~pl.col("work").is_in(sorted(ALIAS_SCOPE)))
    assert outside.height >= 0.3 * frame.height
    assert outside["work"].n_unique() >= 60
    # some of them cited more than once, under other titles
    retitled = outside.group_by("work").agg(pl.col("title").n_unique().alias("titles"))
    assert (retitled["titles"] > 1).sum() >= 5


def test_every_trap_kind_occurs_at_least_five_times(frame: pl.DataFrame) -> None:
    traps = Counter(frame["trap"].drop_nulls().to_list())
    assert set(traps) <= TRAP_KINDS, set(traps) - TRAP_KINDS
    assert {kind: traps[kind] for kind in TRAP_KINDS if traps[kind] < 5} == {}


def test_provider_mix_is_mostly_magisterium(frame: pl.DataFrame) -> None:
    share = {p: n / frame.height for p, n in Counter(frame["provider"].to_list()).items()}
    assert set(share) == set(KINDS)
    assert share["magisterium"] >= 0.5
    assert share["maritaca"] >= 0.15
    assert share["gptbots"] >= 0.15


def test_records_have_the_documented_fields(raw: dict) -> None:
    assert raw["version"] == 1
    assert isinstance(raw["about"], str) and "one work = one text" in raw["about"]
    ids = [answer["id"] for answer in raw["answers"]]
    assert len(ids) == len(set(ids))
    for answer in raw["answers"]:
        assert answer["provider"] in KINDS
        assert answer["question"].strip()
        assert answer["sources"]
        for source in answer["sources"]:
            assert set(source) == SOURCE_KEYS, (answer["id"], source)
            assert source["kind"] == KINDS[answer["provider"]]
            assert isinstance(source["title"], str) and source["title"].strip()
            assert source["year"] is None or isinstance(source["year"], str)
            assert SLUG.fullmatch(source["work"]), source["work"]
            assert source["person"] is None or SLUG.fullmatch(source["person"])
            assert source["url"] is None or source["url"].startswith(("http://", "https://"))


def test_providers_send_what_they_really_send(frame: pl.DataFrame) -> None:
    maritaca = frame.filter(pl.col("provider") == "maritaca")
    assert maritaca["url"].null_count() == 0
    assert maritaca["author"].null_count() == maritaca.height
    gptbots = frame.filter(pl.col("provider") == "gptbots")
    assert gptbots["data_id"].str.contains(r"^[0-9a-f]{24}$").all()
    assert frame.filter(pl.col("provider") != "gptbots")["data_id"].null_count() == (
        frame.height - gptbots.height
    )


def test_one_data_id_is_one_document(frame: pl.DataFrame) -> None:
    per_id = (
        frame.filter(pl.col("data_id").is_not_null())
        .group_by("data_id")
        .agg(
            pl.col("title").n_unique().alias("titles"),
            pl.col("work").n_unique().alias("works"),
            pl.len().alias("chunks"),
        )
    )
    assert (per_id["titles"] == 1).all() and (per_id["works"] == 1).all()
    assert (per_id["chunks"] > 1).any(), "some document should give several chunks"
    per_title = (
        frame.filter(pl.col("data_id").is_not_null())
        .group_by("title")
        .agg(pl.col("data_id").n_unique())
    )
    assert (per_title["data_id"] == 1).all()


def test_the_labelling_rules_hold_on_the_named_cases(frame: pl.DataFrame) -> None:
    def works(title_pattern: str) -> set[str]:
        return set(frame.filter(pl.col("title").str.contains(title_pattern))["work"].to_list())

    # Catechism 1992 and 1997: one work; its Compendium: another.
    catechism = frame.filter(pl.col("work") == "catechism")
    assert {"1992", "1997"} <= set(catechism["year"].to_list())
    assert works("^Compêndio do Catecismo") == {"compendium-catechism"}
    # the two Codes of Canon Law are two works
    assert {"cic-1917", "cic-1983"} <= set(frame["work"].to_list())
    # Ratzinger and Benedict XVI: one person
    ratzinger = set(frame.filter(pl.col("author").str.contains("Ratzinger"))["person"].to_list())
    assert ratzinger == {"benedict-xvi"}
    # two Messages for the World Day of Peace with the same title: two works
    assert len(works("^Message for the World Day of Peace$")) == 3
    # Les Confessions: Augustine's and Rousseau's
    assert works("^Les Confessions$") == {"confessions", "confessions-rousseau"}
    # `person` is whom each record names: one work, two persons (the CDF, its prefect)
    nuntius = frame.filter(pl.col("work") == "libertatis-nuntius")
    assert set(nuntius["person"].to_list()) == {"cdf", "benedict-xvi"}
    # no author and nobody can tell: null (news, encyclopedias, parish files)
    assert frame.filter(pl.col("url").str.contains("wikipedia.org"))["person"].null_count() == (
        frame.filter(pl.col("url").str.contains("wikipedia.org")).height
    )


def test_load_fixture_has_one_typed_row_per_source(raw: dict, frame: pl.DataFrame) -> None:
    assert frame.schema == pl.Schema(FIXTURE_SCHEMA)
    assert frame.height == sum(len(answer["sources"]) for answer in raw["answers"])
    first = raw["answers"][0]
    row = frame.row(0, named=True)
    assert row["answer_id"] == first["id"]
    assert row["title"] == first["sources"][0]["title"]


# ---- the scorer ----


def brute_force(gold: Sequence[Hashable | None], predicted: Sequence[Hashable | None]) -> Scores:
    """The definition, pair by pair: O(n^2)."""
    covered = [i for i, g in enumerate(gold) if g is not None]
    pairs_gold = pairs_predicted = pairs_both = 0
    for i, j in combinations(covered, 2):
        same_gold = gold[i] == gold[j]
        same_predicted = predicted[i] is not None and predicted[i] == predicted[j]
        pairs_gold += same_gold
        pairs_predicted += same_predicted
        pairs_both += same_gold and same_predicted
    precision = pairs_both / pairs_predicted if pairs_predicted else 1.0
    recall = pairs_both / pairs_gold if pairs_gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, pairs_gold, pairs_predicted, pairs_both)


label = st.none() | st.integers(0, 5)
labelings = st.integers(0, 40).flatmap(
    lambda n: st.tuples(
        st.lists(label, min_size=n, max_size=n), st.lists(label, min_size=n, max_size=n)
    )
)


@given(labelings)
def test_scores_equal_the_pair_by_pair_count(labeling: tuple[list, list]) -> None:
    gold, predicted = labeling
    assert pairwise_scores(gold, predicted) == pytest.approx(brute_force(gold, predicted))


@given(labelings)
def test_scores_lie_between_zero_and_one(labeling: tuple[list, list]) -> None:
    scores = pairwise_scores(*labeling)
    assert 0 <= scores.precision <= 1 and 0 <= scores.recall <= 1 and 0 <= scores.f1 <= 1
    assert scores.pairs_both <= min(scores.pairs_gold, scores.pairs_predicted)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=40))
def test_swapping_gold_and_prediction_swaps_precision_and_recall(pairs: list) -> None:
    gold = [g for g, _ in pairs]
    predicted = [p for _, p in pairs]
    forward, backward = pairwise_scores(gold, predicted), pairwise_scores(predicted, gold)
    assert forward.precision == pytest.approx(backward.recall)
    assert forward.recall == pytest.approx(backward.precision)


@given(labelings, st.permutations(range(6)))
def test_scores_do_not_depend_on_the_names_of_clusters(labeling: tuple[list, list], names) -> None:
    gold, predicted = labeling
    renamed = [None if p is None else f"cluster {names[p]}" for p in predicted]
    assert pairwise_scores(gold, renamed) == pairwise_scores(gold, predicted)


def test_perfect_prediction_scores_one(frame: pl.DataFrame) -> None:
    for column in ("work", "person"):
        gold = frame[column].to_list()
        renamed = [None if g is None else f"predicted {g}" for g in gold]
        scores = pairwise_scores(gold, renamed)
        assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0)
        assert scores.pairs_gold == scores.pairs_predicted == scores.pairs_both > 0


def test_merging_everything_finds_every_pair_and_few_right_ones(frame: pl.DataFrame) -> None:
    gold = frame["work"].to_list()
    scores = pairwise_scores(gold, ["all"] * len(gold))
    n = len(gold)
    assert scores.recall == 1.0
    assert scores.pairs_predicted == n * (n - 1) // 2
    assert scores.precision == pytest.approx(scores.pairs_gold / (n * (n - 1) // 2))
    assert scores.precision < 0.1


def test_merging_everything_counts_only_records_with_a_gold_person(frame: pl.DataFrame) -> None:
    gold = frame["person"].to_list()
    known = sum(g is not None for g in gold)
    assert known < len(gold)
    scores = pairwise_scores(gold, ["all"] * len(gold))
    assert scores.pairs_predicted == known * (known - 1) // 2


@pytest.mark.parametrize("split", ["none", "unique"])
def test_splitting_everything_predicts_no_pair(frame: pl.DataFrame, split: str) -> None:
    gold = frame["work"].to_list()
    predicted = [None] * len(gold) if split == "none" else list(range(len(gold)))
    scores = pairwise_scores(gold, predicted)
    assert scores.pairs_predicted == 0
    assert (scores.precision, scores.recall, scores.f1) == (1.0, 0.0, 0.0)


def test_no_gold_pair_and_no_predicted_pair() -> None:
    assert pairwise_scores([], []) == Scores(1.0, 1.0, 1.0, 0, 0, 0)
    assert pairwise_scores([None, None], ["a", "a"]) == Scores(1.0, 1.0, 1.0, 0, 0, 0)
    assert pairwise_scores(["a", "b"], ["x", "x"]) == Scores(0.0, 1.0, 0.0, 0, 1, 0)


def test_scores_a_million_records_in_one_pass() -> None:
    n = 1_000_000
    gold = [i // 4 for i in range(n)]
    predicted = [i // 8 for i in range(n)]
    scores = pairwise_scores(gold, predicted)
    assert scores.pairs_gold == (n // 4) * 6
    assert scores.pairs_predicted == (n // 8) * 28
    assert scores.pairs_both == scores.pairs_gold
    assert scores.recall == 1.0
    assert scores.precision == pytest.approx(6 / 14)


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="one of each per record"):
        pairwise_scores(["a"], [])
    with pytest.raises(ValueError, match="one of each per record"):
        errors(["a"], ["a"], [])


# ---- reading failures ----


def test_errors_name_the_wrong_merges_and_splits() -> None:
    gold = ["ls", "ls", "wiki", "wdp15", "wdp20", "cat", "cat", "cat", None]
    predicted = ["p1", "p1", "p1", "p2", "p2", "p3", "p4", None, "p1"]
    labels = ["Laudato si'", "LS pt", "Wikipedia", "WDP 2015", "WDP 2020", "CCC", "KKK", "CEC", "?"]
    found = errors(gold, predicted, labels)
    assert found == Errors(
        merged=[
            Merge("p1", {"ls": ["Laudato si'", "LS pt"], "wiki": ["Wikipedia"]}),
            Merge("p2", {"wdp15": ["WDP 2015"], "wdp20": ["WDP 2020"]}),
        ],
        split=[Split("cat", {"p3": ["CCC"], "p4": ["KKK"], None: ["CEC"]})],
    )


def test_records_predicted_alone_split_their_gold_label() -> None:
    found = errors(["a", "a", "b"], [None, None, None], ["x", "y", "z"])
    assert found == Errors(merged=[], split=[Split("a", {None: ["x", "y"]})])


@given(labelings)
def test_no_errors_exactly_when_the_scores_are_perfect(labeling: tuple[list, list]) -> None:
    gold, predicted = labeling
    found = errors(gold, predicted, [str(i) for i in range(len(gold))])
    scores = pairwise_scores(gold, predicted)
    assert (found.merged == []) == (scores.precision == 1.0)
    assert (found.split == []) == (scores.recall == 1.0)


def test_errors_on_the_fixture_read_as_titles(frame: pl.DataFrame) -> None:
    gold = frame["work"].to_list()
    by_title = frame["title"].str.to_lowercase().to_list()
    found = errors(gold, by_title, frame["title"].to_list())
    merged = {frozenset(m.parts) for m in found.merged}
    assert frozenset({"wdp-2015", "wdp-2020", "wdp-2009"}) in merged
    split = {s.gold: s for s in found.split}
    assert "catechism" in split and "Katechismus der Katholischen Kirche" in (
        label for labels in split["catechism"].parts.values() for label in labels
    )
    seen: defaultdict[str, int] = defaultdict(int)
    for s in found.split:
        for labels in s.parts.values():
            seen[s.gold] += len(labels)
    assert all(seen[g] == gold.count(g) for g in seen)
