"""Where the answer log lives and how it is opened: paths, switches, connections (the tables
and their versions: ``migrations``).

The file is opened in WAL mode with a busy timeout. ``synchronous = NORMAL``: a committed
answer survives its process being killed; a power cut may undo the last commits (WAL's trade,
which a log of paid answers takes for speed).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import sys
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from ..core.errors import ConfigurationError
from .migrations import SCHEMA_VERSION as SCHEMA_VERSION
from .migrations import migrate

HOME_ENV = "CITEKIT_HOME"
LOG_ENV = "CITEKIT_LOG"
CACHE_ENV = "CITEKIT_CACHE"
FILE_NAME = "log.sqlite3"
_FALSE = ("0", "false", "no", "off", "")
_log_var: ContextVar[bool | None] = ContextVar("citekit_log", default=None)
_cache_var: ContextVar[bool | None] = ContextVar("citekit_cache", default=None)


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` around the block; rolled back if anything raises.

    A failed COMMIT (a full disk) has rolled back already: a second ROLLBACK would raise "no
    transaction is active" and hide the real cause, so it runs only inside a transaction.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


def default_path() -> Path:
    """``$CITEKIT_HOME/log.sqlite3``, else ``log.sqlite3`` in the platform's user data dir.

    A relative ``CITEKIT_HOME`` (or ``XDG_DATA_HOME``) is resolved against the working folder
    when it is first read, once: an ``os.chdir`` later does not start a second log.

    Raises ``ConfigurationError`` when ``CITEKIT_HOME`` names something that is not a folder.
    """
    # Read on every call (each cached answer's look-up among them): one environment look-up
    # (two without CITEKIT_HOME) and, once a setting's folder has been seen, nothing else.
    home = os.environ.get(HOME_ENV)
    setting = (home, None) if home else (home, os.environ.get("XDG_DATA_HOME"))
    path = _RESOLVED.get(setting)
    if path is None:
        path = _RESOLVED.setdefault(setting, _resolve(*setting))
    if setting[0] and setting not in _FOLDERS and _is_folder(setting[0], path.parent):
        _FOLDERS.add(setting)
    return path


#: Each setting's path as first resolved (a few settings per process, never evicted: a
#: relative one resolved again after a ``chdir`` would name another file).
_RESOLVED: dict[tuple[str | None, str | None], Path] = {}
#: The settings whose ``CITEKIT_HOME`` was seen to be a folder: not looked at again (a folder
#: later replaced by a file fails where the log is opened, as an unwritable log does).
_FOLDERS: set[tuple[str | None, str | None]] = set()


def _is_folder(home: str, folder: Path) -> bool:
    """Whether ``folder`` is a folder (False: not there yet, the log's opening creates it);
    ``ConfigurationError`` if it is something else."""
    try:
        mode = folder.stat().st_mode
    except (OSError, ValueError):  # as ``Path.exists``: not there, or not reachable
        return False
    if not stat.S_ISDIR(mode):
        raise ConfigurationError(
            f"{HOME_ENV}={home!r} is not a folder (citekit keeps its answer log in a folder "
            f"there): set {HOME_ENV} to a folder, or unset it to use the default one"
        )
    return True


def _resolve(home: str | None, xdg: str | None) -> Path:
    if home:
        return absolute(home) / FILE_NAME
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(xdg or Path.home() / ".local" / "share")
    return absolute(base) / "citekit" / FILE_NAME


def absolute(path: str | Path) -> Path:
    """``path`` with ``~`` expanded, against the working folder now (a log's path is fixed
    when first read)."""
    return Path(path).expanduser().absolute()


def env_flag(name: str, default: bool) -> bool:
    """The environment variable ``name`` as a switch (``0``, ``false``, ``no``, ``off`` are off)."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in _FALSE


def log_enabled() -> bool:
    """Whether answers are recorded (``CITEKIT_LOG``, then ``Log.options(log=)``)."""
    flag = _log_var.get()
    return env_flag(LOG_ENV, True) if flag is None else flag


def cache_enabled(cache: bool | None = None) -> bool:
    """Whether a call is answered from the log: ``cache``, else ``Log.options(cache=)``, else
    ``CITEKIT_CACHE``."""
    if cache is not None:
        return cache
    flag = _cache_var.get()
    return env_flag(CACHE_ENV, False) if flag is None else flag


@contextlib.contextmanager
def switched(*, log: bool | None, cache: bool | None) -> Iterator[None]:
    """Within the block (and tasks started in it) logging and caching as given (None: as
    they were)."""
    log_token = _log_var.set(log) if log is not None else None
    cache_token = _cache_var.set(cache) if cache is not None else None
    try:
        yield
    finally:
        if cache_token is not None:
            _cache_var.reset(cache_token)
        if log_token is not None:
            _log_var.reset(log_token)


#: Bytes per page of a new log file.
PAGE_SIZE = 16384
#: How long a connection waits for another writer's lock, in seconds.
BUSY_WAIT = 60.0
_SIDECARS = ("-wal", "-shm")

FileId = tuple[int, int]


def file_id(path: str | Path) -> FileId | None:
    """``(device, inode)`` of the file at ``path``, None if there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying another connection holds the lock (retry later)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    message = str(exc)
    return "database is locked" in message or "database is busy" in message


class NewerLog(sqlite3.DatabaseError):
    """The file was laid out by a newer citekit: it is read, never written."""


class ReadOnlyLog(NewerLog):
    """The file (or its folder) cannot be written by this process: it is read, never written."""


def writable(path: Path) -> bool:
    """Whether this process can write the file at ``path`` and create its WAL files beside it
    (a read-only mount, a file or folder without write permission: no)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


class _Open:
    """One thread's connection and which file it has open."""

    __slots__ = ("conn", "file")

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.file = file_id(path)


class Connections:
    """Connections to log files, one per thread, process and file, made on first use; the
    first one a process opens to a file switches it to WAL, migrates a file of an older
    schema and creates the missing tables, in one transaction. A file of a newer schema is
    opened read-only, with nothing written to it at all (not even the switch to WAL)."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._ready: set[tuple[int, str]] = set()
        self._newer: dict[tuple[int, str], str] = {}
        #: Read-only files whose reason is still to be said (once per process and file).
        self._said: set[tuple[int, str]] = set()
        self._unwritable: set[tuple[int, str]] = set()
        #: The file this process last opened at each path, and its WAL files: who notices
        #: first that it is gone, and what SQLite leaves behind of it.
        self._files: dict[tuple[int, str], FileId | None] = {}
        self._sidecars: dict[tuple[int, str], dict[str, FileId]] = {}
        self._ready_lock = threading.Lock()

    def _conns(self) -> dict[tuple[int, str], _Open]:
        conns: dict[tuple[int, str], _Open] | None = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        return conns

    def get(self, path: Path, *, wait: float = BUSY_WAIT) -> sqlite3.Connection:
        """This thread's connection to ``path``; opening it waits at most ``wait`` seconds
        for another writer's lock (then ``sqlite3.OperationalError``, see :func:`is_busy`)."""
        key = (os.getpid(), str(path))
        conns = self._conns()
        opened = conns.get(key)
        if opened is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._open(path, key, wait)
            opened = conns[key] = _Open(conn, path)
            sidecars = {s: i for s in _SIDECARS if (i := file_id(f"{path}{s}")) is not None}
            with self._ready_lock:
                if self._files.get(key) is None:
                    self._files[key] = opened.file
                if self._files[key] == opened.file:
                    self._sidecars.setdefault(key, {}).update(sidecars)
        return opened.conn

    def newer(self, path: Path) -> str | None:
        """Why ``path`` must not be written (a newer citekit laid it out, or it is read-only),
        once it is open."""
        with self._ready_lock:
            return self._newer.get((os.getpid(), str(path)))

    def refusal(self, path: Path) -> NewerLog | None:
        """The error a write to ``path`` is refused with, None if it may be written."""
        key = (os.getpid(), str(path))
        with self._ready_lock:
            reason = self._newer.get(key)
            if reason is None:
                return None
            return (ReadOnlyLog if key in self._unwritable else NewerLog)(reason)

    def moved(self, path: Path) -> str | None:
        """Whether the file this thread has open at ``path`` is still the one there (one
        ``stat``). If it was deleted or replaced, the connection is closed, so that the next
        :meth:`get` opens (or creates) the file now at ``path``; the first thread of the
        process to notice gets a sentence saying so, the others None."""
        key = (os.getpid(), str(path))
        now = file_id(path)
        conns = self._conns()
        opened = conns.get(key)
        if opened is not None and opened.file != now:
            del conns[key]
            opened.conn.close()
        with self._ready_lock:
            if key not in self._files or self._files[key] == now:
                return None  # never opened here, unchanged, or already noticed by a thread
            self._files[key] = now
            self._ready.discard(key)
            self._newer.pop(key, None)
            self._unwritable.discard(key)
            sidecars = self._sidecars.pop(key, {})
        # SQLite leaves a moved file's WAL files at the old names: they would be read as the
        # new file's journal. Only the very files the old one had are removed.
        for suffix, ident in sidecars.items():
            if file_id(f"{path}{suffix}") == ident:
                with contextlib.suppress(OSError):
                    os.unlink(f"{path}{suffix}")
        what = "deleted" if now is None else "replaced by another file"
        return f"the answer log {path} was {what} while this session ran; a new log was started"

    def _open(self, path: Path, key: tuple[int, str], wait: float) -> sqlite3.Connection:
        with self._ready_lock:
            known = key in self._ready and self._files.get(key) == file_id(path)
            newer = key in self._newer
        if newer:
            return self._read_only(path)
        if path.exists() and not writable(path):
            # Reading never needs write access: no switch to WAL, no migration, nothing written.
            with self._ready_lock:
                self._newer[key] = (
                    f"the answer log {path} is read-only here (no write permission, or a "
                    "read-only file system): it is read, and answers are not recorded; set "
                    f"{HOME_ENV} to a folder you can write to keep them"
                )
                self._said.add(key)
                self._unwritable.add(key)
            return self._read_only(path)
        conn = sqlite3.connect(path, timeout=wait, isolation_level=None)
        try:
            if not known:
                # Reading the version writes nothing: a newer file is left exactly as it is.
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    conn.close()
                    with self._ready_lock:
                        self._newer[key] = (
                            f"the log {path} was written by a newer citekit (schema {version}, "
                            f"this one knows {SCHEMA_VERSION}): it is read but never written; "
                            f"set {HOME_ENV} to another folder to keep a log of this session"
                        )
                    return self._read_only(path)
                self._setup(conn, key)
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_WAIT * 1000)}")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _read_only(path: Path) -> sqlite3.Connection:
        uri = f"{path.absolute().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            # A WAL file cleanly closed in a folder that cannot be written: SQLite cannot make
            # its shared-memory file, so the file is read as it is (nobody can change it there).
            conn.close()
            conn = sqlite3.connect(f"{uri}&immutable=1", uri=True, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_WAIT * 1000)}")
        return conn

    def read_only_notice(self, path: Path) -> str | None:
        """Why the file at ``path`` is read only, the first time it is asked (said once)."""
        key = (os.getpid(), str(path))
        with self._ready_lock:
            if key not in self._said:
                return None
            self._said.discard(key)
            return self._newer.get(key)

    def _setup(self, conn: sqlite3.Connection, key: tuple[int, str]) -> None:
        # Set before the file has a page (a file that has them keeps its own): an answer row
        # (its text and packed JSON) takes a few KB, and pages that hold several waste less.
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        # Switching to WAL takes a lock; busy_timeout makes concurrent openers wait.
        conn.execute("PRAGMA journal_mode = WAL")
        with write_transaction(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:  # laid out by a newer citekit since we looked
                raise NewerLog(
                    f"the log was written by a newer citekit (schema {version}, this one "
                    f"knows {SCHEMA_VERSION}); set {HOME_ENV} to use another log"
                )
            migrate(conn, version)
            if version < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        with self._ready_lock:
            self._ready.add(key)

    def close(self) -> None:
        """Close this thread's connections."""
        conns = self._conns()
        for opened in conns.values():
            opened.conn.close()
        conns.clear()
