"""The charts' altair encoding: each public chart of ``citekit.data.charts`` (documented
there) draws the small table ``citekit.data.charts.tables`` aggregates for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import polars as pl

from ..frames import Source
from .heatmap import heatmap
from .parts import Frame, Period, drawable_rows
from .style import axis, chart_title, count_axis, drawn, label_room, legend, sized
from .tables import (
    MAX_ROWS,
    UNKNOWN_AUTHOR,
    UNKNOWN_SOURCE,
    UNTITLED,
    citation_counts,
    cited_years,
    score_bins,
    top_authors,
    top_works,
)

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "MAX_ROWS",
    "UNKNOWN_AUTHOR",
    "UNKNOWN_SOURCE",
    "UNTITLED",
    "authors",
    "citations_per_answer",
    "cocitation",
    "documents",
    "scores",
    "works",
    "years",
]

WIDTH: Final = 520
#: Height of one bar in the charts that list authors, documents or sources.
STEP: Final = 20
_LABEL_LIMIT: Final = 320
#: Works are labelled "work — author (year)": a wider axis, each part cut to its length.
_WORK_LABEL_LIMIT: Final = 480


# -- citations ---------------------------------------------------------------------------------


@drawn
def authors(cits: Frame | Source, *, top: int = 15, width: int | None = None) -> alt.Chart:
    """The most cited authors, counted by identity: a bar per author, longest first.

    An author cited under several names (Francis, Francesco, Franziskus) is one bar, labelled
    by its display name (the ``author`` column of ``sources_frame``). The tooltip gives the
    names seen, the citations, the distinct works and the answers. Sources without an author
    (and whose work has none) count for ``"unknown author"``.

    Parameters
    ----------
    cits
        A ``sources_frame`` (counted by its ``author_id``), a ``citations_frame`` or anything
        ``citations_frame`` accepts (identified on the way, with the shipped alias table).
    top
        How many authors to show.
    width
        The chart's whole width in pixels, labels and legends included, to fit a page column
        (long labels are cut to leave the bars room; the tooltip has them whole). By default
        the plot is ``WIDTH`` pixels wide and the labels take what they need.

    Returns
    -------
    A horizontal bar chart.

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> answers = [
    ...     mg.ask("What is the principle of subsidiarity?"),
    ...     mg.ask("How does the Church define the common good?"),
    ...     mg.ask("What is a just wage according to Catholic teaching?"),
    ... ]
    >>> chart = ck.charts.authors(ck.sources_frame(answers), top=3)
    >>> chart.data.select("author", "citations", "works").rows()
    [('Catholic Church', 5, 1), ('Pontifical Council for Justice and Peace', 5, 1),
     ('Benedict XVI', 2, 1)]
    >>> chart.title.subtitle
    'citations per author; top 3 of 9 authors'
    """

    import altair as alt

    shown, subtitle, what = top_authors(cits, top=top)
    chart: alt.Chart = (
        alt.Chart(drawable_rows(shown), title=chart_title("Most cited authors", subtitle, width))
        .mark_bar()
        .encode(
            x=alt.X(
                "citations:Q",
                title=what.capitalize(),
                axis=count_axis(shown["citations"].max()),
            ),
            y=alt.Y(
                "author:N",
                sort="-x",
                title=None,
                axis=axis(labelLimit=label_room(width, _LABEL_LIMIT)),
            ),
            tooltip=[
                alt.Tooltip("author:N", title="Author"),
                alt.Tooltip("names:N", title="Names seen"),
                alt.Tooltip("citations:Q", title=what.capitalize()),
                alt.Tooltip("works:Q", title="Works"),
                alt.Tooltip("answers:Q", title="Answers"),
            ],
        )
    )
    return sized(chart, width, plot=WIDTH, height=alt.Step(STEP))  # type: ignore[no-any-return]


@drawn
def works(cits: Frame | Source, *, top: int = 15, width: int | None = None) -> alt.Chart:
    """The most cited works, counted by identity: a bar per work, most citations first.

    A work cited under several titles, languages or editions is one bar, labelled
    "work — author (year)" from ``works_frame`` (the year of the alias table's first edition
    where it knows the work, else the year cited most). The tooltip adds the titles seen, the
    languages, the answers and the providers. Sources with neither a title nor an address
    count for ``"untitled document"``.

    Parameters
    ----------
    cits
        A ``sources_frame`` (counted by its ``work_id``), a ``citations_frame`` or anything
        ``citations_frame`` accepts (identified on the way, with the shipped alias table).
    top
        How many works to show.
    width
        The chart's whole width in pixels, labels and legends included, to fit a page column
        (long labels are cut to leave the bars room; the tooltip has them whole). By default
        the plot is ``WIDTH`` pixels wide and the labels take what they need.

    Returns
    -------
    A horizontal bar chart.

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> answers = [
    ...     mg.ask("What is the principle of subsidiarity?"),
    ...     mg.ask("How does the Church define the common good?"),
    ...     mg.ask("What is a just wage according to Catholic teaching?"),
    ... ]
    >>> chart = ck.charts.works(ck.sources_frame(answers), top=2)
    >>> for label, n in chart.data.select("label", "citations").iter_rows():
    ...     print(n, label)
    5 Catechism of the Catholic Church — Catholic Church (1992)
    5 Compendium of the Social Doctrine of th… — Pontifical Council fo… (2004)
    """

    import altair as alt

    shown, subtitle, what = top_works(cits, top=top)
    chart: alt.Chart = (
        alt.Chart(drawable_rows(shown), title=chart_title("Most cited works", subtitle, width))
        .mark_bar()
        .encode(
            x=alt.X(
                "citations:Q",
                title=what.capitalize(),
                axis=count_axis(shown["citations"].max()),
            ),
            y=alt.Y(
                "label:N",
                sort="-x",
                title=None,
                axis=axis(labelLimit=label_room(width, _WORK_LABEL_LIMIT)),
            ),
            tooltip=[
                alt.Tooltip("work:N", title="Work"),
                alt.Tooltip("author:N", title="Author"),
                alt.Tooltip("year:N", title="Year"),
                alt.Tooltip("titles:N", title="Titles seen"),
                alt.Tooltip("languages:N", title="Languages"),
                alt.Tooltip("citations:Q", title=what.capitalize()),
                alt.Tooltip("answers:Q", title="Answers"),
                alt.Tooltip("providers:N", title="Providers"),
            ],
        )
    )
    return sized(chart, width, plot=WIDTH, height=alt.Step(STEP))  # type: ignore[no-any-return]


@drawn
def documents(cits: Frame | Source, *, top: int = 15, width: int | None = None) -> alt.Chart:
    """The most cited documents: the ``works`` chart, under the name it had before works.

    Documents are counted by work since works have an identity (a title cited in five
    languages was five documents, it is one work now): this is ``works(cits, top=top)``,
    kept so that notebooks calling ``documents`` keep working.

    Examples
    --------
    >>> ans = ck.Magisterium().ask("What is the principle of subsidiarity?")
    >>> ck.charts.documents([ans]).to_dict() == ck.charts.works([ans]).to_dict()
    True
    """

    return works(cits, top=top, width=width)


@drawn
def years(cits: Frame | Source, *, by: Period = "auto", width: int | None = None) -> alt.Chart:
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
    width
        The chart's whole width in pixels, labels and legends included, to fit a page column
        (long labels are cut to leave the bars room; the tooltip has them whole). By default
        the plot is ``WIDTH`` pixels wide and the labels take what they need.

    Returns
    -------
    A bar chart over a year axis.

    Examples
    --------
    An answer citing Augustine, Aquinas, the Council of Florence and the Catechism is charted
    by century; the undated Athanasian Creed is left out:

    >>> ans = ck.Magisterium().ask(
    ...     "How does the Catholic Church explain the mystery of the Trinity?"
    ... )
    >>> chart = ck.charts.years(ck.citations_frame([ans]))
    >>> chart.data["period"].to_list()
    ['4th century', '13th century', '15th century', '20th century']
    >>> chart.title.subtitle
    'citations per century of the cited document; 1 citation without a year not shown'
    """

    import altair as alt

    table, subtitle, period = cited_years(cits, by=by)
    chart: alt.Chart = (
        alt.Chart(
            drawable_rows(table),
            title=chart_title("When the cited documents were written", subtitle, width),
        )
        .mark_bar(stroke="white", strokeWidth=1)
        .encode(
            x=alt.X(
                "start:Q",
                title="Year of the cited document",
                axis=axis(format="d"),
                # The axis starts and ends at the data, not at a round number before it.
                scale=alt.Scale(zero=False, nice=False, domain=_span_of(table)),
            ),
            x2="end:Q",
            y=alt.Y("citations:Q", title="Citations", axis=count_axis(table["citations"].max())),
            y2=alt.datum(0),
            tooltip=[
                alt.Tooltip("period:N", title=period.capitalize()),
                alt.Tooltip("citations:Q", title="Citations"),
                alt.Tooltip("works:Q", title="Works"),
            ],
        )
    )
    return sized(chart, width, plot=WIDTH, height=220)  # type: ignore[no-any-return]


