"""citekit.data.corpus.cocitation: work pairs cited in the same answer, and their heatmap."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest
import vl_convert
from polars.testing import assert_frame_equal

from citekit import Answer, Citation, charts, citations_frame, cocitation_frame, sources_frame
from citekit.data.charts.tables import MAX_WORKS
from citekit.data.corpus.cocitation import COCITATION_SCHEMA

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


def cited(answer_id: str, *titles: str) -> Answer:
    citations = tuple(
        Citation(
            cited_text=f"passage {i}",
            document_index=i,
            document_title=title,
            document_author=f"Author of {title}",
            document_year="1950",
        )
        for i, title in enumerate(titles)
    )
    text = " ".join(f"Claim [^{i + 1}]." for i in range(len(titles)))
    return Answer(
        provider="magisterium", text=text, id=answer_id, question=answer_id, citations=citations
    )


#: a1 cites Alpha, Beta, Gamma; a2 Alpha and Beta (Beta twice); a3 Beta and Gamma.
THREE = [
    cited("a1", "Alpha Treatise", "Beta Dialogue", "Gamma Letters"),
    cited("a2", "Alpha Treatise", "Beta Dialogue", "Beta Dialogue"),
    cited("a3", "Beta Dialogue", "Gamma Letters"),
]


def render_png(chart: alt.TopLevelMixin) -> bytes:
    png: bytes = vl_convert.vegalite_to_png(chart.to_dict(), scale=1)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return png


def brute_force(src: pl.DataFrame) -> dict[tuple[str, str], int]:
    """Pairs of work ids counted answer by answer, in plain Python."""
    per_answer: dict[Any, set[str]] = {}
    for row in src.iter_rows(named=True):
        if row["work_id"] is not None:
            key = (row["provider"], row["answer_id"], row["question"])
            per_answer.setdefault(key, set()).add(row["work_id"])
    pairs: Counter[tuple[str, str]] = Counter()
    for works in per_answer.values():
        pairs.update(combinations(sorted(works), 2))
    return dict(pairs)


def test_counts_by_hand_on_three_answers() -> None:
    src = sources_frame(THREE)
    ids = dict(src.select("document_title", "work_id").unique().iter_rows())
    alpha, beta, gamma = (ids[t] for t in ("Alpha Treatise", "Beta Dialogue", "Gamma Letters"))
    totals = {alpha: 2, beta: 3, gamma: 2}
    both = {frozenset((alpha, beta)): 2, frozenset((beta, gamma)): 2, frozenset((alpha, gamma)): 1}
    co = cocitation_frame(THREE)
    assert co.schema == COCITATION_SCHEMA
    assert co.height == 3
    for row in co.iter_rows(named=True):
        a, b = row["work_a"], row["work_b"]
        assert a < b
        assert row["answers"] == both[frozenset((a, b))]
        assert (row["answers_a"], row["answers_b"]) == (totals[a], totals[b])
        union = totals[a] + totals[b] - row["answers"]
        assert row["jaccard"] == pytest.approx(row["answers"] / union)
        names = {alpha: "Alpha Treatise", beta: "Beta Dialogue", gamma: "Gamma Letters"}
        assert (row["name_a"], row["name_b"]) == (names[a], names[b])
    # most shared first, then the closer association (Jaccard), then the ids
    assert co["answers"].to_list() == [2, 2, 1]
    assert co["jaccard"].to_list() == pytest.approx([2 / 3, 2 / 3, 1 / 3])


def test_every_input_gives_the_same_pairs() -> None:
    """Answers, a sources frame and a citations frame (identified here) count alike."""
    expected = cocitation_frame(THREE)
    assert_frame_equal(cocitation_frame(sources_frame(THREE)), expected)
    assert_frame_equal(cocitation_frame(citations_frame(THREE)), expected)


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


@pytest.mark.skipif(not (SAMPLES / "magisterium").is_dir(), reason="sample_data is not present")
def test_samples_agree_with_a_brute_force_count() -> None:
    src = sources_frame(SAMPLES)
    co = cocitation_frame(src)
    expected = brute_force(src)
    found = {(a, b): n for a, b, n in co.select("work_a", "work_b", "answers").iter_rows()}
    assert found == expected
    assert co["answers"].is_sorted(descending=True)
    assert co.filter(pl.col("answers") > pl.min_horizontal("answers_a", "answers_b")).height == 0
    assert co.filter(pl.col("work_a") >= pl.col("work_b")).height == 0
    render_png(charts.cocitation(co))
