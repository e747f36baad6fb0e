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
* the path of a directory: every ``*.json`` answer below it, in name order (files that hold
  no answer, such as ``maritaca/models.json``, and names starting with ``_`` or ``.`` are
  skipped);
* an iterable mixing any of the above;
* the answer log, ``ck.log`` (every logged answer) or ``ck.log.where(provider=, since=,
  until=, question_contains=)``: read straight from its SQLite tables
  (``citekit.data._log_frames``; ``provider=`` here is not a filter, use ``where``).

Columns are read straight off the ``Answer`` objects into lists and handed to polars once;
year parsing and the repeated per-answer columns are computed in polars over whole columns
(``bench/frames.py`` measures a million citations against pandas and a polars floor).
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import Any, Final

import polars as pl

from ..core.columns import CITATION_COLUMNS, COLUMNS, REFERENCE_COLUMNS, TOOL_USAGE_COLUMNS, Kind
from ..core.models import Answer, Citation, References
from ..core.text import Reading, read
from ..core.years import year_expr
from ._log_frames import log_answers, log_citations, log_references, log_selection
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
    answers = [
        a
        for a in iter_items(source, provider=provider, caller="citations_frame")
        if isinstance(a, Answer)
    ]
    return _citations(answers)


def _citations(answers: list[Answer], readings: list[Reading | None] | None = None) -> pl.DataFrame:
    # Per-answer values are gathered once per answer and repeated in polars; citation fields
    # are read attribute by attribute into column lists, the fastest way out of Python objects.
    owner: list[int] = []
    inline: list[bool] = []
    cits: list[Citation] = []
    kept: list[Answer] = []
    for i, a in enumerate(answers):
        cs = a.citations
        if not cs:
            continue
        position = len(kept)
        kept.append(a)
        owner.extend([position] * len(cs))
        reading = readings[i] if readings is not None else None
        cited = (reading or read(a.text)).numbers
        inline.extend([c.document_index + 1 in cited for c in cs])
        cits.extend(cs)
    per_answer = pl.DataFrame(
        {
            "provider": [a.provider for a in kept],
            "answer_id": [a.id for a in kept],
            "question": [a.question for a in kept],
            "model": [a.model for a in kept],
        },
        schema=source_schema(("provider", "answer_id", "question", "model")),
    )
    # Each column is the Citation field of its name (CITATION_COLUMNS), spelled out: a list
    # comprehension reads a slot about 1.5x faster than ``map(attrgetter(name), ...)``.
    # ``marker`` is computed in polars from ``document_index``.
    per_citation = pl.DataFrame(
        {
            "document_index": [c.document_index for c in cits],
            "cited_text": [c.cited_text for c in cits],
            "cited_text_heading": [c.cited_text_heading for c in cits],
            "document_title": [c.document_title for c in cits],
            "document_author": [c.document_author for c in cits],
            "document_year": [c.document_year for c in cits],
            "document_reference": [c.document_reference for c in cits],
            "source_url": [c.source_url for c in cits],
            "cited_inline": inline,
        },
        schema=source_schema((*_CITATION_FIELDS, "cited_inline")),
    )
    index = pl.Series("owner", owner, dtype=pl.UInt32)
    return (
        pl.concat([per_answer[index], per_citation], how="horizontal")
        .with_columns(
            marker=(pl.col("document_index") + 1).cast(pl.Int32),
            year=_years(per_citation.get_column("document_year")),
        )
        .select(CITATIONS_SCHEMA.names())
    )


def _years(document_year: pl.Series) -> pl.Series:
    # Year strings repeat (one per document), so parse each distinct one once and map back.
    distinct = document_year.unique()
    # A column, not ``pl.lit(distinct)``: polars 2.1 panics on a literal series holding both
    # a year and a "0" (the when/then of year_expr); a frame's column does not.
    parsed = pl.DataFrame({"year": distinct}).select(year_expr("year")).to_series()
    return document_year.replace_strict(distinct, parsed, default=None, return_dtype=pl.Int32)


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
    for item in iter_items(source, provider=provider, caller="references_frame"):
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
    answers = [
        a
        for a in iter_items(source, provider=provider, caller="answers_frame")
        if isinstance(a, Answer)
    ]
    usage = [a.usage for a in answers]
    return pl.DataFrame(
        {
            "provider": [a.provider for a in answers],
            "answer_id": [a.id for a in answers],
            "model": [a.model for a in answers],
            "created": [a.created for a in answers],
            "question": [a.question for a in answers],
            "text": [a.text for a in answers],
            "finish_reason": [a.finish_reason for a in answers],
            "n_citations": [len(a.citations) for a in answers],
            "n_references": [None if a.references is None else len(a.references) for a in answers],
            "prompt_tokens": [u.prompt_tokens if u else None for u in usage],
            "completion_tokens": [u.completion_tokens if u else None for u in usage],
            "total_tokens": [u.total_tokens if u else None for u in usage],
            **{
                name: [u.tools.get(name) if u and u.tools else None for u in usage]
                for name in TOOL_USAGE_COLUMNS
            },
            "partial": [a.partial for a in answers],
            "cached": [a.cached for a in answers],
            "sample": [a.sample for a in answers],
        },
        schema=ANSWERS_SCHEMA,
    )