def _span_of(table: pl.DataFrame) -> list[int] | Any:
    """``[first start, last end]`` of the periods, or altair's default for no data."""
    if table.height == 0:
        import altair as alt

        return alt.Undefined
    return [int(table["start"].min()), int(table["end"].max())]  # type: ignore[arg-type]


@drawn
def citations_per_answer(cits: Frame | Source, *, width: int | None = None) -> alt.Chart:
    """How many citations answers carry: a bar per count, its height the number of answers.

    Given an ``answers_frame`` (it has ``n_citations``), answers without citations are
    counted too; a citations frame only knows the answers that cite something.

    Parameters
    ----------
    cits
        A ``citations_frame`` or an ``answers_frame`` (or any source ``citations_frame``
        accepts).
    width
        The chart's whole width in pixels, labels and legends included, to fit a page column
        (long labels are cut to leave the bars room; the tooltip has them whole). By default
        the plot is ``WIDTH`` pixels wide and the labels take what they need.

    Returns
    -------
    A bar chart, coloured by provider when there are several.

    Examples
    --------
    >>> answers = [
    ...     ck.Magisterium().ask("What is the principle of subsidiarity?"),
    ...     ck.Magisterium().ask("How does the Church define the common good?"),
    ...     ck.Maritaca().ask("Como funciona o Pix?"),  # Maritaca answers cite nothing
    ... ]
    >>> chart = ck.charts.citations_per_answer(ck.answers_frame(answers))
    >>> chart.data.rows()  # (provider, citations, answers)
    [('maritaca', 0, 1), ('magisterium', 7, 1), ('magisterium', 8, 1)]
    >>> chart.title.subtitle
    '3 answers; median 7 citations'
    """

    import altair as alt

    table, subtitle, _ = citation_counts(cits)
    several = table["provider"].n_unique() > 1
    encoding: dict[str, Any] = {
        "x": alt.X("citations:O", title="Citations in the answer", axis=axis(labelAngle=0)),
        "y": alt.Y(
            "answers:Q",
            title="Answers",
            # the bars of several providers stack: the tallest is a sum
            axis=count_axis(
                table.group_by("citations").agg(pl.col("answers").sum())["answers"].max()
            ),
        ),
        "tooltip": [
            alt.Tooltip("provider:N", title="Provider"),
            alt.Tooltip("citations:O", title="Citations"),
            alt.Tooltip("answers:Q", title="Answers"),
        ],
    }
    if several:
        encoding["color"] = alt.Color("provider:N", title="Provider", legend=legend(width))
    chart: alt.Chart = (
        alt.Chart(drawable_rows(table), title=chart_title("Citations per answer", subtitle, width))
        .mark_bar()
        .encode(**encoding)
    )
    return sized(chart, width, plot=WIDTH, height=220)  # type: ignore[no-any-return]


