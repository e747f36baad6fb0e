"""Answers, citations, references and sources written as a Parquet dataset (read lazily by
``citekit.data.io.scan``).

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
(158, 43)
>>> cits = ck.scan_citations(folder)
>>> cits.group_by("provider").len().sort("provider").collect()
shape: (3, 2)
┌─────────────┬─────┐
│ provider    ┆ len │
│ ---         ┆ --- │
│ str         ┆ u32 │
╞═════════════╪═════╡
│ gptbots     ┆ 12  │
│ magisterium ┆ 133 │
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
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
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
    from ...store.selection import LogSelection

__all__ = [
    "TABLES",
    "UNDATED",
    "ParquetDataset",
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
    """One partition to write: its provider and month, how many answers, and its four frames
    (made when it is written, so that one partition's rows are held at a time; the sources
    not yet identified: identity is computed over every partition)."""

    provider: str
    month: str
    size: int
    frames: Callable[[], Iterator[tuple[Table, pl.DataFrame]]]


def _tables(source: Source) -> Iterator[tuple[Table, pl.DataFrame]]:
    """The four frames of one partition's answers, one at a time."""
    from ..corpus.works import sources_frame
    from ..frames import answers_frame, citations_frame, references_frame

    yield "answers", answers_frame(source)
    yield "citations", citations_frame(source)
    yield "references", references_frame(source)
    yield "sources", sources_frame(source)


def _answer_groups(source: Source) -> list[_Group]:
    """The partitions of answers (and bare references), read once: a generator can be read
    only once and four frames are made from it."""
    return [
        _Group(provider, month, len(group), partial(_tables, group))
        for (provider, month), group in _partitions(load_answers(source)).items()
    ]


def _log_groups(selection: LogSelection) -> list[_Group]:
    """The partitions of the selected log rows, read from the SQLite tables partition by
    partition (never the log's answers whole, no answer rebuilt: ``log_tables``)."""
    from ...store.query import MONTH, partitions_sql, where_sql
    from ...store.read import warn_damaged
    from .log_tables import log_tables

    sql, params = partitions_sql(selection)
    groups = []
    damaged: list[Any] = []
    unreadable: list[Any] = []  # providers that are text, but not UTF-8 (read with U+FFFD)
    for provider, month, first, last, size in selection.log.fetch(sql, params, damaged=unreadable):
        if type(provider) is not str or type(month) is not str or provider in unreadable:
            # A provider or time that is no text or not UTF-8 (a damaged cell) names no
            # partition: its rows are left out and named by their ids, as the answers whose
            # JSON cannot be rebuilt.
            condition, values = where_sql(selection, errors=False)
            damaged.extend(
                row_id
                for row_id, p, m in selection.log.fetch(
                    f"SELECT id, provider, {MONTH} FROM answers WHERE ({condition}) "
                    "AND id BETWEEN ? AND ?",
                    [*values, first, last],
                    damaged=[],  # the damage is named here, by the rows' ids
                )
                if (p, m) == (provider, month)
            )
            continue
        span = (provider, month, first, last)
        groups.append(_Group(provider, month, size, partial(log_tables, selection, span)))
    warn_damaged(
        damaged, "a row whose provider or time is not text (or not UTF-8) is left out", stacklevel=4
    )
    return groups


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
    writes = _Writes(parts)
    try:
        for group in groups:
            provider, month = group.provider, group.month
            # One table of the partition at a time: each is let go once written (while the
            # next is read). Identity is corpus-wide: the sources are identified over every
            # partition, then written.
            for table, frame in group.frames():
                if table == "sources":
                    sources.append(frame.with_columns(month=pl.lit(month)))
                    continue
                rows[table] += frame.height
                if frame.height:
                    writes.submit(
                        partial(_write_part, frame, folder, table, provider, month, token)
                    )
                del frame
            done += group.size
            bar.update(done, 0)
        writes.wait()  # identity's work and the last table's write are not held at once
        for (provider, month), part in _identified(sources):
            rows["sources"] += part.height
            writes.submit(partial(_write_part, part, folder, "sources", provider, month, token))
        writes.wait()
        for table in TABLES:  # a table without rows is a folder without files: scans typed
            (folder / table).mkdir(exist_ok=True)
        write_manifest(folder, parts, rows)
    except BaseException:
        writes.abandon()  # the write in flight ends first: its file is removed with the rest
        bar.close(done, 0, interrupted=True)
        remove_parts(folder, parts)
        for table in made:
            with contextlib.suppress(OSError):
                (folder / table).rmdir()
        raise
    finally:
        writes.close()
    bar.close(done, 0)
    size = sum(part.bytes for part in parts)
    return ParquetDataset(folder=folder, rows=rows, files=len(parts), bytes=size)


