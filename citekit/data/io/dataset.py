"""Answers, citations, references and sources as a Parquet dataset, and lazy scans of it.

``to_parquet(source, folder)`` writes the four frames of a source (``answers_frame``,
``citations_frame``, ``references_frame``, ``sources_frame``) as one Parquet dataset, each
table in its own folder and partitioned the Hive way by provider and month::

    folder/
      answers/provider=magisterium/month=2026-11/part-0.parquet
      citations/provider=magisterium/month=2026-11/part-0.parquet
      references/provider=gptbots/month=2026-10/part-0.parquet
      sources/provider=gptbots/month=undated/part-0.parquet

The month is the answer's ``created`` time in UTC (``"2026-11"``); an answer without a time
(a streamed GPTBots answer, a hand-built one) and GPTBots knowledge chunks saved without their
answer go under ``month=undated``. The files hold the frames' columns less ``provider`` (the
folder names carry it, as Hive, DuckDB and Spark expect); polars writes them, no pyarrow.

``scan_citations(folder)`` (and ``scan_answers``, ``scan_references``, ``scan_sources``)
return a polars ``LazyFrame`` over a table: the eager frame's schema, in its column order, plus
``month`` (``String``, the partition) last, so ``.filter(pl.col("month") >= "2026-10")`` reads
only those months' files. ``scan.drop("month").collect()`` equals the eager frame up to row
order. Every ``ck.charts`` function takes such a LazyFrame and collects only its aggregated
rows, so ten million citations chart in bounded memory.

Other engines read the same folders: DuckDB with
``read_parquet('folder/citations/**/*.parquet', hive_partitioning = true)``, Spark with
``spark.read.parquet("folder/citations")``.

Examples
--------
>>> import polars as pl

>>> from citekit.testing import default_data_dir
>>> folder = "corpus"
>>> written = ck.to_parquet(default_data_dir(), folder)
>>> written.rows["citations"], written.rows["answers"]
(155, 42)
>>> cits = ck.scan_citations(folder)
>>> cits.group_by("provider").len().sort("provider").collect()
shape: (3, 2)
┌─────────────┬─────┐
│ provider    ┆ len │
│ ---         ┆ --- │
│ str         ┆ u32 │
╞═════════════╪═════╡
│ gptbots     ┆ 12  │
│ magisterium ┆ 130 │
│ maritaca    ┆ 13  │
└─────────────┴─────┘
>>> ck.charts.authors(cits, top=1).data["author"].to_list()
['Catholic Church']
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import quote

import polars as pl

from ...core.fields import utc_time
from ...core.names import REFERENCES_PROVIDER
from ...model import Answer, References
from ...render._sources import format_size
from ..frames.sources import Source, load_answers

if TYPE_CHECKING:
    from ...store.answer_log import Log

__all__ = [
    "TABLES",
    "UNDATED",
    "ParquetDataset",
    "scan_answers",
    "scan_citations",
    "scan_references",
    "scan_sources",
    "to_parquet",
]

Table = Literal["answers", "citations", "references", "sources"]
#: The tables of a dataset, one folder each.
TABLES: Final[tuple[Table, ...]] = ("answers", "citations", "references", "sources")
#: The month partition of rows whose answer has no time.
UNDATED: Final = "undated"
#: The partition columns: ``provider`` is also a column of every frame, ``month`` is added.
_PARTITIONS: Final = ("provider", "month")


@dataclass(frozen=True)
class ParquetDataset:
    """What ``to_parquet`` wrote: the folder, the rows per table, the files and their bytes.

    Examples
    --------
    >>> written = ck.to_parquet([ck.Magisterium().ask("What is the principle of subsidiarity?")],
    ...                         "one")
    >>> print(written)  # doctest: +ELLIPSIS
    Wrote 1 answer, 7 citations, 0 references, 7 sources in 3 Parquet files (... KB) to one
    """

    folder: Path
    rows: dict[str, int] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0

    def __str__(self) -> str:
        counts = ", ".join(
            f"{n:,} {name if n != 1 else name[:-1]}" for name, n in self.rows.items()
        )
        return (
            f"Wrote {counts} in {self.files:,} Parquet file{'s' if self.files != 1 else ''} "
            f"({format_size(self.bytes)}) to {self.folder}"
        )


def to_parquet(
    source: Source | Log,
    folder: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    progress: bool | None = None,
) -> ParquetDataset:
    """Write the answers, citations, references and sources of ``source`` as a Parquet
    dataset in ``folder``, partitioned by provider and month (see ``citekit.data.io.dataset``).

    The dataset is written into a new folder beside ``folder`` and moved into place once whole,
    so a failure midway leaves what was there before. Work and author identities
    (``sources_frame``) are computed over the whole source, as ``sources_frame(source)`` does.

    Parameters
    ----------
    source
        Anything the frame loaders accept (answers, saved responses, folders of them), or the
        answer log (``ck.log``, or a part of it: ``ck.log.where(...)``).
    folder
        Where to write; made if missing.
    overwrite
        Replace the dataset already in ``folder``. Without it, a folder that holds anything
        is refused.
    progress
        A progress bar over the answers (a widget in a notebook, text on a terminal);
        ``None`` shows it on a terminal or in a notebook, ``False`` never.

    Returns
    -------
    A ``ParquetDataset`` saying what was written (printing it gives the counts and size).

    Raises
    ------
    FileExistsError
        When ``folder`` holds files and ``overwrite`` is not set, or holds other files than a
        dataset (``overwrite`` replaces only a dataset, never other files).

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> answers = [mg.ask("What is the principle of subsidiarity?")]
    >>> ck.to_parquet(answers, "ds").rows
    {'answers': 1, 'citations': 7, 'references': 0, 'sources': 7}
    >>> ck.to_parquet(answers, "ds")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileExistsError: ds already holds a citekit dataset: pass overwrite=True to replace it ...
    >>> ck.to_parquet(answers, "ds", overwrite=True).files  # answers, citations, sources
    3
    """
    return _write(_items(source), Path(folder), overwrite=overwrite, progress=progress)


def _items(source: Source | Log) -> list[Answer | References]:
    """The answers (and bare references) of ``source``, read once: a generator can be read
    only once and four frames are made from it."""
    from ...store.answer_log import Log

    if isinstance(source, Log):
        # The one place that reads the log: its answers rebuilt from the saved JSON (frames
        # read straight from the SQLite tables can replace it, partition by partition).
        return list(source.answers())
    return load_answers(source)


def month_of(answer: Answer) -> str:
    """The month partition of an answer: its ``created`` time in UTC as ``"2026-11"``, else
    ``"undated"``."""
    created = utc_time(answer.created)
    if created is None:
        return UNDATED
    return f"{created.year:04d}-{created.month:02d}"


def _partitions(items: list[Answer | References]) -> dict[tuple[str, str], list[Any]]:
    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for item in items:
        if isinstance(item, Answer):
            groups[(item.provider or "unknown", month_of(item))].append(item)
        else:  # GPTBots knowledge chunks saved without their answer
            groups[(REFERENCES_PROVIDER, UNDATED)].append(item)
    return dict(sorted(groups.items()))


def _write(
    items: list[Answer | References], folder: Path, *, overwrite: bool, progress: bool | None
) -> ParquetDataset:
    from ...render.progress import make_progress
    from ..corpus.works import sources_frame
    from ..frames import answers_frame, citations_frame, references_frame

    _check_target(folder, overwrite=overwrite)
    staging = folder.parent / f".{folder.name}.writing-{uuid.uuid4().hex[:8]}"
    rows: dict[str, int] = dict.fromkeys(TABLES, 0)
    files = 0
    size = 0
    groups = _partitions(items)
    makers: dict[Table, Callable[[Any], pl.DataFrame]] = {
        "answers": answers_frame,
        "citations": citations_frame,
        "references": references_frame,
    }
    bar = make_progress(len(items), progress, description="Parquet")
    done = 0
    sources: list[pl.DataFrame] = []
    try:
        for (provider, month), group in groups.items():
            for table, make in makers.items():
                frame = make(group)
                rows[table] += frame.height
                if frame.height:
                    size += _write_part(frame, staging, table, provider, month)
                    files += 1
            # Identity is corpus-wide: the sources are identified again over every partition.
            sources.append(sources_frame(group).with_columns(month=pl.lit(month)))
            done += len(group)
            bar.update(done, 0)
        if sources:
            from ..identity.clusters import identify

            every = identify(pl.concat(sources, how="vertical_relaxed"))
            for (provider, month), part in every.group_by(_PARTITIONS, maintain_order=True):
                rows["sources"] += part.height
                size += _write_part(
                    part.drop("month"), staging, "sources", str(provider), str(month)
                )
                files += 1
        for table in TABLES:  # a table without rows is a folder without files: scans typed
            (staging / table).mkdir(parents=True, exist_ok=True)
        _replace(staging, folder)
    except BaseException:
        bar.close(done, 0, interrupted=True)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    bar.close(done, 0)
    return ParquetDataset(folder=folder, rows=rows, files=files, bytes=size)


def _write_part(frame: pl.DataFrame, root: Path, table: str, provider: str, month: str) -> int:
    # Hive folder names escape what a path cannot hold, as Hive and Spark do ("%2F").
    where = root / table / f"provider={quote(provider, safe='')}" / f"month={month}"
    where.mkdir(parents=True, exist_ok=True)
    path = where / "part-0.parquet"
    frame.drop("provider").write_parquet(path)
    return path.stat().st_size


def _check_target(folder: Path, *, overwrite: bool) -> None:
    if not folder.exists():
        return
    if not folder.is_dir():
        raise FileExistsError(f"{folder} is a file: choose a folder for the Parquet dataset")
    held = sorted(p.name for p in folder.iterdir())
    if not held:
        return
    other = [name for name in held if name not in TABLES]
    if other:
        raise FileExistsError(
            f"{folder} holds other files than a citekit dataset ({', '.join(other[:5])}"
            f"{', ...' if len(other) > 5 else ''}): choose a new or empty folder"
        )
    if not overwrite:
        raise FileExistsError(
            f"{folder} already holds a citekit dataset: pass overwrite=True to replace it "
            "(citekit log export --parquet --overwrite), or choose a new folder"
        )


def _replace(staging: Path, folder: Path) -> None:
    """Move the written dataset into ``folder``, the old one (checked to be only a dataset)
    out of the way first, then removed."""
    folder.mkdir(parents=True, exist_ok=True)
    old = folder.parent / f".{folder.name}.old-{uuid.uuid4().hex[:8]}"
    old.mkdir()
    for table in TABLES:
        if (folder / table).exists():
            (folder / table).rename(old / table)
    for table in TABLES:
        if (staging / table).exists():
            (staging / table).rename(folder / table)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)


# -- scans ------------------------------------------------------------------------------------


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
    hive = pl.Schema({"provider": pl.String(), "month": pl.String()})
    if not root.is_dir():
        raise FileNotFoundError(
            f"No {table} table in {folder}: write a dataset there with ck.to_parquet(source, "
            f"folder) or citekit log export {folder} --parquet"
        )
    if not any(_parquet_files(root)):  # a table with no rows: typed, empty
        return pl.LazyFrame(schema=pl.Schema({**schema, "month": pl.String()}))
    files = pl.Schema({k: v for k, v in schema.items() if k != "provider"})
    return pl.scan_parquet(
        root / "**" / "*.parquet",
        schema=files,
        hive_partitioning=True,
        hive_schema=hive,
    ).select(*schema.names(), "month")


def _parquet_files(root: Path) -> Iterator[Path]:
    return root.rglob("*.parquet")


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
