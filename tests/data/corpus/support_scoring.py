"""Scoring sentence support against the hand-labelled fixture.

The fixture is tests/data/corpus/support_fixture.json (its ``about`` says how it was made):

``pairs``
    (sentence, passage) pairs labelled ``supports`` / ``partial`` / ``does_not_support``, each
    with the trap it sets and, when the sentence quotes, whether the quote stands verbatim in
    the passage.
``answers``
    Whole answers in the providers' marker styles (``[^N]``, ``$[N]$``) with their sources, and
    the citations that are misattributed: the cited source does not support the sentence and
    another source of the same answer does. Every other citation of an answer is correct.

The figures: ROC AUC of a support score (``supports`` against ``does_not_support``; ``partial``
left out), counted as the Mann-Whitney statistic with ties as one half; precision and recall of a
boolean prediction; both overall, within a language, across languages and per language pair
(``"en>pt"``: an English sentence over a Portuguese passage); and how often ``quote_found`` is
right, with the altered quotes called found. Pure polars and numpy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl

FIXTURE = Path(__file__).parent / "support_fixture.json"

#: The fixture's pairs, one row each, in this order.
PAIR_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(),
    "sentence": pl.String(),
    "sentence_lang": pl.String(),
    "passage": pl.String(),
    "passage_lang": pl.String(),
    "document_title": pl.String(),
    "label": pl.String(),
    "trap": pl.String(),
    "quote": pl.String(),
    "quote_in_passage": pl.Boolean(),
    "note": pl.String(),
}

#: One row per (answer, sentence, marker) of the fixture's answers.
CITATION_SCHEMA: dict[str, pl.DataType] = {
    "answer_id": pl.String(),
    "style": pl.String(),
    "language": pl.String(),
    "sentence_index": pl.Int32(),
    "sentence": pl.String(),
    "marker": pl.Int32(),
    "cited_text": pl.String(),
    "passage_lang": pl.String(),
    "misattributed": pl.Boolean(),
    "best_marker": pl.Int32(),
}

LABELS = ("supports", "partial", "does_not_support")
TRAPS = (
    "same_topic_other_claim",
    "negation",
    "changed_number",
    "changed_year",
    "paraphrase_no_shared_words",
    "altered_quote",
    "exact_quote",
)
#: The marker styles of the answers and the provider each is written like.
STYLES = {"magisterium": "[^{}]", "gptbots": "$[{}]$"}


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def load_fixture(path: Path = FIXTURE) -> pl.DataFrame:
    """The fixture's pairs, one row each (``PAIR_SCHEMA``), with ``pair``: ``"en>pt"`` for an
    English sentence over a Portuguese passage, and ``cross``: whether the two languages
    differ."""
    rows = _read(path)["pairs"]
    frame = pl.DataFrame([{n: r.get(n) for n in PAIR_SCHEMA} for r in rows], schema=PAIR_SCHEMA)
    return frame.with_columns(
        pair=pl.col("sentence_lang") + ">" + pl.col("passage_lang"),
        cross=pl.col("sentence_lang") != pl.col("passage_lang"),
    )


def load_answers(path: Path = FIXTURE) -> list[dict[str, Any]]:
    """The fixture's answers as written: ``id``, ``style``, ``language``, ``text``,
    ``sources`` (``marker``, ``document_title``, ``cited_text``, ``lang``) and
    ``misattributed`` (``sentence_index``, ``sentence``, ``marker``, ``best_marker``)."""
    answers: list[dict[str, Any]] = _read(path)["answers"]
    return answers


def answer_objects(answers: Sequence[dict[str, Any]]) -> list[Any]:
    """The fixture's answers as ``citekit.Answer`` values, with the provider their style
    imitates and one citation per source (its marker as ``document_index + 1``)."""
    import citekit as ck

    return [
        ck.Answer(
            provider=a["style"],
            id=a["id"],
            text=a["text"],
            citations=tuple(
                ck.Citation(
                    cited_text=s["cited_text"],
                    document_index=s["marker"] - 1,
                    document_title=s["document_title"],
                )
                for s in a["sources"]
            ),
        )
        for a in answers
    ]


def citations_frame(answers: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """The gold citations of the fixture's answers: one row per (answer, sentence, marker in
    the sentence), sentences as citekit's splitter cuts them, with ``misattributed`` and, for a
    misattributed one, ``best_marker`` (the source that supports the sentence)."""
    from citekit.text.sentences import sentences

    rows: list[dict[str, Any]] = []
    for a in answers:
        wrong = {(m["sentence_index"], m["marker"]): m["best_marker"] for m in a["misattributed"]}
        by_marker = {s["marker"]: s for s in a["sources"]}
        for i, s in enumerate(sentences(a["text"])):
            for number in dict.fromkeys(m.number for m in s.markers):
                source = by_marker[number]
                rows.append(
                    {
                        "answer_id": a["id"],
                        "style": a["style"],
                        "language": a["language"],
                        "sentence_index": i,
                        "sentence": s.text,
                        "marker": number,
                        "cited_text": source["cited_text"],
                        "passage_lang": source["lang"],
                        "misattributed": (i, number) in wrong,
                        "best_marker": wrong.get((i, number)),
                    }
                )
    return pl.DataFrame(rows, schema=CITATION_SCHEMA)


# -- figures ---------------------------------------------------------------------------------


def roc_auc(scores: Sequence[float] | np.ndarray, positive: Sequence[bool] | np.ndarray) -> float:
    """The area under the ROC curve of ``scores`` for telling ``positive`` items from the rest:
    the chance that a positive item scores above a negative one, a tie counting one half.

    Computed from average ranks (the Mann-Whitney U statistic), so n log n, not n squared.
    Raises ValueError when the two lengths differ, a score is missing or not finite, or one of
    the two classes is empty.
    """
    s = np.asarray(scores, dtype=np.float64)
    p = np.asarray(positive, dtype=bool)
    if s.shape != p.shape or s.ndim != 1:
        raise ValueError(f"{s.shape} scores for {p.shape} labels: give one score per label")
    if not np.isfinite(s).all():
        raise ValueError("a score is missing or not finite: score every pair")
    n_pos = int(p.sum())
    n_neg = p.size - n_pos
    if not n_pos or not n_neg:
        raise ValueError(f"{n_pos} positive and {n_neg} negative items: the AUC needs both")
    ranks = pl.Series(s).rank("average").to_numpy()
    u = float(ranks[p].sum()) - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


class PR(NamedTuple):
    """Precision and recall of a boolean prediction, with the counts behind them."""

    precision: float
    recall: float
    predicted: int
    actual: int
    both: int


def precision_recall(
    predicted: Sequence[bool] | np.ndarray, actual: Sequence[bool] | np.ndarray
) -> PR:
    """Precision (of the items predicted, the share that are actual) and recall (of the
    actual items, the share predicted); 1.0 when nothing is predicted, or nothing to find."""
    pred = np.asarray(predicted, dtype=bool)
    act = np.asarray(actual, dtype=bool)
    if pred.shape != act.shape:
        raise ValueError(f"{pred.shape} predictions for {act.shape} labels: give one per label")
    n_pred, n_act, both = int(pred.sum()), int(act.sum()), int((pred & act).sum())
    return PR(both / n_pred if n_pred else 1.0, both / n_act if n_act else 1.0, n_pred, n_act, both)


def groups(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """``frame`` (with a ``cross`` and a ``pair`` column) overall, within a language, across
    languages and per language pair, in that order (pairs sorted)."""
    out = {
        "overall": frame,
        "within language": frame.filter(~pl.col("cross")),
        "across languages": frame.filter(pl.col("cross")),
    }
    for pair in sorted(frame["pair"].unique()):
        out[pair] = frame.filter(pl.col("pair") == pair)
    return out


AUC_SCHEMA: dict[str, pl.DataType] = {
    "group": pl.String(),
    "supports": pl.UInt32(),
    "does_not_support": pl.UInt32(),
    "auc": pl.Float64(),
}


def auc_table(frame: pl.DataFrame, score: str = "score") -> pl.DataFrame:
    """ROC AUC of the column ``score`` (``supports`` against ``does_not_support``; ``partial``
    left out) in each of :func:`groups`, with the counts of each label; null where a group
    lacks one of the two labels."""
    judged = frame.filter(pl.col("label") != "partial")
    rows = []
    for name, part in groups(judged).items():
        positive = (part["label"] == "supports").to_numpy()
        n_pos = int(positive.sum())
        n_neg = part.height - n_pos
        auc = roc_auc(part[score].to_numpy(), positive) if n_pos and n_neg else None
        rows.append({"group": name, "supports": n_pos, "does_not_support": n_neg, "auc": auc})
    return pl.DataFrame(rows, schema=AUC_SCHEMA)


def auc_by_trap(frame: pl.DataFrame, score: str = "score") -> pl.DataFrame:
    """For each trap, ROC AUC of ``score`` between every ``supports`` pair and that trap's
    ``does_not_support`` pairs: how well the score pushes the trap below what is supported."""
    positive = frame.filter(pl.col("label") == "supports")
    rows = []
    for trap in TRAPS:
        negative = frame.filter((pl.col("trap") == trap) & (pl.col("label") == "does_not_support"))
        if not negative.height:
            continue
        both = pl.concat([positive, negative])
        auc = roc_auc(both[score].to_numpy(), (both["label"] == "supports").to_numpy())
        rows.append(
            {
                "group": trap,
                "supports": positive.height,
                "does_not_support": negative.height,
                "auc": auc,
            }
        )
    return pl.DataFrame(rows, schema=AUC_SCHEMA)


PR_SCHEMA: dict[str, pl.DataType] = {
    "group": pl.String(),
    "precision": pl.Float64(),
    "recall": pl.Float64(),
    "predicted": pl.UInt32(),
    "actual": pl.UInt32(),
    "both": pl.UInt32(),
}


def pr_table(frame: pl.DataFrame, predicted: str, actual: str) -> pl.DataFrame:
    """Precision and recall of the boolean column ``predicted`` against the boolean column
    ``actual`` in each of :func:`groups`."""
    rows = []
    for name, part in groups(frame).items():
        got = precision_recall(part[predicted].to_numpy(), part[actual].to_numpy())
        rows.append({"group": name, **got._asdict()})
    return pl.DataFrame(rows, schema=PR_SCHEMA)


class QuoteScores(NamedTuple):
    """How often ``quote_found`` agrees with ``quote_in_passage`` over the pairs that quote."""

    pairs: int
    correct: int
    accuracy: float
    altered: int  # pairs whose trap is an altered quote
    false_found_altered: int  # of those, the ones called found


def quote_scores(frame: pl.DataFrame, found: str = "quote_found") -> QuoteScores:
    """``quote_found`` (the column ``found``: True, False or null) against the fixture's
    ``quote_in_passage``, over the pairs whose sentence quotes; a null counts as wrong (the
    quote was not seen)."""
    quoting = frame.filter(pl.col("quote").is_not_null())
    right = (pl.col(found) == pl.col("quote_in_passage")).fill_null(False)
    correct = quoting.select(right.sum()).item()
    altered = quoting.filter(pl.col("trap") == "altered_quote")
    false_found = altered.select(pl.col(found).fill_null(False).sum()).item()
    return QuoteScores(
        quoting.height,
        correct,
        correct / quoting.height if quoting.height else 1.0,
        altered.height,
        false_found,
    )
