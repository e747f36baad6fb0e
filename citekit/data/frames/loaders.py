"""Answers, citations and knowledge references as polars frames.

Three loaders share one way of reading their source and each returns a frame with a named,
fixed schema, so that an empty source still gives a typed (empty) frame:

* ``citations_frame``: one row per citation (``CITATIONS_SCHEMA``);
* ``references_frame``: one row per retrieved knowledge chunk (``REFERENCES_SCHEMA``);
* ``answers_frame``: one row per answer (``ANSWERS_SCHEMA``).

The citations and references frames name their columns as every table of sources does
(``citekit.core.columns``): Magisterium's field names, a knowledge chunk's text in
``cited_text`` and its document's name in ``document_title``.

A source is any of:

* an ``Answer``, or an iterable of them (a list, a tuple, a generator);
* a ``References`` (GPTBots knowledge chunks without their answer: rows only in
  ``references_frame``);
* saved JSON, as a ``dict`` or as the path (``str`` or ``os.PathLike``) of a ``.json`` file:
  a provider response (a ``chat.completion`` body, a GPTBots blocking ``message`` body or a
  GPTBots ``correlate/dataset`` body), or a recorded sample ``{"question", "response"}``
  (GPTBots: ``{"question", "message", "correlate"}``), or a list of those;
* the path of a JSON Lines file (``.jsonl``): one such response or sample per line, read line
  by line (a line that is not JSON is a ``ValueError`` naming the file and the line);
* the path of a directory: every ``*.json`` and ``*.jsonl`` answer below it, in name order
  (files that hold no answer, such as ``maritaca/models.json`` or a recorded stream's JSON
  lines, and names starting with ``_`` or ``.`` are skipped; a file that is not JSON is
  named in a warning and skipped);
* an iterable mixing any of the above;
* the answer log, ``ck.log`` (every logged answer) or ``ck.log.where(provider=, since=,
  until=, question_contains=)``: read straight from its SQLite tables
  (``citekit.data.frames.log``; ``provider=`` here is not a filter, use ``where``).

Saved chat completions (Magisterium's, Maritaca's) are read column-wise, without building an
``Answer`` (``citekit.data.frames.columnar``): their citation arrays become whole columns, entities
decoded once per distinct value. Other answers (GPTBots bodies, any response of an unusual
shape) are parsed into ``Answer`` objects and read field by field; the frames are the same
either way (``tests/test_frames_columnar.py``). Year parsing and the repeated per-answer
columns are computed in polars over whole columns (``bench/frames.py`` measures 100,000 saved
responses, as dicts and as a JSON Lines file, against pandas and a polars floor).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Any, Final

import polars as pl

from ...core.columns import CITATION_COLUMNS, COLUMNS, REFERENCE_COLUMNS, TOOL_USAGE_COLUMNS, Kind
from ...core.models import Answer, Citation, References, Usage
from ...core.text import numbers
from ...core.years import year_series
from ...wire.openai_compat import parse_citations
from .columnar import Header, Item, citation_columns, read_items
from .log import log_answers, log_citations, log_references, log_selection
from .sources import Source, iter_items, load_answers

__all__ = [
    "ANSWERS_SCHEMA",
    "CITATIONS_SCHEMA",
    "REFERENCES_SCHEMA",
    "Source",
    "answers_frame",
    "citations_frame",
    "load_answers",
    "references_frame",
    "source_schema",
]

_POLARS_TYPES: Final[dict[Kind, pl.DataType]] = {
    "str": pl.String(),
    "int": pl.Int32(),
    "float": pl.Float64(),
    "bool": pl.Boolean(),
}


def source_schema(names: Iterable[str]) -> pl.Schema:
    """The polars schema of source columns ``names`` (see ``citekit.core.columns``)."""
    return pl.Schema({name: _POLARS_TYPES[COLUMNS[name].kind] for name in names})


_CITATION_FIELDS: Final = tuple(name for name in CITATION_COLUMNS if name != "marker")

#: One row per citation, in the provider's order within each answer.
CITATIONS_SCHEMA: Final = source_schema(
    (
        "provider",
        "answer_id",
        "question",
        "model",
        "marker",
        "document_index",
        "cited_text",
        "cited_text_heading",
        "document_title",
        "document_author",
        "document_year",
        "year",
        "document_reference",
        "source_url",
        "cited_inline",
    )
)

#: One row per knowledge chunk, ``rank`` 1 first within each answer.
REFERENCES_SCHEMA: Final = source_schema(
    ("provider", "conversation_id", "question_id", "answer_id", *REFERENCE_COLUMNS)
)

#: One row per answer.
ANSWERS_SCHEMA: Final = pl.Schema(
    {
        "provider": pl.String(),
        "answer_id": pl.String(),
        "model": pl.String(),
        "created": pl.Datetime("us", "UTC"),
        "question": pl.String(),
        "text": pl.String(),
        "finish_reason": pl.String(),
        "n_citations": pl.Int32(),
        "n_references": pl.Int32(),
        "prompt_tokens": pl.Int64(),
        "completion_tokens": pl.Int64(),
        "total_tokens": pl.Int64(),
        **{name: pl.Float64() for name in TOOL_USAGE_COLUMNS},
        "partial": pl.Boolean(),
        "cached": pl.Boolean(),
        "sample": pl.String(),
    }
)

# -- frames ----------------------------------------------------------------------------------


def citations_frame(source: Source, *, provider: str | None = None) -> pl.DataFrame:
    """One row per citation of every answer in ``source`` (schema ``CITATIONS_SCHEMA``).

    Columns (named as in ``citekit.core.columns``): ``provider``, ``answer_id``,
    ``question``, ``model`` (of the answer);
    ``marker`` (the one-based inline footnote number), ``document_index`` (zero-based; several
    citations may share it), ``cited_text``, ``cited_text_heading``, ``document_title``,
    ``document_author``, ``document_year`` (the provider's string), ``year`` (``Int32`` read
    from it by ``citekit.core.years.parse_year``: ranges give their first year, "c. 1270"
    gives 1270, "33 AD" 33, "500 a.C." -500, "" and null give null), ``document_reference``,
    ``source_url``, and ``cited_inline`` (whether the marker appears in the answer text,
    outside code: ``Answer.cited_markers``). HTML entities in text fields are decoded.

    Parameters
    ----------
    source
        Answers, saved responses or sample files; see ``citekit.data.frames``. A bare
        ``References`` has no citations and adds no rows.
    provider
        The provider of saved responses that do not name it.

    Returns
    -------
    A frame with ``CITATIONS_SCHEMA``; empty (and typed) when there are no citations.

    Raises
    ------
    TypeError
        When ``source`` is not one of the accepted kinds.

    Examples
    --------
    A folder of saved responses (here the recorded samples) gives one row per citation:

    >>> from citekit.testing import default_data_dir
    >>> cits = ck.citations_frame(default_data_dir() / "magisterium")
    >>> cits.height
    130
    >>> by_author = cits.group_by("document_author").len()
    >>> by_author.sort("len", "document_author", descending=[True, False]).head(3)
    shape: (3, 2)
    ┌─────────────────────────────────┬─────┐
    │ document_author                 ┆ len │
    │ ---                             ┆ --- │
    │ str                             ┆ u32 │
    ╞═════════════════════════════════╪═════╡
    │ Catholic Church                 ┆ 27  │
    │ John Paul II                    ┆ 9   │
    │ Pontifical Council for Justice… ┆ 8   │
    └─────────────────────────────────┴─────┘
    """
    if (logged := log_selection(source)) is not None:
        return log_citations(logged, CITATIONS_SCHEMA)
    items = iter_items(source, provider=provider, caller="citations_frame", saved=True)
    return _citations_of(read_items(items))


def _citations_of(items: Iterable[Item]) -> pl.DataFrame:
    return _citation_rows(items)[0].select(CITATIONS_SCHEMA.names())


#: Citations of saved responses read into columns at once: their JSON objects are let go
#: batch by batch (a JSON Lines file is never held whole as Python objects).
_BATCH: Final = 100_000


def _citation_rows(
    items: Iterable[Item], *, keep: bool = False
) -> tuple[pl.DataFrame, list[Answer | Header]]:
    """The citations frame with an ``owner`` column (each row's answer: its place among the
    answers that have citations, in order; with ``keep``, the list of those answers)."""
    # Saved responses of the plain shape (``Header``) keep their citation arrays as they are,
    # read column-wise by batches; other answers give ``Citation`` objects, read field by
    # field. Both kinds are numbered by their answer's place (``owner``) and merged in order.
    per_answer: list[tuple[str, str | None, str | None, str | None]] = []
    cited_owner: list[int] = []  # (answer, number) pairs of the numbers cited inline
    cited_number: list[int] = []
    obj_owner: list[int] = []
    objs: list[Citation] = []
    raw_owner: list[int] = []
    raw_lists: list[list[Any]] = []
    kept: list[Answer | Header] = []
    parts: list[pl.DataFrame] = []
    fell_back = False

    def flush() -> None:
        nonlocal fell_back
        columns = citation_columns(raw_lists)
        if columns is None:  # an odd value somewhere: read those arrays as Citation objects
            fell_back = True
            for run, raw in zip(_owners(raw_owner), raw_lists, strict=True):
                cs = parse_citations(raw)  # (an item that is not an object is left out)
                obj_owner.extend(run[: len(cs)])
                objs.extend(cs)
        else:
            owners = pl.Series(raw_owner, dtype=pl.UInt32)
            parts.append(pl.DataFrame(columns).with_columns(owner=owners))
        raw_lists.clear()
        raw_owner.clear()

    for item in items:
        if isinstance(item, References):
            continue
        if isinstance(item, Header):
            raw = item.citations_raw
            if item.web_sources or raw is None:
                cs: tuple[Citation, ...] = item.citations()
                if not cs:
                    continue
            elif not raw:
                continue
            else:
                position = len(per_answer)
                per_answer.append((item.provider, item.id, item.question, item.model))
                if keep:
                    kept.append(item)
                _add_cited(cited_owner, cited_number, position, item.text)
                raw_owner.extend([position] * len(raw))
                raw_lists.append(raw)
                if len(raw_owner) >= _BATCH:
                    flush()
                continue
            ident, question, model = item.id, item.question, item.model
            name, text = item.provider, item.text
        else:
            cs = item.citations
            if not cs:
                continue
            name, ident, question, model, text = (
                item.provider,
                item.id,
                item.question,
                item.model,
                item.text,
            )
        position = len(per_answer)
        per_answer.append((name, ident, question, model))
        if keep:
            kept.append(item)
        _add_cited(cited_owner, cited_number, position, text)
        obj_owner.extend([position] * len(cs))
        objs.extend(cs)
    if raw_lists:
        flush()
    # rows of both kinds, or arrays read as objects after others: put back in answer order
    mixed = bool(objs) and (bool(parts) or fell_back)
    parts.append(_object_rows(objs, obj_owner))
    per_citation = pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
    if mixed:
        per_citation = per_citation.sort("owner", maintain_order=True)
    answers = pl.DataFrame(
        per_answer,
        schema=source_schema(("provider", "answer_id", "question", "model")),
        orient="row",
    )
    owner = per_citation.get_column("owner")
    marker = (per_citation.get_column("document_index") + 1).cast(pl.Int32).alias("marker")
    cited = pl.DataFrame(
        {"owner": cited_owner, "marker": cited_number, "cited_inline": True},
        schema={"owner": pl.UInt32(), "marker": pl.Int32(), "cited_inline": pl.Boolean()},
    )
    inline = (
        pl.DataFrame([owner, marker])
        .join(cited, on=["owner", "marker"], how="left", maintain_order="left")
        .get_column("cited_inline")
        .fill_null(False)
    )
    rows = pl.concat([answers[owner], per_citation], how="horizontal")
    years = year_series(rows.get_column("document_year"))
    return rows.with_columns(marker, inline, year=years), kept


def _add_cited(owners: list[int], found: list[int], position: int, text: str) -> None:
    cited = numbers(text)
    owners.extend([position] * len(cited))
    found.extend(cited)


def _owners(raw_owner: list[int]) -> Iterator[list[int]]:
    """``raw_owner`` cut into the runs of one answer each."""
    start = 0
    for end in range(1, len(raw_owner) + 1):
        if end == len(raw_owner) or raw_owner[end] != raw_owner[start]:
            yield raw_owner[start:end]
            start = end


def _object_rows(cits: list[Citation], owner: list[int]) -> pl.DataFrame:
    # Each column is the Citation field of its name (CITATION_COLUMNS), spelled out: a list
    # comprehension reads a slot about 1.5x faster than ``map(attrgetter(name), ...)``.
    return pl.DataFrame(
        {
            "document_index": [c.document_index for c in cits],
            "cited_text": [c.cited_text for c in cits],
            "cited_text_heading": [c.cited_text_heading for c in cits],
            "document_title": [c.document_title for c in cits],
            "document_author": [c.document_author for c in cits],
            "document_year": [c.document_year for c in cits],
            "document_reference": [c.document_reference for c in cits],
            "source_url": [c.source_url for c in cits],
            "owner": owner,
        },
        schema={**source_schema(_CITATION_FIELDS), "owner": pl.UInt32()},
    )


def references_frame(source: Source, *, provider: str | None = None) -> pl.DataFrame:
    """One row per knowledge chunk retrieved for the answers in ``source``.

    Columns (``REFERENCES_SCHEMA``, named as in ``citekit.core.columns``): ``provider``,
    ``conversation_id``, ``question_id``, ``answer_id`` (the references' own ids, else the
    answer's), ``rank`` (1 = first in the provider's list), ``cited_text`` (the chunk's text,
    ``Reference.content``), ``data_id``, ``document_title`` (the knowledge document's name,
    ``Reference.data_name``), ``source_url`` and ``score`` (``Float64``, the relevance the
    provider reported).

    Parameters
    ----------
    source
        Answers (their ``.references``), ``References``, saved GPTBots bodies or sample files;
        see ``citekit.data.frames``. Answers without references add no rows.
    provider
        The provider of saved responses that do not name it.

    Returns
    -------
    A frame with ``REFERENCES_SCHEMA``; empty (and typed) when there are no references.

    Raises
    ------
    TypeError
        When ``source`` is not one of the accepted kinds (see ``load_answers`` for the rest).
    """
    if (logged := log_selection(source)) is not None:
        return log_references(logged, REFERENCES_SCHEMA)
    columns: dict[str, list[Any]] = {name: [] for name in REFERENCES_SCHEMA.names()}
    items = iter_items(source, provider=provider, caller="references_frame", saved=True)
    for item in read_items(items):
        if isinstance(item, Header):
            continue  # a chat completion has no knowledge chunks
        if isinstance(item, Answer):
            refs = item.references
            if refs is None or not refs.items:
                continue
            name, conversation, answer_id = item.provider, item.conversation_id, item.id
        else:
            refs, name, conversation, answer_id = item, "gptbots", None, None
        _add_references(columns, refs, name, conversation, answer_id)
    return pl.DataFrame(columns, schema=REFERENCES_SCHEMA)


def _add_references(
    columns: dict[str, list[Any]],
    refs: References,
    provider: str,
    conversation_id: str | None,
    answer_id: str | None,
) -> None:
    items = refs.items
    n = len(items)
    columns["provider"].extend([provider] * n)
    columns["conversation_id"].extend([refs.conversation_id or conversation_id] * n)
    columns["question_id"].extend([refs.question_id] * n)
    columns["answer_id"].extend([refs.answer_id or answer_id] * n)
    for name, field in REFERENCE_COLUMNS.items():
        columns[name].extend(map(attrgetter(field), items))


def answers_frame(source: Source, *, provider: str | None = None) -> pl.DataFrame:
    """One row per answer in ``source`` (schema ``ANSWERS_SCHEMA``).

    Columns: ``provider``, ``answer_id``, ``model``, ``created`` (UTC), ``question``,
    ``text``, ``finish_reason``, ``n_citations``, ``n_references`` (null when no references
    were fetched), ``prompt_tokens``, ``completion_tokens``, ``total_tokens``, what
    Maritaca's built-in tools did (``web_search_calls``, ``page_reads``,
    ``data_ocean_gb_processed``, ``code_execution_minutes``: null when absent), ``partial``
    (an interrupted stream), ``cached`` (served from the local store) and ``sample`` (the
    ``sample_data`` file of a recorded answer, null for a live one).

    Parameters
    ----------
    source
        Answers, saved responses or sample files; see ``citekit.data.frames``. A bare
        ``References`` is not an answer and adds no row.
    provider
        The provider of saved responses that do not name it.

    Returns
    -------
    A frame with ``ANSWERS_SCHEMA``; empty (and typed) when there are no answers.

    Raises
    ------
    TypeError
        When ``source`` is not one of the accepted kinds (see ``load_answers`` for the rest).
    """
    if (logged := log_selection(source)) is not None:
        return log_answers(logged, ANSWERS_SCHEMA)
    rows = []
    items = iter_items(source, provider=provider, caller="answers_frame", saved=True)
    for item in read_items(items):
        if isinstance(item, Header):
            rows.append(_header_row(item))
        elif isinstance(item, Answer):
            rows.append(_answer_row(item))
    return pl.DataFrame(rows, schema=ANSWERS_SCHEMA, orient="row")


def _usage_cells(u: Usage | None) -> tuple[Any, ...]:
    if u is None:
        return (None,) * (3 + len(TOOL_USAGE_COLUMNS))
    tools = u.tools
    return (
        u.prompt_tokens,
        u.completion_tokens,
        u.total_tokens,
        *(tools.get(name) if tools else None for name in TOOL_USAGE_COLUMNS),
    )


def _answer_row(a: Answer) -> tuple[Any, ...]:
    """A row of ``ANSWERS_SCHEMA``."""
    return (
        a.provider,
        a.id,
        a.model,
        a.created,
        a.question,
        a.text,
        a.finish_reason,
        len(a.citations),
        None if a.references is None else len(a.references),
        *_usage_cells(a.usage),
        a.partial,
        a.cached,
        a.sample,
    )


def _header_row(h: Header) -> tuple[Any, ...]:
    """The row a plain chat completion's ``Answer`` gives (no references, not partial, not
    cached: a saved body is none of these)."""
    return (
        h.provider,
        h.id,
        h.model,
        h.created(),
        h.question,
        h.text,
        h.finish_reason,
        h.n_citations(),
        None,
        *_usage_cells(h.usage()),
        False,
        False,
        h.sample,
    )
