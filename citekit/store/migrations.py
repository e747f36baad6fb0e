"""The log's schema versions: an ordered list of small functions, one per version, each taking
a connection (as simonw/llm's ``migrations.py``).

A file's ``PRAGMA user_version`` says how many of ``MIGRATIONS`` it has had: a file laid out by
an older citekit gets the rest, in the caller's transaction, so that it is migrated whole or not
at all; ``SCHEMA_VERSION`` is the list's length. Columns are renamed in place (``ALTER TABLE ...
RENAME COLUMN``: every row stays as it was) and added ones are filled for the rows already
there. Each step looks before it changes: a rename already done, or a column already there, is
skipped, so that a step can run again on a file stamped with its version before the step was
complete (``_GREW``). A new file is laid out at once by the first step, whole; the later ones
find nothing to change in it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..core.fields import utc_micros as micros
from .decode import answer_from_row
from .encode import tools_json
from .query import ANSWER_COLUMNS
from .search import create_index

#: The sources' columns are named as in ``citekit.core.columns`` (the vocabulary of every table
#: of sources); ``answer`` and ``position`` tie a row to its answer. ``response_json`` and
#: ``references_json`` hold JSON text, or (schema 3 on) that text compressed by zlib as a BLOB
#: when that is smaller (``rows.pack``). ``created_us`` (the answer's ``created``, microseconds
#: since 1970 UTC), ``tools_json`` (``Usage.tools``) and ``cited_inline`` (whether the citation's
#: marker is read in the logged ``text``) are what the frames read without the JSON.
#: What a table holds is stored once: ``citation_keys`` (a JSON list of keys) says that the
#: response's ``citations`` are in the ``citations`` table, ``reference_keys`` that the chunks
#: of ``references_json`` are in ``knowledge_references`` (``rows.stored_once``), and
#: ``text_elided`` that the text of a ``chat.completion`` body is the ``text`` column's.
TABLES = """
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
    pid INTEGER,
    created_us INTEGER,
    tools_json TEXT,
    citation_keys TEXT,
    text_elided INTEGER NOT NULL DEFAULT 0,
    reference_keys TEXT
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
    source_url TEXT,
    cited_inline INTEGER
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


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns of ``table`` (none when the file has no such table)."""
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def _rename(conn: sqlite3.Connection, table: str, renames: tuple[tuple[str, str], ...]) -> None:
    present = _columns(conn, table)
    for old, new in renames:
        if old in present and new not in present:
            conn.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{old}" TO "{new}"')


def _add(conn: sqlite3.Connection, table: str, columns: tuple[tuple[str, str], ...]) -> bool:
    """Add the ``(name, type)`` columns ``table`` lacks; whether any was added."""
    present = _columns(conn, table)
    missing = [(name, kind) for name, kind in columns if present and name not in present]
    for name, kind in missing:
        conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{name}" {kind}')
    return bool(missing)


def m001_tables(conn: sqlite3.Connection) -> None:
    """The tables and indexes, as this citekit lays them out, where the file lacks them."""
    for statement in TABLES.split(";"):
        if statement.strip():
            conn.execute(statement)


def m002_source_columns(conn: sqlite3.Connection) -> None:
    """The sources' columns take the vocabulary of ``citekit.core.columns``."""
    _rename(
        conn,
        "citations",
        (
            ("heading", "cited_text_heading"),
            ("title", "document_title"),
            ("author", "document_author"),
            ("year", "document_year"),
            ("reference", "document_reference"),
            ("url", "source_url"),
        ),
    )
    _rename(
        conn,
        "knowledge_references",
        (("data_name", "document_title"), ("content", "cited_text")),
    )


def m003_stored_once(conn: sqlite3.Connection) -> None:
    """What the frames read without the JSON (``created_us``, ``tools_json``, ``cited_inline``)
    and what says a table holds part of the JSON (``citation_keys``, ``text_elided``,
    ``reference_keys``; the JSON of older rows holds everything, and stays as it was written).
    The new columns of the rows already there are filled from each answer rebuilt as
    ``Log.answers`` rebuilds it; a row whose JSON cannot be rebuilt keeps them null."""
    added = _add(
        conn,
        "answers",
        (
            ("created_us", "INTEGER"),
            ("tools_json", "TEXT"),
            ("citation_keys", "TEXT"),
            ("text_elided", "INTEGER NOT NULL DEFAULT 0"),
            ("reference_keys", "TEXT"),
        ),
    )
    added = _add(conn, "citations", (("cited_inline", "INTEGER"),)) or added
    if not added:
        return
    rows = conn.execute(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE response_json IS NOT NULL"
    ).fetchall()
    for row in rows:
        try:
            answer = answer_from_row(row, conn)
        except Exception:  # a damaged row: Log.answers keeps its text only
            continue
        conn.execute(
            "UPDATE answers SET created_us = ?, tools_json = ? WHERE id = ?",
            (micros(answer.created), tools_json(answer), row[0]),
        )
        if answer.citations:
            cited = sorted(answer.cited_markers)
            inline = f"(document_index + 1) IN ({', '.join('?' * len(cited))})" if cited else "0"
            conn.execute(
                f"UPDATE citations SET cited_inline = {inline} WHERE answer = ?", (*cited, row[0])
            )


def m004_search(conn: sqlite3.Connection) -> None:
    """Full-text search (``Log.search``): the ``log_text`` FTS5 table of every call's
    question, answer and cited passages, filled from the calls already logged, and the trigger
    that drops a deleted call's row (the write path indexes each new call)."""
    create_index(conn)


#: The schema versions in order: a file at version ``n`` has had the first ``n``.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_tables,
    m002_source_columns,
    m003_stored_once,
    m004_search,
]
#: The layout of the tables: one more for each change, made by adding a function above.
SCHEMA_VERSION = len(MIGRATIONS)


#: Steps that grew after files of their version were written: they run again on those files
#: (each adds only what a file lacks). Schema 3 gained ``citation_keys``, then ``text_elided``
#: and ``reference_keys``, after its first files were written.
_GREW: dict[int, Callable[[sqlite3.Connection], None]] = {3: m003_stored_once}


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring the tables of a file at schema ``version`` to ``SCHEMA_VERSION`` (in the caller's
    transaction), then lay out what the file still lacks."""
    if version in _GREW:
        _GREW[version](conn)
    for step in MIGRATIONS[version:]:
        step(conn)
    m001_tables(conn)
