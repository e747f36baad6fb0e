"""The answer log as a source: the frames read straight from its SQLite tables.

``citations_frame(ck.log)`` (or of ``ck.log.where(...)``, a ``LogSelection``) is one ``SELECT``
of the ``citations`` table and one of the selected ``answers`` rows, joined in polars: no
``Answer`` is rebuilt from its JSON. What the Answer path computes from an answer is in the
rows already, written with it: ``cited_inline`` (the marker read in the logged text, as
``Answer.cited_markers`` reads it), ``created_us``, ``tools_json``. Years are parsed from
``document_year`` by the one year rule (``citekit.core.years``). The frames equal those of
the selection's answers, ``ck.log.where(...).answers()`` (tests/data/frames/test_log.py checks
every sample); a row whose saved JSON cannot be rebuilt (a damaged file) is the one difference:
``answers()`` keeps its text only, the tables still hold its citations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ...core.columns import CITATION_COLUMNS, REFERENCE_COLUMNS, TOOL_USAGE_COLUMNS
from ...core.errors import CitekitError
from ...core.fields import MAX_MICROS, MIN_MICROS
from ...core.years import year_series
from ...model import References
from ...store import Log
from ...store.decode import json_cell, typed_frame
from ...store.query import where_sql
from ...store.read import warn_damaged
from ...store.selection import LogSelection
from ...text.reader import first_markers

__all__ = [
    "DAMAGE",
    "answer_spans",
    "log_answers",
    "log_citations",
    "log_references",
    "log_selection",
]


def log_selection(source: Any) -> LogSelection | None:
    """``source`` as a selection of the log when it is a ``Log`` or a ``LogSelection``."""
    if isinstance(source, LogSelection):
        return source
    if isinstance(source, Log):
        return LogSelection(source)
    return None


def _answers_where(selection: LogSelection) -> tuple[str, list[Any]]:
    """The condition choosing the answers ``Log.answers`` gives for the selection's filters."""
    return where_sql(selection, errors=False)


def _fetch_frame(
    log: Log, sql: str, params: list[Any], schema: dict[str, pl.DataType], damaged: list[Any]
) -> pl.DataFrame:
    """The rows of ``sql`` typed by ``schema``: a damaged cell (not UTF-8, not of its column's
    type) is read as far as it can be, its row's first cell (the answer's id) in ``damaged``."""
    return typed_frame(log.fetch(sql, params, damaged=damaged), schema, damaged)


#: What the warning of a frame read from a damaged log says of the rows it names.
DAMAGE = "a cell of the wrong type or JSON that does not parse is null, text not UTF-8 has U+FFFD"


