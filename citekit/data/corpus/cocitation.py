"""Co-citation: which works the same answers cite together, as a frame.

``cocitation_frame`` counts, for every pair of works, the answers that cite both (an answer
citing a work five times counts once), with each work's own count of answers and the Jaccard
index of the two. Works are integer codes (their rank among the ids) and each answer's works
are paired only with the works after them, so the work is the pairs themselves: 100k answers
of ten sources each take about a second. ``citekit.data.charts.cocitation`` draws the
most cited works of such a frame against each other.

>>> from citekit.testing import default_data_dir
>>> co = ck.cocitation_frame(default_data_dir() / "magisterium")
>>> co.columns
['work_a', 'work_b', 'name_a', 'name_b', 'answers', 'answers_a', 'answers_b', 'jaccard']
"""

from __future__ import annotations

from typing import Final, NamedTuple

import polars as pl

from ..frames.sources import Source
from ..identity.aliases import AliasSpec
from ..identity.clusters import identify

__all__ = ["COCITATION_SCHEMA", "MAX_PAIRS", "Cocited", "cocitation_frame", "cocited"]

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
#: The most pairs ``cocitation_frame`` builds unless told otherwise (``max_pairs=``): a frame
#: of ten million pairs takes about a gigabyte.
MAX_PAIRS: Final = 10_000_000


