"""What each chart draws, as plain polars tables: the aggregation, apart from the encoding.

Every function here takes what its chart takes (a frame, a LazyFrame or a source), aggregates
it in polars (a LazyFrame with the streaming engine) and returns the small table the chart is
made of, with the words its title needs. Nothing here imports altair: ``citekit.data.charts``
draws these tables, and a table is as useful on its own (``top_authors(src).table``).

>>> from citekit.data.charts.tables import top_authors
>>> answer = ck.Magisterium().ask("What is the principle of subsidiarity?")
>>> tally = top_authors(ck.sources_frame(answer), top=2)
>>> tally.table.columns
['author', 'citations', 'works', 'answers', 'names', 'author_id']
>>> tally.subtitle == ck.charts.authors(answer, top=2).title.subtitle
True
"""

from __future__ import annotations

from typing import Final, NamedTuple

import polars as pl

from ..corpus.cocitation import cocited
from ..corpus.works import works_frame
from ..frames import Source
from .parts import (
    TOOLTIP_LIMIT,
    Frame,
    Period,
    answer_key,
    citations_of,
    collected,
    columns_of,
    counted,
    distinct_labels,
    identified,
    labelled,
    most_frequent,
    names_seen,
    period_label,
    period_of,
    plural,
    references_of,
    shortened,
    top_subtitle,
)

__all__ = [
    "MAX_ROWS",
    "MAX_WORKS",
    "UNKNOWN_AUTHOR",
    "UNKNOWN_SOURCE",
    "UNTITLED",
    "Cells",
    "Periods",
    "Scores",
    "Tally",
    "citation_counts",
    "cited_years",
    "cocitation_cells",
    "score_bins",
    "top_authors",
    "top_works",
]

#: Altair refuses data with more rows than this: ``top=`` is capped at it.
MAX_ROWS = 5000
#: The heatmap shows at most this many works (its cells stay under altair's 5000 rows).
MAX_WORKS: Final = 70

UNKNOWN_AUTHOR: Final = "unknown author"
UNTITLED: Final = "untitled document"
UNKNOWN_SOURCE: Final = "unknown source"

_NAME_LIMIT: Final = 40
_AUTHOR_IN_LABEL: Final = 22
_LISTED: Final = ("titles", "languages", "providers")
#: Heatmap axis labels are cut to this many characters (the tooltip has the whole name).
_LABEL_CHARS: Final = 32


class Tally(NamedTuple):
    """A chart's rows and the words of its title."""

    #: The rows drawn.
    table: pl.DataFrame
    subtitle: str
    #: What a bar counts: "citations", "sources" or "answers".
    what: str


class Periods(NamedTuple):
    """The years chart's rows: citations per period."""

    table: pl.DataFrame
    subtitle: str
    #: "year", "decade" or "century".
    period: str


class Scores(NamedTuple):
    """The scores chart's rows: chunks per knowledge source, score bin and threshold side."""

    table: pl.DataFrame
    subtitle: str
    #: The sources, in the order of their rows (most chunks first).
    order: list[str]
    #: The score axis, ``(low, high)``.
    domain: tuple[float, float]
    #: The names of the two sides of the threshold, above first.
    sides: tuple[str, str]


class Cells(NamedTuple):
    """The co-citation heatmap's rows: a cell per pair of works shown, and the diagonal."""

    cells: pl.DataFrame
    diagonal: pl.DataFrame
    #: The works' labels, most cited first.
    order: list[str]
    subtitle: str


# -- citations ---------------------------------------------------------------------------------


def top_authors(cits: Frame | Source, *, top: int = 15) -> Tally:
    """The rows of ``charts.authors``: per author (by identity), its citations, works,
    answers and the names it was cited under, most cited first, the first ``top``."""
    frame = identified(cits, "authors", ("document_author", "document_title", "source_url"))
    answer = answer_key(frame)
    per_author = collected(
        frame.group_by("author_id").agg(
            citations=pl.len(),
            works=pl.col("work_id").drop_nulls().n_unique(),
            answers=answer.n_unique(),
        )
    )
    table = (
        per_author.join(most_frequent(frame, "author_id", "author"), on="author_id",
                        how="left", nulls_equal=True)
        .join(names_seen(frame, "author_id", "document_author", "names"), on="author_id",
              how="left", nulls_equal=True)
        .with_columns(
            author=pl.when(pl.col("author_id").is_null())
            .then(pl.lit(UNKNOWN_AUTHOR))
            .otherwise(shortened(pl.coalesce("author", "author_id"), _NAME_LIMIT)),
            names=pl.col("names").fill_null("none given"),
        )
        .with_columns(author=distinct_labels("author", "author_id"))
        .sort(["citations", "author"], descending=[True, False])
        .select("author", "citations", "works", "answers", "names", "author_id")
    )  # fmt: skip
    shown = table.head(min(max(top, 0), MAX_ROWS))
    what = counted(frame)
    subtitle = f"{what} per author; {top_subtitle(shown.height, table.height, 'author')}"
    return Tally(shown, subtitle, what)


