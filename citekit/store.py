"""The local log of every answer: one SQLite file shared by notebooks, scripts and processes.

Each call to a provider becomes one row of ``answers`` (request body without secrets, the
response JSON, timings, the error if any) with its ``citations`` and ``references`` rows.
The file lives at ``$CITEKIT_HOME/log.sqlite3``, or in the user's data directory
(``~/.local/share/citekit`` on Linux, ``~/Library/Application Support/citekit`` on macOS,
``%LOCALAPPDATA%\\citekit`` on Windows). ``CITEKIT_LOG=0`` turns recording off.

The file is opened in WAL mode with a busy timeout and every answer is written in one
``BEGIN IMMEDIATE`` transaction, so several processes can write at once and a process killed
mid-write leaves a file that still opens. With caching on (``cache=True`` per call, ``with
log.options(cache=True)``, or ``CITEKIT_CACHE=1``) a request identical to a logged one (same
provider, base URL and body) is answered from the log, with ``Answer.cached == True``.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import json
import os
import re
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._errors import CitekitWarning, ProviderError, StreamInterrupted
from ._models import Answer, References

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Log", "LogWarning", "LoggedCall", "default_path", "log"]

HOME_ENV = "CITEKIT_HOME"
LOG_ENV = "CITEKIT_LOG"
CACHE_ENV = "CITEKIT_CACHE"
FILE_NAME = "log.sqlite3"
SCHEMA_VERSION = 1
#: How many answers the in-memory cache in front of the file keeps.
MEMO_SIZE = 2048
#: Environment variables whose values never reach the file, whatever a caller passes.
KEY_ENVS = ("MAGISTERIUM_API_KEY", "MARITACA_API_KEY", "GPTBOTS_API_KEY")
_SECRET_FIELDS = frozenset(
    {"authorization", "api_key", "apikey", "api-key", "x-api-key", "password", "secret"}
)
#: Body fields that do not change the answer (a streamed and a blocking call share a row).
_TRANSPORT_FIELDS = ("stream", "stream_options", "response_mode")
_FALSE = ("0", "false", "no", "off", "")

_log_var: ContextVar[bool | None] = ContextVar("citekit_log", default=None)
_cache_var: ContextVar[bool | None] = ContextVar("citekit_cache", default=None)

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


class LogWarning(CitekitWarning):
    """The answer log could not be written or read; the answer itself is unaffected."""


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


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in _FALSE


def canonical_json(body: Any) -> str:
    """``body`` as compact JSON with sorted keys: equal requests give equal text."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(provider: str, body: Any, base_url: str | None = None) -> str:
    """The cache key: a hash of provider, base URL and canonical body (transport fields out)."""
    if isinstance(body, Mapping):
        body = {k: v for k, v in body.items() if k not in _TRANSPORT_FIELDS}
    text = canonical_json({"provider": provider, "base_url": base_url, "body": body})
    return hashlib.sha256(text.encode()).hexdigest()