class _Writes:
    """Parts written on a thread of their own, one at a time, while the caller reads the next
    frame: the Parquet writer (compression, in polars, without the interpreter) and SQLite's
    reads take turns no more. One write waits at most, so one frame more is held at most."""

    def __init__(self, parts: list[Part]) -> None:
        self._parts = parts
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[Part] | None = None

    def submit(self, write: Callable[[], Part]) -> None:
        """Start ``write`` once the write before it has ended (its part kept, or its error
        raised here)."""
        self.wait()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="citekit-parquet")
        self._pending = self._pool.submit(write)

    def wait(self) -> None:
        """Wait for the write in flight, keep its part; raise its error."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._parts.append(pending.result())

    def abandon(self) -> None:
        """After a failure: let the write in flight end, its part kept (to be removed), its
        error dropped (the failure being raised says what went wrong first)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            with contextlib.suppress(BaseException):
                self._parts.append(pending.result())

    def close(self) -> None:
        """Let the thread go (no write is in flight any more)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


def _identified(sources: list[pl.DataFrame]) -> Iterator[tuple[tuple[str, str], pl.DataFrame]]:
    """The sources of every partition (each frame with its ``month``, kept: ``_write_part``
    leaves it out) with their work and author identity computed over all of them, by
    partition (provider and month), in order.

    Identity is read off the identity keys alone (``identify`` of those columns: what it
    reads), and its four columns put beside each partition's rows: the rows themselves are
    not copied (a million sources are not held twice)."""
    from ..identity.clusters import _KEYS, IDENTITY_COLUMNS, identify

    if not sources:
        return
    every = pl.concat(sources, how="vertical_relaxed")
    identity = identify(every.select(_KEYS)).select(IDENTITY_COLUMNS)
    every = every.drop(IDENTITY_COLUMNS).hstack(identity)
    keys = [frame.select(_PARTITIONS).unique().rows() for frame in sources]
    if all(len(k) == 1 for k in keys) and len({k[0] for k in keys}) == len(keys):
        start = 0  # one partition per frame (as written): slices of the rows, not copies
        for (key,), frame in zip(keys, sources, strict=True):
            part = every.slice(start, frame.height)
            start += frame.height
            yield (str(key[0]), str(key[1])), part
        return
    for (provider, month), part in every.group_by(_PARTITIONS, maintain_order=True):
        yield (str(provider), str(month)), part


#: The dataset's compression: zstd at its fastest level writes a log's tables in a fifth to a
#: third less time than polars' default level, in files about a tenth larger.
_ZSTD_LEVEL: Final = 1


def _write_part(
    frame: pl.DataFrame, root: Path, table: str, provider: str, month: str, token: str
) -> Part:
    where = part_path(table, provider, month, token)
    with replacing(root / where) as temporary:
        # Sunk a slice at a time: the eager writer (and an eager drop) would first copy a frame
        # whose columns are cut in different places (a partition's sources) into one piece.
        frame.lazy().drop(*_PARTITIONS, strict=False).sink_parquet(
            temporary, compression="zstd", compression_level=_ZSTD_LEVEL
        )
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
