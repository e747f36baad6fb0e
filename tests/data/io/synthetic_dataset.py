"""A citations table of any size written straight into a Parquet dataset, chunk by chunk.

The rows have ``citations_frame``'s schema and the layout ``ck.to_parquet`` writes
(``folder/citations/provider=.../month=.../part-N.parquet``), so ``ck.scan_citations`` reads
them; no chunk is bigger than ``chunk`` rows, so ten million citations are written in a few
hundred MB. Ten citations per answer, of ``documents`` works by ``documents // 10`` authors
over eight centuries, across three providers and four months (one of them ``undated``).

Run: ``python tests/data/io/synthetic_dataset.py FOLDER N`` (used by
tests/data/io/test_dataset.py and bench/dataset.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from citekit.data.frames import CITATIONS_SCHEMA

PROVIDERS = ("magisterium", "maritaca", "gptbots")
MONTHS = ("2026-09", "2026-10", "2026-11", "undated")
PER_ANSWER = 10


def chunk(start: int, n: int, *, documents: int = 3000) -> pl.DataFrame:
    """Rows ``start`` to ``start + n`` of the table, with ``month``."""
    rows = pl.LazyFrame({"i": pl.int_range(start, start + n, dtype=pl.Int64, eager=True)})
    answer = pl.col("i") // PER_ANSWER
    doc = (pl.col("i") * 2654435761 % 1000003) % documents
    return (
        rows.with_columns(a=answer, doc=doc)
        .with_columns(
            provider=pl.lit(pl.Series(PROVIDERS)).get(pl.col("a") % len(PROVIDERS)),
            month=pl.lit(pl.Series(MONTHS)).get((pl.col("a") // len(PROVIDERS)) % len(MONTHS)),
            answer_id=pl.format("a{}", "a"),
            question=pl.format("What does work {} say about question {}?", pl.col("a") % 5000, "a"),
            model=pl.lit("magisterium-1"),
            marker=(pl.col("i") % PER_ANSWER + 1).cast(pl.Int32),
            document_index=(pl.col("i") % PER_ANSWER).cast(pl.Int32),
            cited_text=pl.format("Passage {} of work {}, as the answer quotes it.",
                                 pl.col("i") % 997, "doc"),
            cited_text_heading=pl.lit(None, pl.String),
            document_title=pl.format("Work {}", "doc"),
            document_author=pl.format("Author {}", pl.col("doc") % (documents // 10)),
            document_year=(1200 + pl.col("doc") % 800).cast(pl.String),
            year=(1200 + pl.col("doc") % 800).cast(pl.Int32),
            document_reference=pl.format("n. {}", pl.col("i") % 300),
            source_url=pl.format("https://example.org/works/{}#p{}", "doc", pl.col("i") % 50),
            cited_inline=pl.col("i") % 7 != 0,
        )
        .select(*CITATIONS_SCHEMA.names(), "month")
        .collect()
    )  # fmt: skip


def write(folder: str | Path, total: int, *, chunk_rows: int = 500_000) -> None:
    """``total`` citations into ``folder/citations``, ``chunk_rows`` at a time."""
    root = Path(folder) / "citations"
    for k, start in enumerate(range(0, total, chunk_rows)):
        rows = chunk(start, min(chunk_rows, total - start))
        for (provider, month), part in rows.group_by("provider", "month"):
            where = root / f"provider={provider}" / f"month={month}"
            where.mkdir(parents=True, exist_ok=True)
            part.drop("provider", "month").write_parquet(where / f"part-{k:05d}.parquet")


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]))
