"""citekit.data.corpus.cocitation: work pairs cited in the same answer (the heatmap:
tests/data/charts/test_heatmap.py)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest
import vl_convert
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from citekit import Answer, Citation, charts, citations_frame, cocitation_frame, sources_frame
from citekit.data.charts.tables import Cells, cocitation_cells
from citekit.data.corpus.cocitation import COCITATION_SCHEMA, cocited
from tests.budget import examples

SAMPLES = Path(__file__).resolve().parents[3] / "sample_data"


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


# -- bounded work: pairs built, counted ---------------------------------------------------------


def works_cited(per_answer: list[list[int]], *, names: bool = True) -> pl.DataFrame:
    """A sources frame: answer ``i`` cites the works numbered ``per_answer[i]``."""
    rows = [(f"a{i}", w) for i, works in enumerate(per_answer) for w in works]
    return pl.DataFrame(
        {
            "provider": ["magisterium"] * len(rows),
            "answer_id": [a for a, _ in rows],
            "question": pl.Series([None] * len(rows), dtype=pl.String),
            "work_id": [f"w-{w:05d}" for _, w in rows],
            "work": [f"Work {w % 7}" if names else None for _, w in rows],
        },
        schema_overrides={"work": pl.String},
    )


@pytest.mark.parametrize("n_works", [200, 800])
def test_one_answer_of_many_works_builds_each_pair_once(n_works: int) -> None:
    """One answer citing W works: W(W-1)/2 pairs built, not W x W; with top=15, 105 at any W."""
    src = works_cited([list(range(n_works)), [0, 1]])
    everything = cocited(src)
    assert everything.built == n_works * (n_works - 1) // 2 + 1
    assert everything.frame.height == n_works * (n_works - 1) // 2
    assert everything.n_works == n_works
    shown = cocited(src, top=15)
    assert shown.built == 15 * 14 // 2 + 1  # the pairs of the top 15, whatever W is
    assert shown.n_works == n_works and shown.works.height == 15
    assert shown.works["work"].to_list()[:2] == ["w-00000", "w-00001"]  # cited twice
    pairs = n_works * (n_works - 1) // 2 + 1
    with pytest.raises(ValueError, match=f"{pairs:,} pairs.*pass top="):
        cocitation_frame(src, max_pairs=pairs - 1)
    assert cocitation_frame(src, max_pairs=pairs).height == pairs - 1


@st.composite
def corpora(draw: st.DrawFn) -> list[list[int]]:
    n_works = draw(st.integers(1, 12))
    work = st.integers(0, n_works - 1)
    return draw(st.lists(st.lists(work, max_size=8), max_size=12))


@settings(max_examples=examples(200))
@given(corpus=corpora(), top=st.integers(0, 14), names=st.booleans())
def test_top_works_give_the_pairs_of_the_whole_frame(
    corpus: list[list[int]], top: int, names: bool
) -> None:
    """``top=`` pairs only the most cited works, with the counts of the whole frame; the whole
    frame agrees with a count answer by answer; the heatmap from answers is the heatmap of the
    whole frame."""
    src = works_cited(corpus, names=names)
    whole = cocitation_frame(src)
    assert {(a, b): n for a, b, n in whole.select("work_a", "work_b", "answers").rows()} == (
        brute_force(src)
    )
    got = cocited(src, top=top)
    keep = got.works["work"].implode()
    expected = whole.filter(pl.col("work_a").is_in(keep) & pl.col("work_b").is_in(keep))
    assert_frame_equal(got.frame, expected)
    assert got.works.height == min(top, got.n_works)
    if top:
        assert _same_cells(cocitation_cells(src, top=top), cocitation_cells(whole, top=top))


def _same_cells(a: Cells | None, b: Cells | None) -> bool:
    if a is None or b is None:
        return a is b
    assert_frame_equal(a.cells, b.cells, check_row_order=False)
    assert_frame_equal(a.diagonal, b.diagonal)
    return a.order == b.order and a.subtitle == b.subtitle
