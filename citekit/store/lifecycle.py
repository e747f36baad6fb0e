"""The log file's life: where it is, this thread's connection to it, noticing that it was
deleted or replaced while a session ran, closing, and the interpreter's exit.

A log file deleted or replaced while a session runs is noticed at the next use (one ``stat``):
a new log is started at the path, with a ``LogWarning``. The connections themselves (WAL, the
busy timeout, migrating an older file, a newer file opened read-only) are ``schema``'s.
"""

from __future__ import annotations

import atexit
import logging
import sqlite3
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from ..core.errors import CitekitWarning
from .schema import Connections, absolute, default_path

#: The log's messages keep the logger name they always had, whichever part speaks (a user's
#: logging configuration filters on it).
LOGGER = logging.getLogger("citekit.store.answer_log")

#: Seconds a record waits for another writer's lock before handing its row to the writer
#: thread (which waits as long as it takes); on an event loop's thread, what a look-up waits.
RECORD_WAIT = 0.1


class LogWarning(CitekitWarning):
    """The answer log could not be written or read; the answer itself is unaffected."""


def on_event_loop() -> bool:
    """Whether this thread runs an asyncio event loop (SQLite must not block it)."""
    aio = sys.modules.get("asyncio")
    if aio is None:
        return False
    try:
        aio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LogFile:
    """One log's file: its path (``default_path()`` at each use unless given; a relative one
    taken against the working folder of the moment it is given) and the connections to it,
    one per thread."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._path = absolute(path) if path is not None else None
        self.connections = Connections()
        self._exit_hook = False

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else default_path()

    def connect(self) -> sqlite3.Connection:
        """This thread's connection to the file (created, with its schema, on first use; a new
        one, with a ``LogWarning``, if the file was deleted or replaced since)."""
        return self.open(self.path, stacklevel=5)

    def open(
        self, path: Path, *, wait: float | None = None, stacklevel: int = 4
    ) -> sqlite3.Connection:
        """``connections.get`` with what there is to say: the file was deleted or replaced, or
        it is read-only (said once)."""
        self.notice(self.connections.moved(path), stacklevel=stacklevel)
        conn = self.connections.get(path) if wait is None else self.connections.get(path, wait=wait)
        self.notice(self.connections.read_only_notice(path), stacklevel=stacklevel)
        return conn

    def notice(self, notice: str | None, *, stacklevel: int = 3) -> None:
        """Tell ``notice`` (the file was deleted or replaced) to the log and as a warning."""
        if notice is not None:
            LOGGER.warning("citekit: %s", notice)
            warnings.warn(f"citekit: {notice}", LogWarning, stacklevel=stacklevel)

    def at_exit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` at the interpreter's exit (registered once per log)."""
        if not self._exit_hook:
            self._exit_hook = True
            atexit.register(hook)

    def close(self) -> None:
        """Close this thread's connections (others close when their thread ends)."""
        self.connections.close()
