"""What the chart tables share: their input frame, labels, keys, periods, in polars alone.

A chart takes a frame, a LazyFrame or any source the loaders accept, and aggregates a
LazyFrame (``collected``: the streaming engine; ``most_frequent`` is a mode that streams);
``identified`` gives it the work and author identity (a ``sources_frame`` has it, anything else
goes through ``citekit.data.identity.clusters.identify``), ``citations_of`` and
``references_of`` load it when needed, and all say which columns a frame lacks. ``labelled``
names missing values instead of dropping them, ``shortened`` and ``distinct_labels`` keep axis
labels short and one per bar, ``names_seen`` lists the names an author or work was cited
under, ``answer_key`` tells answers apart across a frame, ``drawable_rows`` keeps out the
characters a chart's image cannot hold, and the rest words subtitles and the periods of the
years chart. The altair side is ``citekit.data.charts.style``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

import polars as pl

from ..frames import Source, citations_frame, references_frame
from ..identity.clusters import identify

#: Tooltip lists (names, titles seen) are cut to this many characters.
TOOLTIP_LIMIT: Final = 240
#: Columns a frame gets as nulls when it lacks them, so that identified frames all aggregate alike.
_IDENTIFIED_COLUMNS: Final = {
    "provider": pl.String(),
    "answer_id": pl.String(),
    "question": pl.String(),
    "document_title": pl.String(),
    "document_author": pl.String(),
    "year": pl.Int32(),
    "source_url": pl.String(),
    "work": pl.String(),
    "author": pl.String(),
}

#: Year spreads up to this many years are charted per year, up to ``_DECADES_UP_TO`` per decade.
_YEARS_UP_TO: Final = 40
_DECADES_UP_TO: Final = 400

Period = Literal["auto", "year", "decade", "century"]


#: What a chart takes: an eager frame, a LazyFrame (``scan_citations``...) or a source.
Frame = pl.DataFrame | pl.LazyFrame


def collected(frame: pl.LazyFrame) -> pl.DataFrame:
    """The rows of an aggregated LazyFrame, with polars' streaming engine: a scan of ten
    million citations is read in batches, never whole."""
    return frame.collect(engine="streaming")


def columns_of(frame: Frame) -> list[str]:
    return frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns


def citations_of(source: Frame | Source, caller: str, needs: Iterable[str]) -> pl.LazyFrame:
    frame = source if isinstance(source, Frame) else citations_frame(source)
    return _check(frame, caller, needs, "a citations_frame()").lazy()


def references_of(source: Frame | Source, caller: str, needs: Iterable[str]) -> pl.LazyFrame:
    frame = source if isinstance(source, Frame) else references_frame(source)
    return _check(frame, caller, needs, "a references_frame()").lazy()


def identified(source: Frame | Source, caller: str, needs: Iterable[str]) -> pl.LazyFrame:
    """The sources with their work and author identity (``work_id``, ``work``, ``author_id``,
    ``author``), as a LazyFrame to aggregate: a frame that has them (a ``sources_frame``,
    ``scan_sources``) as it is; any other frame (a ``citations_frame``, ``scan_citations``) or
    source (answers, paths; read with ``citations_frame``) identified by
    ``citekit.data.identity.clusters.identify`` (a LazyFrame lazily: only its distinct documents are
    collected). Columns the charts read and the frame lacks are added as nulls."""
    frame: Frame
    if not isinstance(source, Frame):
        frame = identify(citations_frame(source))
    elif {"work_id", "author_id"} <= set(columns_of(source)):
        frame = source
    else:
        frame = identify(_check(source, caller, needs, "a sources_frame() or citations_frame()"))
    have = columns_of(frame)
    missing = [pl.lit(None, t).alias(c) for c, t in _IDENTIFIED_COLUMNS.items() if c not in have]
    return (frame.with_columns(missing) if missing else frame).lazy()


def _check(frame: Frame, caller: str, needs: Iterable[str], kind: str) -> Frame:
    have = columns_of(frame)
    missing = [name for name in needs if name not in have]
    if missing:
        raise ValueError(
            f"{caller}() needs {kind} frame; this one lacks {', '.join(missing)} "
            f"(it has {', '.join(have) or 'no columns'})"
        )
    return frame


def most_frequent(frame: pl.LazyFrame, key: str, column: str) -> pl.DataFrame:
    """Per ``key``, the non-null value of ``column`` seen most often (the smallest of a tie):
    ``pl.col(column).drop_nulls().mode().sort().first()``, counted in two steps so that a
    LazyFrame streams (polars' ``mode`` holds a whole group)."""
    counts = collected(
        frame.filter(pl.col(column).is_not_null()).group_by(key, column).agg(_n=pl.len())
    )
    return (
        counts.sort([key, "_n", column], descending=[False, True, False], nulls_last=True)
        .group_by(key, maintain_order=True)
        .agg(pl.col(column).first())
    )


#: A character XML 1.0 refuses: vl-convert (which draws every chart's image) aborts the whole
#: process on one, where a PDF's title can hold a vertical tab. citekit.render.chart.drawable
#: is the same rule for a whole spec.
_NOT_XML: Final = r"[^\t\n\r\x{20}-\x{D7FF}\x{E000}-\x{FFFD}\x{10000}-\x{10FFFF}]"


def drawable_rows(table: pl.DataFrame) -> pl.DataFrame:
    """The rows a chart is made of, each character XML refuses in their text made U+FFFD, so
    the chart can be drawn, shown and saved (``chart.save``) with vl-convert."""
    return table.with_columns(pl.col(pl.String).str.replace_all(_NOT_XML, "\ufffd"))


def labelled(column: str, unknown: str) -> pl.Expr:
    """The column's text, with null and blank values shown as ``unknown``."""
    text = pl.col(column).cast(pl.String).str.strip_chars()
    return pl.when(text.is_null() | (text == "")).then(pl.lit(unknown)).otherwise(text)


def shortened(text: pl.Expr, limit: int) -> pl.Expr:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return (
        pl.when(text.str.len_chars() > limit)
        .then(text.str.slice(0, limit - 1).str.strip_chars_end() + pl.lit("\u2026"))
        .otherwise(text)
    )


def distinct_labels(label: str, key: str) -> pl.Expr:
    """The ``label`` column, with the ``key`` added to labels that two rows share (a chart axis
    would draw them as one bar)."""
    shared = pl.len().over(label) > 1
    suffix = pl.lit(" [") + pl.col(key).cast(pl.String).fill_null("none") + pl.lit("]")
    return pl.when(shared).then(pl.col(label) + suffix).otherwise(pl.col(label))


def names_seen(frame: pl.LazyFrame, key: str, column: str, alias: str) -> pl.DataFrame:
    """Per ``key``, the distinct non-blank values of ``column`` most frequent first, as one
    comma-separated text (for a tooltip): "Francis, Francesco, Franziskus"."""
    text = pl.col(column).cast(pl.String).str.strip_chars()
    counts = collected(
        frame.select(key, name=text)
        .filter(pl.col("name").is_not_null() & (pl.col("name") != ""))
        .group_by(key, "name")
        .len()
    )
    return (
        counts.sort(["len", "name"], descending=[True, False])
        .group_by(key, maintain_order=True)
        .agg(shortened(pl.col("name").str.join(", "), TOOLTIP_LIMIT).alias(alias))
    )


def counted(frame: pl.LazyFrame) -> str:
    """What a bar counts: "citations", or "sources" when the frame (a ``sources_frame``) also
    holds knowledge chunks or web sources."""
    if "kind" not in columns_of(frame):
        return "citations"
    kinds = collected(frame.select(pl.col("kind").drop_nulls().unique()))["kind"]
    return "citations" if kinds.len() == 0 or kinds.to_list() == ["citation"] else "sources"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def top_subtitle(shown: int, total: int, what: str) -> str:
    if total <= shown:
        return f"all {plural(total, what)}" if total != 1 else f"1 {what}"
    return f"top {shown:,} of {total:,} {what}s"


def answer_key(frame: Frame) -> pl.Expr:
    """What tells answers apart: a hash of ``provider``, ``answer_id`` and ``question``
    (answer_id alone may be null: hand-built answers), eight bytes a row however long the
    question, so that counting the answers of ten million citations stays small."""
    names = [c for c in ("provider", "answer_id", "question") if c in columns_of(frame)]
    return pl.struct(names).hash(seed=0) if names else pl.lit(0)


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
