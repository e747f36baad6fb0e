"""Charts of citation and reference frames, as altair charts you can chain and display.

Every function takes a frame first (``citations_frame`` or ``references_frame`` output; any
other source those accept is loaded for you), aggregates it in polars, and returns an altair
chart of the small aggregated table, so a million citations chart as fast as ten and never hit
altair's 5000-row limit. Nothing is displayed: the caller shows, chains (``.properties(...)``)
or saves (``.save("chart.png")`` with vl-convert) the chart.

Missing values are labelled, not dropped: a citation without an author counts for
``"unknown author"``, one without a title for ``"untitled document"``, a chunk without a
knowledge source for ``"unknown source"``. Citations without a year are left out of ``years``
and counted in its subtitle.

altair is imported when a chart is made, so ``import citekit`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Literal

import polars as pl

from .frames import Source, citations_frame, references_frame

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "UNKNOWN_AUTHOR",
    "UNKNOWN_SOURCE",
    "UNTITLED",
    "authors",
    "citations_per_answer",
    "documents",
    "scores",
    "years",
]

UNKNOWN_AUTHOR: Final = "unknown author"
UNTITLED: Final = "untitled document"
UNKNOWN_SOURCE: Final = "unknown source"

WIDTH: Final = 520
#: Height of one bar in the charts that list authors, documents or sources.
STEP: Final = 20
#: Year spreads up to this many years are charted per year, up to ``_DECADES_UP_TO`` per decade.
_YEARS_UP_TO: Final = 40
_DECADES_UP_TO: Final = 400
_LABEL_LIMIT: Final = 320

Period = Literal["auto", "year", "decade", "century"]


# -- helpers ---------------------------------------------------------------------------------


def _citations(source: pl.DataFrame | Source, caller: str, needs: Iterable[str]) -> pl.DataFrame:
    frame = source if isinstance(source, pl.DataFrame) else citations_frame(source)
    return _check(frame, caller, needs, "a citations_frame()")


def _references(source: pl.DataFrame | Source, caller: str, needs: Iterable[str]) -> pl.DataFrame:
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


def _label(column: str, unknown: str) -> pl.Expr:
    """The column's text, with null and blank values shown as ``unknown``."""
    text = pl.col(column).cast(pl.String).str.strip_chars()
    return pl.when(text.is_null() | (text == "")).then(pl.lit(unknown)).otherwise(text)


def _document_key() -> pl.Expr:
    """What identifies a document across answers: its title, else its URL."""
    return pl.coalesce(pl.col("document_title"), pl.col("source_url"))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _top_subtitle(shown: int, total: int, what: str) -> str:
    if total <= shown:
        return f"all {_plural(total, what)}" if total != 1 else f"1 {what}"
    return f"top {shown:,} of {total:,} {what}s"


def _title(text: str, subtitle: str) -> alt.Title:
    import altair as alt

    return alt.Title(text, subtitle=subtitle, anchor="start")


# -- citations ---------------------------------------------------------------------------------