def top_works(cits: Frame | Source, *, top: int = 15) -> Tally:
    """The rows of ``charts.works``: per work (by identity, from ``works_frame``), its label
    "work — author (year)", citations, answers, titles, languages and providers, most cited
    first, the first ``top``; the sources of no work as one ``"untitled document"`` row."""
    frame = identified(cits, "works", ("document_title", "document_author", "source_url"))
    answer = answer_key(frame)
    untitled = collected(
        frame.filter(pl.col("work_id").is_null()).select(
            citations=pl.len(),
            answers=answer.n_unique(),
            providers=shortened(
                pl.col("provider").drop_nulls().unique().sort().str.join(", "), TOOLTIP_LIMIT
            ),
        )
    )
    found = works_frame(frame)
    table = found.select(
        "work_id",
        label=_work_label(),
        work="work",
        author=pl.col("author").fill_null(UNKNOWN_AUTHOR),
        year=pl.col("year").cast(pl.String).fill_null("unknown"),
        citations="citations",
        answers="answers",
        **{c: shortened(pl.col(c).list.join(", "), TOOLTIP_LIMIT) for c in _LISTED},
    )
    if untitled["citations"].item():
        table = pl.concat(
            [
                table,
                untitled.select(
                    work_id=pl.lit(None, pl.String),
                    label=pl.lit(UNTITLED),
                    work=pl.lit(UNTITLED),
                    author=pl.lit(UNKNOWN_AUTHOR),
                    year=pl.lit("unknown"),
                    citations="citations",
                    answers="answers",
                    titles=pl.lit(""),
                    languages=pl.lit(""),
                    providers="providers",
                ),
            ],
            how="vertical_relaxed",
        )
    table = (
        table.with_columns(
            label=distinct_labels("label", "work_id"),
            titles=pl.when(pl.col("titles") == "").then(pl.lit("none given")).otherwise("titles"),
            languages=pl.when(pl.col("languages") == "")
            .then(pl.lit("not known"))
            .otherwise("languages"),
        )
        .sort(["citations", "label"], descending=[True, False])
        .select("label", "citations", "answers", "work", "author", "year", "titles",
                "languages", "providers", "work_id")
    )  # fmt: skip
    shown = table.head(min(max(top, 0), MAX_ROWS))
    what = counted(frame)
    subtitle = f"{what} per work; {top_subtitle(shown.height, table.height, 'work')}"
    return Tally(shown, subtitle, what)


def _work_label() -> pl.Expr:
    """ "Laudato si' — Francis (2015)": the work, its author and year where known, each part
    cut short enough for an axis."""
    work = shortened(pl.col("work").fill_null(pl.col("work_id")), _NAME_LIMIT)
    by = pl.when(pl.col("author").is_not_null()).then(
        pl.lit(" \u2014 ") + shortened(pl.col("author"), _AUTHOR_IN_LABEL)
    )
    year = pl.when(pl.col("year").is_not_null()).then(
        pl.lit(" (") + pl.col("year").cast(pl.String) + pl.lit(")")
    )
    return pl.concat_str([work, by.fill_null(""), year.fill_null("")])