def _scrub(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: "***" if str(k).lower() in _SECRET_FIELDS else _scrub(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


#: ``Bearer <token>`` / ``Key <token>`` as an Authorization value would carry it.
_TOKEN_RE = re.compile(r"(?i)\b(bearer|key)(\s+)(?=[^\s\d]*\d)[A-Za-z0-9._~+/=-]{8,}")


def _redacted(text: str | None, secrets: Sequence[str], *, tokens: bool = False) -> str | None:
    """``text`` without the secrets; with ``tokens``, without anything shaped like one.

    Only request bodies and error messages are searched for token shapes: answer text is
    prose, where "key" and "bearer" are words.
    """
    if text is None:
        return None
    if tokens:
        text = _TOKEN_RE.sub(r"\1\2***", text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
            escaped = json.dumps(secret)[1:-1]
            if escaped != secret:
                text = text.replace(escaped, "***")
    return text


def _dumps(value: Any, secrets: Sequence[str], *, request: bool = False) -> str | None:
    """JSON text for a column: a request is walked for key-like fields and token shapes; a
    response (large, and written by the provider) only has the known secrets replaced."""
    if value is None:
        return None
    if request:
        return _redacted(canonical_json(_scrub(value)), secrets, tokens=True)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return _redacted(text, secrets)


def _timestamp(value: str | date | datetime | float | None) -> float | None:
    """Seconds since 1970 for a filter bound; naive dates and times are local time."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return value.timestamp()  # naive datetimes are taken as local time


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
        self._local = threading.local()
        self._ready: set[tuple[int, str]] = set()
        self._ready_lock = threading.Lock()
        # Answers are immutable and a logged row never changes: the newest answer per request
        # key is kept in memory (written through on record, filled on lookup).
        self._memo: collections.OrderedDict[tuple[str, str], Answer] = collections.OrderedDict()
        self._memo_lock = threading.Lock()

    def _remember(self, key: tuple[str, str], answer: Answer) -> None:
        with self._memo_lock:
            self._memo[key] = answer
            self._memo.move_to_end(key)
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)

    def forget(self) -> None:
        """Empty the in-memory cache (the file keeps everything)."""
        with self._memo_lock:
            self._memo.clear()

    def _recall(self, key: tuple[str, str]) -> Answer | None:
        with self._memo_lock:
            found = self._memo.get(key)
            if found is not None:
                self._memo.move_to_end(key)
            return found

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else default_path()

    def __repr__(self) -> str:
        return f"Log({str(self.path)!r}, enabled={self.enabled})"

    # switches ----------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether answers are recorded here (``CITEKIT_LOG``, then ``options(log=)``)."""
        flag = _log_var.get()
        return _env_flag(LOG_ENV, True) if flag is None else flag

    def cache_enabled(self, cache: bool | None = None) -> bool:
        if cache is not None:
            return cache
        flag = _cache_var.get()
        return _env_flag(CACHE_ENV, False) if flag is None else flag

    @contextlib.contextmanager
    def options(self, *, log: bool | None = None, cache: bool | None = None) -> Iterator[None]:
        """Within the block (and tasks started in it) turn logging and caching on or off."""
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
        """This thread's connection to the file (created, with its schema, on first use)."""
        path = self.path
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
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
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
        """Close this thread's connections (others close when their thread ends)."""
        conns = getattr(self._local, "conns", {})
        for conn in conns.values():
            conn.close()
        conns.clear()

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

        Never raises: a log that cannot be written gives a ``LogWarning``.
        """
        if not (self.enabled if log is None else log):
            return None
        if answer is not None and answer.cached:
            return None
        name = answer.provider if answer is not None else provider
        if name is None:
            raise ValueError("record(None, ...) needs provider=")
        hidden = [*secrets, *(os.environ.get(k, "") for k in KEY_ENVS)]
        try:
            row_id = self._insert(answer, name, request, base_url, elapsed, error, stream, hidden)
        except sqlite3.Error as exc:
            warnings.warn(
                f"citekit could not write the answer log {self.path}: {exc}",
                LogWarning,
                stacklevel=2,
            )
            return None
        if answer is not None and error is None and request is not None and not answer.partial:
            key = (str(self.path), row_id[1] or request_key(name, request, base_url))
            self._remember(key, replace(answer, cached=True))
        return row_id[0]

    def _insert(
        self,
        answer: Answer | None,
        provider: str,
        request: Mapping[str, Any] | None,
        base_url: str | None,
        elapsed: float | None,
        error: BaseException | None,
        stream: bool,
        secrets: Sequence[str],
    ) -> tuple[int, str | None]:
        if answer is None and isinstance(error, StreamInterrupted):
            answer = error.answer
        row: dict[str, Any] = {
            "ts": time.time(),
            "provider": provider,
            "base_url": base_url,
            "request_key": (
                request_key(provider, request, base_url) if request is not None else None
            ),
            "request_json": _dumps(request, secrets, request=True),
            "stream": int(stream),
            "elapsed": elapsed,
            "pid": os.getpid(),
        }
        if answer is not None:
            usage = answer.usage
            row.update(
                question=_redacted(answer.question, secrets),
                model=answer.model,
                answer_id=answer.id,
                conversation_id=answer.conversation_id,
                finish_reason=answer.finish_reason,
                text=_redacted(answer.text, secrets),
                response_json=_dumps(dict(answer.raw), secrets),
                references_json=(
                    _dumps(dict(answer.references.raw), secrets) if answer.references else None
                ),
                notes_json=json.dumps(list(answer.notes), ensure_ascii=False),
                partial=int(answer.partial),
                n_citations=len(answer.citations),
                n_references=len(answer.references or ()),
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
                total_tokens=usage.total_tokens if usage else None,
                sample=answer.sample,
            )
        elif request is not None:
            row["question"] = _redacted(_question_of(request), secrets)
        if error is not None:
            row.update(
                error_type=type(error).__name__,
                error_message=_redacted(str(error), secrets, tokens=True),
                error_status=getattr(error, "status", None)
                if isinstance(error, ProviderError)
                else None,
                error_code=(
                    str(error.code)
                    if isinstance(error, ProviderError) and error.code is not None
                    else None
                ),
            )
        conn = self.connect()
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        conn.execute("BEGIN IMMEDIATE")
        try:
            cur = conn.execute(
                f"INSERT INTO answers ({columns}) VALUES ({marks})", list(row.values())
            )
            row_id = int(cur.lastrowid or 0)
            if answer is not None and answer.citations:
                conn.executemany(
                    "INSERT INTO citations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (row_id, i, c.marker, c.document_index, c.cited_text,
                         c.cited_text_heading, c.document_title, c.document_author,
                         c.document_year, c.document_reference, c.source_url)
                        for i, c in enumerate(answer.citations)
                    ],
                )  # fmt: skip
            if answer is not None and answer.references:
                conn.executemany(
                    "INSERT INTO knowledge_references VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (row_id, r.rank, r.data_id, r.data_name, r.source_url, r.score,
                         r.content)
                        for r in answer.references
                    ],
                )  # fmt: skip
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return row_id, row["request_key"]

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
        path = self.path
        key = request_key(provider, request, base_url)
        memo_key = (str(path), key)
        found = self._recall(memo_key)
        if found is not None:
            return found
        if not path.exists():
            return None
        try:
            row = (
                self.connect()
                .execute(
                    f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE request_key = ? "
                    "AND error_type IS NULL AND partial = 0 AND response_json IS NOT NULL "
                    "ORDER BY id DESC LIMIT 1",
                    (key,),
                )
                .fetchone()
            )
        except sqlite3.Error as exc:
            warnings.warn(f"citekit could not read {path}: {exc}", LogWarning, stacklevel=2)
            return None
        if row is None:
            return None
        found = _answer_from_row(row, cached=True)
        self._remember(memo_key, found)
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
        if not self.path.exists():
            return []
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if provider is not None:
            where.append("provider = ?")
            params.append(provider)
        if (low := _timestamp(since)) is not None:
            where.append("ts >= ?")
            params.append(low)
        if (high := _timestamp(until)) is not None:
            where.append("ts < ?")
            params.append(high)
        if question_contains:
            escaped = question_contains.replace("\\", "\\\\").replace("%", "\\%")
            where.append("question LIKE ? ESCAPE '\\'")
            params.append("%" + escaped.replace("_", "\\_") + "%")
        if not errors:
            where.append("error_type IS NULL AND response_json IS NOT NULL")
        sql = f"SELECT {columns} FROM answers WHERE {' AND '.join(where)} ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
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
        """
        rows = self._select(
            _ANSWER_COLUMNS,
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=False,
        )
        return [_answer_from_row(row) for row in rows]

    def get(self, row_id: int) -> Answer:
        """The answer logged as row ``row_id`` (``KeyError`` if none)."""
        found = []
        if self.path.exists():
            found = (
                self.connect()
                .execute(
                    f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE id = ? AND "
                    "response_json IS NOT NULL",
                    (int(row_id),),
                )
                .fetchall()
            )
        if not found:
            raise KeyError(f"No answer with id {row_id} in {self.path}")
        return _answer_from_row(found[0])

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
        """The log rows (one dict per call, failed ones included), oldest first."""
        names = [name for name, _ in LOG_SCHEMA]
        rows = self._select(
            ", ".join(_ROW_SQL[n] for n in names),
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=errors,
        )
        out = []
        for row in rows:
            item = dict(zip(names, row, strict=True))
            item["time"] = datetime.fromtimestamp(item["time"], tz=UTC)
            for flag in ("stream", "partial"):
                item[flag] = bool(item[flag])
            out.append(item)
        return out

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
        """The log rows as a polars frame with the ``LOG_SCHEMA`` columns."""
        import polars as pl

        rows = self.rows(
            provider=provider,
            since=since,
            until=until,
            question_contains=question_contains,
            limit=limit,
            errors=errors,
        )
        schema = {name: _POLARS_TYPES[kind](pl) for name, kind in LOG_SCHEMA}
        return pl.DataFrame(rows, schema=schema)

    def count(self) -> int:
        """How many calls the log holds (failed ones included)."""
        if not self.path.exists():
            return 0
        return int(self.connect().execute("SELECT count(*) FROM answers").fetchone()[0])


_ANSWER_COLUMNS = (
    "id, provider, question, response_json, references_json, notes_json, partial, text"
)

#: Columns of ``Log.frame`` / ``Log.rows``: (name, kind).
LOG_SCHEMA: tuple[tuple[str, str], ...] = (
    ("id", "int"),
    ("time", "time"),
    ("provider", "str"),
    ("model", "str"),
    ("question", "str"),
    ("text", "str"),
    ("answer_id", "str"),
    ("conversation_id", "str"),
    ("finish_reason", "str"),
    ("n_citations", "int"),
    ("n_references", "int"),
    ("prompt_tokens", "int"),
    ("completion_tokens", "int"),
    ("total_tokens", "int"),
    ("elapsed", "float"),
    ("stream", "bool"),
    ("partial", "bool"),
    ("sample", "str"),
    ("base_url", "str"),
    ("error_type", "str"),
    ("error_message", "str"),
    ("error_status", "int"),
    ("error_code", "str"),
)
_ROW_SQL = {name: ("ts" if name == "time" else name) for name, _ in LOG_SCHEMA}
_POLARS_TYPES: dict[str, Any] = {
    "int": lambda pl: pl.Int64,
    "float": lambda pl: pl.Float64,
    "str": lambda pl: pl.String,
    "bool": lambda pl: pl.Boolean,
    "time": lambda pl: pl.Datetime("us", "UTC"),
}


def _question_of(request: Mapping[str, Any]) -> str | None:
    messages = request.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role", "user") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else None
    question = request.get("question")
    return question if isinstance(question, str) else None


def _answer_from_row(row: tuple[Any, ...], *, cached: bool = False) -> Answer:
    _, provider, question, response_json, references_json, notes_json, partial, text = row
    raw = json.loads(response_json)
    answer = Answer.from_response(raw, provider=provider, question=question)
    changes: dict[str, Any] = {"partial": bool(partial), "cached": cached}
    if text is not None and text != answer.text:
        # A streamed reply's assembled JSON may not carry the text where a blocking reply
        # does (GPTBots): the text as received is kept in its own column.
        changes["text"] = text
        changes["outputs"] = answer.outputs or ((text,) if text else ())
    if notes_json:
        changes["notes"] = tuple(json.loads(notes_json))
    if references_json:
        changes["references"] = References.from_response(
            json.loads(references_json), message_id=answer.id
        )
    return replace(answer, **changes)


class LoggedCall:
    """One provider call seen by the log; made by ``Log.call``."""

    def __init__(
        self,
        log: Log,
        provider: str,
        request: Mapping[str, Any] | None,
        base_url: str | None,
        secrets: tuple[str, ...],
        stream: bool,
        cache: bool | None,
        enabled: bool | None,
    ) -> None:
        self.log = log
        self.provider = provider
        self.request = request
        self.base_url = base_url
        self.secrets = secrets
        self.stream = stream
        self.enabled = enabled
        self.cached: Answer | None = None
        if request is not None:
            self.cached = log.lookup(provider, request, base_url=base_url, cache=cache)
        self.started = time.perf_counter()
        self.row_id: int | None = None
        self._finished = False

    def __enter__(self) -> LoggedCall:
        return self

    def done(self, answer: Answer) -> Answer:
        """Record ``answer`` (unless it came from the cache) and return it."""
        self._finished = True
        if answer.cached:
            return answer
        self.row_id = self.log.record(
            answer,
            request=self.request,
            base_url=self.base_url,
            elapsed=time.perf_counter() - self.started,
            stream=self.stream,
            secrets=self.secrets,
            log=self.enabled,
        )
        return answer

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Cancellation and Ctrl-C are the caller's doing, not the provider's: not recorded.
        if exc is None or self._finished or not isinstance(exc, Exception):
            return
        self._finished = True
        self.row_id = self.log.record(
            None,
            provider=self.provider,
            request=self.request,
            base_url=self.base_url,
            elapsed=time.perf_counter() - self.started,
            error=exc,
            stream=self.stream,
            secrets=self.secrets,
            log=self.enabled,
        )


#: The log every client writes to (``citekit.log``).
log = Log()
