"""The log's rows: one call as ``answers``, ``citations`` and ``knowledge_references`` rows
(the sources' columns named as in ``citekit.core.columns``), the query behind the filters, and
rows read back as answers, dicts or a polars frame.

Large JSON is stored compressed (``pack`` / ``unpack``): a response's citations are in its JSON
and in the ``citations`` table, and zlib takes the JSON to about a quarter of its size, so that
a logged answer costs about what its response did (``bench/log.py`` measures it)."""

from __future__ import annotations

import json
import operator
import sqlite3
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final

from ..core.columns import CITATION_COLUMNS, REFERENCE_COLUMNS
from ..core.errors import ProviderError
from ..core.unicode import valid_text
from ..model import Answer, References
from ..text.reader import numbers
from ..wire.parsers import parse_response
from .keys import dumps, question_of, redacted, request_key
from .schema import write_transaction

if TYPE_CHECKING:
    import polars as pl

_CITATION_VALUES = attrgetter(*CITATION_COLUMNS)
_REFERENCE_VALUES = attrgetter(*REFERENCE_COLUMNS.values())
_INSERT_CITATION = (
    f"INSERT INTO citations (answer, position, {', '.join(CITATION_COLUMNS)}, cited_inline) "
    f"VALUES (?, ?{', ?' * len(CITATION_COLUMNS)}, ?)"
)
_INSERT_REFERENCE = (
    f"INSERT INTO knowledge_references (answer, {', '.join(REFERENCE_COLUMNS)}) "
    f"VALUES (?{', ?' * len(REFERENCE_COLUMNS)})"
)

ANSWER_COLUMNS = (
    "id, provider, question, response_json, references_json, notes_json, partial, text, "
    "citation_keys, text_elided, reference_keys"
)
#: The fields of a saved citation that the ``citations`` table holds as they were sent.
_TABLE_FIELDS: Final = tuple(name for name in CITATION_COLUMNS if name != "marker")
_SELECT_CITATIONS = (
    f"SELECT {', '.join(_TABLE_FIELDS)} FROM citations WHERE answer = ? ORDER BY position"
)
#: The ``Reference`` fields the ``knowledge_references`` table holds, by their JSON names.
_REFERENCE_FIELDS: Final = tuple(field for field in REFERENCE_COLUMNS.values() if field != "rank")
_SELECT_REFERENCES = (
    "SELECT "
    + ", ".join(name for name, field in REFERENCE_COLUMNS.items() if field != "rank")
    + " FROM knowledge_references WHERE answer = ? ORDER BY rank"
)

#: JSON shorter than this is stored as text (compressing it saves too little to pay).
PACK_FROM = 512
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

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
_LOG_NAMES = tuple(name for name, _ in LOG_SCHEMA)
_ROW_SQL = {name: ("ts" if name == "time" else name) for name, _ in LOG_SCHEMA}
#: The ``SELECT`` list for ``LOG_SCHEMA``, in its order.
LOG_COLUMNS = ", ".join(_ROW_SQL[name] for name in _LOG_NAMES)
_POLARS_TYPES: dict[str, Any] = {
    "int": lambda pl: pl.Int64,
    "float": lambda pl: pl.Float64,
    "str": lambda pl: pl.String,
    "bool": lambda pl: pl.Boolean,
    "time": lambda pl: pl.Datetime("us", "UTC"),
}


