"""The charts' altair look, and the one place that turns the offline renderer on.

``axis``, ``count_axis``, ``legend`` and ``chart_title`` keep text at ``TEXT_SIZE`` pixels or
more. ``drawn`` wraps every public chart function: before it makes its chart it turns on
citekit's offline renderer (``citekit.render.chart.use_offline_renderer``: once per process,
and not over a renderer the user chose), so a chart shows without a CDN. altair is imported
only when an axis, legend, title or chart is made.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, ParamSpec, TypeVar

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "TEXT_SIZE",
    "axis",
    "chart_title",
    "count_axis",
    "drawn",
    "label_room",
    "legend",
    "sized",
]

#: Chart text is never smaller than this (pixels): axis labels and titles, subtitles, cell text.
TEXT_SIZE: Final = 12
#: A chart given a ``width=`` narrower than this puts its legends below the plot, not beside it.
NARROW: Final = 560
#: The most of a fitted chart's width its row labels may take.
_LABEL_SHARE: Final = 0.42
#: Counts up to this get their ticks listed (at most 13: one per whole number).
_LISTED_TICKS_UP_TO: Final = 12

P = ParamSpec("P")
R = TypeVar("R")


def drawn(chart: Callable[P, R]) -> Callable[P, R]:
    """``chart``, turning citekit's offline renderer on before it makes its chart."""

    @functools.wraps(chart)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from ...render.chart import use_offline_renderer

        use_offline_renderer()
        return chart(*args, **kwargs)

    return wrapper


def axis(**options: Any) -> alt.Axis:
    """An axis whose labels and title are ``TEXT_SIZE`` pixels."""
    import altair as alt

    return alt.Axis(labelFontSize=TEXT_SIZE, titleFontSize=TEXT_SIZE, **options)


def count_axis(largest: object, **options: Any) -> alt.Axis:
    """An axis of whole counts, ``largest`` the biggest bar: ticks on whole numbers only. The
    Vega that draws live charts in the browser does not keep to ``tickMinStep`` (it drew 0.5,
    1.5 for counts up to 2), so small counts list their ticks."""
    if isinstance(largest, int | float) and 0 <= largest <= _LISTED_TICKS_UP_TO:
        options["values"] = list(range(int(largest) + 1))
    return axis(tickMinStep=1, format="d", **options)


def legend(width: int | None = None, **options: Any) -> alt.Legend:
    """A legend whose labels and title are ``TEXT_SIZE`` pixels; below the plot in a chart
    fitted to fewer than ``NARROW`` pixels, where a legend beside it would take the bars' room."""
    import altair as alt

    if width is not None and width < NARROW:
        # Side by side below the plot, each legend a column: two legends fit a phone's width.
        options.setdefault("orient", "bottom")
        options.setdefault("direction", "vertical")
    # A label is cut only when it would not fit the chart: "at or above 0.5" is never "at o…".
    options.setdefault("labelLimit", 0)
    return alt.Legend(labelFontSize=TEXT_SIZE, titleFontSize=TEXT_SIZE, **options)


def label_room(width: int | None, limit: int) -> int:
    """How wide (pixels) row labels may be: ``limit``, and in a chart fitted to ``width`` at
    most ``_LABEL_SHARE`` of it, so the bars keep the rest (a label cut short is whole in the
    chart's tooltip)."""
    if width is None:
        return limit
    return max(60, min(limit, int(width * _LABEL_SHARE)))


def sized(chart: Any, width: int | None, *, plot: int, height: Any) -> Any:
    """``chart`` at its default plot width ``plot``, or fitted to ``width`` pixels in all
    (labels, legends and padding included: Vega-Lite's ``autosize`` ``fit-x``), so it fits a
    page column of that width."""
    import altair as alt

    if width is None:
        return chart.properties(width=plot, height=height)
    return chart.properties(
        width=width,
        height=height,
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
    )


def chart_title(text: str, subtitle: str, width: int | None = None) -> alt.Title:
    """The title every chart has; in a chart fitted to ``width`` pixels the subtitle breaks
    into lines at its semicolons where it would be too long for one."""
    import altair as alt

    lines: str | list[str] = subtitle
    if width is not None and len(subtitle) * TEXT_SIZE * 0.55 > width:
        lines = [part.strip() for part in subtitle.split(";") if part.strip()]
    return alt.Title(
        text,
        subtitle=lines,
        anchor="start",
        fontSize=15,
        subtitleFontSize=TEXT_SIZE,
        limit=alt.Undefined if width is None else width,
    )