def authors(cits: pl.DataFrame | Source, *, top: int = 15) -> alt.Chart:
    """The most cited authors: a bar per author, longest first.

    The tooltip gives each author's citations, distinct documents (by title, else URL) and
    answers. Citations without an author count for ``"unknown author"``.

    Parameters
    ----------
    cits
        A ``citations_frame`` (or anything it accepts).
    top
        How many authors to show.

    Returns
    -------
    A horizontal bar chart.
    """
    import altair as alt

    frame = _citations(cits, "authors", ("document_author", "document_title", "source_url"))
    answer = _answer_key(frame)
    table = (
        frame.group_by(author=_label("document_author", UNKNOWN_AUTHOR))
        .agg(
            citations=pl.len(),
            documents=_document_key().n_unique(),
            answers=answer.n_unique(),
        )
        .sort(["citations", "author"], descending=[True, False])
    )
    shown = table.head(max(top, 0))
    subtitle = f"citations per author; {_top_subtitle(shown.height, table.height, 'author')}"
    chart: alt.Chart = (
        alt.Chart(shown, title=_title("Most cited authors", subtitle))
        .mark_bar()
        .encode(
            x=alt.X("citations:Q", title="Citations", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("author:N", sort="-x", title=None, axis=alt.Axis(labelLimit=_LABEL_LIMIT)),
            tooltip=[
                alt.Tooltip("author:N", title="Author"),
                alt.Tooltip("citations:Q", title="Citations"),
                alt.Tooltip("documents:Q", title="Documents"),
                alt.Tooltip("answers:Q", title="Answers"),
            ],
        )
        .properties(width=WIDTH, height=alt.Step(STEP))
    )
    return chart


def documents(cits: pl.DataFrame | Source, *, top: int = 15) -> alt.Chart:
    """The most cited documents: a bar per title, most citations first.

    The tooltip adds the author, the year as the provider wrote it, and how many answers cite
    the document. Citations without a title count for ``"untitled document"``.

    Parameters
    ----------
    cits
        A ``citations_frame`` (or anything it accepts).
    top
        How many documents to show.

    Returns
    -------
    A horizontal bar chart.
    """
    import altair as alt

    frame = _citations(cits, "documents", ("document_title", "document_author", "document_year"))
    answer = _answer_key(frame)
    table = (
        frame.group_by(document=_label("document_title", UNTITLED))
        .agg(
            citations=pl.len(),
            answers=answer.n_unique(),
            author=_label("document_author", UNKNOWN_AUTHOR).mode().sort().first(),
            year=pl.col("document_year")
            .filter(pl.col("document_year").str.strip_chars() != "")
            .first(),
        )
        .with_columns(pl.col("year").fill_null("unknown"))
        .sort(["citations", "document"], descending=[True, False])
    )
    shown = table.head(max(top, 0))
    subtitle = f"citations per document; {_top_subtitle(shown.height, table.height, 'document')}"
    chart: alt.Chart = (
        alt.Chart(shown, title=_title("Most cited documents", subtitle))
        .mark_bar()
        .encode(
            x=alt.X("citations:Q", title="Citations", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("document:N", sort="-x", title=None, axis=alt.Axis(labelLimit=_LABEL_LIMIT)),
            tooltip=[
                alt.Tooltip("document:N", title="Document"),
                alt.Tooltip("author:N", title="Author"),
                alt.Tooltip("year:N", title="Year"),
                alt.Tooltip("citations:Q", title="Citations"),
                alt.Tooltip("answers:Q", title="Answers"),
            ],
        )
        .properties(width=WIDTH, height=alt.Step(STEP))
    )
    return chart


def _answer_key(frame: pl.DataFrame) -> pl.Expr:
    # answer_id alone may be null (hand-built answers); the question tells those apart.
    names = [c for c in ("provider", "answer_id", "question") if c in frame.columns]
    return pl.struct(names) if names else pl.lit(0)


def _period(span: int, by: Period) -> Literal["year", "decade", "century"]:
    if by != "auto":
        return by
    if span <= _YEARS_UP_TO:
        return "year"
    return "decade" if span <= _DECADES_UP_TO else "century"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _period_label(start: int, period: str) -> str:
    if period == "year":
        return str(start) if start >= 0 else f"{-start} BC"
    if period == "decade":
        return f"{start}s" if start >= 0 else f"{-start}s BC"
    century = start // 100 + 1
    if century <= 0:
        return f"{_ordinal(1 - century)} century BC"
    return f"{_ordinal(century)} century"


def years(cits: pl.DataFrame | Source, *, by: Period = "auto") -> alt.Chart:
    """When the cited documents were written: citations per year, decade or century.

    Uses the ``year`` column (parsed from the provider's ``document_year``). Citations without
    a year are left out and counted in the subtitle.

    Parameters
    ----------
    cits
        A ``citations_frame`` (or anything it accepts).
    by
        The width of a bar. ``"auto"`` picks years when the cited years span at most 40 years,
        decades up to 400 years, and centuries beyond (Augustine and Francis in one chart).

    Returns
    -------
    A bar chart over a year axis.
    """
    import altair as alt

    frame = _citations(cits, "years", ("year", "document_title", "source_url"))
    dated = frame.filter(pl.col("year").is_not_null())
    undated = frame.height - dated.height
    span = int(dated.select(pl.col("year").max() - pl.col("year").min()).item() or 0)
    period = _period(span, by)
    width = {"year": 1, "decade": 10, "century": 100}[period]
    table = (
        dated.group_by(start=(pl.col("year").cast(pl.Int64) // width) * width)
        .agg(citations=pl.len(), documents=_document_key().n_unique())
        .sort("start")
        .with_columns(end=pl.col("start") + width)
    )
    table = table.with_columns(
        period=pl.Series([_period_label(s, period) for s in table["start"]], dtype=pl.String)
    )
    subtitle = f"citations per {period} of the cited document"
    if undated:
        subtitle += f"; {_plural(undated, 'citation')} without a year not shown"
    chart: alt.Chart = (
        alt.Chart(table, title=_title("When the cited documents were written", subtitle))
        .mark_bar(stroke="white", strokeWidth=1)
        .encode(
            x=alt.X(
                "start:Q",
                title="Year of the cited document",
                axis=alt.Axis(format="d"),
                scale=alt.Scale(zero=False),
            ),
            x2="end:Q",
            y=alt.Y("citations:Q", title="Citations", axis=alt.Axis(tickMinStep=1)),
            y2=alt.datum(0),
            tooltip=[
                alt.Tooltip("period:N", title=period.capitalize()),
                alt.Tooltip("citations:Q", title="Citations"),
                alt.Tooltip("documents:Q", title="Documents"),
            ],
        )
        .properties(width=WIDTH, height=220)
    )
    return chart


def citations_per_answer(cits: pl.DataFrame | Source) -> alt.Chart:
    """How many citations answers carry: a bar per count, its height the number of answers.

    Given an ``answers_frame`` (it has ``n_citations``), answers without citations are
    counted too; a citations frame only knows the answers that cite something.

    Parameters
    ----------
    cits
        A ``citations_frame`` or an ``answers_frame`` (or any source ``citations_frame``
        accepts).

    Returns
    -------
    A bar chart, coloured by provider when there are several.
    """
    import altair as alt

    if isinstance(cits, pl.DataFrame) and "n_citations" in cits.columns:
        per_answer = cits.select(
            provider=_label("provider", "unknown provider")
            if "provider" in cits.columns
            else pl.lit("unknown provider"),
            citations=pl.col("n_citations").fill_null(0).cast(pl.Int64),
        )
    else:
        frame = _citations(cits, "citations_per_answer", ("provider", "answer_id"))
        per_answer = frame.group_by(_answer_key(frame).alias("answer")).agg(
            provider=_label("provider", "unknown provider").first(),
            citations=pl.len().cast(pl.Int64),
        )
    table = (
        per_answer.group_by("provider", "citations")
        .agg(answers=pl.len())
        .sort("citations", "provider")
    )
    n_answers = per_answer.height
    median = per_answer.select(pl.col("citations").median()).item()
    subtitle = _plural(n_answers, "answer")
    if median is not None:
        subtitle += f"; median {float(median):g} citations"
    several = table["provider"].n_unique() > 1
    encoding: dict[str, Any] = {
        "x": alt.X("citations:O", title="Citations in the answer", axis=alt.Axis(labelAngle=0)),
        "y": alt.Y("answers:Q", title="Answers", axis=alt.Axis(tickMinStep=1)),
        "tooltip": [
            alt.Tooltip("provider:N", title="Provider"),
            alt.Tooltip("citations:O", title="Citations"),
            alt.Tooltip("answers:Q", title="Answers"),
        ],
    }
    if several:
        encoding["color"] = alt.Color("provider:N", title="Provider")
    chart: alt.Chart = (
        alt.Chart(table, title=_title("Citations per answer", subtitle))
        .mark_bar()
        .encode(**encoding)
        .properties(width=WIDTH, height=220)
    )
    return chart


# -- references --------------------------------------------------------------------------------


def scores(
    refs: pl.DataFrame | Source, *, threshold: float = 0.5, bins: int = 20, top: int = 20
) -> alt.LayerChart:
    """Relevance scores of the retrieved knowledge chunks: a binned strip per knowledge source.

    Each row is a ``data_name``; each cell a score bin, darker for more chunks. A red rule marks
    ``threshold`` and the subtitle says how many chunks reach it. Chunks without a score are
    left out and counted in the subtitle.

    Parameters
    ----------
    refs
        A ``references_frame`` (or anything it accepts).
    threshold
        The score to mark (for example the cut-off your agent uses).
    bins
        Number of bins between 0 and 1 (or over the scores' range when they leave it).
    top
        How many knowledge sources to show (most chunks first, then best score); the rest
        share one row, ``"other sources"``.

    Returns
    -------
    The strip chart layered with the threshold rule (an ``alt.LayerChart``, since a rule is a
    second mark).
    """
    import altair as alt

    frame = _references(refs, "scores", ("score", "data_name"))
    scored = frame.filter(pl.col("score").is_not_null() & pl.col("score").is_finite())
    unscored = frame.height - scored.height
    lowest, highest = scored.select(lo=pl.col("score").min(), hi=pl.col("score").max()).row(0)
    low = min(0.0, float(lowest)) if lowest is not None else 0.0
    high = max(1.0, float(highest)) if highest is not None else 1.0
    step = (high - low) / max(bins, 1)
    named = scored.with_columns(source=_label("data_name", UNKNOWN_SOURCE))
    ranked = (
        named.group_by("source")
        .agg(chunks=pl.len(), best=pl.col("score").max())
        .sort(["chunks", "best", "source"], descending=[True, True, False])
    )
    keep = ranked.head(max(top, 1))["source"]
    if ranked.height > keep.len():
        named = named.with_columns(
            source=pl.when(pl.col("source").is_in(keep.implode()))
            .then("source")
            .otherwise(pl.lit("other sources"))
        )
    index = ((pl.col("score") - low) / step).floor().clip(0, max(bins, 1) - 1)
    table = (
        named.group_by("source", bin=index.cast(pl.Int64))
        .agg(chunks=pl.len(), mean_score=pl.col("score").mean())
        .with_columns(
            start=low + pl.col("bin") * step,
            end=low + (pl.col("bin") + 1) * step,
        )
        .sort("source", "bin")
        .drop("bin")
    )
    reaching = int((scored["score"] >= threshold).sum())
    subtitle = f"{reaching:,} of {_plural(scored.height, 'scored chunk')} at or above {threshold:g}"
    if unscored:
        subtitle += f"; {unscored:,} without a score not shown"
    order = [s for s in ranked["source"].to_list() if s in set(keep.to_list())]
    if ranked.height > keep.len():
        order.append("other sources")
    x_scale = alt.Scale(domain=[low, high])
    strip = (
        alt.Chart(table)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("start:Q", title="Relevance score", scale=x_scale),
            x2="end:Q",
            y=alt.Y(
                "source:N",
                title=None,
                sort=order,
                axis=alt.Axis(labelLimit=_LABEL_LIMIT),
            ),
            color=alt.Color("chunks:Q", title="Chunks", scale=alt.Scale(scheme="blues")),
            tooltip=[
                alt.Tooltip("source:N", title="Source"),
                alt.Tooltip("start:Q", title="Score from", format=".2f"),
                alt.Tooltip("end:Q", title="Score to", format=".2f"),
                alt.Tooltip("chunks:Q", title="Chunks"),
            ],
        )
    )
    rule = (
        alt.Chart(pl.DataFrame({"threshold": [float(threshold)]}))
        .mark_rule(color="#c0392b", strokeWidth=2, strokeDash=[4, 3])
        .encode(
            x=alt.X("threshold:Q", scale=x_scale),
            tooltip=[alt.Tooltip("threshold:Q", title="Threshold")],
        )
    )
    return alt.LayerChart(
        layer=[strip, rule],
        title=_title("Relevance of the retrieved knowledge", subtitle),
        width=WIDTH,
        height=alt.Step(STEP),
    )
