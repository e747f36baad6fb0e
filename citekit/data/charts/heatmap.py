"""The co-citation heatmap, ``citekit.data.charts.cocitation`` (documented there), drawn from
``citekit.data.charts.tables.cocitation_cells``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import polars as pl

from ..frames import Source
from .parts import drawable_rows
from .style import TEXT_SIZE, axis, chart_title, legend
from .tables import cocitation_cells

if TYPE_CHECKING:
    import altair as alt

__all__ = ["heatmap"]

#: Cell side in pixels, and the smallest side that still holds a count.
_CELL: Final = 30
_CELL_WITH_TEXT: Final = 20
_GRID: Final = 460


def heatmap(co: pl.DataFrame | Source, *, top: int = 15) -> alt.LayerChart:
    """The co-citation heatmap of ``citekit.data.charts.cocitation`` (documented there)."""
    import altair as alt

    title = "Works cited together"
    drawn = cocitation_cells(co, top=top)
    if drawn is None:
        return _empty(title)
    cells, diagonal, order, subtitle = drawn
    cell = min(_CELL, max(8, _GRID // len(order)))
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
