"""Co-citation: which works the same answers cite together, as a frame and as a heatmap.

``cocitation_frame`` counts, for every pair of works, the answers that cite both (an answer
citing a work five times counts once), with each work's own count of answers and the Jaccard
index of the two. It is a self-join of the (answer, work) pairs on integer codes, so 100k
answers of ten sources each take about a second. ``heatmap`` draws the most cited works of such
a frame against each other; ``citekit.data.charts.cocitation`` is its public name.

>>> from citekit.testing import default_data_dir
>>> co = ck.cocitation_frame(default_data_dir() / "magisterium")
>>> co.columns
['work_a', 'work_b', 'name_a', 'name_b', 'answers', 'answers_a', 'answers_b', 'jaccard']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import polars as pl

from .aliases import AliasSpec
from .chart_parts import (
    TEXT_SIZE,
    axis,
    chart_title,
    distinct_labels,
    legend,
    plural,
    shortened,
)
from .clusters import identify
from .sources import Source

if TYPE_CHECKING:
    import altair as alt

__all__ = ["COCITATION_SCHEMA", "cocitation_frame", "heatmap"]

#: One row per pair of works cited in at least one answer together.
COCITATION_SCHEMA: Final = pl.Schema(
    {
        "work_a": pl.String(),
        "work_b": pl.String(),
        "name_a": pl.String(),
        "name_b": pl.String(),
        "answers": pl.UInt32(),
        "answers_a": pl.UInt32(),
        "answers_b": pl.UInt32(),
        "jaccard": pl.Float64(),
    }
)

_ANSWER: Final = ("provider", "answer_id", "question")
#: The heatmap shows at most this many works (its cells stay under altair's 5000 rows).
MAX_WORKS: Final = 70
#: Axis labels are cut to this many characters (the tooltip has the whole name).
_LABEL_CHARS: Final = 32
#: Cell side in pixels, and the smallest side that still holds a count.
_CELL: Final = 30
_CELL_WITH_TEXT: Final = 20
_GRID: Final = 460


def cocitation_frame(
    source: Source | pl.DataFrame, *, aliases: AliasSpec = None, lang: str | None = None
) -> pl.DataFrame:
    """Pairs of works cited in the same answer (schema ``COCITATION_SCHEMA``), most shared first.

    Columns: ``work_a`` and ``work_b`` (work ids, ``work_a < work_b``), ``name_a`` and
    ``name_b`` (their display names), ``answers`` (how many answers cite both), ``answers_a``
    and ``answers_b`` (how many answers cite each) and ``jaccard``
    (``answers / (answers_a + answers_b - answers)``: 1 when the two are always cited
    together). Sorted by ``answers``, then ``jaccard``, descending.

    Every source of an answer counts (citations, web sources and knowledge chunks); to count
    only what the answers cite, pass a filtered ``sources_frame``:
    ``cocitation_frame(src.filter(pl.col("kind") == "citation"))``.

    Parameters
    ----------
    source
        A ``sources_frame`` (or any frame with ``work_id``, and ``work`` for names), a frame
        to identify (a ``citations_frame``), or anything ``sources_frame`` accepts.
    aliases, lang
        As ``sources_frame`` takes them (used when the identity is computed here).

    Returns
    -------
    A frame with ``COCITATION_SCHEMA``; empty (and typed) when no answer cites two works.

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> answers = [
    ...     mg.ask("What is the principle of subsidiarity?"),
    ...     mg.ask("How does the Church define the common good?"),
    ...     mg.ask("What is a just wage according to Catholic teaching?"),
    ... ]
    >>> co = ck.cocitation_frame(answers)
    >>> top = co.row(0, named=True)
    >>> top["name_a"], top["name_b"]
    ('Catechism of the Catholic Church', 'Compendium of the Social Doctrine of the Church')
    >>> top["answers"], top["answers_a"], top["answers_b"], top["jaccard"]
    (3, 3, 3, 1.0)
    """
    if not isinstance(source, pl.DataFrame):
        from .corpus import sources_frame

        frame = sources_frame(source, aliases=aliases, lang=lang)
    elif "work_id" in source.columns:
        frame = source
    else:
        frame = identify(source, aliases=aliases, lang=lang)
    if "work" not in frame.columns:
        frame = frame.with_columns(work=pl.lit(None, pl.String))
    frame = frame.filter(pl.col("work_id").is_not_null()).with_columns(
        code=pl.col("work_id").cast(pl.String).cast(pl.Categorical).to_physical()
    )
    present: list[str | pl.Expr] = [c for c in _ANSWER if c in frame.columns]
    answer = present or [pl.lit(0).alias("_answer")]
    # (answer, work) once each, on integer codes: the self-join is on small integers.
    cited = (
        frame.group_by(answer)
        .agg(pl.col("code").unique())
        .with_row_index("answer")
        .select("answer", "code")
        .explode("code")
    )
    pair = pl.col("code").cast(pl.UInt64) * (1 << 32) + pl.col("code_b")
    pairs = (
        cited.join(cited, on="answer", suffix="_b")
        .filter(pl.col("code") < pl.col("code_b"))
        .group_by(pair=pair)
        .agg(answers=pl.len())
        .select(
            code=(pl.col("pair") // (1 << 32)).cast(pl.UInt32),
            code_b=(pl.col("pair") % (1 << 32)).cast(pl.UInt32),
            answers="answers",
        )
    )
    side = (
        frame.group_by("code")
        .agg(work_id=pl.col("work_id").first(), name=pl.col("work").drop_nulls().first())
        .join(cited.group_by("code").agg(total=pl.len()), on="code")
        .with_columns(pl.col("code").cast(pl.UInt32))
    )
    joined = pairs.join(side.rename(lambda c: f"{c}_a" if c != "code" else c), on="code").join(
        side.rename(lambda c: f"{c}_b"), on="code_b"
    )
    # The codes follow first appearance: put the smaller id first.
    swap = pl.col("work_id_a") > pl.col("work_id_b")

    def first(a: str, b: str) -> pl.Expr:
        return pl.when(swap).then(pl.col(b)).otherwise(pl.col(a))

    out = (
        joined.select(
            work_a=first("work_id_a", "work_id_b"),
            work_b=first("work_id_b", "work_id_a"),
            name_a=first("name_a", "name_b"),
            name_b=first("name_b", "name_a"),
            fallback_a=first("work_id_a", "work_id_b"),
            fallback_b=first("work_id_b", "work_id_a"),
            answers="answers",
            answers_a=first("total_a", "total_b"),
            answers_b=first("total_b", "total_a"),
        )
        .with_columns(
            name_a=pl.col("name_a").fill_null(pl.col("fallback_a")),
            name_b=pl.col("name_b").fill_null(pl.col("fallback_b")),
            jaccard=pl.col("answers")
            / (pl.col("answers_a") + pl.col("answers_b") - pl.col("answers")),
        )
        .sort(
            ["answers", "jaccard", "work_a", "work_b"],
            descending=[True, True, False, False],
        )
    )
    return out.cast(COCITATION_SCHEMA).select(COCITATION_SCHEMA.names())


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
        alt.Chart(cells)
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
        alt.Chart(diagonal)
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
            alt.Chart(cells)
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
            alt.Chart(diagonal)
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
