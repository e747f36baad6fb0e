"""Full-text search of the log: questions, answers and the passages they cite, in one SQLite
FTS5 table (``log_text``, one row per call, its ``rowid`` the call's id).

The write path indexes each call in the transaction that writes it (:func:`index_calls`), a
trigger removes a deleted call's row, and the migration to schema 4 indexes the calls a log
already holds (:func:`create_index`). What a user types is never read as FTS5 syntax:
:func:`match_query` keeps its words (and ``"quoted phrases"``, and a ``word*`` prefix) and
quotes each, so no text makes SQLite raise; text with no word matches nothing.

>>> from citekit.store.search import match_query
>>> match_query('dignity of work')
'"dignity" "of" "work"'
>>> match_query('"common good" subsid*')
'"common good" "subsid"*'
>>> match_query('( ) * : ^ "') is None  # no word: nothing to find
True
"""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from ..core.errors import CitekitError

if TYPE_CHECKING:
    import polars as pl

    from .answer_log import Log
    from .selection import LogSelection

__all__ = ["SEARCH_COLUMNS", "create_index", "index_calls", "match_query", "starred"]

#: The search table: the question, the answer's text, the cited passages (citations' and
#: knowledge chunks' text, one per line). Accents are folded (``trabalho`` finds
#: ``trabálho``), and so is case, in every script.
TABLE: Final = "log_text"
CREATE_TABLE: Final = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5("
    "question, answer, passages, tokenize = 'unicode61 remove_diacritics 2')"
)
CREATE_TRIGGER: Final = (
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON answers BEGIN "
    f"DELETE FROM {TABLE} WHERE rowid = old.id; END"
)
_PASSAGES: Final = (
    "(SELECT group_concat(passage, char(10)) FROM ("
    "SELECT cited_text AS passage FROM citations WHERE answer = a.id "
    "UNION ALL SELECT cited_text FROM knowledge_references WHERE answer = a.id))"
)
_INDEX: Final = (
    f"INSERT OR REPLACE INTO {TABLE} (rowid, question, answer, passages) "
    f"SELECT a.id, a.question, a.text, {_PASSAGES} FROM answers a"
)
#: What one hit shows: the call, and the best-matching part of its text with the words found
#: between ``MARK_START`` and ``MARK_END`` (characters no text of the log is read with).
MARK_START: Final = "\ue000"
MARK_END: Final = "\ue001"
SEARCH_COLUMNS: Final = ("id", "time", "provider", "question", "snippet", "score")
#: The words of a query that are kept (more are dropped: a query is a few words).
MAX_TERMS: Final = 32


def create_index(conn: sqlite3.Connection) -> bool:
    """The search table and its trigger, filled with the calls already logged (in the
    caller's transaction); False when this SQLite has no FTS5 (the log works without it,
    and search says why it cannot)."""
    try:
        conn.execute(CREATE_TABLE)
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower():
            return False
        raise
    conn.execute(CREATE_TRIGGER)
    conn.execute(f"DELETE FROM {TABLE}")
    conn.execute(_INDEX)
    return True


def index_calls(conn: sqlite3.Connection, ids: list[int]) -> None:
    """Index the calls ``ids`` just written (in the same transaction: the log and its index
    change together). A log without the table (an SQLite without FTS5) is left as it is."""
    if not ids:
        return
    try:
        conn.execute(f"{_INDEX} WHERE a.id BETWEEN ? AND ?", (min(ids), max(ids)))
    except sqlite3.OperationalError as exc:
        if f"no such table: {TABLE}" not in str(exc):
            raise


class NoSearchIndex(CitekitError):
    """A search of a log that has no search table (a read-only log of an older citekit)."""

    def __init__(self, path: object = None) -> None:
        where = f"the answer log {path}" if path is not None else "the answer log"
        super().__init__(
            f"{where} has no search index: it is read-only here and was written by an older "
            "citekit; open it once where it can be written"
        )


