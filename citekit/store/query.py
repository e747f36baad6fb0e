"""The log's queries: the columns read, and the SQL that chooses the rows of a selection
(``LogSelection``: the one place the filters are declared)."""

from __future__ import annotations

import operator
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Final

from ..core.columns import CITATION_COLUMNS, REFERENCE_COLUMNS
from ..core.fields import MAX_INT64

if TYPE_CHECKING:
    from .selection import LogSelection

ANSWER_COLUMNS = (
    "id, provider, question, response_json, references_json, notes_json, partial, text, "
    "citation_keys, text_elided, reference_keys"
)
#: The fields of a saved citation that the ``citations`` table holds as they were sent.
TABLE_FIELDS: Final = tuple(name for name in CITATION_COLUMNS if name != "marker")
SELECT_CITATIONS = (
    f"SELECT {', '.join(TABLE_FIELDS)} FROM citations WHERE answer = ? ORDER BY position"
)
#: The ``Reference`` fields the ``knowledge_references`` table holds, by their JSON names.
REFERENCE_FIELDS: Final = tuple(field for field in REFERENCE_COLUMNS.values() if field != "rank")
SELECT_REFERENCES = (
    "SELECT "
    + ", ".join(name for name, field in REFERENCE_COLUMNS.items() if field != "rank")
    + " FROM knowledge_references WHERE answer = ? ORDER BY rank"
)
#: The newest complete answer to a request key (the cache look-up).
LOOKUP = (
    f"SELECT {ANSWER_COLUMNS} FROM answers WHERE request_key = ? "
    "AND error_type IS NULL AND partial = 0 AND response_json IS NOT NULL "
    "ORDER BY id DESC LIMIT 1"
)
#: The answer of one row id.
BY_ID = f"SELECT {ANSWER_COLUMNS} FROM answers WHERE id = ? AND response_json IS NOT NULL"


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
LOG_NAMES = tuple(name for name, _ in LOG_SCHEMA)
_ROW_SQL = {name: ("ts" if name == "time" else name) for name, _ in LOG_SCHEMA}
#: The ``SELECT`` list for ``LOG_SCHEMA``, in its order.
LOG_COLUMNS = ", ".join(_ROW_SQL[name] for name in LOG_NAMES)


def timestamp(value: str | date | datetime | float | None) -> float | None:
    """Seconds since 1970 for a filter bound; naive dates and times are local time."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"since/until takes an ISO date or time ('2026-11-01', '2026-11-01T09:30', "
                f"'2026-11-01T09:30Z'), a date, a datetime or Unix seconds, not {value!r}"
            ) from None
    if not isinstance(value, date):
        raise TypeError(
            "since/until takes an ISO date or time string, a date, a datetime or Unix "
            f"seconds, not {type(value).__name__}"
        )
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return value.timestamp()  # naive datetimes are taken as local time


def row_limit(limit: int | None) -> int | None:
    """``limit`` as a row count (None for none); a ``ValueError`` unless it is a whole number
    from 0 to ``MAX_INT64``."""
    if limit is None:
        return None
    try:
        count = operator.index(limit)
    except TypeError:
        count = -1
    if not 0 <= count <= MAX_INT64:  # SQLite reads a negative LIMIT as none at all
        raise ValueError(
            f"limit= takes a number of rows, 0 or more (up to {MAX_INT64}; got {limit!r})"
        )
    return count


def row_id(value: int) -> int | None:
    """``value`` as a row id SQLite can hold, None when no row can have it (past SQLite's
    integers, where its driver raises ``OverflowError``)."""
    ident = operator.index(value)
    return ident if 1 <= ident <= MAX_INT64 else None


def _condition(selection: LogSelection, errors: bool) -> tuple[str, list[Any]]:
    where: list[str] = ["1 = 1"]
    params: list[Any] = []
    if selection.provider is not None:
        where.append("provider = ?")
        params.append(selection.provider)
    if (low := timestamp(selection.since)) is not None:
        where.append("ts >= ?")
        params.append(low)
    if (high := timestamp(selection.until)) is not None:
        where.append("ts < ?")
        params.append(high)
    if selection.question_contains:
        escaped = selection.question_contains.replace("\\", "\\\\").replace("%", "\\%")
        where.append("question LIKE ? ESCAPE '\\'")
        params.append("%" + escaped.replace("_", "\\_") + "%")
    if selection.samples is not None:
        where.append("sample IS NOT NULL" if selection.samples else "sample IS NULL")
    if selection.text is not None:
        where.append("id IN (SELECT rowid FROM log_text WHERE log_text MATCH ?)")
        params.append(selection.match or '""')  # no word: matches nothing
    if not errors:
        where.append("error_type IS NULL AND response_json IS NOT NULL")
    return " AND ".join(where), params


def where_sql(selection: LogSelection, *, errors: bool) -> tuple[str, list[Any]]:
    """The ``WHERE`` condition on ``answers`` choosing the selection's rows (``errors``: failed
    calls too), and its parameters. With a ``limit``, the most recent rows that pass."""
    condition, params = _condition(selection, errors)
    count = row_limit(selection.limit)
    if count is not None:
        condition = (
            f"id IN (SELECT id FROM answers WHERE {condition} ORDER BY id DESC LIMIT {count})"
        )
    if selection.part is not None:  # one partition of what the filters chose
        provider, month, first, last = selection.part
        condition = f"({condition}) AND id BETWEEN ? AND ? AND provider = ? AND {MONTH} = ?"
        params = [*params, first, last, provider, month]
    return condition, params


#: The dataset partition month of a row (``dataset.month_of`` of its answer): ``created_us`` as
#: a UTC month (seconds floored, also before 1970), or ``"undated"``.
MONTH = (
    "CASE WHEN created_us IS NULL THEN 'undated' ELSE strftime('%Y-%m', "
    "(created_us - ((created_us % 1000000) + 1000000) % 1000000) / 1000000, 'unixepoch') END"
)


def partitions_sql(selection: LogSelection) -> tuple[str, list[Any]]:
    """The ``SELECT`` of the selected answers' partitions (provider, month, first and last
    row id, rows), sorted by provider and month, and its parameters."""
    condition, params = where_sql(selection, errors=False)
    return (
        f"SELECT provider, {MONTH} AS month, MIN(id), MAX(id), COUNT(*) FROM answers "
        f"WHERE {condition} GROUP BY provider, month ORDER BY provider, month",
        params,
    )


def select_sql(columns: str, selection: LogSelection, *, errors: bool) -> tuple[str, list[Any]]:
    """The ``SELECT`` of ``columns`` from ``answers`` for the selection (newest first), and its
    parameters."""
    if selection.part is not None:
        condition, params = where_sql(selection, errors=errors)
        return f"SELECT {columns} FROM answers WHERE {condition} ORDER BY id DESC", params
    condition, params = _condition(selection, errors)
    sql = f"SELECT {columns} FROM answers WHERE {condition} ORDER BY id DESC"
    count = row_limit(selection.limit)
    if count is not None:
        sql += f" LIMIT {count}"
    return sql, params
