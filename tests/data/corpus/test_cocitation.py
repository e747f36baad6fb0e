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
from polars.testing import assert_frame_equal

from citekit import Answer, Citation, charts, citations_frame, cocitation_frame, sources_frame
from citekit.data.corpus.cocitation import COCITATION_SCHEMA

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