# writing ---------------------------------------------------------------------------------
def stored_once(
    saved: Any, held: Sequence[Any], fields: Sequence[str]
) -> tuple[list[Any], Any] | None:
    """How a response's list of objects (citations, knowledge chunks) is stored once, in its
    table: the objects' keys (a list of keys when every object has the same ones in the same
    order, else one such list per object; each key a field of ``held``, the values the table
    holds) and what the JSON keeps of them: each value the table holds as it was sent is left
    out (None when that is all of them, else one object per item with the values the table
    holds otherwise, such as a text whose HTML entities the table holds decoded). None when the
    list cannot be stored so (it stays in the JSON)."""
    if type(saved) is not list or not saved or len(saved) != len(held):
        return None
    allowed = set(fields)
    keys: list[list[str]] = []
    patches: list[dict[str, Any]] = []
    getters: dict[tuple[str, ...], Callable[[Any], Any]] = {}
    for item, value in zip(saved, held, strict=True):
        if type(item) is not dict or not allowed.issuperset(item):
            return None
        names = tuple(item)
        keys.append(list(names))
        getter = getters.get(names)
        if getter is None:
            getter = getters[names] = _getter(names)
        sent, kept = tuple(item.values()), getter(value)
        if sent == kept and tuple(map(type, sent)) == tuple(map(type, kept)):
            patches.append({})  # the common case: every value as the table holds it
            continue
        patches.append(
            {
                name: a
                for name, a, b in zip(names, sent, kept, strict=True)
                if type(a) is not type(b) or a != b
            }
        )
    same = all(k == keys[0] for k in keys)
    return (keys[0] if same else keys), (patches if any(patches) else None)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of fields ``names`` of an object, as a tuple (also for one or none)."""
    if not names:
        return lambda _: ()
    get = attrgetter(*names)
    return (lambda value: (get(value),)) if len(names) == 1 else get


def put_back(keys: str, kept: Any, found: list[tuple[Any, ...]], fields: Sequence[str]) -> Any:
    """The list :func:`stored_once` stored: ``found`` are the table's rows of ``fields``."""
    names = json.loads(keys)
    each = names if names and isinstance(names[0], list) else [names] * len(found)
    patches = kept if isinstance(kept, list) else [{}] * len(found)
    return [
        {name: patch[name] if name in patch else values[name] for name in item_names}
        for item_names, patch, values in zip(
            each,
            patches,
            (dict(zip(fields, row, strict=True)) for row in found),
            strict=True,
        )
    ]


def _elide_text(saved: dict[str, Any], text: str | None) -> bool:
    """Leave the text out of a ``chat.completion`` body when it is the ``text`` column's."""
    choices = saved.get("choices")
    if text is None or type(choices) is not list or not choices or type(choices[0]) is not dict:
        return False
    message = choices[0].get("message")
    if type(message) is not dict or message.get("content") != text:
        return False
    saved["choices"] = [{**choices[0], "message": {**message, "content": None}}, *choices[1:]]
    return True


def _restore_text(raw: dict[str, Any], text: str) -> None:
    choice = raw["choices"][0]
    raw["choices"][0] = {**choice, "message": {**choice["message"], "content": text}}


def pack(text: str | None) -> str | bytes | None:
    """JSON text as stored: compressed by zlib (a BLOB) when it is long and that is smaller."""
    if text is None or len(text) < PACK_FROM:
        return text
    data = valid_text(text).encode()
    packed = zlib.compress(data, 6)
    return packed if len(packed) < len(data) else text


def unpack(value: str | bytes | None) -> str | None:
    """A stored JSON column as text (see :func:`pack`); text written by any schema reads as is."""
    if isinstance(value, bytes):
        return zlib.decompress(value).decode()
    return value


def micros(value: datetime | None) -> int | None:
    """An aware datetime as whole microseconds since 1970 UTC (what ``created_us`` holds)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _MICROSECOND


def tools_json(answer: Answer) -> str | None:
    """``Usage.tools`` of ``answer`` as JSON text, None when it has none."""
    tools = answer.usage.tools if answer.usage is not None else None
    return json.dumps(dict(tools)) if tools else None


def answer_row(
    answer: Answer | None,
    provider: str,
    request: Mapping[str, Any] | None,
    base_url: str | None,
    elapsed: float | None,
    error: BaseException | None,
    stream: bool,
    secrets: Sequence[str],
    *,
    ts: float,
    pid: int,
) -> dict[str, Any]:
    """The ``answers`` row of one call, column name to value, with the secrets taken out."""
    row: dict[str, Any] = {
        "ts": ts,
        "provider": provider,
        "base_url": base_url,
        "request_key": request_key(provider, request, base_url) if request is not None else None,
        "request_json": dumps(request, secrets, request=True),
        "stream": int(stream),
        "elapsed": elapsed,
        "pid": pid,
    }
    if answer is not None:
        usage = answer.usage
        # What the tables hold is left out of the JSON (answer_from_row puts it back).
        text = redacted(answer.text, secrets)
        saved = dict(answer.raw)
        keys = refs_keys = None
        once = stored_once(saved.get("citations"), answer.citations, _TABLE_FIELDS)
        if once is not None:
            keys, saved["citations"] = once
        elided = _elide_text(saved, text)
        refs_saved = dict(answer.references.raw) if answer.references is not None else None
        if refs_saved is not None and answer.references is not None:
            once = stored_once(
                refs_saved.get("correlate_dataset"), answer.references.items, _REFERENCE_FIELDS
            )
            if once is not None:
                refs_keys, refs_saved["correlate_dataset"] = once
        row.update(
            question=redacted(answer.question, secrets),
            model=answer.model,
            answer_id=answer.id,
            conversation_id=answer.conversation_id,
            finish_reason=answer.finish_reason,
            text=text,
            response_json=pack(dumps(saved, secrets)),
            citation_keys=json.dumps(keys) if keys is not None else None,
            text_elided=int(elided),
            references_json=pack(dumps(refs_saved, secrets)) if answer.references else None,
            reference_keys=json.dumps(refs_keys) if refs_keys is not None else None,
            notes_json=json.dumps([redacted(n, secrets) for n in answer.notes], ensure_ascii=False),
            partial=int(answer.partial),
            n_citations=len(answer.citations),
            n_references=len(answer.references or ()),
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            total_tokens=usage.total_tokens if usage else None,
            sample=answer.sample,
            created_us=micros(answer.created),
            tools_json=tools_json(answer),
        )
    elif request is not None:
        row["question"] = redacted(question_of(request), secrets)
    if error is not None:
        row.update(
            error_type=type(error).__name__,
            error_message=redacted(str(error), secrets, tokens=True),
            error_status=getattr(error, "status", None)
            if isinstance(error, ProviderError)
            else None,
            error_code=(
                redacted(str(error.code), secrets)
                if isinstance(error, ProviderError) and error.code is not None
                else None
            ),
        )
    return row


def insert(conn: sqlite3.Connection, row: Mapping[str, Any], answer: Answer | None) -> int:
    """Write ``row`` and the answer's citations and references in one transaction; its id."""
    with write_transaction(conn):
        return insert_many(conn, [(row, answer)])[0]


