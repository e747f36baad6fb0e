"""``ck.charts.support``: how well the cited passages support the answers, per provider or per
work, from a ``support_frame`` (the one place that scores).

Per provider, each bar is a provider's sentences split by verdict (a sentence takes the best
verdict of its sources, as ``citekit.data.corpus.support_view`` shows it), as shares of its
sentences. Per work, each bar is the (sentence, passage) pairs citing that work, split by
verdict, as counts. The colours are the support view's: green supported, amber partial, red
unsupported, grey unverifiable, light grey uncited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

import polars as pl

from ..corpus.support import VERDICTS, support_frame
from ..frames import Source
from .draw import STEP, WIDTH
from .parts import drawable_rows
from .style import axis, chart_title, count_axis, drawn, legend

if TYPE_CHECKING:
    import altair as alt

__all__ = ["COLOURS", "support", "support_table"]

#: Each verdict's colour, in ``VERDICTS`` order.
COLOURS: Final = ("#2e9e44", "#e0a000", "#d64545", "#8a8a8a", "#c9c9c9")
_LABEL_LIMIT: Final = 420
_RANK: Final = {v: i for i, v in enumerate(VERDICTS)}

By = Literal["provider", "work"]


def support_table(
    frame: pl.DataFrame | Source, *, by: By = "provider", top: int = 15
) -> pl.DataFrame:
    """The rows the chart draws: ``label``, ``verdict``, ``count``, ``share`` (of the label's
    total), ``total``, ``order`` (of the verdict in the legend), largest label first.

    ``frame`` is a ``support_frame``, or any source it takes (answers, saved responses, the log).
    """
    if by not in ("provider", "work"):
        raise ValueError(f"by must be 'provider' or 'work', not {by!r}")
    if not isinstance(frame, pl.DataFrame):
        frame = support_frame(frame)
    rank = pl.col("verdict").replace_strict(_RANK, default=len(_RANK), return_dtype=pl.Int32)
    if by == "provider":
        # One verdict per sentence: the best of its sources'.
        counted = (
            frame.with_columns(rank=rank)
            .group_by("provider", "answer_id", "sentence_index")
            .agg(pl.col("rank").min())
            .with_columns(
                label=pl.col("provider").fill_null("unknown provider"),
                verdict=pl.col("rank").replace_strict(dict(enumerate(VERDICTS)), default=None),
            )
        )
    else:
        counted = frame.filter(pl.col("work_id").is_not_null()).with_columns(
            label=pl.coalesce("work", "work_id"), rank=rank
        )
    table = counted.group_by("label", "verdict").agg(
        count=pl.len().cast(pl.Int64), order=pl.col("rank").first()
    )
    totals = table.group_by("label").agg(total=pl.col("count").sum())
    keep = totals.sort(["total", "label"], descending=[True, False]).head(top)
    return (
        table.join(keep, on="label", how="inner")
        .with_columns(share=pl.col("count") / pl.col("total"))
        .sort(["total", "label", "order"], descending=[True, False, False])
        .select("label", "verdict", "count", "share", "total", "order")
    )


@drawn
def support(frame: pl.DataFrame | Source, *, by: By = "provider", top: int = 15) -> alt.Chart:
    """Does the cited passage say so? A bar per provider (or per work) split by verdict.

    Parameters
    ----------
    frame
        A ``support_frame``, or any source it takes (answers, saved responses, the log).
    by
        ``"provider"``: each provider's sentences as shares, each sentence with the best verdict
        of its sources (``uncited`` where none cites it). ``"work"``: the pairs of a sentence and
        a passage of each work, as counts (sentences no source cites have no work).
    top
        How many providers or works to show (the largest first).

    Returns
    -------
    A horizontal stacked bar chart.

    Examples
    --------
    >>> import polars as pl
    >>> mg, gb = ck.Magisterium(), ck.GPTBots()
    >>> answers = [
    ...     mg.ask("What is the principle of subsidiarity?"),
    ...     gb.ask("What does the travel policy say about booking flights?", citations=True),
    ... ]
    >>> chart = ck.charts.support(ck.support_frame(answers))
    >>> chart.data.filter(pl.col("verdict") == "supported").select("label", "count").rows()
    [('magisterium', 2), ('gptbots', 6)]
    >>> chart.title.subtitle
    'sentences by the best verdict of their sources; 2 providers, 21 sentences'
    """
    import altair as alt

    table = support_table(frame, by=by, top=top)
    labels = table["label"].unique(maintain_order=True).to_list()
    overall = int(table.group_by("label").agg(pl.col("total").first())["total"].sum())
    if by == "provider":
        what, title = "sentences", "How well the cited passages support each provider's sentences"
        subtitle = (
            f"sentences by the best verdict of their sources; "
            f"{len(labels)} provider{'' if len(labels) == 1 else 's'}, {overall} sentences"
        )
        x = alt.X(
            "count:Q",
            stack="normalize",
            title="Share of sentences",
            axis=axis(format="%"),
        )
    else:
        what, title = "cited passages", "How well each work's passages support the sentences"
        subtitle = f"sentence and passage pairs by verdict; top {len(labels)} works"
        largest = table.group_by("label").agg(pl.col("count").sum())["count"].max()
        x = alt.X(
            "count:Q", stack="zero", title="Sentence and passage pairs", axis=count_axis(largest)
        )
    chart: alt.Chart = (
        alt.Chart(drawable_rows(table), title=chart_title(title, subtitle))
        .mark_bar()
        .encode(
            x=x,
            y=alt.Y("label:N", sort=labels, title=None, axis=axis(labelLimit=_LABEL_LIMIT)),
            color=alt.Color(
                "verdict:N",
                title="Verdict",
                scale=alt.Scale(domain=list(VERDICTS), range=list(COLOURS)),
                legend=legend(),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("label:N", title=by.capitalize()),
                alt.Tooltip("verdict:N", title="Verdict"),
                alt.Tooltip("count:Q", title=what.capitalize()),
                alt.Tooltip("share:Q", title="Share", format=".0%"),
                alt.Tooltip("total:Q", title="All " + what),
            ],
        )
        .properties(width=WIDTH, height=alt.Step(STEP))
    )
    return chart
