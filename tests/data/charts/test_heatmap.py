"""citekit.data.charts.cocitation: the co-citation heatmap (charts.heatmap, charts.tables)."""

from __future__ import annotations

import polars as pl
import pytest

from citekit import charts, cocitation_frame
from citekit.data.charts.tables import MAX_WORKS
from citekit.data.corpus.cocitation import COCITATION_SCHEMA
from tests.data.corpus.test_cocitation import THREE, cited, render_png, works_cited


def test_no_pairs_give_an_empty_typed_frame_and_a_chart_that_says_so() -> None:
    for source in ([], [cited("a1", "Alpha Treatise", "Alpha Treatise")]):
        co = cocitation_frame(source)
        assert co.height == 0 and co.schema == COCITATION_SCHEMA
        chart = charts.cocitation(co)
        spec = chart.to_dict()
        assert spec["layer"][0]["mark"]["type"] == "text"
        assert "No answer cites two works" in str(chart.data["message"].item())
        render_png(chart)


def test_heatmap_is_symmetric_with_counts_and_a_diagonal() -> None:
    co = cocitation_frame(THREE)
    chart = charts.cocitation(co)
    rects, diagonal, *_numbers = chart.layer
    cells = rects.data
    assert isinstance(cells, pl.DataFrame)
    assert cells.height == 2 * co.height  # both halves
    mirrored = {(r["name_a"], r["name_b"]): r["answers"] for r in cells.iter_rows(named=True)}
    assert all(mirrored[(b, a)] == n for (a, b), n in mirrored.items())
    assert mirrored[("Alpha Treatise", "Beta Dialogue")] == 2
    assert diagonal.data.select("name_a", "total_a").sort("name_a").rows() == [
        ("Alpha Treatise", 2),
        ("Beta Dialogue", 3),
        ("Gamma Letters", 2),
    ]
    spec = chart.to_dict()
    assert spec["layer"][2]["mark"]["type"] == "text"
    assert spec["layer"][2]["mark"]["fontSize"] >= 12
    order = spec["layer"][0]["encoding"]["x"]["sort"]
    assert order[0] == "Beta Dialogue"  # the work most answers cite comes first
    tooltip = [t["title"] for t in spec["layer"][0]["encoding"]["tooltip"]]
    assert tooltip[:3] == ["Work", "Cited with", "Answers citing both"]
    render_png(chart)


def test_long_names_are_cut_on_the_axes_and_whole_in_the_tooltip() -> None:
    long = "A Very Long Title of a Treatise on Many Things " * 3
    answers = [cited("a1", long, "Beta Dialogue"), cited("a2", long + "II", "Beta Dialogue")]
    cells = charts.cocitation(answers).layer[0].data
    assert isinstance(cells, pl.DataFrame)
    cut = cells.filter(pl.col("name_a") == long.strip())["label_a"][0]
    assert cut.startswith("A Very Long Title of a Treatise\u2026 [")  # cut, then its id
    assert long.strip() in cells["name_a"].to_list()
    # two long names cut to the same label stay apart (keyed by their ids)
    assert cells["label_a"].n_unique() == cells["name_a"].n_unique() == 3


def test_top_limits_works_and_many_works_drop_the_cell_text() -> None:
    titles = [f"Work {chr(65 + i // 26)}{chr(65 + i % 26)} on its subject" for i in range(80)]
    answers = [cited(f"a{i}", titles[i], titles[(i + 1) % 80], titles[0]) for i in range(80)]
    co = cocitation_frame(answers)
    small = charts.cocitation(co, top=5)
    assert small.layer[1].data.height == 5
    assert small.title.subtitle.endswith("top 5 of 80 works")
    big = charts.cocitation(co, top=500)
    assert big.layer[1].data.height == MAX_WORKS
    assert len(big.layer) == 2  # cells too small for numbers: colour only
    assert big.to_dict()  # under altair's 5000 rows
    render_png(big)


def test_charts_cocitation_takes_answers_directly() -> None:
    direct = charts.cocitation(THREE).to_dict()
    assert direct == charts.cocitation(cocitation_frame(THREE)).to_dict()


def test_one_answer_of_five_thousand_works_draws_only_the_pairs_it_shows() -> None:
    """12.5 million pairs are too many to build (the frame is refused with the count); the
    heatmap of the same answer builds the 105 pairs of its 15 works and says how many there are."""
    src = works_cited([list(range(5_000))])
    with pytest.raises(ValueError, match="12,497,500 pairs"):
        cocitation_frame(src)
    chart = charts.cocitation(src)
    assert chart.layer[0].data.height == 2 * 105  # both halves of the 15 works' pairs
    assert chart.title.subtitle.endswith("top 15 of 5000 works")
