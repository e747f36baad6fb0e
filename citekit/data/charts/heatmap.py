"""The co-citation heatmap, ``citekit.data.charts.cocitation`` (documented there), drawn from
``citekit.data.charts.tables.cocitation_cells``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import polars as pl

from ..frames import Source
from .parts import drawable_rows
from .style import NARROW, TEXT_SIZE, axis, chart_title, label_room, legend
from .tables import cocitation_cells

if TYPE_CHECKING:
    import altair as alt

__all__ = ["heatmap"]

#: Cell side in pixels, and the smallest side that still holds a count.
_CELL: Final = 30
_CELL_WITH_TEXT: Final = 20
_GRID: Final = 460
_LABELS: Final = 240
#: How far a label slanted at -40 degrees reaches past its column, as a share of its length.
_SLANT_REACH: Final = 0.77


def heatmap(
    co: pl.DataFrame | Source, *, top: int = 15, width: int | None = None
) -> alt.LayerChart:
    """The co-citation heatmap of ``citekit.data.charts.cocitation`` (documented there)."""
    import altair as alt

    title = "Works cited together"
    drawn = cocitation_cells(co, top=top)
    if drawn is None:
        return _empty(title, width)
    cells, diagonal, order, subtitle = drawn
    room = label_room(width, _LABELS)
    # Slanted column labels reach past the last column; upright ones (a narrow chart) do not.
    angle = -40 if width is None or width >= NARROW else -90
    grid = _GRID
    if width is not None:
        reach = room * _SLANT_REACH if angle == -40 else TEXT_SIZE
        grid = int(width - room - reach - 12)
    cell = min(_CELL, max(8, grid // len(order)))
    x = alt.X(
        "label_b:N",
        sort=order,
        title=None,
        axis=axis(labelAngle=angle, labelLimit=room, orient="top"),
    )
    y = alt.Y("label_a:N", sort=order, title=None, axis=axis(labelLimit=room))
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
                legend=legend(width, tickMinStep=1, format="d"),
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
        title=chart_title(title, subtitle, width),
        width=alt.Step(cell),
        height=alt.Step(cell),
    )


def _empty(title: str, width: int | None) -> alt.LayerChart:
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
        title=chart_title(title, "answers citing both works", width),
        width=460 if width is None else max(width - 20, 100),
        height=80,
    )
