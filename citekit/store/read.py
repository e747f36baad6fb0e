"""The log's read path: the cache look-up, and answers, rows and frames of a selection, read
once the rows waiting for the file are written.

A look-up is one indexed read (which WAL never makes wait for a writer); the newest answer per
request key is kept in memory (``call.Memo``). One row whose saved JSON cannot be rebuilt never
hides the rest of the log: its logged text is kept, with a ``LogWarning``; text that is not
UTF-8 (which makes SQLite's driver refuse the whole query) is read with U+FFFD in its place
(``read_rows``), and the rows are named.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import CitekitError
from ..model import Answer
from .call import Memo, said_from_cache
from .decode import answer_from_row, log_frame, log_row, text_only_answer
from .keys import request_key
from .lifecycle import LOGGER, RECORD_WAIT, LogFile, LogWarning, on_event_loop
from .query import ANSWER_COLUMNS, BY_ID, LOG_COLUMNS, LOOKUP, select_sql
from .query import row_id as query_row_id
from .schema import BUSY_WAIT, is_busy
from .search import TABLE as SEARCH_TABLE
from .search import NoSearchIndex

if TYPE_CHECKING:
    import polars as pl

    from .selection import LogSelection


def warn_damaged(ids: Sequence[Any], what: str, *, stacklevel: int = 3) -> None:
    """One ``LogWarning`` naming the damaged rows ``ids`` (none: nothing said)."""
    if not ids:
        return
    shown = sorted({str(i) for i in ids}, key=lambda i: (len(i), i))
    warnings.warn(
        f"citekit read {len(shown)} damaged row(s) of the answer log as far as they could be "
        f"read (ids {', '.join(shown[:20])}{', ...' if len(shown) > 20 else ''}): {what}",
        LogWarning,
        stacklevel=stacklevel,
    )


def read_rows(
    conn: sqlite3.Connection, sql: str, params: Sequence[Any], damaged: list[Any]
) -> list[tuple[Any, ...]]:
    """The rows of a query; when a text cell is not UTF-8 (a damaged file, which the driver
    refuses for the whole query) the query runs again with such text read with U+FFFD in
    place of the bytes, and those rows' first cells are added to ``damaged``."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if f"no such table: {SEARCH_TABLE}" in str(exc):  # ``where(text=...)`` on an old log
            raise NoSearchIndex() from None
        if "decode" not in str(exc):
            raise
    bad: list[bool] = []

    def text(data: bytes) -> str:
        try:
            return data.decode()
        except UnicodeDecodeError:
            bad.append(True)
            return data.decode(errors="replace")

    conn.text_factory = text
    try:
        rows = []
        for row in conn.execute(sql, params):  # one row at a time: which row, is known
            if bad:
                damaged.append(row[0])
                bad.clear()
            rows.append(row)
    finally:
        conn.text_factory = str
    return rows


