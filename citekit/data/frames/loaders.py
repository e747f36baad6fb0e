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
either way (``tests/data/frames/test_columnar.py``). In a JSON Lines file, ``citations_frame``
decodes each plain chat completion with msgspec, with its types, straight into the citation
columns (``citekit.data.frames.typed``: no dict per JSON object); any other line is read as
above, and so is every error and skipped line (``tests/data/frames/test_typed.py``). Year
parsing and the repeated per-answer columns are computed in polars over whole columns
(``bench/frames.py`` measures 100,000 saved responses, as dicts and as a JSON Lines file,
against pandas and a polars floor).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from ...core.columns import TOOL_USAGE_COLUMNS
from ...core.fields import utc_time
from ...core.names import REFERENCES_PROVIDER
from ...model import Answer, Usage
from .columnar import Header, TypedItem, read_source, read_typed
from .log import log_answers, log_citations, log_references, log_selection
from .rows import add_references, owned_citations
from .schemas import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA
from .sources import Source

__all__ = ["answers_frame", "citations_frame", "references_frame"]


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
    133
    >>> by_author = cits.group_by("document_author").len()
    >>> by_author.sort("len", "document_author", descending=[True, False]).head(3)
    shape: (3, 2)
    ┌─────────────────────────────────┬─────┐
    │ document_author                 ┆ len │
    │ ---                             ┆ --- │
    │ str                             ┆ u32 │
    ╞═════════════════════════════════╪═════╡
    │ Catholic Church                 ┆ 28  │
    │ John Paul II                    ┆ 10  │
    │ Pontifical Council for Justice… ┆ 8   │
    └─────────────────────────────────┴─────┘
    """
    if (logged := log_selection(source)) is not None:
        return log_citations(logged, CITATIONS_SCHEMA)
    items = read_typed(source, provider=provider, caller="citations_frame")
    return _citations_of(items)


def _citations_of(items: Iterable[TypedItem]) -> pl.DataFrame:
    return owned_citations(items)[0].select(CITATIONS_SCHEMA.names())


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
    items = read_source(source, provider=provider, caller="references_frame")
    for item in items:
        if isinstance(item, Header):
            continue  # a chat completion has no knowledge chunks
        if isinstance(item, Answer):
            refs = item.references
            if refs is None or not refs.items:
                continue
            name, conversation, answer_id = item.provider, item.conversation_id, item.id
        else:
            refs, name, conversation, answer_id = item, REFERENCES_PROVIDER, None, None
        add_references(columns, refs, name, conversation, answer_id)
    return pl.DataFrame(columns, schema=REFERENCES_SCHEMA)


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
    items = read_source(source, provider=provider, caller="answers_frame")
    for item in items:
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
        utc_time(a.created),
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
        utc_time(h.created()),
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
