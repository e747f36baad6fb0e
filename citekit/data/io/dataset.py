"""Answers, citations, references and sources as a Parquet dataset, and lazy scans of it.

``to_parquet(source, folder)`` writes the four frames of a source (``answers_frame``,
``citations_frame``, ``references_frame``, ``sources_frame``) as one Parquet dataset, each
table in its own folder and partitioned the Hive way by provider and month::

    folder/
      answers/provider=magisterium/month=2026-11/part-<id>.parquet
      citations/provider=magisterium/month=2026-11/part-<id>.parquet
      references/provider=gptbots/month=2026-10/part-<id>.parquet
      sources/provider=gptbots/month=undated/part-<id>.parquet

The month is the answer's ``created`` time in UTC (``"2026-11"``); an answer without a time
(a streamed GPTBots answer, a hand-built one) and GPTBots knowledge chunks saved without their
answer go under ``month=undated``. The files hold the frames' columns less ``provider`` (the
folder names carry it, as Hive, DuckDB and Spark expect); polars writes them, no pyarrow.
``folder/citekit-dataset.json``, the manifest, names each file, its partition, rows and bytes,
and the citekit that wrote them: it is what makes the folder a dataset (see
``citekit.data.io.manifest``).

``scan_citations(folder)`` (and ``scan_answers``, ``scan_references``, ``scan_sources``)
return a polars ``LazyFrame`` over a table: the eager frame's schema, in its column order, plus
``month`` (``String``, the partition) last, so ``.filter(pl.col("month") >= "2026-10")`` reads
only those months' files. ``scan.drop("month").collect()`` equals the eager frame up to row
order. Every ``ck.charts`` function takes such a LazyFrame and collects only its aggregated
rows, so ten million citations chart in bounded memory. A scan reads exactly the files the
manifest names, the folder's path taken literally (``data[12]`` is no glob) and the partitions
read from below the dataset only (``runs/month=2026-01/corpus`` is a path, not a partition).

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

import contextlib
import os
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import polars as pl

from ...core.fields import utc_time
from ...core.files import replacing
from ...core.names import REFERENCES_PROVIDER
from ...model import Answer, References
from ...render._sources import format_size
from ..frames.sources import Source, load_answers
from .manifest import MANIFEST, Part, claim, part_path, read_manifest, remove_parts, write_manifest

if TYPE_CHECKING:
    from ...store.answer_log import Log
    from ...store.selection import LogSelection, Partition

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
    include_samples: bool = False,
) -> ParquetDataset:
    """Write the answers, citations, references and sources of ``source`` as a Parquet
    dataset in ``folder``, partitioned by provider and month (see ``citekit.data.io.dataset``).

    Every file is written under a name of this write's own, then ``citekit-dataset.json`` (the
    manifest: the dataset's files and what wrote them) is put in place in one step: a failure
    midway, a full disk among them, leaves what was there before. A folder is a dataset only
    with that manifest; ``overwrite`` then removes only the files it names, never another file
    in the folder. While one process writes a folder, another is refused. Work and author
    identities (``sources_frame``) are computed over the whole source, as
    ``sources_frame(source)`` does.

    Parameters
    ----------
    source
        Anything the frame loaders accept (answers, saved responses, folders of them), or the
        answer log (``ck.log``, or a part of it: ``ck.log.where(...)``), read from its tables
        partition by partition, never its answers whole (the same dataset as from
        ``ck.log.answers()``).
    folder
        Where to write; made if missing.
    overwrite
        Replace the dataset already in ``folder`` (the files its manifest names; files of
        yours beside them stay). Without it, a folder that holds anything is refused.
    progress
        A progress bar over the answers (a widget in a notebook, text on a terminal);
        ``None`` shows it on a terminal or in a notebook, ``False`` never.
    include_samples
        From the log: also write the recorded samples (the offline answers citekit ships),
        which are left out by default with a ``SamplesLeftOut`` warning saying how many (a
        ``ck.log.where(samples=...)`` source chooses for itself).

    Returns
    -------
    A ``ParquetDataset`` saying what was written (printing it gives the counts and size).

    Raises
    ------
    FileExistsError
        When ``folder`` holds files and ``overwrite`` is not set, holds files but no manifest
        (``overwrite`` replaces only a dataset citekit wrote), or is being written by another
        process.
    DiskFullError
        When the disk fills (``citekit.core.files``); the folder is as it was.

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
    from ..frames.log import log_selection

    selection = log_selection(source)
    if selection is not None:
        from .exports import live_selection

        selection = live_selection(selection, include_samples=include_samples)
    groups = _log_groups(selection) if selection is not None else _answer_groups(source)
    return _write(groups, Path(folder), overwrite=overwrite, progress=progress)


@dataclass(frozen=True)
class _Group:
    """One partition to write: its provider and month, how many answers, and its frames
    (made when it is written, so that one partition's rows are held at a time)."""

    provider: str
    month: str
    size: int
    frames: Callable[[], dict[Table, pl.DataFrame]]
    sources: Callable[[], pl.DataFrame]


def _tables(source: Source) -> dict[Table, pl.DataFrame]:
    """The answers, citations and references frames of one partition's source."""
    from ..frames import answers_frame, citations_frame, references_frame

    return {
        "answers": answers_frame(source),
        "citations": citations_frame(source),
        "references": references_frame(source),
    }


def _answer_groups(source: Source) -> list[_Group]:
    """The partitions of answers (and bare references), read once: a generator can be read
    only once and four frames are made from it."""
    from ..corpus.works import sources_frame

    return [
        _Group(provider, month, len(group), partial(_tables, group), partial(sources_frame, group))
        for (provider, month), group in _partitions(load_answers(source)).items()
    ]


