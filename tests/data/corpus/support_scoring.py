"""Scoring sentence support against the hand-labelled fixture.

The fixture is tests/data/corpus/support_fixture.json: (sentence, passage) pairs labelled
``supports`` / ``partial`` / ``does_not_support`` with the trap each sets, and whole answers
with misattributed markers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
