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

import json
from typing import Any

import polars as pl

from ...core.columns import CITATION_COLUMNS, REFERENCE_COLUMNS, TOOL_USAGE_COLUMNS
from ...core.fields import MAX_MICROS, MIN_MICROS
from ...core.years import year_series
from ...model import References
from ...store import Log
from ...store.decode import unpack
from ...store.query import where_sql
from ...store.selection import LogSelection

__all__ = ["log_answers", "log_citations", "log_references", "log_selection"]


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
    log: Log, sql: str, params: list[Any], schema: dict[str, pl.DataType]
) -> pl.DataFrame:
    rows = log.fetch(sql, params)
    return pl.DataFrame(rows, schema=schema, orient="row")


def log_citations(selection: LogSelection, schema: pl.Schema) -> pl.DataFrame:
    """``citations_frame`` of the selected answers, columns as in ``schema``."""
    condition, params = _answers_where(selection)
    answers = _fetch_frame(
        selection.log,
        "SELECT id, provider, answer_id, question, model FROM answers "
        f"WHERE {condition} ORDER BY id",
        params,
        {
            "answer": pl.Int64(),
            **{n: schema[n] for n in ("provider", "answer_id", "question", "model")},
        },
    )
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
    )
    ids = answers.get_column("answer")
    owner = citations.get_column("answer")
    kept = owner.is_in(ids.implode())
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
        .select(schema.names())
        .cast(schema)
    )


def _in_order(citations: pl.DataFrame) -> bool:
    """Whether the rows are sorted by answer, then position."""
    answer, position = citations.get_column("answer"), citations.get_column("position")
    if not answer.is_sorted():
        return False
    return not ((answer.diff() == 0) & (position.diff() <= 0)).any()


def log_references(selection: LogSelection, schema: pl.Schema) -> pl.DataFrame:
    """``references_frame`` of the selected answers, columns as in ``schema``."""
    condition, params = _answers_where(selection)
    # The chunks' own ids are in the saved correlate body (GPTBots answers only, a few rows);
    # read by the rule ``References.from_response`` reads them with.
    owners: dict[str, list[Any]] = {
        "answer": [],
        "provider": [],
        "conversation_id": [],
        "question_id": [],
        "answer_id": [],
    }
    for row_id, provider, conversation, answer_id, saved in selection.log.fetch(
        "SELECT id, provider, conversation_id, answer_id, references_json FROM answers "
        f"WHERE {condition} AND n_references > 0 AND references_json IS NOT NULL",
        params,
    ):
        refs = References.from_response(json.loads(unpack(saved) or "null"))
        owners["answer"].append(row_id)
        owners["provider"].append(provider)
        owners["conversation_id"].append(refs.conversation_id or conversation)
        owners["question_id"].append(refs.question_id)
        owners["answer_id"].append(refs.answer_id or answer_id)
    answers = pl.DataFrame(
        owners,
        schema={
            "answer": pl.Int64(),
            **{n: schema[n] for n in ("provider", "conversation_id", "question_id", "answer_id")},
        },
    )
    fields = ", ".join(REFERENCE_COLUMNS)
    chunks = _fetch_frame(
        selection.log,
        f"SELECT answer, {fields} FROM knowledge_references WHERE answer IN "
        f"(SELECT id FROM answers WHERE {condition}) ORDER BY answer, rank",
        params,
        {"answer": pl.Int64(), **{n: schema[n] for n in REFERENCE_COLUMNS}},
    )
    return (
        chunks.join(answers, on="answer", how="inner", maintain_order="left")
        .select(schema.names())
        .cast(schema)
    )


def log_answers(selection: LogSelection, schema: pl.Schema) -> pl.DataFrame:
    """``answers_frame`` of the selected answers, columns as in ``schema``."""
    condition, params = _answers_where(selection)
    rows = selection.log.fetch(
        "SELECT provider, answer_id, model, created_us, question, text, finish_reason, "
        "n_citations, CASE WHEN references_json IS NULL OR references_json = '' THEN NULL "
        "ELSE n_references END, prompt_tokens, completion_tokens, total_tokens, tools_json, "
        f"partial, sample FROM answers WHERE {condition} ORDER BY id",
        params,
    )
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
    frame = pl.DataFrame(rows, schema={n: stored.get(n) or schema[n] for n in names}, orient="row")
    tools = [json.loads(t) if t is not None else None for t in frame.get_column("tools_json")]
    return (
        frame.with_columns(
            # A time logged before the edges' rule (``representable_time``) is none, as now.
            created=pl.when(pl.col("created_us").is_between(MIN_MICROS, MAX_MICROS))
            .then(pl.col("created_us"))
            .cast(pl.Datetime("us", "UTC")),
            partial=pl.col("partial").cast(pl.Boolean),
            cached=pl.lit(False),
            **{
                name: pl.Series([t.get(name) if t else None for t in tools], dtype=pl.Float64)
                for name in TOOL_USAGE_COLUMNS
            },
        )
        .select(schema.names())
        .cast(schema)
    )
