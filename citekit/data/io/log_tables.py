"""The answer log's partitions as a dataset's four tables (``ck.to_parquet(ck.log)``), read from
the SQLite tables a run of row ids at a time: no ``Answer`` is rebuilt from its saved JSON.

The answers, citations and references tables are the frames of the log (``citekit.data.frames.
log``). The sources table is the citations table's rows, with what ``sources_frame`` adds:

* a citation's span, its number's first marker in the logged text (``answer_spans``);
* a web source's span (Maritaca: ``citekit.wire.maritaca.sources`` reads the answer's
  annotations or links), and a GPTBots citation's ``data_id``, read off the stored body (its
  ``choices`` or ``citations``, not the whole answer);
* the knowledge chunks, the references table's rows with their answer's question.

A row whose stored body is not of the shape read here (another wire shape, a damaged cell, a
number of sources that is not the table's) has its answer rebuilt, as ``Log.answers`` rebuilds
it, and its sources are those of ``sources_frame`` of that answer: the same rows as the answers'
route gives, by construction (``tests/data/io/test_log_tables.py`` compares the two routes on
logs of every provider, samples and damaged cells)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Literal

import polars as pl

from ...core.names import REFERENCES_PROVIDER, WEB_SOURCE_PROVIDERS
from ...store.decode import json_cell
from ...store.query import where_sql
from ...wire.maritaca import sources as web_sources
from ...wire.maritaca_responses import is_response

if TYPE_CHECKING:
    from ...store.selection import LogSelection, Partition

__all__ = ["ROWS_BATCH", "log_tables"]

Table = Literal["answers", "citations", "references", "sources"]

#: How many row ids of the log one read of a partition's rows spans at most.
ROWS_BATCH: Final = 2_500


def log_tables(selection: LogSelection, span: Partition) -> Iterator[tuple[Table, pl.DataFrame]]:
    """The four frames of one partition of the log, one at a time, its rows read
    ``ROWS_BATCH`` row ids at a time (the rows SQLite hands over are Python values: a
    partition's whole would cost several times its frame); damaged rows named once."""
    from ...store.read import warn_damaged
    from ..frames import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA
    from ..frames.log import DAMAGE, answer_spans, log_answers, log_references

    damaged: list[Any] = []
    batches = _batches(selection, span)
    web = span[0] in WEB_SOURCE_PROVIDERS
    answers, read = [], []
    for batch in batches:
        frame = log_answers(batch, ANSWERS_SCHEMA, with_answer=True, damaged=damaged)
        # What the citations read takes from their answers, and each number's first marker
        # (not a web source's span: read off its body), from the answers just read.
        owners = frame.select("answer", "provider", "answer_id", "question", "model")
        read.append((owners, None if web else answer_spans(frame)))
        answers.append(frame.drop("answer"))
    yield "answers", pl.concat(answers)
    del answers, frame
    # Each citation's span is placed batch by batch, beside it: a join of the partition's
    # whole would hold its keys' hash tables at once.
    cited = pl.concat([_cited(b, damaged, *r) for b, r in zip(batches, read, strict=True)])
    del read
    yield "citations", cited.select(CITATIONS_SCHEMA.names())
    only = _citations_only(selection, span)
    # No answer with saved knowledge chunks: none to read (a scan of the partition spared)
    references = (
        pl.DataFrame(schema={**REFERENCES_SCHEMA, "answer": pl.Int64()})
        if only
        else log_references(
            replace(selection, part=span), REFERENCES_SCHEMA, with_answer=True, damaged=damaged
        )
    )
    yield "references", references.drop("answer")
    sources = _sources(selection, span, batches, cited, references, damaged, only=only)
    del cited, references
    warn_damaged(damaged, DAMAGE, stacklevel=6)  # the caller of to_parquet
    yield "sources", sources


def _cited(
    batch: LogSelection, damaged: list[Any], owners: pl.DataFrame, spans: pl.DataFrame | None
) -> pl.DataFrame:
    """The citations of ``batch`` with each row's ``answer`` and their answers' columns (from
    ``owners``, the batch's answers read) and, given the ``spans`` of the batch's answers
    (``answer_spans``; None for web sources), the ``start`` and ``end`` of its number's first
    marker in the logged text."""
    from ..frames import CITATIONS_SCHEMA
    from ..frames.log import log_citations

    cited = log_citations(
        batch, CITATIONS_SCHEMA, with_answer=True, damaged=damaged, answers=owners
    )
    if spans is None:
        return cited
    # Only the keys are joined (each number's first marker is one row of ``spans``), and the
    # spans put beside the citations: their columns are not copied.
    placed = (
        cited.select("answer", "marker")
        .join(spans, on=["answer", "marker"], how="left", maintain_order="left")
        .select("start", "end")
    )
    return cited.hstack(placed)


def _batches(selection: LogSelection, span: Partition) -> list[LogSelection]:
    """The partition ``span`` of ``selection`` cut into runs of at most ``ROWS_BATCH`` ids."""
    provider, month, first, last = span
    return [
        replace(selection, part=(provider, month, low, min(last, low + ROWS_BATCH - 1)))
        for low in range(first, last + 1, ROWS_BATCH)
    ]


def _citations_only(selection: LogSelection, span: Partition) -> bool:
    """Whether the partition's sources are citations alone, all in SQL columns: not a
    provider of web sources or knowledge chunks, no answer with saved knowledge chunks."""
    provider = span[0]
    if provider in WEB_SOURCE_PROVIDERS or provider == REFERENCES_PROVIDER:
        return False
    condition, params = where_sql(replace(selection, part=span), errors=False)
    found = selection.log.fetch(
        f"SELECT 1 FROM answers WHERE {condition} AND references_json IS NOT NULL LIMIT 1",
        params,
    )
    return not found


def _sources(
    selection: LogSelection,
    span: Partition,
    batches: list[LogSelection],
    cited: pl.DataFrame,
    references: pl.DataFrame,
    damaged: list[Any],
    *,
    only: bool,
) -> pl.DataFrame:
    """``sources_frame`` (not yet identified) of one partition: its citations (or web
    sources), then its knowledge chunks, each in answer order. ``cited`` is its citations
    with their ``answer`` (and, not web sources, their spans: ``_cited``)."""
    provider = span[0]
    web = provider in WEB_SOURCE_PROVIDERS
    if only:  # citations alone: every answer's from its columns
        return _cited_sources(cited, None, web=False)
    extra, counts = (
        _body_columns(batches, provider, damaged)
        if web or provider == REFERENCES_PROVIDER
        else (None, None)
    )
    questions = _questions(selection, span, damaged) if references.height else None
    # A row any read of this partition found damaged is rebuilt (what the answers' route gives
    # of it), and so is one whose stored body is not of the shape read here.
    rebuilt = {i for i in damaged if type(i) is int}
    if counts is not None:
        rebuilt |= _unmatched(cited, counts, every=web)
    ids = pl.Series("answer", sorted(rebuilt), pl.Int64)
    keep = ~pl.col("answer").is_in(ids.implode())
    if ids.len():
        cited, references = cited.filter(keep), references.filter(keep)
    if extra is not None:
        extra = (
            cited.select("answer", n=pl.int_range(pl.len()).over("answer"))
            .join(extra, on=["answer", "n"], how="left", maintain_order="left")
            .drop("answer", "n")
        )
    citing = _cited_sources(cited, extra, web=web, keep_answer=True)
    chunks = _chunk_sources(references, questions)
    again = [_rebuilt(selection, span, i) for i in ids]
    citing = _in_order([citing, *(c for c, _ in again)])
    chunks = _in_order([chunks, *(k for _, k in again)])
    return pl.concat([citing, chunks], how="vertical_relaxed")


def _in_order(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Rows of several reads, each with its ``answer``, in answer order (each answer's rows
    in their order), without the ``answer`` column."""
    if len(frames) == 1:
        return frames[0].drop("answer")
    joined = pl.concat(frames, how="vertical_relaxed")
    return joined.sort("answer", maintain_order=True).drop("answer")


def _cited_sources(
    cited: pl.DataFrame, extra: pl.DataFrame | None, *, web: bool, keep_answer: bool = False
) -> pl.DataFrame:
    """The sources of ``cited`` (citations with their ``answer`` and, not web sources, their
    ``start`` and ``end``), with ``extra`` beside them (row for row: a web source's span, a
    citation's data id)."""
    from ..corpus.works import SOURCES_SCHEMA

    joined = cited.hstack(extra.select("start", "end")) if web and extra is not None else cited
    if extra is not None:
        joined = joined.hstack(extra.select("data_id"))
    tail = ["answer"] if keep_answer else []
    return joined.select(
        *(
            pl.col(name)
            if name in joined.columns
            else pl.lit(None, dtype).alias(name)  # nothing of a knowledge chunk; identity later
            for name, dtype in SOURCES_SCHEMA.items()
            if name not in ("kind", "span_start", "span_end", "cited_inline")
        ),
        *tail,
        kind=pl.lit("web source" if web else "citation", pl.String),
        span_start=pl.col("start"),
        span_end=pl.col("end"),
        # a web source is cited inline where its annotated span or link is
        cited_inline=pl.col("start").is_not_null() if web else pl.col("cited_inline"),
    ).select(*SOURCES_SCHEMA.names(), *tail)


def _chunk_sources(references: pl.DataFrame, questions: pl.DataFrame | None) -> pl.DataFrame:
    """The knowledge chunks of the references frame (with each row's ``answer``) as sources,
    with their answer's question."""
    from ..corpus.works import SOURCES_SCHEMA

    if questions is None or not references.height:
        return pl.DataFrame(schema={**SOURCES_SCHEMA, "answer": pl.Int64()})
    asked = references.join(questions, on="answer", how="left", maintain_order="left")
    return asked.select(
        *(
            pl.col(name) if name in asked.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in SOURCES_SCHEMA.items()
            if name != "kind"
        ),
        "answer",
        kind=pl.lit("knowledge chunk", pl.String),
    ).select(*SOURCES_SCHEMA.names(), "answer")


def _questions(selection: LogSelection, span: Partition, damaged: list[Any]) -> pl.DataFrame:
    """The question of each answer of the partition that has knowledge chunks."""
    from ...store.decode import typed_frame

    condition, params = where_sql(replace(selection, part=span), errors=False)
    rows = selection.log.fetch(
        f"SELECT id, question FROM answers WHERE {condition} AND n_references > 0",
        params,
        damaged=damaged,
    )
    return typed_frame(rows, {"answer": pl.Int64(), "question": pl.String()}, damaged)


#: A web source's span and a citation's data id, per source of an answer's stored body.
_Extra = tuple[int | None, int | None, str | None]


def _body_columns(
    batches: list[LogSelection], provider: str, damaged: list[Any]
) -> tuple[pl.DataFrame, dict[int, int | None]]:
    """What the stored bodies add to each source: columns ``answer``, ``n`` (its place among
    the answer's), ``start``, ``end`` (a web source's span) and ``data_id`` (a GPTBots
    citation's); and how many sources each answer read has (None: as many as the table holds).
    A row whose body is not of the shape read here is in neither (it is rebuilt)."""
    web = provider in WEB_SOURCE_PROVIDERS
    columns: dict[str, list[Any]] = {"answer": [], "n": [], "start": [], "end": [], "data_id": []}
    counts: dict[int, int | None] = {}
    for batch in batches:
        condition, params = where_sql(batch, errors=False)
        rows = batch.log.fetch(
            "SELECT id, response_json, citation_keys, text, text_elided FROM answers "
            f"WHERE {condition} AND n_citations > 0 ORDER BY id",
            params,
            damaged=damaged,
        )
        for row_id, saved, keys, text, elided in rows:
            if type(row_id) is not int:
                continue
            if not web and keys is not None:
                counts[row_id] = None  # the citations are the table's: no data id kept
                continue
            body = json_cell(saved, row_id, damaged)
            found = _web_spans(body, text, elided) if web else _data_ids(body)
            if found is None:
                continue
            counts[row_id] = len(found)
            columns["answer"].extend([row_id] * len(found))
            columns["n"].extend(range(len(found)))
            for start, end, data_id in found:
                columns["start"].append(start)
                columns["end"].append(end)
                columns["data_id"].append(data_id)
    frame = pl.DataFrame(
        columns,
        schema={
            "answer": pl.Int64(),
            "n": pl.Int64(),
            "start": pl.Int32(),
            "end": pl.Int32(),
            "data_id": pl.String(),
        },
    )
    return frame, counts


def _web_spans(body: Any, text: Any, elided: Any) -> list[_Extra] | None:
    """Each web source's annotated span, as ``sources_frame`` reads it off the answer's
    citations (``citekit.wire.maritaca.sources`` of its text and message: the parser's rule),
    for a chat completion of one choice whose text is the logged text; None for any other
    body (rebuilt)."""
    from ..corpus.works import annotated_span

    if type(body) is not dict or type(text) is not str or "citations" in body or is_response(body):
        return None
    choices = body.get("choices")
    if type(choices) is not list or len(choices) != 1 or type(choices[0]) is not dict:
        return None
    message = choices[0].get("message")
    if type(message) is not dict:
        return None
    if not (elided == 1 or message.get("content") == text):
        return None  # a text of the body's own (its thoughts split off): rebuilt
    length = len(text)
    return [(*annotated_span(c, length), None) for c in web_sources(text, message)]


def _data_ids(body: Any) -> list[_Extra] | None:
    """Each GPTBots citation's data id (``sources_frame`` reads it off the citation's raw
    item); None for a body that is not an object with a ``citations`` array (rebuilt)."""
    if type(body) is not dict:
        return None
    items = body.get("citations")
    if type(items) is not list:
        return None
    return [(None, None, _data_id(item)) for item in items if isinstance(item, Mapping)]


def _data_id(item: Mapping[str, Any]) -> str | None:
    value = item.get("data_id")
    return value if isinstance(value, str) and value else None


def _unmatched(cited: pl.DataFrame, counts: dict[int, int | None], *, every: bool) -> set[int]:
    """The answers whose sources read off the body are not as many as the table's rows (or,
    with ``every``, that were not read at all)."""
    out = set()
    for answer, n in cited.group_by("answer").len().iter_rows():
        if answer is None:
            continue
        if answer not in counts:
            if every:
                out.add(answer)
            continue
        want = counts[answer]
        if want is not None and want != n:
            out.add(answer)
    return out


def _rebuilt(
    selection: LogSelection, span: Partition, row_id: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The sources of the answer of row ``row_id`` rebuilt from its saved JSON (as
    ``Log.answers`` rebuilds it): its citations or web sources, and its knowledge chunks, each
    with its ``answer``."""
    from ..corpus.works import SOURCES_SCHEMA, sources_frame

    provider, month, _, _ = span
    answers = selection.log.answers(replace(selection, part=(provider, month, row_id, row_id)))
    frame = sources_frame(answers).with_columns(answer=pl.lit(row_id, pl.Int64))
    frame = frame.select(
        *(pl.col(name).cast(dtype) for name, dtype in SOURCES_SCHEMA.items()), "answer"
    )
    chunk = pl.col("kind") == "knowledge chunk"
    return frame.filter(~chunk), frame.filter(chunk)
