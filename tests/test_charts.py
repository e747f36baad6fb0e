"""citekit.data.charts: aggregated tables, labels for missing values, valid specs, PNG rendering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest
import vl_convert
from polars.testing import assert_frame_equal

from citekit import Answer, answers_frame, charts, citations_frame, references_frame
from citekit.data.frames import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


def cits(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A citations frame from partial rows (other columns null, ``year`` as given)."""
    full = [{name: row.get(name) for name in CITATIONS_SCHEMA.names()} for row in rows]
    return pl.DataFrame(full, schema=CITATIONS_SCHEMA)


def refs(rows: list[dict[str, Any]]) -> pl.DataFrame:
    full = [{name: row.get(name) for name in REFERENCES_SCHEMA.names()} for row in rows]
    return pl.DataFrame(full, schema=REFERENCES_SCHEMA)


CITATIONS = cits(
    [
        # answer a1 cites Rerum Novarum twice, the Summa once, an anonymous text once
        {"provider": "magisterium", "answer_id": "a1", "document_author": "Leo XIII",
         "document_title": "Rerum Novarum", "document_year": "1891", "year": 1891},
        {"provider": "magisterium", "answer_id": "a1", "document_author": "Leo XIII",
         "document_title": "Rerum Novarum", "document_year": "1891", "year": 1891},
        {"provider": "magisterium", "answer_id": "a1", "document_author": "Thomas Aquinas",
         "document_title": "Summa Theologiae", "document_year": "c. 1270", "year": 1270},
        {"provider": "magisterium", "answer_id": "a1", "document_author": None,
         "document_title": None, "source_url": "https://example.org/x", "document_year": ""},
        # answer a2: another Leo XIII document and a blank author
        {"provider": "magisterium", "answer_id": "a2", "document_author": "Leo XIII",
         "document_title": "Aeterni Patris", "document_year": "1879", "year": 1879},
        {"provider": "magisterium", "answer_id": "a2", "document_author": "  ",
         "document_title": "Rerum Novarum", "document_year": "1891", "year": 1891},
    ]
)  # fmt: skip


def render_png(chart: alt.TopLevelMixin) -> bytes:
    png: bytes = vl_convert.vegalite_to_png(chart.to_dict(), scale=1)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return png


def table(chart: alt.Chart) -> pl.DataFrame:
    data = chart.data
    assert isinstance(data, pl.DataFrame)
    return data


# -- authors ------------------------------------------------------------------------------------


def test_authors_aggregates_in_polars_with_unknown_author() -> None:
    chart = charts.authors(CITATIONS)
    expected = pl.DataFrame(
        {
            "author": ["Leo XIII", "unknown author", "Thomas Aquinas"],
            "citations": [3, 2, 1],
            "documents": [2, 2, 1],
            "answers": [2, 2, 1],
        },
        schema={
            "author": pl.String,
            "citations": pl.UInt32,
            "documents": pl.UInt32,
            "answers": pl.UInt32,
        },
    )
    assert_frame_equal(table(chart), expected)
    spec = chart.to_dict()
    assert spec["title"]["text"] == "Most cited authors"
    assert spec["encoding"]["x"]["title"] == "Citations"
    assert [t["title"] for t in spec["encoding"]["tooltip"]] == [
        "Author",
        "Citations",
        "Documents",
        "Answers",
    ]
    render_png(chart)


def test_authors_top_limits_rows_and_says_so() -> None:
    chart = charts.authors(CITATIONS, top=1)
    assert table(chart)["author"].to_list() == ["Leo XIII"]
    assert chart.to_dict()["title"]["subtitle"].endswith("top 1 of 3 authors")


# -- documents ----------------------------------------------------------------------------------


def test_documents_counts_titles_and_labels_untitled() -> None:
    chart = charts.documents(CITATIONS)
    data = table(chart)
    assert data["document"].to_list() == [
        "Rerum Novarum",
        "Aeterni Patris",
        "Summa Theologiae",
        "untitled document",
    ]
    assert data["citations"].to_list() == [3, 1, 1, 1]
    assert data["answers"].to_list() == [2, 1, 1, 1]
    assert data["author"].to_list() == ["Leo XIII", "Leo XIII", "Thomas Aquinas", "unknown author"]
    assert data["year"].to_list() == ["1891", "1879", "c. 1270", "unknown"]
    render_png(chart)


# -- years --------------------------------------------------------------------------------------


def test_years_by_century_when_spread_wide_and_counts_undated() -> None:
    chart = charts.years(CITATIONS)  # 1270..1891: more than 400 years
    data = table(chart)
    assert data["start"].to_list() == [1200, 1800]
    assert data["end"].to_list() == [1300, 1900]
    assert data["citations"].to_list() == [1, 4]
    assert data["period"].to_list() == ["13th century", "19th century"]
    subtitle = chart.to_dict()["title"]["subtitle"]
    assert "per century" in subtitle
    assert "1 citation without a year not shown" in subtitle
    render_png(chart)


def test_years_by_decade_and_by_year() -> None:
    recent = CITATIONS.filter(pl.col("year") > 1800)  # 1879..1891: 12 years
    by_year = table(charts.years(recent))
    assert by_year["period"].to_list() == ["1879", "1891"]
    by_decade = table(charts.years(recent, by="decade"))
    assert by_decade["period"].to_list() == ["1870s", "1890s"]
    assert by_decade["citations"].to_list() == [1, 3]
    wide = cits([{"year": 1900}, {"year": 1990}])
    assert table(charts.years(wide))["period"].to_list() == ["1900s", "1990s"]


