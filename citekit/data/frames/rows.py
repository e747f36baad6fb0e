"""Rows of citations and of knowledge chunks, as the frames and the corpus build them.

``owned_citations`` reads the citations of answers and saved chat completions (``Header``:
their arrays kept as columns, ``citekit.data.frames.columnar``) into one frame in answer
order, with the inline markers found in each text; ``add_references`` appends one answer's
knowledge chunks to columns of ``REFERENCES_SCHEMA``. ``citations_frame`` and
``references_frame`` are these rows; ``citekit.data.corpus.works.sources_frame`` adds its
spans, kinds and identity to the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Any, Final

import polars as pl

from ...core.columns import REFERENCE_COLUMNS
from ...core.years import year_series
from ...model import Answer, Citation, References
from ...text.reader import marker_digits, read
from ...wire.openai_compat import parse_citations
from .columnar import Header, TypedItem, citation_columns, plain_columns
from .schemas import CITATION_FIELDS, source_schema
from .typed import Plain, TypedCitation

__all__ = ["add_references", "owned_citations"]


#: Citations of saved responses read into columns at once: their JSON objects are let go
#: batch by batch (a JSON Lines file is never held whole as Python objects).
_BATCH: Final = 100_000


def owned_citations(
    items: Iterable[TypedItem], *, keep: bool = False
) -> tuple[pl.DataFrame, list[Answer | Header]]:
    """The citations frame with an ``owner`` column (each row's answer: its place among the
    answers that have citations, in order; with ``keep``, the list of those answers)."""
    # Saved responses of the plain shape (``Header``) keep their citation arrays as they are,
    # read column-wise by batches; other answers give ``Citation`` objects, read field by
    # field. Both kinds are numbered by their answer's place (``owner``) and merged in order.
    per_answer: list[tuple[str, str | None, str | None, str | None]] = []
    cited_owner: list[int] = []  # (answer, number) pairs of the numbers cited inline,
    cited_number: list[str] = []  # the number as its digits (repeats kept)
    obj_owner: list[int] = []
    objs: list[Citation] = []
    raw_owner: list[int] = []
    raw_lists: list[list[Any]] = []
    typed_owner: list[int] = []
    typed: list[TypedCitation] = []
    kept: list[Answer | Header] = []
    parts: list[pl.DataFrame] = []
    fell_back = False
    kinds = 0  # bit 1: citation arrays as dicts, bit 2: typed ones

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

    def flush_typed() -> None:
        owners = pl.Series(typed_owner, dtype=pl.UInt32)
        parts.append(pl.DataFrame(plain_columns(typed)).with_columns(owner=owners))
        typed.clear()
        typed_owner.clear()

    for item in items:
        if isinstance(item, Plain):  # a JSON Lines line decoded with its types: the bulk case
            if not item.citations:
                continue
            position = len(per_answer)
            per_answer.append((item.provider, item.id, item.question, item.model))
            _add_cited(cited_owner, cited_number, position, item.text)
            typed_owner.extend([position] * len(item.citations))
            typed.extend(item.citations)
            kinds |= 2
            if len(typed) >= _BATCH:
                flush_typed()
            continue
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
                kinds |= 1
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
    if typed:
        flush_typed()
    # rows of several kinds, or arrays read as objects after others: put back in answer order
    mixed = (bool(objs) and (bool(parts) or fell_back)) or kinds == 3
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
    # A row is cited inline when its (answer, marker) pair is among the pairs found in the
    # texts: each pair as one integer (a marker is below 2**31), looked up in a hash set.
    cited = _pair_keys(
        pl.Series(cited_owner, dtype=pl.UInt32),
        pl.Series(cited_number, dtype=pl.String).cast(pl.Int32),
    )
    inline = _pair_keys(owner, marker).is_in(cited.implode()).alias("cited_inline")
    rows = pl.concat([answers[owner], per_citation], how="horizontal")
    years = year_series(rows.get_column("document_year"))
    return rows.with_columns(marker, inline, year=years), kept


def _add_cited(owners: list[int], found: list[str], position: int, text: str) -> None:
    """Note the numbers cited inline in ``text`` (``Answer.cited_markers``), as digits."""
    if "[" not in text:
        return
    cited = marker_digits(text)
    if cited is None:  # a text the scan cannot read alone
        cited = [str(n) for n in read(text).numbers]
    owners.extend([position] * len(cited))
    found.extend(cited)


def _pair_keys(owner: pl.Series, marker: pl.Series) -> pl.Series:
    """Each (answer, marker) pair as one ``Int64``: markers run below ``2**31``."""
    return owner.cast(pl.Int64) * 2**31 + marker.cast(pl.Int64)


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
        schema={**source_schema(CITATION_FIELDS), "owner": pl.UInt32()},
    )


def add_references(
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
