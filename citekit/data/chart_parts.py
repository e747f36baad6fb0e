"""What the chart functions share: their input frame, labels, keys, titles and year periods.

A chart takes a frame or any source the loaders accept; ``citations_of`` and ``references_of``
load it when needed and say which columns a frame lacks. ``labelled`` names missing values
instead of dropping them, ``document_key`` and ``answer_key`` tell documents and answers apart
across a frame, and the rest words titles, subtitles and the periods of the years chart.
altair is imported only when a title is made.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, Literal

import polars as pl

from .frames import Source, citations_frame, references_frame

if TYPE_CHECKING:
    import altair as alt

#: Year spreads up to this many years are charted per year, up to ``_DECADES_UP_TO`` per decade.
_YEARS_UP_TO: Final = 40
_DECADES_UP_TO: Final = 400

Period = Literal["auto", "year", "decade", "century"]


def citations_of(source: pl.DataFrame | Source, caller: str, needs: Iterable[str]) -> pl.DataFrame:
    frame = source if isinstance(source, pl.DataFrame) else citations_frame(source)
    return _check(frame, caller, needs, "a citations_frame()")


def references_of(source: pl.DataFrame | Source, caller: str, needs: Iterable[str]) -> pl.DataFrame:
    frame = source if isinstance(source, pl.DataFrame) else references_frame(source)
    return _check(frame, caller, needs, "a references_frame()")


def _check(frame: pl.DataFrame, caller: str, needs: Iterable[str], kind: str) -> pl.DataFrame:
    missing = [name for name in needs if name not in frame.columns]
    if missing:
        raise ValueError(
            f"{caller}() needs {kind} frame; this one lacks {', '.join(missing)} "
            f"(it has {', '.join(frame.columns) or 'no columns'})"
        )
    return frame


def labelled(column: str, unknown: str) -> pl.Expr:
    """The column's text, with null and blank values shown as ``unknown``."""
    text = pl.col(column).cast(pl.String).str.strip_chars()
    return pl.when(text.is_null() | (text == "")).then(pl.lit(unknown)).otherwise(text)


def document_key() -> pl.Expr:
    """What identifies a document across answers: its title, else its URL."""
    return pl.coalesce(pl.col("document_title"), pl.col("source_url"))


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def top_subtitle(shown: int, total: int, what: str) -> str:
    if total <= shown:
        return f"all {plural(total, what)}" if total != 1 else f"1 {what}"
    return f"top {shown:,} of {total:,} {what}s"


def chart_title(text: str, subtitle: str) -> alt.Title:
    import altair as alt

    return alt.Title(text, subtitle=subtitle, anchor="start")


def answer_key(frame: pl.DataFrame) -> pl.Expr:
    # answer_id alone may be null (hand-built answers); the question tells those apart.
    names = [c for c in ("provider", "answer_id", "question") if c in frame.columns]
    return pl.struct(names) if names else pl.lit(0)


def period_of(span: int, by: Period) -> Literal["year", "decade", "century"]:
    if by != "auto":
        return by
    if span <= _YEARS_UP_TO:
        return "year"
    return "decade" if span <= _DECADES_UP_TO else "century"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def period_label(start: int, period: str) -> str:
    if period == "year":
        return str(start) if start >= 0 else f"{-start} BC"
    if period == "decade":
        return f"{start}s" if start >= 0 else f"{-start}s BC"
    century = start // 100 + 1
    if century <= 0:
        return f"{ordinal(1 - century)} century BC"
    return f"{ordinal(century)} century"
