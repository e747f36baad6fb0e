"""Lazy scans of a Parquet dataset that ``to_parquet`` wrote (``citekit.data.io.dataset``).

``scan_citations(folder)`` (and ``scan_answers``, ``scan_references``, ``scan_sources``)
return a polars ``LazyFrame`` over a table: the eager frame's schema, in its column order, plus
``month`` (``String``, the partition) last. A scan reads exactly the files the manifest names,
the folder's path taken literally and the partitions read from below the dataset only.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from .dataset import UNDATED, Table
from .manifest import Part, read_manifest

__all__ = ["scan_answers", "scan_citations", "scan_references", "scan_sources"]


def _schema(table: Table) -> pl.Schema:
    from ..corpus.works import SOURCES_SCHEMA
    from ..frames import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA

    return {
        "answers": ANSWERS_SCHEMA,
        "citations": CITATIONS_SCHEMA,
        "references": REFERENCES_SCHEMA,
        "sources": SOURCES_SCHEMA,
    }[table]


def _scan(folder: str | os.PathLike[str], table: Table) -> pl.LazyFrame:
    root = Path(folder) / table
    schema = _schema(table)
    if not root.is_dir():
        raise FileNotFoundError(
            f"No {table} table in {folder}: write a dataset there with ck.to_parquet(source, "
            f"folder) or citekit log export {folder} --parquet"
        )
    parts = _parts(Path(folder), table)
    if not parts:  # a table with no rows: typed, empty
        return pl.LazyFrame(schema=pl.Schema({**schema, "month": pl.String()}))
    files = pl.Schema({k: v for k, v in schema.items() if k != "provider"})
    if _only(root, parts):
        # The folder holds the dataset's files and nothing else: polars reads the partitions
        # from below it (never from folders above it), the path taken literally, and a filter
        # on provider or month skips the other folders' files.
        hive = pl.Schema({"provider": pl.String(), "month": pl.String()})
        lazy = pl.scan_parquet(
            root, schema=files, hive_partitioning=True, hive_schema=hive, glob=False
        )
    else:  # files of the user's (or of a write under way) beside them: the dataset's own
        lazy = pl.concat(
            pl.scan_parquet(Path(folder) / p.path, schema=files, glob=False).with_columns(
                provider=pl.lit(p.provider, pl.String()), month=pl.lit(p.month, pl.String())
            )
            for p in parts
        )
    return lazy.select(*schema.names(), "month")


def _parts(folder: Path, table: Table) -> list[Part]:
    """The files of ``table``: the ones the manifest names, or, in a dataset written before
    manifests, every ``.parquet`` file below the table with its partition folders' values."""
    from urllib.parse import unquote

    named = read_manifest(folder)
    if named is not None:
        return [part for part in named if part.table == table]
    found = []
    for path in sorted((folder / table).rglob("*.parquet")):
        keys = dict(
            name.split("=", 1) for name in path.relative_to(folder / table).parts if "=" in name
        )
        provider, month = unquote(keys.get("provider", "")), keys.get("month", UNDATED)
        found.append(Part(path.relative_to(folder).as_posix(), table, provider, month, 0, 0))
    return found


def _only(root: Path, parts: list[Part]) -> bool:
    """Whether ``root`` holds exactly the files of ``parts``, in partition folders."""
    expected = {part.path for part in parts}
    base = root.parent
    held = set()
    for where, _, names in os.walk(root):
        for name in names:
            held.add((Path(where) / name).relative_to(base).as_posix())
    return held == expected and all(p.path.count("=") == 2 for p in parts)


def scan_answers(folder: str | os.PathLike[str]) -> pl.LazyFrame:
    """A LazyFrame over the answers of a dataset: ``ANSWERS_SCHEMA`` and ``month``.

    Examples
    --------
    >>> import polars as pl
    >>> _ = ck.to_parquet([ck.Maritaca().ask("O que é o Pix?")], "pix")
    >>> ck.scan_answers("pix").select("provider", "n_citations", "month").collect().row(0)
    ('maritaca', 0, '2025-01')
    """
    return _scan(folder, "answers")


def scan_citations(folder: str | os.PathLike[str]) -> pl.LazyFrame:
    """A LazyFrame over the citations of a dataset written by ``to_parquet``.

    Columns: ``CITATIONS_SCHEMA`` (``citations_frame``'s), in its order, then ``month`` (the
    partition: ``"2026-11"``, or ``"undated"``). Filters on ``provider`` and ``month`` read
    only the matching folders.

    Raises
    ------
    FileNotFoundError
        When ``folder`` holds no ``citations`` table.

    Examples
    --------
    >>> import polars as pl
    >>> from citekit.testing import default_data_dir
    >>> _ = ck.to_parquet(default_data_dir() / "magisterium", "mg")
    >>> lazy = ck.scan_citations("mg")
    >>> lazy.filter(pl.col("year") < 1000).select(pl.len()).collect().item()
    3
    >>> eager = ck.citations_frame(default_data_dir() / "magisterium")
    >>> lazy.drop("month").collect().sort(eager.columns).equals(eager.sort(eager.columns))
    True
    """
    return _scan(folder, "citations")


def scan_references(folder: str | os.PathLike[str]) -> pl.LazyFrame:
    """A LazyFrame over the knowledge chunks of a dataset: ``REFERENCES_SCHEMA`` and
    ``month``.

    Examples
    --------
    >>> _ = ck.to_parquet([ck.GPTBots().ask("Why was the Great Wall built?")], "gb")
    >>> ck.charts.scores(ck.scan_references("gb")).title.subtitle
    '6 of 8 scored chunks at or above 0.5'
    """
    return _scan(folder, "references")


def scan_sources(folder: str | os.PathLike[str]) -> pl.LazyFrame:
    """A LazyFrame over the sources of a dataset (``SOURCES_SCHEMA`` and ``month``), with the
    work and author identity computed when the dataset was written.

    Examples
    --------
    >>> import polars as pl
    >>> from citekit.testing import default_data_dir
    >>> _ = ck.to_parquet(default_data_dir(), "all")
    >>> src = ck.scan_sources("all")
    >>> src.filter(pl.col("author_id") == "francis").select(pl.len()).collect().item() > 0
    True
    """
    return _scan(folder, "sources")