@pytest.mark.parametrize(
    ("start", "period", "label"),
    [
        (1200, "century", "13th century"),
        (1900, "century", "20th century"),
        (-400, "century", "4th century BC"),
        (1100, "century", "12th century"),
        (2000, "century", "21st century"),
        (1960, "decade", "1960s"),
        (33, "year", "33"),
        (-50, "year", "50 BC"),
    ],
)
def test_period_labels(start: int, period: str, label: str) -> None:
    assert charts._period_label(start, period) == label


# -- citations per answer ---------------------------------------------------------------------


def test_citations_per_answer_from_citations_and_from_answers() -> None:
    data = table(charts.citations_per_answer(CITATIONS))
    assert data.select("citations", "answers").rows() == [(2, 1), (4, 1)]
    answers = pl.DataFrame(
        {"provider": ["magisterium", "maritaca", "maritaca"], "n_citations": [4, 0, 0]},
        schema={"provider": pl.String, "n_citations": pl.Int32},
    ).with_columns(
        *(pl.lit(None, dtype=t).alias(n) for n, t in ANSWERS_SCHEMA.items() if n not in
          ("provider", "n_citations"))
    )  # fmt: skip
    chart = charts.citations_per_answer(answers)
    assert table(chart).rows() == [("maritaca", 0, 2), ("magisterium", 4, 1)]
    spec = chart.to_dict()
    assert spec["encoding"]["color"]["field"] == "provider"
    assert spec["title"]["subtitle"] == "3 answers; median 0 citations"
    render_png(chart)


# -- scores -----------------------------------------------------------------------------------


REFERENCES = refs(
    [
        {"document_title": "wall.pdf", "score": 0.93},
        {"document_title": "wall.pdf", "score": 0.91},
        {"document_title": "wall.pdf", "score": 0.42},
        {"document_title": "UNESCO", "score": 0.55},
        {"document_title": None, "score": 0.12},
        {"document_title": "UNESCO", "score": None},
    ]
)


def test_scores_strip_with_threshold_rule() -> None:
    chart = charts.scores(REFERENCES, threshold=0.5, bins=10)
    assert isinstance(chart, alt.LayerChart)
    strip, rule = chart.layer
    data = strip.data
    assert isinstance(data, pl.DataFrame)
    assert data.select("source", "chunks").rows() == [
        ("UNESCO", 1),
        ("unknown source", 1),
        ("wall.pdf", 1),
        ("wall.pdf", 2),
    ]
    assert data.filter(pl.col("chunks") == 2)["start"].round(6).to_list() == [0.9]
    assert rule.data["threshold"].to_list() == [0.5]
    spec = chart.to_dict()
    assert spec["title"]["subtitle"] == (
        "3 of 5 scored chunks at or above 0.5; 1 without a score not shown"
    )
    assert spec["layer"][1]["mark"]["type"] == "rule"
    render_png(chart)


def test_scores_groups_the_rest_as_other_sources() -> None:
    chart = charts.scores(REFERENCES, top=1)
    sources = chart.layer[0].data["source"].unique().sort().to_list()
    assert sources == ["other sources", "wall.pdf"]
    assert chart.to_dict()["layer"][0]["encoding"]["y"]["sort"] == ["wall.pdf", "other sources"]


# -- every chart ------------------------------------------------------------------------------


def all_charts(c: pl.DataFrame, r: pl.DataFrame) -> dict[str, alt.TopLevelMixin]:
    return {
        "authors": charts.authors(c),
        "documents": charts.documents(c),
        "years": charts.years(c),
        "citations_per_answer": charts.citations_per_answer(c),
        "scores": charts.scores(r),
    }


def test_empty_frames_still_give_valid_charts() -> None:
    empty_c = pl.DataFrame(schema=CITATIONS_SCHEMA)
    empty_r = pl.DataFrame(schema=REFERENCES_SCHEMA)
    for chart in all_charts(empty_c, empty_r).values():
        render_png(chart)


def test_large_frames_stay_under_the_altair_row_limit() -> None:
    n = 60_000
    big_c = cits(
        [
            {
                "answer_id": f"a{i % 7000}",
                "provider": "magisterium",
                "document_author": f"Author {i % 300}",
                "document_title": f"Doc {i % 900}",
                "year": 1000 + i % 1000,
            }
            for i in range(n)
        ]
    )
    big_r = refs([{"document_title": f"d{i % 50}", "score": (i % 997) / 997} for i in range(n)])
    for name, chart in all_charts(big_c, big_r).items():
        spec = chart.to_dict()  # raises MaxRowsError above 5000 rows
        assert spec, name


def test_charts_accept_answers_and_save_png(tmp_path: Path) -> None:
    answer = Answer(provider="magisterium", text="x [^1]", id="a")
    chart = charts.authors([answer])
    assert table(chart).height == 0
    path = tmp_path / "authors.png"
    charts.authors(CITATIONS).save(str(path), format="png")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_wrong_frame_says_what_is_missing() -> None:
    with pytest.raises(ValueError, match=r"authors\(\) needs a citations_frame\(\) frame.*lacks"):
        charts.authors(pl.DataFrame(schema=REFERENCES_SCHEMA))
    with pytest.raises(ValueError, match=r"scores\(\) needs a references_frame\(\)"):
        charts.scores(CITATIONS)


@pytest.mark.skipif(not (SAMPLES / "magisterium").is_dir(), reason="sample_data is not present")
def test_sample_data_charts_render() -> None:
    c = citations_frame(SAMPLES)
    r = references_frame(SAMPLES)
    for chart in all_charts(c, r).values():
        render_png(chart)
    render_png(charts.citations_per_answer(answers_frame(SAMPLES)))
    assert table(charts.authors(c, top=5)).height == 5