def insert_many(
    conn: sqlite3.Connection, calls: Sequence[tuple[Mapping[str, Any], Answer | None]]
) -> list[int]:
    """Write each call's ``answers`` row, citations and references (in the caller's
    transaction: one for many calls is what makes writing many fast); their ids."""
    ids: list[int] = []
    citations: list[list[Any]] = []
    references: list[list[Any]] = []
    for row, answer in calls:
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        values = _valid([*row.values()])
        cur = conn.execute(f"INSERT INTO answers ({columns}) VALUES ({marks})", values)
        row_id = int(cur.lastrowid or 0)
        ids.append(row_id)
        if answer is not None and answer.citations:
            citations += citation_rows(row_id, row.get("text"), answer)
        if answer is not None and answer.references:
            references += [_valid([row_id, *_REFERENCE_VALUES(r)]) for r in answer.references]
    if citations:
        conn.executemany(_INSERT_CITATION, citations)
    if references:
        conn.executemany(_INSERT_REFERENCE, references)
    return ids


def citation_rows(row_id: int, text: str | None, answer: Answer) -> list[list[Any]]:
    """The ``citations`` rows of ``answer``: ``cited_inline`` says whether a citation's marker is
    read in ``text`` (the logged text, which the rebuilt answer has: ``Answer.cited_markers``)."""
    cited = numbers(text) if text else frozenset()
    return [
        _valid([row_id, i, *_CITATION_VALUES(c), int(c.document_index + 1 in cited)])
        for i, c in enumerate(answer.citations)
    ]


def _valid(values: list[Any]) -> list[Any]:
    """Every text value as valid Unicode (SQLite stores UTF-8: a lone surrogate cannot go)."""
    return [valid_text(v) if type(v) is str and not v.isascii() else v for v in values]


# selecting -------------------------------------------------------------------------------
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


