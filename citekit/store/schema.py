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
#: The layout of the tables; raised by one for each change, and a file of an older layout is
#: migrated in place when it is opened (``_RENAMED``).
SCHEMA_VERSION = 2
_FALSE = ("0", "false", "no", "off", "")

#: The sources' columns are named as in ``citekit.core.columns`` (the vocabulary of every table
#: of sources); ``answer`` and ``position`` tie a row to its answer.
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
    cited_text_heading TEXT,
    document_title TEXT,
    document_author TEXT,
    document_year TEXT,
    document_reference TEXT,
    source_url TEXT
);
CREATE INDEX IF NOT EXISTS citations_answer ON citations (answer);
CREATE TABLE IF NOT EXISTS knowledge_references (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    data_id TEXT,
    document_title TEXT,
    source_url TEXT,
    score REAL,
    cited_text TEXT
);
CREATE INDEX IF NOT EXISTS references_answer ON knowledge_references (answer);
"""

#: Columns each schema version renamed, ``{version: {table: ((old, new), ...)}}``. Version 2
#: took the vocabulary of ``citekit.core.columns`` for the sources' columns.
_RENAMED: dict[int, dict[str, tuple[tuple[str, str], ...]]] = {
    2: {
        "citations": (
            ("heading", "cited_text_heading"),
            ("title", "document_title"),
            ("author", "document_author"),
            ("year", "document_year"),
            ("reference", "document_reference"),
            ("url", "source_url"),
        ),
        "knowledge_references": (("data_name", "document_title"), ("content", "cited_text")),
    },
}


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring the tables of a file laid out by schema ``version`` to ``SCHEMA_VERSION``.

    Runs inside the caller's transaction, so a file is migrated whole or not at all. Columns
    are renamed in place (``ALTER TABLE ... RENAME COLUMN``): every row stays as it was. A
    rename already done, or of a table the file does not have yet, is skipped.
    """
    for step in range(version + 1, SCHEMA_VERSION + 1):
        for table, renames in _RENAMED.get(step, {}).items():
            present = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
            for old, new in renames:
                if old in present and new not in present:
                    conn.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{old}" TO "{new}"')


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
    first one a process opens to a file switches it to WAL, migrates a file of an older
    schema and creates the missing tables, in one transaction."""

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
                migrate(conn, version)
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
