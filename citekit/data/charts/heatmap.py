"""The co-citation heatmap, ``citekit.data.charts.cocitation`` (documented there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import polars as pl

from ..corpus.cocitation import cocitation_frame
from ..frames.sources import Source
from .parts import (
    TEXT_SIZE,
    axis,
    chart_title,
    distinct_labels,
    drawable_rows,
    legend,
    plural,
    shortened,
)

if TYPE_CHECKING:
    import altair as alt

__all__ = ["MAX_WORKS", "heatmap"]

#: The heatmap shows at most this many works (its cells stay under altair's 5000 rows).
MAX_WORKS: Final = 70
#: Axis labels are cut to this many characters (the tooltip has the whole name).
_LABEL_CHARS: Final = 32
#: Cell side in pixels, and the smallest side that still holds a count.
_CELL: Final = 30
_CELL_WITH_TEXT: Final = 20
_GRID: Final = 460


def heatmap(co: pl.DataFrame | Source, *, top: int = 15) -> alt.LayerChart:
    """The co-citation heatmap of ``citekit.data.charts.cocitation`` (documented there)."""
    import altair as alt

    if not isinstance(co, pl.DataFrame) or "work_a" not in co.columns:
        co = cocitation_frame(co)
    pairs = co.filter(pl.col("work_a") != pl.col("work_b"))
    title = "Works cited together"
    if pairs.height == 0:
        return _empty(title)
    works = (
        pl.concat(
            [
                pairs.select(work="work_a", name="name_a", total="answers_a"),
                pairs.select(work="work_b", name="name_b", total="answers_b"),
            ]
        )
        .group_by("work")
        .agg(pl.col("name").first(), pl.col("total").max())
        .with_columns(name=pl.col("name").fill_null(pl.col("work")))
        .sort(["total", "name", "work"], descending=[True, False, False])
    )
    shown = works.head(min(max(top, 1), MAX_WORKS)).with_columns(
        label=shortened(pl.col("name").str.strip_chars(), _LABEL_CHARS)
    )
    shown = shown.with_columns(label=distinct_labels("label", "work"))
    order = shown["label"].to_list()
    keep = shown["work"].implode()
    both = pl.concat(
        [
            pairs.select("work_a", "work_b", "answers"),
            pairs.select(work_a="work_b", work_b="work_a", answers="answers"),
        ]
    ).filter(pl.col("work_a").is_in(keep) & pl.col("work_b").is_in(keep))
    side = shown.select("work", "label", "name", "total")
    cells = (
        both.join(side.rename(lambda c: f"{c}_a"), on="work_a")
        .join(side.rename(lambda c: f"{c}_b"), on="work_b")
        .select("label_a", "label_b", "name_a", "name_b", "answers", "total_a", "total_b")
    )
    diagonal = side.select(label_a="label", label_b="label", name_a="name", total_a="total")
    n = shown.height
    cell = min(_CELL, max(8, _GRID // n))
    x = alt.X(
        "label_b:N",
        sort=order,
        title=None,
        axis=axis(labelAngle=-40, labelLimit=240, orient="top"),
    )
    y = alt.Y("label_a:N", sort=order, title=None, axis=axis(labelLimit=240))
    pair_tip = [
        alt.Tooltip("name_a:N", title="Work"),
        alt.Tooltip("name_b:N", title="Cited with"),
        alt.Tooltip("answers:Q", title="Answers citing both"),
        alt.Tooltip("total_a:Q", title="Answers citing the first"),
        alt.Tooltip("total_b:Q", title="Answers citing the second"),
    ]
    rects = (
        alt.Chart(drawable_rows(cells))
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "answers:Q",
                title="Answers citing both",
                # The blues up to 0.7 of their range: black counts read at 5:1 or more on
                # every cell (past 0.7 neither black nor white text reaches 4.5:1 on all).
                scale=alt.Scale(
                    scheme=alt.SchemeParams(name="blues", extent=[0, 0.7]), domainMin=0
                ),
                legend=legend(tickMinStep=1, format="d"),
            ),
            tooltip=pair_tip,
        )
    )
    diag = (
        alt.Chart(drawable_rows(diagonal))
        .mark_rect(color="#d9d9d9", stroke="white", strokeWidth=1)
        .encode(
            x=x,
            y=y,
            tooltip=[
                alt.Tooltip("name_a:N", title="Work"),
                alt.Tooltip("total_a:Q", title="Answers citing it"),
            ],
        )
    )
    layers: list[alt.Chart] = [rects, diag]
    if cell >= _CELL_WITH_TEXT:
        layers.append(
            alt.Chart(drawable_rows(cells))
            .mark_text(fontSize=TEXT_SIZE)
            .encode(
                x=x,
                y=y,
                text=alt.Text("answers:Q"),
                color=alt.value("#000"),
                tooltip=pair_tip,
            )
        )
        layers.append(
            alt.Chart(drawable_rows(diagonal))
            .mark_text(fontSize=TEXT_SIZE, fontStyle="italic", color="#555555")
            .encode(x=x, y=y, text=alt.Text("total_a:Q"), tooltip=[
                alt.Tooltip("name_a:N", title="Work"),
                alt.Tooltip("total_a:Q", title="Answers citing it"),
            ])
        )  # fmt: skip
    shown_of = f"top {n} of {works.height} works" if works.height > n else plural(n, "work")
    subtitle = f"answers citing both works; grey diagonal: answers citing the work; {shown_of}"
    return alt.LayerChart(
        layer=layers,
        title=chart_title(title, subtitle),
        width=alt.Step(cell),
        height=alt.Step(cell),
    )


def _empty(title: str) -> alt.LayerChart:
    import altair as alt

    message = (
        alt.Chart(
            pl.DataFrame({"message": ["No answer cites two works: nothing is cited together."]})
        )
        .mark_text(fontSize=14, color="#8a8a8a")  # a grey that reads on light and dark
        .encode(text="message:N")
    )
    return alt.LayerChart(
        layer=[message],
        title=chart_title(title, "answers citing both works"),
        width=460,
        height=80,
    )
