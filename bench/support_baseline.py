"""Baselines on the support fixture (``tests/data/corpus/support_fixture.json``): how far plain
word overlap, and citekit's lexical support score as it stands, tell a sentence its passage
supports from one it does not.

Scorers, each over every (sentence, passage) pair:

``jaccard``
    The Jaccard index of the two texts' sets of lowercased words: the floor any scorer must
    clear.
``citekit``
    ``citekit.data.corpus.evidence.score(evidence(sentence, passage))``, the score
    ``ck.support_frame`` gives, with its verdict and ``quote_found``.

Printed: ROC AUC (``supports`` against ``does_not_support``; ``partial`` left out) overall,
within a language, across languages and per language pair with at least ten judged pairs; AUC
against each trap; precision and recall of the verdict ``unsupported`` for ``does_not_support``;
``quote_found`` accuracy; and, on the fixture's answers, precision and recall of a naive
misattribution rule (another source of the answer scores higher than the cited one).

The fixture was written by hand before any rule was tuned on it; figures fitted on it are an
upper estimate for unseen answers.

Run: ``.venv/bin/python bench/support_baseline.py``
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citekit.data.corpus.evidence import evidence, score, verdict  # noqa: E402
from citekit.data.corpus.support import plain  # noqa: E402
from citekit.text.sentences import sentences  # noqa: E402
from tests.data.corpus.support_scoring import (  # noqa: E402
    auc_by_trap,
    auc_table,
    citations_frame,
    load_answers,
    load_fixture,
    pr_table,
    quote_scores,
)

_WORD = re.compile(r"[^\W_]+")


def jaccard(sentence: str, passage: str) -> float:
    """The Jaccard index of the lowercased word sets of two texts."""
    a = set(_WORD.findall(sentence.lower()))
    b = set(_WORD.findall(passage.lower()))
    return len(a & b) / len(a | b) if a or b else 0.0


def lexical(sentence: str, passage: str) -> float:
    """citekit's support score of one sentence over one passage."""
    return score(evidence(sentence, passage))


SCORERS: dict[str, Callable[[str, str], float]] = {"jaccard": jaccard, "citekit": lexical}


def scored(pairs: pl.DataFrame) -> pl.DataFrame:
    """The pairs with a column per scorer, and citekit's verdict and ``quote_found``."""
    found = [evidence(s, p) for s, p in zip(pairs["sentence"], pairs["passage"], strict=True)]
    columns = {
        name: [f(s, p) for s, p in zip(pairs["sentence"], pairs["passage"], strict=True)]
        for name, f in SCORERS.items()
    }
    return pairs.with_columns(
        *(pl.Series(name, values, dtype=pl.Float64) for name, values in columns.items()),
        pl.Series("quote_found", [e.quote_found for e in found], dtype=pl.Boolean),
        pl.Series("verdict", [verdict(v) for v in columns["citekit"]], dtype=pl.String),
    )


def misattribution(scorer: Callable[[str, str], float]) -> pl.DataFrame:
    """The fixture's citations with ``predicted``: another source of the same answer scores
    higher than the cited one for the sentence."""
    answers = load_answers()
    gold = citations_frame(answers)
    predicted = []
    for a in answers:
        passages = {s["marker"]: s["cited_text"] for s in a["sources"]}
        for s in sentences(a["text"]):
            said = plain(s)
            by_marker = {n: scorer(said, text) for n, text in passages.items()}
            for number in dict.fromkeys(m.number for m in s.markers):
                predicted.append(max(by_marker.values()) > by_marker[number])
    cross = pl.col("language") != pl.col("passage_lang")
    return gold.with_columns(
        predicted=pl.Series(predicted, dtype=pl.Boolean),
        cross=cross,
        pair=pl.col("language") + ">" + pl.col("passage_lang"),
    )


def _auc_line(table: pl.DataFrame, group: str) -> str:
    row = table.filter(pl.col("group") == group).row(0, named=True)
    return "   n/a" if row["auc"] is None else f"{row['auc']:6.3f}"


def main() -> int:
    pairs = scored(load_fixture())
    judged = pairs.filter(pl.col("label") != "partial")
    print(
        f"fixture: {pairs.height} pairs ({judged.height} supports or does_not_support), "
        f"{int(pairs['cross'].sum())} across languages, "
        f"{pairs['sentence_lang'].n_unique()} sentence languages"
    )
    tables = {name: auc_table(pairs, name) for name in SCORERS}
    print("\nROC AUC, supports vs does_not_support (partial left out)")
    print(f"{'group':<20}{'n':>6}" + "".join(f"{name:>10}" for name in SCORERS))
    first = next(iter(tables.values()))
    for row in first.iter_rows(named=True):
        n = row["supports"] + row["does_not_support"]
        if ">" in row["group"] and n < 10:  # a language pair with few judged pairs
            continue
        cells = "".join(f"{_auc_line(t, row['group']):>10}" for t in tables.values())
        print(f"{row['group']:<20}{n:>6}{cells}")
    print("\nROC AUC, every supports pair against one trap's does_not_support pairs")
    traps = {name: auc_by_trap(pairs, name) for name in SCORERS}
    for row in next(iter(traps.values())).iter_rows(named=True):
        cells = "".join(f"{_auc_line(t, row['group']):>10}" for t in traps.values())
        print(f"{row['group']:<26}{row['does_not_support']:>6}{cells}")
    unsupported = pairs.with_columns(
        predicted=pl.col("verdict") == "unsupported",
        actual=pl.col("label") == "does_not_support",
    )
    print("\ncitekit verdict 'unsupported' for does_not_support: precision / recall")
    for row in pr_table(unsupported, "predicted", "actual").head(3).iter_rows(named=True):
        print(f"  {row['group']:<18}{row['precision']:6.3f} / {row['recall']:.3f}")
    q = quote_scores(pairs)
    print(
        f"\nquote_found (citekit): {q.correct} of {q.pairs} right ({q.accuracy:.3f}); "
        f"altered quotes called found: {q.false_found_altered} of {q.altered}"
    )
    print("\nmisattributed (another source scores higher): precision / recall")
    for name, scorer in SCORERS.items():
        table = pr_table(misattribution(scorer), "predicted", "misattributed")
        for row in table.head(3).iter_rows(named=True):
            print(
                f"  {name:<10}{row['group']:<18}{row['precision']:6.3f} / {row['recall']:.3f} "
                f"({row['both']} of {row['predicted']} flagged, {row['actual']} misattributed)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
