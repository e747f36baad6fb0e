"""Rows the log could not take at once, kept in order and written by one background thread.

A log held by another writer (a long transaction in another process, a backup) must delay the
record of an answer, never the answer: :meth:`Log.record <citekit.store.Log.record>` hands such
a row here, and so does every record made on a thread running an event loop (``ask_many``, the
async clients, a notebook's cell), where SQLite must not run at all. One daemon thread writes
the rows in the order they came, retrying while the file is busy; ``log.flush()``, the log's
reads and its ``close()`` wait for it, and so does the interpreter's exit (for
``EXIT_WAIT`` seconds, then a ``LogWarning`` says how many answers were not written).

The columns of an answer recorded on an event loop's thread are made (its JSON dumped and
compressed) on the writer thread too: the loop only queues the answer. The rows waiting when
the thread takes them (up to ``BATCH``) are written in one transaction: a commit costs far more
than a row, so answers arriving faster than one commit each (``ask_many``, many async calls) are
written many to a commit. A row is counted as waiting until its transaction has committed; a
batch that fails for another reason than a busy file is written
again row by row, so that one bad row costs only itself.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import Answer
from .schema import ReadOnlyLog, is_busy

_logger = logging.getLogger(__name__)

#: Seconds the interpreter's exit waits for rows still waiting for a busy log.
EXIT_WAIT = 10.0
#: Pause between two attempts on a busy file (each attempt also waits inside SQLite).
_RETRY_PAUSE = 0.05
#: The most rows written in one transaction by the writer thread.
BATCH = 500
#: The longest the writer thread holds a row back while a batch runs (``Pending.hold``).
HOLD = 5.0


@dataclass(slots=True)
class Row:
    """One call to write: the file, its ``answers`` row, and the answer (sources and chunks).

    The columns an answer fills may be left to the writer thread (``later``: its JSON
    dumped and compressed, its secrets out): a row recorded on an event loop's thread is
    completed there, by ``ready``, so the loop goes on to its next request meanwhile.
    """

    path: Path
    values: dict[str, Any]
    answer: Answer | None
    later: Callable[[], dict[str, Any]] | None = None

    def ready(self) -> dict[str, Any]:
        """The ``answers`` row, completed now if its answer's columns were left for later."""
        if self.later is not None:
            later, self.later = self.later, None
            self.values.update(later())
        return self.values


class Pending:
    """Rows waiting for the log, written in order by one daemon thread started on first use.

    ``write(rows)`` writes rows of one file in one transaction on that thread and raises what
    SQLite raises: a busy file is retried until it is free; any other failure is kept for
    :meth:`problems` (the caller's thread warns, so the warning reaches the notebook) and the
    row is dropped.
    """

    def __init__(self, write: Callable[[list[Row]], object]) -> None:
        self._write = write
        self._rows: collections.deque[Row] = collections.deque()
        self._problems: list[str] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._holds = 0  # batches running (``hold``)
        self._waiters = 0  # callers waiting for the rows: nothing is held back from them

    def __len__(self) -> int:
        with self._cond:
            self._forked()
            return len(self._rows)

    def _forked(self) -> None:
        # A forked child has no writer thread; its parent writes the rows it had.
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._rows.clear()
            self._thread = None

    def add(self, row: Row) -> None:
        """Queue ``row`` after the rows already waiting."""
        with self._cond:
            self._forked()
            self._rows.append(row)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="citekit-log-writer", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every queued row is written (or dropped); False if ``timeout`` seconds
        passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._forked()
            self._waiters += 1
            self._cond.notify_all()  # rows held back for a batch are written now
            try:
                while self._rows:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                self._waiters -= 1
        return True

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """While the block runs, hold the rows back from the file (up to ``BATCH`` rows or
        ``HOLD`` seconds a row), then write them at once; anyone waiting for them (a read,
        ``flush``, the interpreter's exit) has them written at once all the same.

        A batch of questions records its answers on the event loop as they arrive; written
        meanwhile, their rows (their JSON, compression and index, in Python) take turns with
        the loop for the interpreter and hold up the answers still to come. Held, they are
        written when the batch is done."""
        with self._cond:
            self._holds += 1
        try:
            yield
        finally:
            with self._cond:
                self._holds -= 1
                self._cond.notify_all()

    def wait_at_exit(self) -> tuple[bool, float]:
        """:meth:`wait` for ``EXIT_WAIT`` seconds (read now: a script may change it); whether
        everything was written, and the wait."""
        return self.wait(EXIT_WAIT), EXIT_WAIT

    def report(self, problem: str) -> None:
        """Keep ``problem`` for the next :meth:`problems`."""
        with self._cond:
            self._problems.append(problem)

    def problems(self) -> list[str]:
        """What went wrong on the writer thread since the last call (taken)."""
        with self._cond:
            found, self._problems = self._problems, []
        return found

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._rows:
                    self._cond.wait()
                ends = time.monotonic() + HOLD
                while self._holds and not self._waiters and len(self._rows) < BATCH:
                    left = ends - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                # The rows stay queued (and counted) until written.
                batch = list(itertools.islice(self._rows, BATCH))
            problems: list[str] = []
            start = 0
            while start < len(batch):  # one transaction per run of rows to one file
                end = start + 1
                while end < len(batch) and batch[end].path == batch[start].path:
                    end += 1
                problems += self._attempt(batch[start:end])
                start = end
            with self._cond:
                for _ in batch:
                    self._rows.popleft()
                self._problems += problems
                self._cond.notify_all()

    def _attempt(self, rows: list[Row]) -> list[str]:
        while True:
            try:
                self._write(rows)
                return []
            except ReadOnlyLog:  # said once, when the file was opened
                return []
            except Exception as exc:
                if is_busy(exc):
                    time.sleep(_RETRY_PAUSE)
                    continue
                if len(rows) > 1:  # one bad row: the others are written without it
                    return [p for row in rows for p in self._attempt([row])]
                _logger.warning("Could not write the answer log %s: %s", rows[0].path, exc)
                return [f"citekit could not write the answer log {rows[0].path}: {exc}"]
