"""Where the answer log lives and how it is opened: paths, switches, tables, connections."""

from __future__ import annotations

import functools
import os
import sqlite3
import sys
import threading
from pathlib import Path

HOME_ENV = "CITEKIT_HOME"
LOG_ENV = "CITEKIT_LOG"
CACHE_ENV = "CITEKIT_CACHE"
FILE_NAME = "log.sqlite3"
SCHEMA_VERSION = 1
_FALSE = ("0", "false", "no", "off", "")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    provider TEXT NOT NULL,
    base_url TEXT,
    request_key TEXT,
    request_json TEXT,
    stream INTEGER NOT NULL DEFAULT 0,
    elapsed REAL,
    question TEXT,
    model TEXT,
    answer_id TEXT,
    conversation_id TEXT,
    finish_reason TEXT,
    text TEXT,
    response_json TEXT,
    references_json TEXT,
    notes_json TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    n_citations INTEGER NOT NULL DEFAULT 0,
    n_references INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    sample TEXT,
    error_type TEXT,
    error_message TEXT,
    error_status INTEGER,
    error_code TEXT,
    pid INTEGER
);
CREATE INDEX IF NOT EXISTS answers_request ON answers (request_key, id);
CREATE INDEX IF NOT EXISTS answers_time ON answers (ts);
CREATE TABLE IF NOT EXISTS citations (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    marker INTEGER NOT NULL,
    document_index INTEGER NOT NULL,
    cited_text TEXT,
    heading TEXT,
    title TEXT,
    author TEXT,
    year TEXT,
    reference TEXT,
    url TEXT
);
CREATE INDEX IF NOT EXISTS citations_answer ON citations (answer);
CREATE TABLE IF NOT EXISTS knowledge_references (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    data_id TEXT,
    data_name TEXT,
    source_url TEXT,
    score REAL,
    content TEXT
);
CREATE INDEX IF NOT EXISTS references_answer ON knowledge_references (answer);
"""


def default_path() -> Path:
    """``$CITEKIT_HOME/log.sqlite3``, else ``log.sqlite3`` in the platform's user data dir."""
    return _default_path(os.environ.get(HOME_ENV), os.environ.get("XDG_DATA_HOME"))


@functools.lru_cache(maxsize=8)
def _default_path(home: str | None, xdg: str | None) -> Path:
    if home:
        return Path(home).expanduser() / FILE_NAME
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(xdg or Path.home() / ".local" / "share")
    return base / "citekit" / FILE_NAME


def env_flag(name: str, default: bool) -> bool:
    """The environment variable ``name`` as a switch (``0``, ``false``, ``no``, ``off`` are off)."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in _FALSE


class Connections:
    """Connections to log files, one per thread, process and file, made on first use; the
    first one a process opens to a file switches it to WAL and creates the missing tables."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._ready: set[tuple[int, str]] = set()
        self._ready_lock = threading.Lock()

    def get(self, path: Path) -> sqlite3.Connection:
        """This thread's connection to ``path``."""
        key = (os.getpid(), str(path))
        conns: dict[tuple[int, str], sqlite3.Connection] | None = getattr(
            self._local, "conns", None
        )
        if conns is None:
            conns = self._local.conns = {}
        conn = conns.get(key)
        if conn is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 60000")
            self._setup(conn, key)
            conns[key] = conn
        return conn

    def _setup(self, conn: sqlite3.Connection, key: tuple[int, str]) -> None:
        with self._ready_lock:
            known = key in self._ready
        if not known:
            # Switching to WAL takes a lock; busy_timeout makes concurrent openers wait.
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    # Never write into, nor downgrade, a log a newer citekit laid out.
                    raise sqlite3.DatabaseError(
                        f"the log was written by a newer citekit (schema {version}, this one "
                        f"knows {SCHEMA_VERSION}); set CITEKIT_HOME to use another log"
                    )
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                if version < SCHEMA_VERSION:
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            with self._ready_lock:
                self._ready.add(key)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")

    def close(self) -> None:
        """Close this thread's connections."""
        conns = getattr(self._local, "conns", {})
        for conn in conns.values():
            conn.close()
        conns.clear()
