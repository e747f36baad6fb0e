"""The local log of every answer: one SQLite file shared by notebooks, scripts and processes.

Each call to a provider becomes one row of ``answers`` (request body without secrets, the
response JSON, timings, the error if any) with its ``citations`` and ``knowledge_references``
rows, whose columns have the names of every table of sources (``citekit.core.columns``).
The file lives at ``$CITEKIT_HOME/log.sqlite3``, or in the user's data directory
(``~/.local/share/citekit`` on Linux, ``~/Library/Application Support/citekit`` on macOS,
``%LOCALAPPDATA%\\citekit`` on Windows). ``CITEKIT_LOG=0`` turns recording off.

The file is opened in WAL mode with a busy timeout and every answer is written in one
``BEGIN IMMEDIATE`` transaction (the rows waiting for the writer thread, many to one), so
several processes can write at once and a process killed mid-write leaves a file that still
opens. ``synchronous = NORMAL``: a committed answer survives its process being killed; a power
cut may undo the last commits (WAL's trade, which a log of paid answers takes for speed).
Large JSON is stored compressed, and what the tables hold (citations, knowledge chunks, the
text) is left out of it and put back on read (``rows``); ``Log.vacuum`` gives back the space
of deleted rows. A log held busy by another program delays the record,
never the answer: a row the file cannot take at once (and every row recorded on a thread
running an event loop, where SQLite never runs) is written in order by a background thread
(``writer``); ``log.flush()`` waits for it, and the log's reads do. A log file deleted or
replaced while a session runs is noticed at the next record (one ``stat``): a new log is
started at the path, with a ``LogWarning``. A file laid out by an older citekit is migrated in
place, in one transaction, when first opened; one laid out by a newer citekit is opened
read-only and never written, not even switched to WAL (a ``LogWarning`` per refused record).
With caching on (``cache=True`` per call, ``with log.options(cache=True)``, or
``CITEKIT_CACHE=1``) a request identical to a logged one (same provider, base URL and body) is
answered from the log, with ``Answer.cached == True``.

``Log`` is the front; the package's other modules hold the parts: ``schema`` (file, tables,
connections), ``rows`` (answers to rows and back), ``keys`` (the cache key and what is never
written) and ``call`` (one call as the log sees it, and the in-memory cache).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sqlite3
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import CitekitError, CitekitWarning, StreamInterrupted
from ..core.secrets import environment_keys, scrub_value
from ..model import Answer
from .call import MEMO_SIZE as MEMO_SIZE
from .call import LoggedCall, Memo
from .keys import KEY_ENVS as KEY_ENVS
from .keys import canonical_json as canonical_json
from .keys import request_key
from .rows import (
    ANSWER_COLUMNS,
    LOG_COLUMNS,
    answer_from_row,
    answer_row,
    insert,
    insert_many,
    log_frame,
    log_row,
    select_sql,
    text_only_answer,
    timestamp,
)
from .rows import LOG_SCHEMA as LOG_SCHEMA
from .schema import (
    BUSY_WAIT,
    CACHE_ENV,
    LOG_ENV,
    Connections,
    NewerLog,
    env_flag,
    is_busy,
    write_transaction,
)
from .schema import FILE_NAME as FILE_NAME
from .schema import HOME_ENV as HOME_ENV
from .schema import SCHEMA_VERSION as SCHEMA_VERSION
from .schema import default_path as default_path
from .selection import LogSelection
from .writer import Pending, Row

if TYPE_CHECKING:
    import polars as pl

    from ..data.dataset import ParquetDataset

__all__ = ["Log", "LogWarning", "LoggedCall", "default_path", "log"]

_logger = logging.getLogger(__name__)
_log_var: ContextVar[bool | None] = ContextVar("citekit_log", default=None)
_cache_var: ContextVar[bool | None] = ContextVar("citekit_cache", default=None)


#: Seconds a record waits for another writer's lock before handing its row to the writer
#: thread (which waits as long as it takes).
RECORD_WAIT = 0.1


class LogWarning(CitekitWarning):
    """The answer log could not be written or read; the answer itself is unaffected."""


def _on_event_loop() -> bool:
    """Whether this thread runs an asyncio event loop (SQLite must not block it)."""
    aio = sys.modules.get("asyncio")
    if aio is None:
        return False
    try:
        aio.get_running_loop()
    except RuntimeError:
        return False
    return True


class Log:
    """The answer log (``citekit.log``): record, look up, and read back answers.

    Parameters
    ----------
    path
        The SQLite file; by default ``default_path()``, resolved at each use so that a change
        of ``CITEKIT_HOME`` takes effect at once.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self._path = Path(path).expanduser() if path is not None else None
        self._connections = Connections()
        # Answers are immutable and a logged row never changes: the newest answer per request
        # key is kept in memory (written through on record, filled on lookup).
        self._memo = Memo()
        self._pending = Pending(self._write_later)
        self._exit_hook = False

    def forget(self) -> None:
        """Empty the in-memory cache (the file keeps everything)."""
        self._memo.clear()

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else default_path()

    def __repr__(self) -> str:
        try:
            where = str(self.path)
        except CitekitError as exc:  # CITEKIT_HOME names a file: repr never raises
            where = f"<{exc}>"
        return f"Log({where!r}, enabled={self.enabled})"

    # switches ----------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether answers are recorded here (``CITEKIT_LOG``, then ``options(log=)``)."""
        flag = _log_var.get()
        return env_flag(LOG_ENV, True) if flag is None else flag

    def cache_enabled(self, cache: bool | None = None) -> bool:
        if cache is not None:
            return cache
        flag = _cache_var.get()
        return env_flag(CACHE_ENV, False) if flag is None else flag

    @contextlib.contextmanager
    def options(self, *, log: bool | None = None, cache: bool | None = None) -> Iterator[None]:
        """Within the block (and tasks started in it) turn logging and caching on or off.

        Examples
        --------
        >>> mg = ck.Magisterium()
        >>> with ck.log.options(cache=True):
        ...     first = mg.ask("What is the principle of subsidiarity?")
        ...     again = mg.ask("What is the principle of subsidiarity?")  # from the log
        >>> first.cached, again.cached, again.text == first.text
        (False, True, True)
        >>> with ck.log.options(log=False):
        ...     _ = mg.ask("How does the Church define the common good?")
        >>> ck.log.count()  # the cached answer and the unlogged one are not rows
        1
        """
        log_token = _log_var.set(log) if log is not None else None
        cache_token = _cache_var.set(cache) if cache is not None else None
        try:
            yield
        finally:
            if cache_token is not None:
                _cache_var.reset(cache_token)
            if log_token is not None:
                _log_var.reset(log_token)

    # connection --------------------------------------------------------------------------
    def connect(self) -> sqlite3.Connection:
        """This thread's connection to the file (created, with its schema, on first use; a new
        one, with a ``LogWarning``, if the file was deleted or replaced since)."""
        path = self.path
        self._notice(self._connections.moved(path))
        return self._connections.get(path)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every answer recorded so far is in the file; False if ``timeout``
        seconds passed first (the rows still wait, and are written when the file is free).

        Answers recorded while the file was busy (or from an event loop) are written by a
        background thread; the log's reads and :meth:`close` flush first, and so does the
        interpreter's exit.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.flush()
        True
        """
        done = self._pending.wait(timeout)
        self._warn_problems()
        return done

    def close(self) -> None:
        """Write what is waiting (:meth:`flush`, for as long as a record would have waited
        before: a file locked for good cannot hang it), then close this thread's connections
        (others close when their thread ends)."""
        self.flush(BUSY_WAIT)
        self._connections.close()

    def _notice(self, notice: str | None) -> None:
        if notice is not None:
            _logger.warning("citekit: %s", notice)
            warnings.warn(f"citekit: {notice}", LogWarning, stacklevel=3)

    def _warn_problems(self) -> None:
        for problem in self._pending.problems():
            warnings.warn(problem, LogWarning, stacklevel=3)

    def _settle(self) -> None:
        """Before a read: the rows still waiting for the file are written (for as long as a
        record would have waited before)."""
        if len(self._pending):
            self._pending.wait(BUSY_WAIT)
        self._warn_problems()

    # writing -----------------------------------------------------------------------------
    def record(
        self,
        answer: Answer | None,
        *,
        provider: str | None = None,
        request: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        elapsed: float | None = None,
        error: BaseException | None = None,
        stream: bool = False,
        secrets: Iterable[str] = (),
        log: bool | None = None,
        cacheable: bool = True,
    ) -> int | None:
        """Write one call to the log and return its row id (None when logging is off).

        Parameters
        ----------
        answer
            The answer, or None for a call that failed before one existed.
        provider
            Needed when ``answer`` is None.
        request
            The JSON body sent (fields named like keys are masked).
        base_url
            The client's base URL (part of the cache key).
        elapsed
            Seconds the call took.
        error
            The exception the call ended with, if any.
        secrets
            Strings that must never be written (the client's API key); the providers' key
            environment variables are always added.
        log
            False skips this call; None follows ``enabled``.
        cacheable
            False keeps the answer out of the cache (it is logged but never served again):
            for an answer that is complete but lacks something worth fetching anew.

        Returns None too when the row waits for the file: a log held busy by another program
        (past ``RECORD_WAIT`` seconds) delays the record, never the answer, and a record made on
        a thread running an event loop never runs SQLite there; such rows are written in order
        by a background thread (:meth:`flush` waits for them).

        Never raises: a log that cannot be written gives a ``LogWarning``.
        """
        if not (self.enabled if log is None else log):
            return None
        if answer is not None and answer.cached:
            return None
        name = answer.provider if answer is not None else provider
        if name is None:
            raise ValueError("record(None, ...) needs provider=")
        if not _on_event_loop():  # warned where the notebook shows it, not on a loop's thread
            self._warn_problems()
        hidden = [*secrets, *environment_keys()]
        # Every value written (text, raw JSON, notes, citations, references) and the answer
        # kept for the cache come from one scrubbed answer: a key the server echoed anywhere
        # in it never reaches the file.
        answer = scrub_value(answer, hidden)
        path: Path | None = None
        try:
            path = self.path
            row = self._row(path, answer, name, request, base_url, elapsed, error, stream, hidden)
            if not cacheable:
                row.values["request_key"] = None  # never matched by a cache look-up
            row_id = self._write_now(row)
        except Exception as exc:  # sqlite3, OS, encoding, a value SQLite cannot take
            # The answer is already paid for: a log that cannot be written never costs it.
            where = f" {path}" if path is not None else f" at ${HOME_ENV}"
            _logger.warning("Could not write the answer log%s: %s", where, exc)
            warnings.warn(
                f"citekit could not write the answer log{where}: {exc}",
                LogWarning,
                stacklevel=2,
            )
            return None
        if (
            cacheable
            and answer is not None
            and error is None
            and request is not None
            and not answer.partial
        ):
            key = (str(path), row.values["request_key"] or request_key(name, request, base_url))
            self._memo.remember(key, replace(answer, cached=True))
        return row_id

    def _write_now(self, row: Row) -> int | None:
        """Write ``row`` at once if the file takes it within ``RECORD_WAIT`` (its id), else
        queue it for the writer thread (None). Rows keep their order: while some wait, the
        next ones wait behind them."""
        if not _on_event_loop() and not len(self._pending):
            try:
                return self._write(row, RECORD_WAIT, self._notice)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                _logger.info("The answer log %s is busy: the answer is written later", row.path)
        self._pending.add(row)
        if not self._exit_hook:
            self._exit_hook = True
            atexit.register(self._at_exit)
        return None

    def _write_later(self, rows: list[Row]) -> None:
        """The writer thread's write of rows to one file, in one transaction: notices are
        reported to the caller's next call."""
        path = rows[0].path
        found = self._connections.moved(path)
        if found is not None:
            self._pending.report(found)
        conn = self._connections.get(path, wait=BUSY_WAIT)
        refused = self._connections.newer(path)
        if refused is not None:
            raise NewerLog(refused)
        with write_transaction(conn):
            insert_many(conn, [(row.values, row.answer) for row in rows])

    def _write(self, row: Row, wait: float, notice: Callable[[str], None]) -> int:
        found = self._connections.moved(row.path)  # the file deleted or replaced: start anew
        if found is not None:
            notice(found)
        conn = self._connections.get(row.path, wait=wait)
        refused = self._connections.newer(row.path)
        if refused is not None:
            raise NewerLog(refused)
        if wait == BUSY_WAIT:
            return insert(conn, row.values, row.answer)
        conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        try:
            return insert(conn, row.values, row.answer)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_WAIT * 1000)}")

    def _at_exit(self) -> None:
        done, waited = self._pending.wait_at_exit()
        if not done:
            lost = len(self._pending)
            message = (
                f"citekit could not write {lost} answer(s) to the answer log: the file stayed "
                f"busy (locked by another program) for {waited:g} s after the last one; "
                "they were not logged (call ck.log.flush() before exiting to wait longer)"
            )
            _logger.warning(message)
            warnings.warn(message, LogWarning, stacklevel=1)
        self._warn_problems()

    def _row(
        self,
        path: Path,
        answer: Answer | None,
        provider: str,
        request: Mapping[str, Any] | None,
        base_url: str | None,
        elapsed: float | None,
        error: BaseException | None,
        stream: bool,
        secrets: Sequence[str],
    ) -> Row:
        if answer is None and isinstance(error, StreamInterrupted):
            answer = scrub_value(error.answer, secrets)
        values = answer_row(
            answer,
            provider,
            request,
            base_url,
            elapsed,
            error,
            stream,
            secrets,
            ts=time.time(),
            pid=os.getpid(),
        )
        return Row(path, values, answer)

    def call(
        self,
        provider: str,
        request: Mapping[str, Any] | None,
        *,
        base_url: str | None = None,
        secrets: Iterable[str] = (),
        stream: bool = False,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> LoggedCall:
        """A context manager around one provider call: cache look-up, timing, recording.

        ::

            with log.call("magisterium", body, base_url=url, secrets=[key]) as call:
                if call.cached is not None:
                    return call.cached
                return call.done(send_and_parse(body))

        An exception leaving the block is recorded as the call's error and re-raised.
        """
        return LoggedCall(self, provider, request, base_url, tuple(secrets), stream, cache, log)

    # reading -----------------------------------------------------------------------------
    def lookup(
        self,
        provider: str,
        request: Mapping[str, Any],
        *,
        base_url: str | None = None,
        cache: bool | None = None,
    ) -> Answer | None:
        """The newest complete logged answer to an identical request, marked ``cached``.

        Returns None when caching is off (``cache`` is False, or None and caching is not on
        through ``options`` / ``CITEKIT_CACHE``), when nothing matches, or when the log
        cannot be read.
        """
        if not self.cache_enabled(cache):
            return None
        try:
            path = self.path
        except CitekitError as exc:  # CITEKIT_HOME names a file: no cache, the call goes on
            warnings.warn(f"citekit could not read the answer log: {exc}", LogWarning, stacklevel=2)
            return None
        key = request_key(provider, request, base_url)
        memo_key = (str(path), key)
        found = self._memo.recall(memo_key)
        if found is not None:
            return found
        if not path.exists():
            return None
        try:
            # On an event loop's thread the look-up waits for no lock (a busy file is a miss);
            # a look-up is one indexed read, which WAL never makes wait for a writer.
            wait = RECORD_WAIT if _on_event_loop() else BUSY_WAIT
            self._notice(self._connections.moved(path))
            row = (
                self._connections.get(path, wait=wait)
                .execute(
                    f"SELECT {ANSWER_COLUMNS} FROM answers WHERE request_key = ? "
                    "AND error_type IS NULL AND partial = 0 AND response_json IS NOT NULL "
                    "ORDER BY id DESC LIMIT 1",
                    (key,),
                )
                .fetchone()
            )
        except (sqlite3.Error, OSError) as exc:
            if is_busy(exc):
                _logger.info("The answer log %s is busy: no cache look-up", path)
                return None
            warnings.warn(f"citekit could not read {path}: {exc}", LogWarning, stacklevel=2)
            return None
        if row is None:
            return None
        try:
            found = answer_from_row(row, self._connections.get(path, wait=wait), cached=True)
        except (ValueError, CitekitError) as exc:  # a damaged or foreign row: ask anew
            warnings.warn(
                f"citekit skipped an unreadable row of {path}: {exc}", LogWarning, stacklevel=2
            )
            return None
        self._memo.remember(memo_key, found)
        return found

    def _select(
        self,
        columns: str,
        *,
        provider: str | None,
        since: str | date | datetime | float | None,
        until: str | date | datetime | float | None,
        question_contains: str | None,
        limit: int | None,
        errors: bool,
    ) -> list[tuple[Any, ...]]:
        self._settle()
        if not self.path.exists():
            return []
        sql, params = select_sql(
            columns,
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=errors,
        )
        rows = self.connect().execute(sql, params).fetchall()
        rows.reverse()
        return rows

    def answers(
        self,
        *,
        provider: str | None = None,
        since: str | date | datetime | float | None = None,
        until: str | date | datetime | float | None = None,
        question_contains: str | None = None,
        limit: int | None = None,
    ) -> list[Answer]:
        """Every logged answer (failed calls left out), oldest first.

        ``since`` / ``until`` take ISO dates or times (``"2026-11-01"``), ``date``,
        ``datetime`` or Unix seconds; naive values are local time. ``limit`` keeps the most
        recent ones. Answers are rebuilt from the saved JSON with ``Answer.from_response``.

        Examples
        --------
        >>> mg = ck.Magisterium()
        >>> _ = mg.ask("What is the principle of subsidiarity?")
        >>> _ = mg.ask("How does the Church define the common good?")
        >>> [a.question for a in ck.log.answers(provider="magisterium", since="2020-01-01")]
        ['What is the principle of subsidiarity?', 'How does the Church define the common good?']
        >>> [ans] = ck.log.answers(question_contains="common good")
        >>> ans.citations[0].document_title
        'Gaudium et spes'
        >>> cits = ck.citations_frame(ck.log)  # every logged citation, read from the tables
        >>> cits.height
        15
        """
        rows = self._select(
            ANSWER_COLUMNS,
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=False,
        )
        if not rows:
            return []
        conn = self.connect()
        answers: list[Answer] = []
        damaged: list[int] = []
        for row in rows:
            try:
                answers.append(answer_from_row(row, conn))
            except Exception:  # one damaged row never hides the rest of the log
                damaged.append(row[0])
                kept = text_only_answer(row)
                if kept is not None:
                    answers.append(kept)
        if damaged:
            warnings.warn(
                f"citekit could not rebuild {len(damaged)} logged answer(s) from their saved "
                f"JSON (ids {', '.join(map(str, damaged[:20]))}"
                f"{', ...' if len(damaged) > 20 else ''}); their logged text is kept",
                LogWarning,
                stacklevel=2,
            )
        return answers

    def get(self, row_id: int) -> Answer:
        """The answer logged as row ``row_id`` (``KeyError`` if none).

        Examples
        --------
        >>> _ = ck.Maritaca().ask("O que é o Pix?")
        >>> row = ck.log.rows()[-1]
        >>> ck.log.get(row["id"]).sample
        'maritaca/01_pix'
        """
        found = []
        self._settle()
        if self.path.exists():
            found = (
                self.connect()
                .execute(
                    f"SELECT {ANSWER_COLUMNS} FROM answers WHERE id = ? AND "
                    "response_json IS NOT NULL",
                    (int(row_id),),
                )
                .fetchall()
            )
        if not found:
            raise KeyError(f"No answer with id {row_id} in {self.path}")
        try:
            return answer_from_row(found[0], self.connect())
        except Exception:
            kept = text_only_answer(found[0])
            if kept is None:
                raise
            warnings.warn(
                f"citekit could not rebuild logged answer {row_id} from its saved JSON; "
                "its logged text is kept",
                LogWarning,
                stacklevel=2,
            )
            return kept

    def rows(
        self,
        *,
        provider: str | None = None,
        since: str | date | datetime | float | None = None,
        until: str | date | datetime | float | None = None,
        question_contains: str | None = None,
        limit: int | None = None,
        errors: bool = True,
    ) -> list[dict[str, Any]]:
        """The log rows (one dict per call, failed ones included), oldest first.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> row = ck.log.rows()[0]
        >>> row["provider"], row["n_citations"], row["error_type"], row["sample"]
        ('magisterium', 7, None, 'magisterium/02_subsidiarity')
        """
        rows = self._select(
            LOG_COLUMNS,
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=errors,
        )
        return [log_row(row) for row in rows]

    def frame(
        self,
        *,
        provider: str | None = None,
        since: str | date | datetime | float | None = None,
        until: str | date | datetime | float | None = None,
        question_contains: str | None = None,
        limit: int | None = None,
        errors: bool = True,
    ) -> pl.DataFrame:
        """The log rows as a polars frame with the ``LOG_SCHEMA`` columns.

        Examples
        --------
        >>> mg = ck.Magisterium()
        >>> _ = mg.ask("What is the principle of subsidiarity?")
        >>> _ = mg.ask("How does the Church define the common good?")
        >>> ck.log.frame(provider="magisterium").select("id", "question", "n_citations")
        shape: (2, 3)
        ┌─────┬─────────────────────────────────┬─────────────┐
        │ id  ┆ question                        ┆ n_citations │
        │ --- ┆ ---                             ┆ ---         │
        │ i64 ┆ str                             ┆ i64         │
        ╞═════╪═════════════════════════════════╪═════════════╡
        │ 1   ┆ What is the principle of subsi… ┆ 7           │
        │ 2   ┆ How does the Church define the… ┆ 8           │
        └─────┴─────────────────────────────────┴─────────────┘
        """
        rows = self.rows(
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=errors,
        )
        return log_frame(rows)

    def where(
        self,
        *,
        provider: str | None = None,
        since: str | date | datetime | float | None = None,
        until: str | date | datetime | float | None = None,
        question_contains: str | None = None,
    ) -> LogSelection:
        """The logged answers that pass these filters (as :meth:`answers` takes them), as a
        source for the frames: ``ck.citations_frame(ck.log.where(provider="magisterium"))``
        reads the citations of those answers straight from the log's tables. ``ck.log`` itself
        is a source too: every logged answer. Failed calls add nothing; partial answers are
        kept, as :meth:`answers` keeps them.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> _ = ck.Maritaca().ask("O que é o Pix?")
        >>> ck.citations_frame(ck.log).height
        7
        >>> mg = ck.log.where(provider="magisterium", since="2020-01-01")
        >>> ck.answers_frame(mg).select("provider", "n_citations").rows()
        [('magisterium', 7)]
        >>> ck.citations_frame(mg).equals(ck.citations_frame(mg.answers()))
        True
        """
        timestamp(since), timestamp(until)  # a bad bound is named here, not at first use
        return LogSelection(
            self,
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
        )

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read-only query of the log's tables (none when there is no file yet),
        once the answers recorded so far are written (:meth:`flush`).

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.fetch("SELECT count(*), sum(cited_inline) FROM citations")
        [(7, 7)]
        """
        self._settle()
        if not self.path.exists():
            return []
        return self.connect().execute(sql, params).fetchall()

    def size(self) -> int:
        """The bytes the log takes on disk: the file and its write-ahead log (0 with none).

        Examples
        --------
        >>> ck.log.size()
        0
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.size() > 0
        True
        """
        path = self.path
        return sum(os.path.getsize(f) for f in (path, Path(f"{path}-wal")) if os.path.exists(f))

    def vacuum(self) -> tuple[int, int]:
        """Rewrite the file without its free pages (SQLite's ``VACUUM``, after a checkpoint of
        the write-ahead log); the bytes on disk ``(before, after)``. Every answer stays; other
        processes may read meanwhile, and a writer waits (then writes as usual).

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> before, after = ck.log.vacuum()
        >>> after <= before, ck.log.count()
        (True, 1)
        """
        self._settle()
        before = self.size()
        if not self.path.exists():
            return before, before
        conn = self.connect()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return before, self.size()

    def count(self) -> int:
        """How many calls the log holds (failed ones included).

        Examples
        --------
        >>> ck.log.count()
        0
        >>> _ = ck.GPTBots().ask("Why was the Great Wall built?")
        >>> ck.log.count()
        1
        """
        self._settle()
        if not self.path.exists():
            return 0
        return int(self.connect().execute("SELECT count(*) FROM answers").fetchone()[0])

    def to_parquet(
        self,
        folder: str | os.PathLike[str],
        *,
        overwrite: bool = False,
        progress: bool | None = None,
        provider: str | None = None,
        since: str | date | datetime | float | None = None,
        until: str | date | datetime | float | None = None,
        question_contains: str | None = None,
        limit: int | None = None,
    ) -> ParquetDataset:
        """The logged answers (those the filters keep, as ``answers`` takes them) as a Parquet
        dataset partitioned by provider and month: ``citekit.data.dataset.to_parquet``.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.to_parquet("logged").rows["citations"]
        7
        """
        from ..data.dataset import log_to_parquet

        filters = {
            "provider": provider,
            "since": since,
            "until": until,
            "question_contains": question_contains,
            "limit": limit,
        }
        return log_to_parquet(self, folder, overwrite=overwrite, progress=progress, filters=filters)


#: The log every client writes to (``citekit.log``).
log = Log()
