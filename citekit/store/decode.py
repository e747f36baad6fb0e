"""The log's rows read back: answers rebuilt from their saved JSON (what the tables hold put
back into it), and rows of ``LOG_SCHEMA`` as dicts or a polars frame.

A damaged row (a cell of the wrong type or past its column's integers, JSON that does not
parse, text that is not UTF-8) never hides the others: ``typed_frame`` and ``log_row`` read
such a cell as null, the reads name the rows in one ``LogWarning`` (``warn_damaged``).
"""

from __future__ import annotations

import json
import math
import sqlite3
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..model import Answer, References
from ..wire.parsers import parse_response
from .query import (
    LOG_NAMES,
    LOG_SCHEMA,
    REFERENCE_FIELDS,
    SELECT_CITATIONS,
    SELECT_REFERENCES,
    TABLE_FIELDS,
)

if TYPE_CHECKING:
    import polars as pl

_POLARS_TYPES: dict[str, Any] = {
    "int": lambda pl: pl.Int64,
    "float": lambda pl: pl.Float64,
    "str": lambda pl: pl.String,
    "bool": lambda pl: pl.Boolean,
    "time": lambda pl: pl.Datetime("us", "UTC"),
}


def put_back(keys: str, kept: Any, found: list[tuple[Any, ...]], fields: Sequence[str]) -> Any:
    """The list ``encode.stored_once`` stored: ``found`` are the table's rows of ``fields``."""
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


def _restore_text(raw: dict[str, Any], text: str) -> None:
    choice = raw["choices"][0]
    raw["choices"][0] = {**choice, "message": {**choice["message"], "content": text}}


def unpack(value: str | bytes | None) -> str | None:
    """A stored JSON column as text (``encode.pack``); text written by any schema reads as is."""
    if isinstance(value, bytes):
        return zlib.decompress(value).decode()
    return value


def text_only_answer(row: tuple[Any, ...]) -> Answer | None:
    """What a row of ``ANSWER_COLUMNS`` whose JSON cannot be rebuilt still holds: its provider,
    question and text (None when it has no text), with a note saying so."""
    row_id, provider, question, _, _, _, partial, text, *_ = row
    if not isinstance(text, str) or not isinstance(provider, str):
        return None
    note = f"rebuilt from the logged text only: the saved response of row {row_id} is unreadable"
    return Answer(
        provider=provider,
        text=text,
        question=question if isinstance(question, str) else None,
        partial=partial == 1,
        notes=(note,),
    )


def answer_from_row(
    row: tuple[Any, ...], conn: sqlite3.Connection, *, cached: bool = False
) -> Answer:
    """The answer rebuilt from a row of ``ANSWER_COLUMNS`` (its citations read from the
    ``citations`` table through ``conn`` when the saved JSON left them there)."""
    (row_id, provider, question, response_json, references_json, notes_json, partial, text,
     keys, elided, refs_keys) = row  # fmt: skip
    if not isinstance(provider, str) or not all(
        v is None or isinstance(v, str) for v in (question, text, notes_json, keys, refs_keys)
    ):
        raise ValueError(f"row {row_id} of the log is damaged: a text column holds no text")
    raw = json.loads(unpack(response_json) or "null")
    if keys is not None and isinstance(raw, dict):
        found = conn.execute(SELECT_CITATIONS, (row_id,)).fetchall()
        raw["citations"] = put_back(keys, raw.get("citations"), found, TABLE_FIELDS)
    if elided and isinstance(raw, dict):
        _restore_text(raw, text)
    answer = parse_response(raw, provider=provider, question=question)
    changes: dict[str, Any] = {"partial": bool(partial), "cached": cached}
    if text is not None and text != answer.text:
        # A streamed reply's assembled JSON may not carry the text where a blocking reply
        # does (GPTBots): the text as received is kept in its own column.
        changes["text"] = text
    if notes_json:
        changes["notes"] = tuple(json.loads(notes_json))
    if references_json:
        saved = json.loads(unpack(references_json) or "null")
        if refs_keys is not None and isinstance(saved, dict):
            found = conn.execute(SELECT_REFERENCES, (row_id,)).fetchall()
            saved["correlate_dataset"] = put_back(
                refs_keys, saved.get("correlate_dataset"), found, REFERENCE_FIELDS
            )
        changes["references"] = References.from_response(saved, message_id=answer.id)
    return replace(answer, **changes)


def _fits(value: Any, dtype: Any) -> bool:
    """Whether a cell SQLite gave is a value of the polars ``dtype`` (or null)."""
    import polars as pl

    if value is None:
        return True
    if dtype.is_integer():
        bits = {pl.Int8: 8, pl.Int16: 16, pl.Int32: 32, pl.Int64: 64}.get(dtype.base_type(), 64)
        return type(value) is int and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    if dtype.is_float():
        return type(value) in (int, float)
    if dtype == pl.String:
        return type(value) is str
    if dtype == pl.Boolean:
        return type(value) is bool or (type(value) is int and value in (0, 1))
    return True


def typed_frame(
    rows: list[tuple[Any, ...]], schema: Mapping[str, Any], damaged: list[Any]
) -> pl.DataFrame:
    """``rows`` as a polars frame of ``schema``; a cell that is not of its column's type (a
    damaged file) is null, and its row's first cell is added to ``damaged``."""
    import polars as pl

    try:
        return pl.DataFrame(rows, schema=dict(schema), orient="row")
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
        pass
    dtypes = list(schema.values())
    cleaned = []
    for row in rows:
        cells = tuple(v if _fits(v, t) else None for v, t in zip(row, dtypes, strict=True))
        if cells != row:
            damaged.append(row[0])
        cleaned.append(cells)
    return pl.DataFrame(cleaned, schema=dict(schema), orient="row")


def json_cell(value: Any, row_id: Any, damaged: list[Any]) -> Any:
    """A stored JSON column (``unpack``) parsed; None, with ``row_id`` added to ``damaged``,
    when it is not JSON (or not text)."""
    if value is None:
        return None
    try:
        return json.loads(unpack(value) or "null")
    except (ValueError, TypeError, zlib.error, RecursionError):
        damaged.append(row_id)
        return None


_CHECKS: dict[str, Any] = {
    "int": lambda v: type(v) is int,
    "float": lambda v: type(v) in (int, float),
    "str": lambda v: type(v) is str,
    "bool": lambda v: type(v) is int and v in (0, 1),
    "time": lambda v: type(v) in (int, float) and math.isfinite(v),
}


def log_row(row: tuple[Any, ...], damaged: list[Any] | None = None) -> dict[str, Any]:
    """A row of ``LOG_COLUMNS`` as a dict: an aware ``time``, ``stream`` and ``partial`` bools.
    A cell not of its column's kind is None (its row id added to ``damaged``)."""
    item = dict(zip(LOG_NAMES, row, strict=True))
    lost = False
    for name, kind in LOG_SCHEMA:
        value = item[name]
        if value is not None and not _CHECKS[kind](value):
            item[name], lost = None, True
    if item["time"] is not None:
        try:
            item["time"] = datetime.fromtimestamp(item["time"], tz=UTC)
        except (OverflowError, OSError, ValueError):
            item["time"], lost = None, True
    for flag in ("stream", "partial"):
        item[flag] = bool(item[flag])
    if lost and damaged is not None:
        damaged.append(row[0])
    return item


def log_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """``rows`` from ``log_row`` as a polars frame typed by ``LOG_SCHEMA``."""
    import polars as pl

    schema = {name: _POLARS_TYPES[kind](pl) for name, kind in LOG_SCHEMA}
    return pl.DataFrame(rows, schema=schema)
