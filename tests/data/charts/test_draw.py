"""citekit.data.charts: aggregated tables, labels for missing values, valid specs, PNG rendering."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest
import vl_convert
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from citekit import (
    Answer,
    Citation,
    answers_frame,
    charts,
    citations_frame,
    cocitation_frame,
    references_frame,
    sources_frame,
)
from citekit.data.charts import MAX_ROWS
from citekit.data.corpus.works import SOURCES_SCHEMA
from citekit.data.frames import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA
from citekit.data.identity.clusters import identify
from tests.budget import examples

SAMPLES = Path(__file__).resolve().parents[3] / "sample_data"


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


def test_authors_counts_by_identity_with_unknown_author() -> None:
    # The blank author of a2's Rerum Novarum is Leo XIII's (the one author of that title);
    # the untitled source with an address is a work without an author.
    chart = charts.authors(CITATIONS)
    expected = pl.DataFrame(
        {
            "author": ["Leo XIII", "Thomas Aquinas", "unknown author"],
            "citations": [4, 1, 1],
            "works": [2, 1, 1],
            "answers": [2, 1, 1],
            "names": ["Leo XIII", "Thomas Aquinas", "none given"],
        },
        schema={
            "author": pl.String,
            "citations": pl.UInt32,
            "works": pl.UInt32,
            "answers": pl.UInt32,
            "names": pl.String,
        },
    )
    assert_frame_equal(table(chart).drop("author_id"), expected)
    spec = chart.to_dict()
    assert spec["title"]["text"] == "Most cited authors"
    assert spec["encoding"]["x"]["title"] == "Citations"
    assert [t["title"] for t in spec["encoding"]["tooltip"]] == [
        "Author",
        "Names seen",
        "Citations",
        "Works",
        "Answers",
    ]
    render_png(chart)


def test_authors_top_limits_rows_and_says_so() -> None:
    chart = charts.authors(CITATIONS, top=1)
    assert table(chart)["author"].to_list() == ["Leo XIII"]
    assert chart.to_dict()["title"]["subtitle"].endswith("top 1 of 3 authors")


def cited(answer_id: str, *sources: tuple[str | None, str | None, str | None]) -> Answer:
    """An answer citing ``(title, author, year)`` sources, one marker each."""
    citations = tuple(
        Citation(
            cited_text=f"passage {i}",
            document_index=i,
            document_title=title,
            document_author=author,
            document_year=year,
        )
        for i, (title, author, year) in enumerate(sources)
    )
    text = " ".join(f"Claim [^{i + 1}]." for i in range(len(sources)))
    return Answer(
        provider="magisterium",
        text=text,
        id=answer_id,
        question=f"question {answer_id}",
        citations=citations,
    )


#: One work (the Catechism) in two languages, by one author under two names, in two answers.
TWO_LANGUAGES = [
    cited("a1", ("Catechism of the Catholic Church", "Catholic Church", "1992")),
    cited("a2", ("Catecismo da Igreja Católica", "Igreja Católica", "1992")),
]


@pytest.mark.parametrize(
    "load", [sources_frame, citations_frame, list], ids=lambda load: load.__name__
)
def test_one_work_in_two_languages_is_one_bar(load: Any) -> None:
    """A sources frame, a citations frame and the answers themselves chart alike."""
    source = load(TWO_LANGUAGES)
    by_author = table(charts.authors(source))
    assert by_author.select("author", "citations", "works", "answers").rows() == [
        ("Catholic Church", 2, 1, 2)
    ]
    assert set(by_author["names"].item().split(", ")) == {"Catholic Church", "Igreja Católica"}
    by_work = table(charts.works(source))
    assert by_work.select("work_id", "citations", "answers").rows() == [("catechism", 2, 2)]
    shown = by_work["work"].item()  # the display name: one of the two titles
    assert by_work["label"].item() == f"{shown} — Catholic Church (1992)"
    assert set(by_work["titles"].item().split(", ")) == {
        "Catechism of the Catholic Church",
        "Catecismo da Igreja Católica",
    }
    assert "pt" in by_work["languages"].item().split(", ")
    assert by_work["providers"].item() == "magisterium"


def test_pope_francis_under_four_names_is_one_author() -> None:
    answers = [
        cited(f"a{i}", (title, name, "2016"))
        for i, (title, name) in enumerate(
            [
                ("Evangelii gaudium", "Francis"),
                ("Amoris laetitia", "Francesco"),
                ("Gaudete et exsultate", "Franziskus"),
                ("Christus vivit", "Francisco"),
            ]
        )
    ]
    data = table(charts.authors(answers))
    assert data["author_id"].to_list() == ["francis"]
    assert data["citations"].to_list() == [4]
    assert data["works"].to_list() == [4]
    assert set(data["names"].item().split(", ")) == {
        "Francis", "Francesco", "Franziskus", "Francisco"
    }  # fmt: skip


def test_labels_two_authors_share_stay_two_bars() -> None:
    """Two ids with one display name (a hand split) would be drawn as one bar: keyed apart."""
    frame = sources_frame(TWO_LANGUAGES).with_columns(
        author_id=pl.Series(["catholic-church", "other-church"])
    )
    labels = table(charts.authors(frame))["author"].to_list()
    assert sorted(labels) == [
        "Catholic Church [catholic-church]",
        "Catholic Church [other-church]",
    ]


# -- works --------------------------------------------------------------------------------------


def test_works_counts_by_work_and_labels_untitled() -> None:
    chart = charts.works(CITATIONS)
    data = table(chart)
    assert data.select("label", "citations", "answers").rows() == [
        ("Rerum Novarum — Leo XIII (1891)", 3, 2),
        ("Aeterni Patris — Leo XIII (1879)", 1, 1),
        ("Summa Theologiae — Thomas Aquinas (1265)", 1, 1),  # the table: 1265-1274
        ("https://example.org/x", 1, 1),
    ]
    assert data["author"].to_list()[-1] == "unknown author"
    assert data["year"].to_list() == ["1891", "1879", "1265", "unknown"]
    untitled = cits([{"provider": "magisterium", "answer_id": "a9", "document_title": " "}])
    with_untitled = table(charts.works(pl.concat([CITATIONS, untitled])))
    assert with_untitled.filter(pl.col("label") == "untitled document")["citations"].item() == 1
    spec = chart.to_dict()
    assert spec["title"]["text"] == "Most cited works"
    assert [t["title"] for t in spec["encoding"]["tooltip"]] == [
        "Work", "Author", "Year", "Titles seen", "Languages", "Citations", "Answers", "Providers"
    ]  # fmt: skip
    render_png(chart)


def test_long_work_labels_are_cut_and_whole_in_the_tooltip() -> None:
    title = "On the Very Long Title of a Commentary " * 4
    data = table(charts.works([cited("a1", (title, "An Author With A Long Name Indeed", "2001"))]))
    label = data["label"].item()
    assert len(label) < 80 and "\u2026" in label
    assert data["work"].item() == title.strip()


def test_documents_is_the_works_chart() -> None:
    assert charts.documents(CITATIONS, top=2).to_dict() == charts.works(CITATIONS, top=2).to_dict()


def test_sources_frame_counts_every_kind_and_says_sources() -> None:
    chunk = pl.DataFrame(
        [{"provider": "gptbots", "answer_id": "g1", "kind": "knowledge chunk",
          "document_title": "wall.pdf"}],
        schema_overrides={n: t for n, t in SOURCES_SCHEMA.items()},
    )  # fmt: skip
    frame = pl.concat([sources_frame(TWO_LANGUAGES), chunk], how="diagonal_relaxed")
    chart = charts.works(frame)
    assert table(chart)["citations"].sum() == 3
    assert chart.to_dict()["title"]["subtitle"].startswith("sources per work")


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
    assert charts.parts.period_label(start, period) == label


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
    # Each dot says which side of the threshold it is on, and the legend names the threshold.
    color = spec["layer"][0]["encoding"]["color"]
    assert color["scale"]["domain"] == ["at or above 0.5", "below 0.5"]
    assert dict(data.select("source", "side").rows())["UNESCO"] == "at or above 0.5"
    assert data.filter(pl.col("source") == "unknown source")["side"].to_list() == ["below 0.5"]
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
        "works": charts.works(c),
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
    needs = r"authors\(\) needs a sources_frame\(\) or citations_frame\(\) frame.*lacks"
    with pytest.raises(ValueError, match=needs):
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


# -- any frame of sources ---------------------------------------------------------------------

HOSTILE = [
    "",
    "  ",
    "unknown author",
    "untitled document",
    "<script>alert(1)</script>",
    "\u202eevil\u202c",
    "a\x00b",
    "datum.answers",
    "{{title}}",
    "[0]",
    "quote \" and ' and \\",
    "x" * 400,
    "Francis",
    "Franziskus",
    "Catechism of the Catholic Church",
    "Catecismo da Igreja Católica",
]
names = st.one_of(st.none(), st.sampled_from(HOSTILE), st.text(max_size=30))
source_rows = st.lists(
    st.fixed_dictionaries(
        {
            "provider": st.sampled_from(["magisterium", "maritaca", "gptbots", None]),
            "answer_id": st.sampled_from(["a1", "a2", "a3", None]),
            "question": st.sampled_from(["q1", "q2", None]),
            "kind": st.sampled_from(["citation", "knowledge chunk", "web source"]),
            "document_title": names,
            "document_author": names,
            "year": st.one_of(st.none(), st.integers(-500, 2100)),
            "source_url": st.one_of(
                st.none(), st.sampled_from(["https://a.example/x", "https://a.example/x/", "?"])
            ),
        }
    ),
    max_size=25,
)


@settings(max_examples=examples(60), deadline=None)
@given(rows=source_rows, identified_first=st.booleans())
def test_any_frame_of_sources_charts_and_counts_every_row(
    rows: list[dict[str, Any]], identified_first: bool
) -> None:
    frame = pl.DataFrame(rows, schema={n: SOURCES_SCHEMA[n] for n in source_rows_columns()})
    if identified_first:  # a sources_frame; else identified by the chart
        frame = identify(frame)
    everything = MAX_ROWS
    by_author = table(charts.authors(frame, top=everything))
    by_work = table(charts.works(frame, top=everything))
    assert by_author["citations"].sum() == frame.height
    assert by_work["citations"].sum() == frame.height
    assert by_author["author"].n_unique() == by_author.height  # one bar per author
    assert by_work["label"].n_unique() == by_work.height
    by_year = table(charts.years(frame))
    assert by_year["citations"].sum() == frame.filter(pl.col("year").is_not_null()).height
    co = cocitation_frame(frame)
    assert co.filter(pl.col("work_a") >= pl.col("work_b")).height == 0
    assert co.filter(pl.col("answers") > pl.min_horizontal("answers_a", "answers_b")).height == 0
    for chart in (
        charts.authors(frame),
        charts.works(frame),
        charts.years(frame),
        charts.cocitation(co),
    ):
        assert chart.to_dict()


def source_rows_columns() -> list[str]:
    return [
        "provider",
        "answer_id",
        "question",
        "kind",
        "document_title",
        "document_author",
        "year",
        "source_url",
    ]


@pytest.mark.skipif(not (SAMPLES / "magisterium").is_dir(), reason="sample_data is not present")
@pytest.mark.parametrize(
    "load", [sources_frame, citations_frame], ids=lambda load: getattr(load, "__name__", repr(load))
)
def test_samples_show_pope_francis_once(load: Any) -> None:
    """The notebook's call (a citations frame) and a sources frame both merge his names."""
    frame = load(SAMPLES)
    src = identify(frame) if "author_id" not in frame.columns else frame
    his = src.filter(pl.col("author_id") == "francis")
    spellings = set(his["document_author"].drop_nulls())
    assert len(spellings) >= 2  # the samples cite him under several names
    data = table(charts.authors(frame, top=MAX_ROWS))
    assert data["citations"].sum() == frame.height
    francis = data.filter(pl.col("author_id") == "francis")
    assert francis["citations"].to_list() == [his.height]
    assert set(francis["names"].item().split(", ")) == spellings
    assert not set(data["author"]) & (spellings - set(francis["author"]))  # no bar per name
    works = table(charts.works(frame, top=MAX_ROWS))
    catechism = works.filter(pl.col("work_id") == "catechism")
    assert catechism["citations"].to_list() == [src.filter(pl.col("work_id") == "catechism").height]
    assert works["citations"].sum() == frame.height