class Reader:
    """The read path of one log; ``settle`` writes the rows still waiting before each read."""

    def __init__(self, file: LogFile, memo: Memo, settle: Callable[[], None]) -> None:
        self._file = file
        self._memo = memo
        self._settle = settle

    def lookup(
        self,
        provider: str,
        request: Mapping[str, Any],
        base_url: str | None,
        *,
        memo_only: bool = False,
    ) -> Answer | None:
        """``Log.lookup`` once caching is known to be on (``memo_only``: in memory only)."""
        try:
            path = self._file.path
        except CitekitError as exc:  # CITEKIT_HOME names a file: no cache, the call goes on
            warnings.warn(f"citekit could not read the answer log: {exc}", LogWarning, stacklevel=3)
            return None
        key = request_key(provider, request, base_url)
        memo_key = (str(path), key)
        found = self._memo.recall(memo_key)
        if memo_only and found is not None:
            said_from_cache(self._file, provider, found)  # no flow of a call says it then
        if found is not None or memo_only:
            return found
        if not path.exists():
            return None
        try:
            # On an event loop's thread the look-up waits for no lock (a busy file is a miss);
            # a look-up is one indexed read, which WAL never makes wait for a writer.
            wait = RECORD_WAIT if on_event_loop() else BUSY_WAIT
            conn = self._file.open(path, wait=wait, stacklevel=5)
            found_rows = read_rows(conn, LOOKUP, (key,), [])
            row = found_rows[0] if found_rows else None
        except (sqlite3.Error, OSError) as exc:
            if is_busy(exc):
                LOGGER.info("The answer log %s is busy: no cache look-up", path)
                return None
            warnings.warn(f"citekit could not read {path}: {exc}", LogWarning, stacklevel=3)
            return None
        if row is None:
            return None
        try:
            found = answer_from_row(row, conn, cached=True)
        except Exception as exc:  # a damaged or foreign row: ask anew
            warnings.warn(
                f"citekit skipped an unreadable row of {path}: {exc}", LogWarning, stacklevel=3
            )
            return None
        self._memo.remember(memo_key, found)
        return found

    def _select(
        self, columns: str, selection: LogSelection, *, errors: bool, damaged: list[Any]
    ) -> list[tuple[Any, ...]]:
        self._settle()
        if not self._file.path.exists():
            return []
        sql, params = select_sql(columns, selection, errors=errors)
        rows = read_rows(self._file.connect(), sql, params, damaged)
        rows.reverse()
        return rows

    def answers(self, selection: LogSelection) -> list[Answer]:
        """The selected answers (failed calls left out), oldest first."""
        damaged: list[Any] = []
        rows = self._select(ANSWER_COLUMNS, selection, errors=False, damaged=damaged)
        if not rows:
            return []
        conn = self._file.connect()
        answers: list[Answer] = []
        for row in rows:
            try:
                answers.append(answer_from_row(row, conn))
            except Exception:  # one damaged row never hides the rest of the log
                damaged.append(row[0])
                kept = text_only_answer(row)
                if kept is not None:
                    answers.append(kept)
        warn_damaged(
            damaged,
            "an answer whose saved JSON cannot be rebuilt keeps its logged text only",
            stacklevel=4,
        )
        return answers

    def get(self, row_id: int) -> Answer:
        """The answer logged as row ``row_id`` (``KeyError`` if none)."""
        found = []
        damaged: list[Any] = []
        self._settle()
        ident = query_row_id(row_id)
        if ident is not None and self._file.path.exists():
            found = read_rows(self._file.connect(), BY_ID, (ident,), damaged)
        warn_damaged(damaged, "text that is not UTF-8 is read with U+FFFD", stacklevel=4)
        if not found:
            raise KeyError(f"No answer with id {row_id} in {self._file.path}")
        try:
            return answer_from_row(found[0], self._file.connect())
        except Exception:
            kept = text_only_answer(found[0])
            if kept is None:
                raise KeyError(
                    f"The answer with id {row_id} in {self._file.path} is damaged: neither its "
                    "saved response nor its text can be read"
                ) from None
            warnings.warn(
                f"citekit could not rebuild logged answer {row_id} from its saved JSON; "
                "its logged text is kept",
                LogWarning,
                stacklevel=3,
            )
            return kept

    def rows(
        self, selection: LogSelection, *, errors: bool, stacklevel: int = 4
    ) -> list[dict[str, Any]]:
        """The selected rows of ``LOG_SCHEMA``, one dict per call, oldest first."""
        damaged: list[Any] = []
        rows = [
            log_row(row, damaged)
            for row in self._select(LOG_COLUMNS, selection, errors=errors, damaged=damaged)
        ]
        warn_damaged(
            damaged,
            "a cell of the wrong type is None, text that is not UTF-8 has U+FFFD",
            stacklevel=stacklevel,
        )
        return rows

    def frame(self, selection: LogSelection, *, errors: bool) -> pl.DataFrame:
        """:meth:`rows` as a polars frame typed by ``LOG_SCHEMA``."""
        return log_frame(self.rows(selection, errors=errors, stacklevel=5))

    def fetch(
        self, sql: str, params: Sequence[Any], damaged: list[Any] | None = None
    ) -> list[tuple[Any, ...]]:
        """The rows of a read-only query (none when there is no file yet); text that is not
        UTF-8 is read with U+FFFD, its rows' first cells added to ``damaged`` (or, without
        it, named in a warning)."""
        self._settle()
        if not self._file.path.exists():
            return []
        found: list[Any] = []
        rows = read_rows(self._file.connect(), sql, params, found)
        if damaged is None:
            warn_damaged(found, "text that is not UTF-8 is read with U+FFFD", stacklevel=4)
        else:
            damaged.extend(found)
        return rows

    def count(self) -> int:
        """How many calls the file holds."""
        self._settle()
        if not self._file.path.exists():
            return 0
        return int(self._file.connect().execute("SELECT count(*) FROM answers").fetchone()[0])

    def size(self) -> int:
        """The bytes of the file and its write-ahead log (0 with none)."""
        path = self._file.path
        return sum(os.path.getsize(f) for f in (path, Path(f"{path}-wal")) if os.path.exists(f))

    def vacuum(self) -> tuple[int, int]:
        """``VACUUM`` between two checkpoints; the bytes ``(before, after)``."""
        self._settle()
        before = self.size()
        if not self._file.path.exists():
            return before, before
        conn = self._file.connect()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return before, self.size()