# -- references --------------------------------------------------------------------------------


@drawn
def scores(
    refs: Frame | Source,
    *,
    threshold: float = 0.5,
    bins: int = 20,
    top: int = 20,
    width: int | None = None,
) -> alt.LayerChart:
    """Relevance scores of the retrieved knowledge chunks: a dot strip per knowledge source.

    Each row is a knowledge document (``document_title``); each dot the chunks of one score
    bin, larger for more, blue at or above ``threshold`` and grey below (the legend says
    which). A red rule marks the threshold and the subtitle says how many chunks reach it.
    Chunks without a score are left out and counted in the subtitle.

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
    width
        The chart's whole width in pixels, labels and legends included, to fit a page column
        (long labels are cut to leave the bars room; the tooltip has them whole). By default
        the plot is ``WIDTH`` pixels wide and the labels take what they need.

    Returns
    -------
    The strip chart layered with the threshold rule (an ``alt.LayerChart``, since a rule is a
    second mark).

    Examples
    --------
    >>> gb = ck.GPTBots()
    >>> answers = [
    ...     gb.ask("Why was the Great Wall built?"),
    ...     gb.ask("How do I factory reset my SmartHome Hub X2?"),
    ... ]
    >>> refs = ck.references_frame(answers)
    >>> refs.height
    14
    >>> chart = ck.charts.scores(refs, threshold=0.6)
    >>> type(chart).__name__
    'LayerChart'
    >>> chart.title.subtitle
    '10 of 14 scored chunks at or above 0.6'
    """
    import altair as alt

    table, subtitle, order, domain, (above, below) = score_bins(
        refs, threshold=threshold, bins=bins, top=top
    )
    x_scale = alt.Scale(domain=list(domain))
    # One dot per source and score bin, as large as its chunks, coloured by which side of the
    # threshold it falls on (the legend names the threshold): a sparse strip stays legible.
    strip = (
        alt.Chart(drawable_rows(table))
        .mark_circle(opacity=0.85, stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("mid:Q", title="Relevance score", scale=x_scale, axis=axis()),
            y=alt.Y(
                "source:N",
                title=None,
                sort=order,
                axis=axis(labelLimit=label_room(width, _LABEL_LIMIT)),
            ),
            size=alt.Size(
                "chunks:Q",
                title="Chunks",
                scale=alt.Scale(range=[60, 400]),
                legend=legend(width),
            ),
            color=alt.Color(
                "side:N",
                title="Score",
                scale=alt.Scale(domain=[above, below], range=["#1f6fb4", "#9a9a9a"]),
                legend=legend(width),
            ),
            tooltip=[
                alt.Tooltip("source:N", title="Source"),
                alt.Tooltip("start:Q", title="Score from", format=".2f"),
                alt.Tooltip("end:Q", title="Score to", format=".2f"),
                alt.Tooltip("chunks:Q", title="Chunks"),
                alt.Tooltip("side:N", title="Threshold"),
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
    layers = alt.LayerChart(
        layer=[strip, rule],
        title=chart_title("Relevance of the retrieved knowledge", subtitle, width),
    )
    return sized(layers, width, plot=WIDTH, height=alt.Step(STEP))  # type: ignore[no-any-return]


# -- co-citation ------------------------------------------------------------------------------


@drawn
def cocitation(
    co: pl.DataFrame | Source, *, top: int = 15, width: int | None = None
) -> alt.LayerChart:
    """Which works are cited together: a heatmap of the most cited works against each other.

    A cell holds how many answers cite both works (its count written in it while cells are
    big enough to read), the same above and below the diagonal; the grey diagonal holds how
    many answers cite the work at all. The works are those of ``co`` cited by the most answers,
    in that order; long names are cut on the axes and given whole in the tooltip. With no pair
    of works cited together, the chart says so instead.

    Parameters
    ----------
    co
        A ``cocitation_frame``, or anything it accepts (answers, a ``sources_frame``): then
        only the pairs of the works shown are built (``cocitation_frame(..., top=)``).
    top
        How many works to show (at most 70).
    width
        The chart's whole width in pixels, labels included, to fit a page column: the cells
        and the labels shrink to it (long names are cut; the tooltip has them whole).

    Returns
    -------
    The heatmap, an ``alt.LayerChart`` (cells, the diagonal and their counts).

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> answers = [
    ...     mg.ask("What is the principle of subsidiarity?"),
    ...     mg.ask("How does the Church define the common good?"),
    ... ]
    >>> chart = ck.charts.cocitation(ck.cocitation_frame(answers), top=4)
    >>> chart.title.subtitle
    'answers citing both works; grey diagonal: answers citing the work; top 4 of 8 works'
    """
    return heatmap(co, top=top, width=width)
