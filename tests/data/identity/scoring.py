"""Scoring work and author identity against the hand-labelled fixture.

The fixture is tests/data/identity/identity_fixture.json. Scores are pairwise precision and recall
over the records a gold label covers: a pair of records is gold-positive when both carry the same
gold label, predicted-positive when both carry the same (non-None) predicted label. The counts
come from the contingency table of gold and predicted labels (the sum of C(n, 2) over its cells),
so scoring a million records takes one pass over them, not a million squared pairs.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import polars as pl

FIXTURE = Path(__file__).parent / "identity_fixture.json"

#: The fixture's columns, one row per source, in this order.
FIXTURE_SCHEMA: dict[str, type[pl.DataType]] = {
    "answer_id": pl.String,
    "provider": pl.String,
    "language": pl.String,
    "question": pl.String,
    "title": pl.String,
    "author": pl.String,
    "year": pl.String,
    "url": pl.String,
    "reference": pl.String,
    "data_id": pl.String,
    "kind": pl.String,
    "work": pl.String,
    "person": pl.String,
    "trap": pl.String,
}

_SOURCE_FIELDS = [
    name for name in FIXTURE_SCHEMA if name not in {"answer_id", "provider", "language", "question"}
]


class Scores(NamedTuple):
    """Pairwise scores of a predicted partition against a gold one."""

    precision: float
    recall: float
    f1: float
    pairs_gold: int
    pairs_predicted: int
    pairs_both: int


def _pairs(counts: Iterable[int]) -> int:
    return sum(n * (n - 1) // 2 for n in counts)


def pairwise_scores(
    gold: Sequence[Hashable | None], predicted: Sequence[Hashable | None]
) -> Scores:
    """Pairwise precision, recall and F1 of ``predicted`` against ``gold``, in one pass.

    Records whose gold label is None are left out; a None prediction puts its record with no other.
    Precision is 1.0 when no pair is predicted, recall 1.0 when there is no gold pair to find.
    """
    if len(gold) != len(predicted):
        raise ValueError(
            f"gold has {len(gold)} labels and predicted {len(predicted)}: "
            "give one of each per record"
        )
    gold_sizes: Counter[Hashable] = Counter()
    predicted_sizes: Counter[Hashable] = Counter()
    pairs_both = 0
    # One counting pass over the records (Counter counts in C), then one over the contingency cells.
    for (g, p), n in Counter(zip(gold, predicted, strict=True)).items():
        if g is None:
            continue
        gold_sizes[g] += n
        if p is not None:
            predicted_sizes[p] += n
            pairs_both += n * (n - 1) // 2
    pairs_gold = _pairs(gold_sizes.values())
    pairs_predicted = _pairs(predicted_sizes.values())
    precision = pairs_both / pairs_predicted if pairs_predicted else 1.0
    recall = pairs_both / pairs_gold if pairs_gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, pairs_gold, pairs_predicted, pairs_both)


class Merge(NamedTuple):
    """A predicted cluster that holds records of several gold labels.

    ``parts`` maps each gold label to the display labels of its records in the cluster.
    """

    predicted: Hashable
    parts: dict[Hashable, list[str]]


class Split(NamedTuple):
    """A gold label whose records the prediction put in several clusters.

    ``parts`` maps each predicted label to the display labels of its records (None gathers the
    records predicted alone, each in a cluster of its own).
    """

    gold: Hashable
    parts: dict[Hashable | None, list[str]]


class Errors(NamedTuple):
    """Wrong merges and wrong splits, largest first, for reading why a score is low."""

    merged: list[Merge]
    split: list[Split]


def errors(
    gold: Sequence[Hashable | None], predicted: Sequence[Hashable | None], labels: Sequence[str]
) -> Errors:
    """The predicted clusters that merge gold labels and the gold labels the prediction splits.

    ``labels`` names each record for reading (a title, "title | author"). Records whose gold label
    is None are left out, as in :func:`pairwise_scores`.
    """
    if not len(gold) == len(predicted) == len(labels):
        raise ValueError(
            f"gold, predicted and labels have {len(gold)}, {len(predicted)} and {len(labels)} "
            "items: give one of each per record"
        )
    by_predicted: defaultdict[Hashable, defaultdict[Hashable, list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    by_gold: defaultdict[Hashable, defaultdict[Hashable | None, list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    alone: Counter[Hashable] = Counter()
    for g, p, label in zip(gold, predicted, labels, strict=True):
        if g is None:
            continue
        by_gold[g][p].append(label)
        if p is None:
            alone[g] += 1
        else:
            by_predicted[p][g].append(label)
    merged = [Merge(p, dict(parts)) for p, parts in by_predicted.items() if len(parts) > 1]
    split = [
        Split(g, dict(parts))
        for g, parts in by_gold.items()
        if len(parts) + max(alone[g] - 1, 0) > 1
    ]
    merged.sort(key=lambda m: -sum(len(v) for v in m.parts.values()))
    split.sort(key=lambda s: -sum(len(v) for v in s.parts.values()))
    return Errors(merged, split)


def load_fixture(path: Path = FIXTURE) -> pl.DataFrame:
    """The fixture as one row per source, in FIXTURE_SCHEMA's columns (answer fields repeated)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = [
        {
            "answer_id": answer["id"],
            "provider": answer["provider"],
            "language": answer["language"],
            "question": answer["question"],
            **{name: source.get(name) for name in _SOURCE_FIELDS},
        }
        for answer in data["answers"]
        for source in answer["sources"]
    ]
    return pl.DataFrame(rows, schema=FIXTURE_SCHEMA)


def identified(fixture: pl.DataFrame) -> pl.DataFrame:
    """The fixture's sources given to citekit's clustering as a provider reports them (title,
    author, year, address, data id: no gold label), with the ``work_id`` and ``author_id`` it
    predicts, one row per source in the fixture's order."""
    from citekit.core.years import year_expr
    from citekit.data.identity.clusters import identify

    reported = fixture.select(
        document_title=pl.col("title"),
        document_author=pl.col("author"),
        year=year_expr("year"),
        source_url=pl.col("url"),
        data_id=pl.col("data_id"),
    )
    return identify(reported)


def quality(fixture: pl.DataFrame) -> dict[str, tuple[Scores, Scores]]:
    """Pairwise (works, authors) scores of the clustering on the whole fixture, on each
    provider's sources, and without the Catechism (which holds almost half the gold work
    pairs)."""
    got = identified(fixture)
    both = fixture.with_columns(got["work_id"], got["author_id"])
    parts = {"all": both, "without the Catechism": both.filter(pl.col("work") != "catechism")}
    for provider in sorted(set(both["provider"])):
        parts[provider] = both.filter(pl.col("provider") == provider)
    return {
        name: (
            pairwise_scores(part["work"].to_list(), part["work_id"].to_list()),
            pairwise_scores(part["person"].to_list(), part["author_id"].to_list()),
        )
        for name, part in parts.items()
    }