def has_index(conn: sqlite3.Connection) -> bool:
    """Whether the file has the search table (a read-only log of an older citekit has not)."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
    ).fetchone()
    return found is not None


_TERM = re.compile(r'"([^"]*)"?|(\w+)(\*?)')
_WORD = re.compile(r"\w+")


def match_query(text: str) -> str | None:
    """``text`` as an FTS5 query every row holding all its words matches (None when it has
    no word): words, ``"phrases"`` (an unclosed quote runs to the end) and ``word*`` (words
    starting so), each quoted, so that nothing is read as FTS5 syntax."""
    terms: list[str] = []
    for match in _TERM.finditer(text):
        phrase, word, star = match.groups()
        if phrase is not None:
            words = _WORD.findall(phrase)
            if words:
                terms.append('"' + " ".join(words) + '"')
        elif word:
            terms.append(f'"{word}"' + ("*" if star else ""))
        if len(terms) == MAX_TERMS:
            break
    return " ".join(terms) if terms else None


def search_sql(condition: str) -> str:
    """The ``SELECT`` of the hits: the calls ``condition`` keeps (on ``answers``, read in a
    subquery of its own, so that its columns are never those of the search table)
    whose text matches the query, best first (bm25, a word in the question weighing three
    times one in the answer or a passage). Its parameters: the query, ``condition``'s, the
    limit, the query again. The best rows are chosen first, so that the snippets are made for
    them only."""
    rank = f"bm25({TABLE}, 3.0, 1.0, 1.0)"
    best = (
        f"SELECT {TABLE}.rowid FROM {TABLE} JOIN answers a ON a.id = {TABLE}.rowid "
        f"WHERE {TABLE} MATCH ? AND a.id IN (SELECT id FROM answers WHERE {condition}) "
        f"ORDER BY {rank}, a.id DESC LIMIT ?"
    )
    return (
        f"SELECT a.id, a.ts, a.provider, a.question, "
        f"snippet({TABLE}, -1, '{MARK_START}', '{MARK_END}', '…', 16), {rank} AS score "
        f"FROM {TABLE} JOIN answers a ON a.id = {TABLE}.rowid "
        f"WHERE {TABLE} MATCH ? AND {TABLE}.rowid IN ({best}) ORDER BY score, a.id DESC"
    )


def search_hits(log: Log, text: str, selection: LogSelection, limit: int) -> list[dict[str, Any]]:
    """The hits of ``Log.search``, best first, as dicts of ``SEARCH_COLUMNS`` (the score:
    higher is better; the words found between ``MARK_START`` and ``MARK_END``)."""
    from .query import row_limit, where_sql

    if not isinstance(text, str):
        raise TypeError(f"search() takes the words to search for, not {type(text).__name__}")
    count = row_limit(limit)
    query = match_query(text)
    if query is None or count == 0:
        return []
    if log.path.exists() and not has_index(log.connect()):
        raise NoSearchIndex(log.path)
    condition, params = where_sql(selection, errors=False)
    hits = []
    for row in log.fetch(search_sql(condition), [query, query, *params, count]):
        hit = dict(zip(SEARCH_COLUMNS, row, strict=True))
        when = hit["time"]
        hit["time"] = datetime.fromtimestamp(when, tz=UTC) if type(when) is float else None
        hit["snippet"] = hit["snippet"] or ""
        hit["score"] = -float(hit["score"])
        hits.append(hit)
    return hits


def starred(snippet: str | None) -> str:
    """A hit's snippet with the words found in ``**`` (Markdown's bold), as the search's frame,
    ``citekit log search --json`` and an unstyled terminal show it."""
    return (snippet or "").replace(MARK_START, "**").replace(MARK_END, "**")


def hits_frame(hits: list[dict[str, Any]]) -> pl.DataFrame:
    """The hits as ``Log.search`` gives them: a polars frame, the words found in ``**``."""
    import polars as pl

    rows = [{**hit, "snippet": starred(hit["snippet"])} for hit in hits]
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "id": pl.Int64,
        "time": pl.Datetime("us", "UTC"),
        "provider": pl.String,
        "question": pl.String,
        "snippet": pl.String,
        "score": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")