def cited_years(cits: Frame | Source, *, by: Period = "auto") -> Periods:
    """The rows of ``charts.years``: citations and works per period of the cited documents'
    ``year`` (``start``, ``end``, ``period`` label), earliest first; undated ones counted in
    the subtitle."""
    frame = identified(cits, "years", ("year", "document_title", "source_url"))
    dated = frame.filter(pl.col("year").is_not_null())
    undated, span = collected(
        frame.select(
            undated=pl.col("year").is_null().sum(),
            span=pl.col("year").max() - pl.col("year").min(),
        )
    ).row(0)
    period = period_of(int(span or 0), by)
    width = {"year": 1, "decade": 10, "century": 100}[period]
    table = (
        collected(
            dated.group_by(start=(pl.col("year").cast(pl.Int64) // width) * width).agg(
                citations=pl.len(), works=pl.col("work_id").drop_nulls().n_unique()
            )
        )
        .sort("start")
        .with_columns(end=pl.col("start") + width)
    )
    table = table.with_columns(
        period=pl.Series([period_label(s, period) for s in table["start"]], dtype=pl.String)
    )
    subtitle = f"citations per {period} of the cited document"
    if undated:
        subtitle += f"; {plural(undated, 'citation')} without a year not shown"
    return Periods(table, subtitle, period)


def citation_counts(cits: Frame | Source) -> Tally:
    """The rows of ``charts.citations_per_answer``: per provider and number of citations,
    how many answers carry that many (an ``answers_frame`` counts its answers without any)."""
    if isinstance(cits, Frame) and "n_citations" in columns_of(cits):
        per_answer = cits.lazy().select(
            provider=labelled("provider", "unknown provider")
            if "provider" in columns_of(cits)
            else pl.lit("unknown provider"),
            citations=pl.col("n_citations").fill_null(0).cast(pl.Int64),
        )
    else:
        frame = citations_of(cits, "citations_per_answer", ("provider", "answer_id"))
        # Labelled after the grouping: an expression inside first() keeps polars' streaming
        # engine from aggregating (it held ten million rows).
        per_answer = (
            frame.group_by(answer_key(frame).alias("answer"))
            .agg(pl.col("provider").first(), citations=pl.len().cast(pl.Int64))
            .with_columns(provider=labelled("provider", "unknown provider"))
        )
    table = collected(per_answer.group_by("provider", "citations").agg(answers=pl.len())).sort(
        "citations", "provider"
    )
    n_answers, median = collected(
        per_answer.select(n=pl.len(), median=pl.col("citations").median())
    ).row(0)
    subtitle = plural(n_answers, "answer")
    if median is not None:
        subtitle += f"; median {float(median):g} citations"
    return Tally(table, subtitle, "answers")


# -- references --------------------------------------------------------------------------------


def score_bins(
    refs: Frame | Source, *, threshold: float = 0.5, bins: int = 20, top: int = 20
) -> Scores:
    """The rows of ``charts.scores``: per knowledge source (the ``top`` with most chunks,
    the rest as ``"other sources"``), score bin and side of ``threshold``, the chunks and
    their mean score; unscored chunks counted in the subtitle."""
    frame = references_of(refs, "scores", ("score", "document_title"))
    has_score = pl.col("score").is_not_null() & pl.col("score").is_finite()
    scored = frame.filter(has_score)
    n_scored, unscored, lowest, highest, reaching = collected(
        frame.select(
            scored=has_score.sum(),
            unscored=(~has_score).sum(),
            lo=pl.col("score").filter(has_score).min(),
            hi=pl.col("score").filter(has_score).max(),
            reaching=(has_score & (pl.col("score") >= threshold)).sum(),
        )
    ).row(0)
    low = min(0.0, float(lowest)) if lowest is not None else 0.0
    high = max(1.0, float(highest)) if highest is not None else 1.0
    step = (high - low) / max(bins, 1)
    named = scored.with_columns(source=labelled("document_title", UNKNOWN_SOURCE))
    ranked = collected(
        named.group_by("source").agg(chunks=pl.len(), best=pl.col("score").max())
    ).sort(["chunks", "best", "source"], descending=[True, True, False])
    keep = ranked.head(min(max(top, 1), max(MAX_ROWS // max(bins, 1), 1)))["source"]
    if ranked.height > keep.len():
        named = named.with_columns(
            source=pl.when(pl.col("source").is_in(keep.implode()))
            .then("source")
            .otherwise(pl.lit("other sources"))
        )
    index = ((pl.col("score") - low) / step).floor().clip(0, max(bins, 1) - 1)
    above, below = f"at or above {threshold:g}", f"below {threshold:g}"
    side = pl.when(pl.col("score") >= threshold).then(pl.lit(above)).otherwise(pl.lit(below))
    table = (
        collected(
            named.group_by("source", bin=index.cast(pl.Int64), side=side).agg(
                chunks=pl.len(), mean_score=pl.col("score").mean()
            )
        )
        .with_columns(
            start=low + pl.col("bin") * step,
            end=low + (pl.col("bin") + 1) * step,
        )
        .with_columns(mid=(pl.col("start") + pl.col("end")) / 2)
        .sort("source", "bin", "side")
        .drop("bin")
    )
    subtitle = f"{reaching:,} of {plural(n_scored, 'scored chunk')} at or above {threshold:g}"
    if unscored:
        subtitle += f"; {unscored:,} without a score not shown"
    order = [s for s in ranked["source"].to_list() if s in set(keep.to_list())]
    if ranked.height > keep.len():
        order.append("other sources")
    return Scores(table, subtitle, order, (low, high), (above, below))


# -- co-citation -------------------------------------------------------------------------------


def cocitation_cells(co: pl.DataFrame | Source, *, top: int = 15) -> Cells | None:
    """The rows of ``charts.cocitation``: the ``top`` works cited by the most answers
    (at most ``MAX_WORKS``), a cell per pair of them cited together (both ways round) and the
    diagonal of each work's own answers; ``None`` when no answer cites two works. Given
    answers (not a ``cocitation_frame``), only the pairs of the works shown are built."""
    shown_works = min(max(top, 1), MAX_WORKS)
    if isinstance(co, pl.DataFrame) and "work_a" in co.columns:
        pairs = co.filter(pl.col("work_a") != pl.col("work_b"))
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
        n_works = works.height
    else:  # only the pairs of the works shown are built
        pairs, works, n_works, _ = cocited(co, top=shown_works)
    if n_works == 0:
        return None
    shown = works.head(shown_works).with_columns(
        label=shortened(pl.col("name").str.strip_chars(), _LABEL_CHARS)
    )
    shown = shown.with_columns(label=distinct_labels("label", "work"))
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
    shown_of = f"top {n} of {n_works} works" if n_works > n else plural(n, "work")
    subtitle = f"answers citing both works; grey diagonal: answers citing the work; {shown_of}"
    return Cells(cells, diagonal, shown["label"].to_list(), subtitle)
