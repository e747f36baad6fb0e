"""The log's write path: one call recorded as its rows, written at once when the file takes
them, else handed to the writer thread (``writer``), in order.

Every answer is written in one ``BEGIN IMMEDIATE`` transaction (the rows waiting for the writer
thread, many to one), so several processes can write at once and a process killed mid-write
leaves a file that still opens. A log held busy by another program delays the record, never the
answer: a row the file cannot take within ``RECORD_WAIT`` seconds (and every row recorded on a
thread running an event loop, where SQLite never runs) waits for the writer thread;
:meth:`Writer.flush` waits for it, the log's reads do, and so does the interpreter's exit.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.secrets import environment_keys, scrub_value
from ..model import Answer
from .call import Memo
from .encode import answer_columns, call_row, insert_many
from .lifecycle import LOGGER, RECORD_WAIT, LogFile, LogWarning, on_event_loop
from .schema import BUSY_WAIT, HOME_ENV, ReadOnlyLog, is_busy, write_transaction
from .search import index_calls
from .writer import Pending, Row


def insert(conn: sqlite3.Connection, row: Mapping[str, Any], answer: Answer | None) -> int:
    """Write ``row`` and the answer's citations and references in one transaction, indexed
    for search (``search``); its id."""
    with write_transaction(conn):
        ids = insert_many(conn, [(row, answer)])
        index_calls(conn, ids)
        return ids[0]


class Writer:
    """The write path of one log: records, the rows waiting for the file, and the warnings of
    the writer thread (given on the caller's thread, where the notebook shows them)."""

    def __init__(self, file: LogFile, memo: Memo) -> None:
        self._file = file
        self._memo = memo
        self._pending = Pending(self._write_later)

    def record(
        self,
        answer: Answer | None,
        provider: str | None,
        request: Mapping[str, Any] | None,
        base_url: str | None,
        elapsed: float | None,
        error: BaseException | None,
        stream: bool,
        secrets: Iterable[str],
        cacheable: bool,
    ) -> int | None:
        """``Log.record`` once logging is known to be on for this call."""
        if answer is not None and answer.cached:
            return None
        name = answer.provider if answer is not None else provider
        if name is None:
            raise ValueError("record(None, ...) needs provider=")
        looping = on_event_loop()
        if not looping:  # warned where the notebook shows it, not on a loop's thread
            self.warn_problems()
        hidden = [*secrets, *environment_keys()]
        # Every value written (text, raw JSON, notes, citations, references) and the answer
        # kept for the cache come from one scrubbed answer: a key the server echoed anywhere
        # in it never reaches the file.
        answer = scrub_value(answer, hidden)
        path: Path | None = None
        try:
            path = self._file.path
            kept = _kept(answer, error, hidden)
            # What the caller may change once the call returns (the request) is read now.
            values = call_row(
                kept,
                name,
                request,
                base_url,
                elapsed,
                error,
                stream,
                hidden,
                time.time(),
                os.getpid(),
            )
            key = values["request_key"]
            if not cacheable:
                values["request_key"] = None  # never matched by a cache look-up
            row = Row(path, values, kept)
            if kept is not None:  # an answer does not change: its columns may be made later
                row.later = functools.partial(answer_columns, kept, hidden)
            if looping:  # SQLite never runs here: the answer's columns are made there too
                row_id = None
                self._queue(row)
            else:
                row.ready()
                row_id = self._write_now(row)
        except ReadOnlyLog as exc:  # said once, when the file was opened
            LOGGER.info("Not recorded: %s", exc)
            return None
        except Exception as exc:  # sqlite3, OS, encoding, a value SQLite cannot take
            # The answer is already paid for: a log that cannot be written never costs it.
            where = f" {path}" if path is not None else f" at ${HOME_ENV}"
            LOGGER.warning("Could not write the answer log%s: %s", where, exc)
            warnings.warn(
                f"citekit could not write the answer log{where}: {exc}",
                LogWarning,
                stacklevel=3,
            )
            return None
        if (
            cacheable
            and answer is not None
            and error is None
            and request is not None
            and not answer.partial
        ):
            self._memo.remember((str(path), key), replace(answer, cached=True))
        return row_id

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every row recorded so far is in the file (``Log.flush``)."""
        done = self._pending.wait(timeout)
        self.warn_problems(stacklevel=4)
        return done

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """Rows recorded from an event loop held back while the block runs (``Log.holding``)."""
        return self._pending.hold()

    def settle(self) -> None:
        """Before a read: the rows still waiting for the file are written (for as long as a
        record would have waited before)."""
        if len(self._pending):
            self._pending.wait(BUSY_WAIT)
        self.warn_problems(stacklevel=5)  # the caller of the front's read

    def warn_problems(self, *, stacklevel: int = 4) -> None:
        """Warn of what went wrong on the writer thread since the last time."""
        for problem in self._pending.problems():
            warnings.warn(problem, LogWarning, stacklevel=stacklevel)

    def _write_now(self, row: Row) -> int | None:
        """Write ``row`` at once if the file takes it within ``RECORD_WAIT`` (its id), else
        queue it for the writer thread (None). Rows keep their order: while some wait, the
        next ones wait behind them."""
        if not len(self._pending):
            try:
                return self._write(row, RECORD_WAIT)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                LOGGER.info("The answer log %s is busy: the answer is written later", row.path)
        self._queue(row)
        return None

    def _queue(self, row: Row) -> None:
        """Hand ``row`` to the writer thread, behind the rows already waiting."""
        self._pending.add(row)
        self._file.at_exit(self._at_exit)

    def _write_later(self, rows: list[Row]) -> None:
        """The writer thread's write of rows to one file, in one transaction: notices are
        reported to the caller's next call."""
        path = rows[0].path
        found = self._file.connections.moved(path)
        if found is not None:
            self._pending.report(found)
        conn = self._file.connections.get(path, wait=BUSY_WAIT)
        found = self._file.connections.read_only_notice(path)
        if found is not None:
            self._pending.report(f"citekit: {found}")
        refused = self._file.connections.refusal(path)
        if refused is not None:
            raise refused
        calls = [(row.ready(), row.answer) for row in rows]
        with write_transaction(conn):
            index_calls(conn, insert_many(conn, calls))

    def _write(self, row: Row, wait: float) -> int:
        # The file deleted or replaced: start anew (said where the record was made).
        conn = self._file.open(row.path, wait=wait, stacklevel=7)
        refused = self._file.connections.refusal(row.path)
        if refused is not None:
            raise refused
        if wait == BUSY_WAIT:
            return insert(conn, row.ready(), row.answer)
        conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        try:
            return insert(conn, row.ready(), row.answer)
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
            LOGGER.warning(message)
            warnings.warn(message, LogWarning, stacklevel=1)
        self.warn_problems(stacklevel=1)


def _kept(
    answer: Answer | None, error: BaseException | None, secrets: Sequence[str]
) -> Answer | None:
    """The answer a call's row holds: its own, else what a failed call carries (a broken
    stream's partial answer, a failed Maritaca response's answer), scrubbed: nothing is lost."""
    carried = getattr(error, "answer", None)
    if answer is None and isinstance(carried, Answer):
        return scrub_value(carried, secrets)
    return answer