def log_citations(
    selection: LogSelection,
    schema: pl.Schema,
    *,
    with_answer: bool = False,
    damaged: list[Any] | None = None,
    answers: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """``citations_frame`` of the selected answers, columns as in ``schema`` (with
    ``with_answer``, then ``answer``: the row id of each citation's answer). The damaged
    rows are named in a warning, or added to ``damaged`` when it is given (a read in parts
    names them once). ``answers``: the selected answers already read (``log_answers(...,
    with_answer=True)``), whose columns the citations take instead of reading them again."""
    condition, params = _answers_where(selection)
    found: list[Any] = []
    if answers is None:
        answers = _fetch_frame(
            selection.log,
            "SELECT id, provider, answer_id, question, model FROM answers "
            f"WHERE {condition} ORDER BY id",
            params,
            {
                "answer": pl.Int64(),
                **{n: schema[n] for n in ("provider", "answer_id", "question", "model")},
            },
            found,
        )
    else:
        answers = answers.select("answer", "provider", "answer_id", "question", "model")
    # Every citation of the file when nothing but failed calls is left out, else only those
    # of the chosen answers; either way only those whose answer was read are kept (the
    # failed calls', and any written between the two reads, are not).
    narrowed = selection.narrowed
    fields = ", ".join(CITATION_COLUMNS)
    sql = f"SELECT answer, position, {fields}, cited_inline FROM citations"
    if narrowed:
        sql += f" WHERE answer IN (SELECT id FROM answers WHERE {condition})"
    citations = _fetch_frame(
        selection.log,
        sql,
        params if narrowed else [],
        {
            "answer": pl.Int64(),
            "position": pl.Int64(),
            **{n: schema[n] for n in CITATION_COLUMNS},
            "cited_inline": pl.Int8(),
        },
        found,
    )
    _report(found, damaged)
    ids = answers.get_column("answer")
    owner = citations.get_column("answer")
    kept = owner.is_in(ids.implode()).fill_null(False)  # a damaged owner is no answer
    if not kept.all():
        citations = citations.filter(kept)
        owner = citations.get_column("answer")
    if not _in_order(citations):  # rows come in the order written: (answer, position)
        citations = citations.sort("answer", "position")
        owner = citations.get_column("answer")
    # Each citation's answer columns, gathered by position in the answers read (sorted by id).
    per_answer = answers.drop("answer")[ids.search_sorted(owner)]
    joined = pl.concat([per_answer, citations], how="horizontal")
    return (
        joined.with_columns(
            year=year_series(joined.get_column("document_year")),
            cited_inline=pl.col("cited_inline").cast(pl.Boolean),
        )
        .select(*schema.names(), *(["answer"] if with_answer else []))
        .cast(schema)
    )


def _report(found: list[Any], damaged: list[Any] | None) -> None:
    """The damaged rows of one read: named in a warning, or added to ``damaged``."""
    if damaged is None:
        warn_damaged(found, DAMAGE, stacklevel=5)
    else:
        damaged.extend(found)


def answer_spans(answers: pl.DataFrame) -> pl.DataFrame:
    """Where each number cited in an answer's logged text is first cited: columns ``answer``
    (the row id), ``marker``, ``start`` and ``end`` (of that marker in the text), for the rows
    of ``answers`` (``log_answers(..., with_answer=True)``: columns ``answer``, ``text``,
    ``n_citations``) that have citations. The text is read by the one reader
    (``citekit.text.reader.first_markers``), as ``sources_frame`` reads an answer's."""
    cited = answers.filter(pl.col("n_citations") > 0, pl.col("text").is_not_null())
    columns: dict[str, list[int]] = {"answer": [], "marker": [], "start": [], "end": []}
    for row_id, text in zip(cited.get_column("answer"), cited.get_column("text"), strict=True):
        first = first_markers(text)
        columns["answer"].extend([row_id] * len(first))
        columns["marker"].extend(first)
        columns["start"].extend(start for start, _ in first.values())
        columns["end"].extend(end for _, end in first.values())
    return pl.DataFrame(
        columns,
        schema={"answer": pl.Int64(), "marker": pl.Int32(), "start": pl.Int32(), "end": pl.Int32()},
    )


def _in_order(citations: pl.DataFrame) -> bool:
    """Whether the rows are sorted by answer, then position."""
    answer, position = citations.get_column("answer"), citations.get_column("position")
    if not answer.is_sorted():
        return False
    return not ((answer.diff() == 0) & (position.diff() <= 0)).any()


def log_references(
    selection: LogSelection,
    schema: pl.Schema,
    *,
    with_answer: bool = False,
    damaged: list[Any] | None = None,
) -> pl.DataFrame:
    """``references_frame`` of the selected answers, columns as in ``schema`` (with
    ``with_answer``, then ``answer``: the row id of each chunk's answer; damaged rows as
    ``log_citations`` has them)."""
    condition, params = _answers_where(selection)
    found: list[Any] = []
    # The chunks' own ids are in the saved correlate body (GPTBots answers only, a few rows);
    # read by the rule ``References.from_response`` reads them with.
    owners: list[tuple[Any, ...]] = []
    for row_id, provider, conversation, answer_id, saved in selection.log.fetch(
        "SELECT id, provider, conversation_id, answer_id, references_json FROM answers "
        f"WHERE {condition} AND n_references > 0 AND references_json IS NOT NULL",
        params,
        damaged=found,
    ):
        ids = _saved_ids(json_cell(saved, row_id, found))
        if ids is None:  # its chunks are still in their table: the answer's columns name them
            found.append(row_id)
            owners.append((row_id, provider, conversation, None, answer_id))
            continue
        items, conversation_id, question_id, saved_id = ids
        if not any(isinstance(item, Mapping) for item in items):
            found.append(row_id)  # a body of no chunk, for an answer the table gives some
            owners.append((row_id, provider, conversation, None, answer_id))
            continue
        ident = saved_id or answer_id
        owners.append((row_id, provider, conversation_id or conversation, question_id, ident))
    answers = typed_frame(
        owners,
        {
            "answer": pl.Int64(),
            **{n: schema[n] for n in ("provider", "conversation_id", "question_id", "answer_id")},
        },
        found,
    )
    fields = ", ".join(REFERENCE_COLUMNS)
    chunks = _fetch_frame(
        selection.log,
        f"SELECT answer, {fields} FROM knowledge_references WHERE answer IN "
        f"(SELECT id FROM answers WHERE {condition}) ORDER BY answer, rank",
        params,
        {"answer": pl.Int64(), **{n: schema[n] for n in REFERENCE_COLUMNS}},
        found,
    )
    _report(found, damaged)
    return (
        chunks.join(answers, on="answer", how="inner", maintain_order="left")
        .select(*schema.names(), *(["answer"] if with_answer else []))
        .cast(schema)
    )


def _saved_ids(saved: Any) -> tuple[list[Any], str | None, str | None, str | None] | None:
    """The saved correlate body's chunks and ids (``References.read_ids``), None when it is
    not one."""
    if not isinstance(saved, dict):
        return None
    try:
        return References.read_ids(saved)
    except CitekitError:
        return None


def log_answers(
    selection: LogSelection,
    schema: pl.Schema,
    *,
    with_answer: bool = False,
    damaged: list[Any] | None = None,
) -> pl.DataFrame:
    """``answers_frame`` of the selected answers, columns as in ``schema`` (with
    ``with_answer``, then ``answer``: each answer's row id; damaged rows as ``log_citations``
    has them)."""
    condition, params = _answers_where(selection)
    found: list[Any] = []
    names = (
        "provider",
        "answer_id",
        "model",
        "created_us",
        "question",
        "text",
        "finish_reason",
        "n_citations",
        "n_references",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "tools_json",
        "partial",
        "sample",
    )
    stored = {"created_us": pl.Int64(), "tools_json": pl.String(), "partial": pl.Int8()}
    frame = _fetch_frame(
        selection.log,
        "SELECT id, provider, answer_id, model, created_us, question, text, finish_reason, "
        "n_citations, CASE WHEN references_json IS NULL OR references_json = '' THEN NULL "
        "ELSE n_references END, prompt_tokens, completion_tokens, total_tokens, tools_json, "
        f"partial, sample FROM answers WHERE {condition} ORDER BY id",
        params,
        {"id": pl.Int64(), **{n: stored.get(n) or schema[n] for n in names}},
        found,
    )
    # Tool usage is read from the answers that logged any (nearly none but Maritaca's);
    # every other answer's columns are null.
    usage: dict[str, list[Any]] = {name: [None] * frame.height for name in TOOL_USAGE_COLUMNS}
    logged = frame.select(pl.arg_where(pl.col("tools_json").is_not_null())).to_series()
    ids, cells = frame.get_column("id"), frame.get_column("tools_json")
    for index in logged:
        row_id = ids[index]
        tools = json_cell(cells[index], row_id, found)
        if tools is not None and not isinstance(tools, dict):
            found.append(row_id)
        for name, values in usage.items():
            value = tools.get(name) if isinstance(tools, dict) else None
            if value is not None and type(value) not in (int, float):
                found.append(row_id)
                value = None
            values[index] = value
    _report(found, damaged)
    return (
        frame.with_columns(
            # A time logged before the edges' rule (``representable_time``) is none, as now.
            created=pl.when(pl.col("created_us").is_between(MIN_MICROS, MAX_MICROS))
            .then(pl.col("created_us"))
            .cast(pl.Datetime("us", "UTC")),
            partial=pl.col("partial").cast(pl.Boolean),
            cached=pl.lit(False),
            **{
                name: pl.Series(values, dtype=pl.Float64, strict=False)
                for name, values in usage.items()
            },
        )
        .select(*schema.names(), *([pl.col("id").alias("answer")] if with_answer else []))
        .cast(schema)
    )
