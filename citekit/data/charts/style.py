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

__all__ = ["TEXT_SIZE", "axis", "chart_title", "count_axis", "drawn", "legend"]

#: Chart text is never smaller than this (pixels): axis labels and titles, subtitles, cell text.
TEXT_SIZE: Final = 12
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


def legend(**options: Any) -> alt.Legend:
    """A legend whose labels and title are ``TEXT_SIZE`` pixels."""
    import altair as alt

    return alt.Legend(labelFontSize=TEXT_SIZE, titleFontSize=TEXT_SIZE, **options)


def chart_title(text: str, subtitle: str) -> alt.Title:
    """The title every chart has."""
    import altair as alt

    return alt.Title(
        text, subtitle=subtitle, anchor="start", fontSize=15, subtitleFontSize=TEXT_SIZE
    )