def cocitation_frame(
    source: Source | pl.DataFrame,
    *,
    top: int | None = None,
    max_pairs: int | None = MAX_PAIRS,
    aliases: AliasSpec = None,
    lang: str | None = None,
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

    An answer citing ``k`` works makes ``k * (k - 1) / 2`` pairs: one answer citing 5,000
    works makes 12.5 million, whatever else is read. Past ``max_pairs`` pairs to build, the
    frame is refused (a ``ValueError`` giving the count) rather than built; ``top=`` pairs
    only the most cited works, as the heatmap does, and keeps the pairs few.

    Parameters
    ----------
    source
        A ``sources_frame`` (or any frame with ``work_id``, and ``work`` for names), a frame
        to identify (a ``citations_frame``), or anything ``sources_frame`` accepts.
    top
        Pair only the ``top`` works cited by the most answers (ties: by name, then id) among
        those cited with another work; the pairs are those of the whole frame between these
        works, with the same counts.
    max_pairs
        The most pairs to build, counted answer by answer before any is built
        (``None``: no limit).
    aliases, lang
        As ``sources_frame`` takes them (used when the identity is computed here).

    Returns
    -------
    A frame with ``COCITATION_SCHEMA``; empty (and typed) when no answer cites two works.

    Raises
    ------
    ValueError
        When the answers make more than ``max_pairs`` pairs.

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
    return cocited(source, top=top, max_pairs=max_pairs, aliases=aliases, lang=lang).frame


class Cocited(NamedTuple):
    """A ``cocitation_frame``, the works it pairs and how much was built for it."""

    frame: pl.DataFrame
    #: The works cited with another (``work``, ``name``, ``total`` answers citing it), most
    #: cited first (ties: by name, then id); with ``top=``, the first ``top``.
    works: pl.DataFrame
    #: How many works are cited with another (also those ``top=`` leaves out).
    n_works: int
    #: How many pairs were built: one per answer and pair of its works.
    built: int


def cocited(
    source: Source | pl.DataFrame,
    *,
    top: int | None = None,
    max_pairs: int | None = MAX_PAIRS,
    aliases: AliasSpec = None,
    lang: str | None = None,
) -> Cocited:
    """``cocitation_frame`` (its arguments) with the works it pairs: the frame of
    ``cocitation_frame``, the top works (all of them without ``top=``) and how many pairs of
    works were built (the work done, which ``max_pairs`` bounds)."""
    if not isinstance(source, pl.DataFrame):
        from .works import sources_frame

        frame = sources_frame(source, aliases=aliases, lang=lang)
    elif "work_id" in source.columns:
        frame = source
    else:
        frame = identify(source, aliases=aliases, lang=lang)
    if "work" not in frame.columns:
        frame = frame.with_columns(work=pl.lit(None, pl.String))
    frame = frame.filter(pl.col("work_id").is_not_null())
    # A work is its rank among the sorted ids: pairs are built and sorted on integers, and
    # the smaller code is the smaller id.
    works = (
        frame.group_by("work_id")
        .agg(name=pl.col("work").drop_nulls().first())
        .sort("work_id")
        .with_columns(name=pl.col("name").fill_null(pl.col("work_id").cast(pl.String)))
    )
    present: list[str | pl.Expr] = [c for c in _ANSWER if c in frame.columns]
    answer = present or [pl.lit(0).alias("_answer")]
    # (answer, work) once each.
    cited = (
        frame.select(*answer, "work_id")
        .join(works.select("work_id").with_row_index("code"), on="work_id")
        .group_by(answer)
        .agg(pl.col("code").unique())
        .with_row_index("answer")
        .select("answer", "code")
        .explode("code")
        .drop_nulls()
    )
    total = cited.group_by("code").agg(total=pl.len().cast(pl.UInt32))
    works = (
        works.with_row_index("code")
        .join(total, on="code", how="left")
        .with_columns(pl.col("total").fill_null(0))
    )
    # Works cited with another: in an answer citing two or more.
    paired = cited.filter(pl.len().over("answer") > 1)
    eligible = paired.select(pl.col("code").unique())
    ranked = (
        works.join(eligible, on="code")
        .sort(["total", "name", "work_id"], descending=[True, False, False])
        .select("code", work="work_id", name="name", total="total")
    )
    n_works = ranked.height
    if top is not None and n_works > max(top, 0):
        ranked = ranked.head(max(top, 0))
        paired = paired.join(ranked.select("code"), on="code")
    pairs = _pairs(paired.sort("answer", "code"), max_pairs)
    built = pairs.select(pl.col("answers").cast(pl.UInt64).sum()).item() or 0
    side = works.select("work_id", "name", "total")
    totals = side["total"]
    # Ordered on integers first: the names are taken in that order, once.
    ordered = (
        pairs.with_columns(
            answers_a=totals.gather(pairs["code_a"]), answers_b=totals.gather(pairs["code_b"])
        )
        .with_columns(
            jaccard=pl.col("answers")
            / (pl.col("answers_a") + pl.col("answers_b") - pl.col("answers"))
        )
        # By the pair alone, then stably by the counts: one multi-column sort whose first
        # keys tie (one answer: every pair cited once) takes eight times as long.
        .sort("pair")
        .sort(["answers", "jaccard"], descending=True, maintain_order=True)
    )
    a, b = ordered["code_a"], ordered["code_b"]
    out = ordered.with_columns(
        work_a=side["work_id"].gather(a),
        work_b=side["work_id"].gather(b),
        name_a=side["name"].gather(a),
        name_b=side["name"].gather(b),
    )
    frame_out = out.select(COCITATION_SCHEMA.names()).cast(COCITATION_SCHEMA)
    return Cocited(frame_out, ranked.drop("code"), n_works, int(built))


def _pairs(cited: pl.DataFrame, max_pairs: int | None) -> pl.DataFrame:
    """The pairs of works of ``cited`` (``answer``, ``code``, sorted so) and how many answers
    cite each pair: columns ``pair`` (one integer, in the order of the codes), ``code_a <
    code_b`` and ``answers``.

    Each work is paired only with the works after it in its answer, so an answer of ``k``
    works makes ``k * (k - 1) / 2`` rows, never ``k * k``."""
    rows = cited.with_row_index("p").with_columns(end=pl.col("p").max().over("answer") + 1)
    built = int(rows.select((pl.col("end") - pl.col("p") - 1).cast(pl.UInt64).sum()).item())
    if max_pairs is not None and built > max_pairs:
        raise ValueError(
            f"cocitation_frame(): the answers make {built:,} pairs of works cited together, "
            f"more than max_pairs={max_pairs:,} (one answer citing k works makes "
            f"k * (k - 1) / 2); pass top= to pair only the most cited works, or a larger "
            f"max_pairs= (None: no limit) to build them all"
        )
    codes = rows["code"].cast(pl.UInt64)
    index = (
        rows.select(p="p", q=pl.int_ranges(pl.col("p") + 1, "end", dtype=pl.UInt32))
        .explode("q")
        .drop_nulls()
    )
    # One integer per pair, in (code_a, code_b) order: the grouping and the sort take one key.
    key = codes.gather(index["p"]) * (1 << 32) + codes.gather(index["q"])
    counted = pl.DataFrame({"pair": key}).group_by("pair").agg(answers=pl.len().cast(pl.UInt32))
    return counted.select(
        "pair",
        code_a=(pl.col("pair") // (1 << 32)).cast(pl.UInt32),
        code_b=(pl.col("pair") % (1 << 32)).cast(pl.UInt32),
        answers="answers",
    )