#: How many row ids of the log one rebuild of answers (for the sources' spans) spans at most.
SOURCES_BATCH: Final = 2_000


def _log_groups(selection: LogSelection) -> list[_Group]:
    """The partitions of the selected log rows, read from the SQLite tables partition by
    partition: the answers, citations and references frames with SQL (as
    ``citations_frame(ck.log)``), the sources from the partition's answers rebuilt
    ``SOURCES_BATCH`` rows at a time; never the log's answers whole."""
    from ...store.query import partitions_sql

    sql, params = partitions_sql(selection)
    groups = []
    for provider, month, first, last, size in selection.log.fetch(sql, params):
        span = (provider, month, first, last)
        tables = partial(_tables, replace(selection, part=span))
        groups.append(_Group(provider, month, size, tables, partial(_sources, selection, span)))
    return groups


def _sources(selection: LogSelection, span: Partition) -> pl.DataFrame:
    """``sources_frame`` of one partition of the log, its answers rebuilt a batch at a time."""
    from ..corpus.works import sources_frame

    provider, month, first, last = span
    batches = pl.concat(
        [
            sources_frame(
                replace(selection, part=(provider, month, low, min(last, low + SOURCES_BATCH - 1)))
            )
            for low in range(first, last + 1, SOURCES_BATCH)
        ],
        how="vertical_relaxed",
    )
    # In the order of one sources_frame of the whole partition: the citations and web sources
    # of every batch, then the knowledge chunks.
    chunk = pl.col("kind") == "knowledge chunk"
    return pl.concat([batches.filter(~chunk), batches.filter(chunk)])


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
    groups: list[_Group], folder: Path, *, overwrite: bool, progress: bool | None
) -> ParquetDataset:
    if folder.is_symlink() and not folder.exists():
        raise FileNotFoundError(
            f"{folder} is a link to {os.readlink(folder)}, which does not exist: make that "
            "folder, or choose another"
        )
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(f"{folder} is a file: choose a folder for the Parquet dataset")
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with claim(folder):
            old = _check_target(folder, overwrite=overwrite)
            written = _write_parts(groups, folder, progress=progress)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if nothing else came to be in it
        raise
    if old:  # the new manifest is in place: the old dataset's own files go
        remove_parts(folder, old)
    return written


def _write_parts(groups: list[_Group], folder: Path, *, progress: bool | None) -> ParquetDataset:
    """Write every part under a name of this write's own, then the manifest that makes them
    the dataset; on any failure the parts written are removed and the old manifest stands."""
    from ...render.progress import make_progress

    token = uuid.uuid4().hex[:12]
    rows: dict[str, int] = dict.fromkeys(TABLES, 0)
    parts: list[Part] = []
    bar = make_progress(sum(g.size for g in groups), progress, description="Parquet")
    done = 0
    sources: list[pl.DataFrame] = []
    made = [table for table in TABLES if not (folder / table).exists()]
    try:
        for group in groups:
            provider, month = group.provider, group.month
            for table, frame in group.frames().items():
                rows[table] += frame.height
                if frame.height:
                    parts.append(_write_part(frame, folder, table, provider, month, token))
            # Identity is corpus-wide: the sources are identified again over every partition.
            sources.append(group.sources().with_columns(month=pl.lit(month)))
            done += group.size
            bar.update(done, 0)
        if sources:
            from ..identity.clusters import identify

            every = identify(pl.concat(sources, how="vertical_relaxed"))
            for (provider, month), part in every.group_by(_PARTITIONS, maintain_order=True):
                rows["sources"] += part.height
                parts.append(
                    _write_part(
                        part.drop("month"), folder, "sources", str(provider), str(month), token
                    )
                )
        for table in TABLES:  # a table without rows is a folder without files: scans typed
            (folder / table).mkdir(exist_ok=True)
        write_manifest(folder, parts, rows)
    except BaseException:
        bar.close(done, 0, interrupted=True)
        remove_parts(folder, parts)
        for table in made:
            with contextlib.suppress(OSError):
                (folder / table).rmdir()
        raise
    bar.close(done, 0)
    size = sum(part.bytes for part in parts)
    return ParquetDataset(folder=folder, rows=rows, files=len(parts), bytes=size)


def _write_part(
    frame: pl.DataFrame, root: Path, table: str, provider: str, month: str, token: str
) -> Part:
    where = part_path(table, provider, month, token)
    with replacing(root / where) as temporary:
        frame.drop("provider").write_parquet(temporary)
    size = (root / where).stat().st_size
    return Part(where, table, provider, month, rows=frame.height, bytes=size)


def _check_target(folder: Path, *, overwrite: bool) -> list[Part] | None:
    """The parts of the dataset ``folder`` holds, when it may be replaced; ``None`` when it is
    empty. Refused: a dataset without ``overwrite``, files without a manifest."""
    try:
        old = read_manifest(folder)
    except ValueError as exc:
        raise FileExistsError(str(exc)) from None
    if old is not None:
        if not overwrite:
            raise FileExistsError(
                f"{folder} already holds a citekit dataset: pass overwrite=True to replace it "
                "(citekit log export --parquet --overwrite), or choose a new folder"
            )
        return old
    held = sorted(p.name for p in folder.iterdir())
    if not held:
        return None
    what = (
        "a dataset without its manifest (written by an older citekit, or not whole)"
        if set(held) <= set(TABLES)
        else f"files that are not a citekit dataset ({', '.join(held[:5])}"
        f"{', ...' if len(held) > 5 else ''})"
    )
    raise FileExistsError(
        f"{folder} holds {what}, and no {MANIFEST}: citekit replaces only what it wrote. "
        "Choose a new or empty folder"
    )


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
