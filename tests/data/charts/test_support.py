"""``ck.charts.support``: sentences per provider by their best verdict, passages per work by
verdict, drawn from a ``support_frame``."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
import vl_convert

import citekit as ck
from citekit.data.charts.support import COLOURS, support_table
from citekit.data.corpus.support import SUPPORT_SCHEMA, VERDICTS


def frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    full = [{name: row.get(name) for name in SUPPORT_SCHEMA.names()} for row in rows]
    return pl.DataFrame(full, schema=SUPPORT_SCHEMA)


ROWS = frame(
    [
        # answer a: sentence 0 cited twice (one supports), sentence 1 uncited
        {"provider": "magisterium", "answer_id": "a", "sentence_index": 0, "work_id": "rn",
         "work": "Rerum novarum", "verdict": "supported"},
        {"provider": "magisterium", "answer_id": "a", "sentence_index": 0, "work_id": "ccc",
         "work": "Catechism", "verdict": "unsupported"},
        {"provider": "magisterium", "answer_id": "a", "sentence_index": 1, "verdict": "uncited"},
        # answer b: one partial sentence, one unsupported by the Catechism
        {"provider": "magisterium", "answer_id": "b", "sentence_index": 0, "work_id": "ccc",
         "work": "Catechism", "verdict": "partial"},
        {"provider": "magisterium", "answer_id": "b", "sentence_index": 1, "work_id": "ccc",
         "work": "Catechism", "verdict": "unsupported"},
        # maritaca: a linked web page, no passage
        {"provider": "maritaca", "answer_id": "c", "sentence_index": 0, "work_id": "w",
         "work": "A page", "verdict": "unverifiable"},
    ]
)  # fmt: skip


def test_per_provider_a_sentence_counts_once_with_its_best_verdict() -> None:
    table = support_table(ROWS)
    got = {(r["label"], r["verdict"]): (r["count"], r["share"]) for r in table.to_dicts()}
    assert got == {
        ("magisterium", "supported"): (1, 0.25),
        ("magisterium", "partial"): (1, 0.25),
        ("magisterium", "unsupported"): (1, 0.25),
        ("magisterium", "uncited"): (1, 0.25),
        ("maritaca", "unverifiable"): (1, 1.0),
    }
    assert table["label"].to_list()[0] == "magisterium"  # the largest first


def test_per_work_every_cited_passage_counts_and_uncited_sentences_have_no_work() -> None:
    table = support_table(ROWS, by="work", top=2)
    assert table.select("label", "verdict", "count").rows() == [
        ("Catechism", "partial", 1),
        ("Catechism", "unsupported", 2),
        ("A page", "unverifiable", 1),
    ]


def test_the_chart_draws_with_the_view_colours() -> None:
    chart = ck.charts.support(ROWS)
    spec = chart.to_dict()
    assert spec["encoding"]["color"]["scale"] == {"domain": list(VERDICTS), "range": list(COLOURS)}
    assert spec["encoding"]["x"]["stack"] == "normalize"
    assert chart.title.subtitle == (
        "sentences by the best verdict of their sources; 2 providers, 5 sentences"
    )
    png = vl_convert.vegalite_to_png(chart.to_json())
    assert png.startswith(b"\x89PNG")
    works = ck.charts.support(ROWS, by="work")
    assert works.to_dict()["encoding"]["x"]["stack"] == "zero"


def test_the_chart_takes_answers_and_refuses_an_unknown_grouping() -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="Leo XIII wrote Rerum novarum.[^1]",
        citations=(
            ck.Citation(cited_text="Leo XIII wrote Rerum novarum in 1891.", document_index=0),
        ),
    )
    assert support_table([answer]).select("label", "verdict").rows() == [
        ("magisterium", "supported")
    ]
    with pytest.raises(ValueError, match="by must be"):
        support_table([answer], by="author")  # type: ignore[arg-type]