def test_the_years_axis_starts_and_ends_at_the_data() -> None:
    import citekit as ck
    from citekit.testing import default_data_dir

    cits = ck.citations_frame(default_data_dir() / "magisterium")
    for by in ("year", "decade", "century"):
        chart = ck.charts.years(cits, by=by)
        scale = chart.to_dict()["encoding"]["x"]["scale"]
        data = chart.data
        assert scale["domain"] == [data["start"].min(), data["end"].max()], by
        assert scale["nice"] is False
    assert ck.charts.years([]).to_dict()  # no data: no domain, still a chart


@pytest.mark.parametrize("width", [340, 560, 760])
def test_a_chart_given_a_width_fits_it_whole(width: int) -> None:
    """Labels, legends and padding included: the drawn SVG is no wider than ``width``, and a
    bar chart's labels leave its bars most of it."""
    import re

    c = cits(
        [{"provider": p, "answer_id": f"a{i}", "document_author": f"Author number {i} " * 3,
          "document_title": f"A rather long title of a work, number {i} " * 2, "year": 1900 + i}
         for i in range(12) for p in ("magisterium", "gptbots")]
    )  # fmt: skip
    r = refs([{"document_title": f"file {i}.pdf", "score": i / 12} for i in range(12)])
    drawn = {
        "authors": charts.authors(c, width=width),
        "works": charts.works(c, width=width),
        "years": charts.years(c, width=width),
        "citations_per_answer": charts.citations_per_answer(c, width=width),
        "scores": charts.scores(r, width=width),
        "cocitation": charts.cocitation(
            [cited(f"a{i}", ("T1", "A", "1"), ("T2", "B", "2"), (f"T{i}", "C", "3"))
             for i in range(3, 12)],
            width=width,
        ),
    }  # fmt: skip
    for name, chart in drawn.items():
        svg = vl_convert.vegalite_to_svg(chart.to_dict())
        size = re.search(r'<svg[^>]*?\swidth="([0-9.]+)"', svg)
        assert size is not None and float(size[1]) <= width, (name, size and size[1])
    spec = drawn["works"].to_dict()
    assert spec["encoding"]["y"]["axis"]["labelLimit"] <= 0.42 * width
