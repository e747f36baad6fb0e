"""Co-citation: which works the same answers cite together, as a frame.

``cocitation_frame`` counts, for every pair of works, the answers that cite both (an answer
citing a work five times counts once), with each work's own count of answers and the Jaccard
index of the two. It is a self-join of the (answer, work) pairs on integer codes, so 100k
answers of ten sources each take about a second. ``citekit.data.charts.cocitation`` draws the
most cited works of such a frame against each other.

>>> from citekit.testing import default_data_dir
>>> co = ck.cocitation_frame(default_data_dir() / "magisterium")
>>> co.columns
['work_a', 'work_b', 'name_a', 'name_b', 'answers', 'answers_a', 'answers_b', 'jaccard']
"""

from __future__ import annotations

from typing import Final

import polars as pl

from ..frames.sources import Source
from ..identity.aliases import AliasSpec
from ..identity.clusters import identify

__all__ = ["COCITATION_SCHEMA", "cocitation_frame"]

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
        from .works import sources_frame

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