def where_sql(
    *,
    provider: str | None,
    since: str | date | datetime | float | None,
    until: str | date | datetime | float | None,
    question_contains: str | None,
    errors: bool,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` condition on ``answers`` for the filters, and its parameters."""
    where: list[str] = ["1 = 1"]
    params: list[Any] = []
    if provider is not None:
        where.append("provider = ?")
        params.append(provider)
    if (low := timestamp(since)) is not None:
        where.append("ts >= ?")
        params.append(low)
    if (high := timestamp(until)) is not None:
        where.append("ts < ?")
        params.append(high)
    if question_contains:
        escaped = question_contains.replace("\\", "\\\\").replace("%", "\\%")
        where.append("question LIKE ? ESCAPE '\\'")
        params.append("%" + escaped.replace("_", "\\_") + "%")
    if not errors:
        where.append("error_type IS NULL AND response_json IS NOT NULL")
    return " AND ".join(where), params


def select_sql(
    columns: str,
    *,
    provider: str | None,
    since: str | date | datetime | float | None,
    until: str | date | datetime | float | None,
    question_contains: str | None,
    limit: int | None,
    errors: bool,
) -> tuple[str, list[Any]]:
    """The ``SELECT`` of ``columns`` from ``answers`` for the filters (newest first), and its
    parameters."""
    condition, params = where_sql(
        provider=provider,
        since=since,
        until=until,
        question_contains=question_contains,
        errors=errors,
    )
    sql = f"SELECT {columns} FROM answers WHERE {condition} ORDER BY id DESC"
    if limit is not None:
        try:
            count = operator.index(limit)
        except TypeError:
            count = -1
        if count < 0:  # SQLite reads a negative LIMIT as none at all
            raise ValueError(f"limit= takes a number of rows, 0 or more (got {limit!r})")
        sql += f" LIMIT {count}"
    return sql, params


# reading ---------------------------------------------------------------------------------
def text_only_answer(row: tuple[Any, ...]) -> Answer | None:
    """What a row of ``ANSWER_COLUMNS`` whose JSON cannot be rebuilt still holds: its provider,
    question and text (None when it has no text), with a note saying so."""
    row_id, provider, question, _, _, _, partial, text, *_ = row
    if text is None or not isinstance(provider, str):
        return None
    note = f"rebuilt from the logged text only: the saved response of row {row_id} is unreadable"
    return Answer(
        provider=provider, text=text, question=question, partial=bool(partial), notes=(note,)
    )


def answer_from_row(
    row: tuple[Any, ...], conn: sqlite3.Connection, *, cached: bool = False
) -> Answer:
    """The answer rebuilt from a row of ``ANSWER_COLUMNS`` (its citations read from the
    ``citations`` table through ``conn`` when the saved JSON left them there)."""
    (row_id, provider, question, response_json, references_json, notes_json, partial, text,
     keys, elided, refs_keys) = row  # fmt: skip
    raw = json.loads(unpack(response_json) or "null")
    if keys is not None and isinstance(raw, dict):
        found = conn.execute(_SELECT_CITATIONS, (row_id,)).fetchall()
        raw["citations"] = put_back(keys, raw.get("citations"), found, _TABLE_FIELDS)
    if elided and isinstance(raw, dict):
        _restore_text(raw, text)
    answer = parse_response(raw, provider=provider, question=question)
    changes: dict[str, Any] = {"partial": bool(partial), "cached": cached}
    if text is not None and text != answer.text:
        # A streamed reply's assembled JSON may not carry the text where a blocking reply
        # does (GPTBots): the text as received is kept in its own column.
        changes["text"] = text
        changes["outputs"] = answer.outputs or ((text,) if text else ())
    if notes_json:
        changes["notes"] = tuple(json.loads(notes_json))
    if references_json:
        saved = json.loads(unpack(references_json) or "null")
        if refs_keys is not None and isinstance(saved, dict):
            found = conn.execute(_SELECT_REFERENCES, (row_id,)).fetchall()
            saved["correlate_dataset"] = put_back(
                refs_keys, saved.get("correlate_dataset"), found, _REFERENCE_FIELDS
            )
        changes["references"] = References.from_response(saved, message_id=answer.id)
    return replace(answer, **changes)


def log_row(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of ``LOG_COLUMNS`` as a dict: an aware ``time``, ``stream`` and ``partial`` bools."""
    item = dict(zip(_LOG_NAMES, row, strict=True))
    item["time"] = datetime.fromtimestamp(item["time"], tz=UTC)
    for flag in ("stream", "partial"):
        item[flag] = bool(item[flag])
    return item


def log_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """``rows`` from ``log_row`` as a polars frame typed by ``LOG_SCHEMA``."""
    import polars as pl

    schema = {name: _POLARS_TYPES[kind](pl) for name, kind in LOG_SCHEMA}
    return pl.DataFrame(rows, schema=schema)


# migrating -------------------------------------------------------------------------------
def fill_v3(conn: sqlite3.Connection) -> None:
    """Fill the columns schema 3 added (``created_us``, ``tools_json``, ``cited_inline``) in
    the rows of an older file, from each answer rebuilt as ``Log.answers`` rebuilds it; a row
    whose JSON cannot be rebuilt keeps them null. The JSON is left as it was written."""
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
