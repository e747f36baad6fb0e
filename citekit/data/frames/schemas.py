"""The frames' schemas: named, fixed, so that an empty source still gives a typed frame.

Column names and kinds are those of every table of sources (``citekit.core.columns``);
``source_schema`` gives the polars schema of any of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import polars as pl

from ...core.columns import CITATION_COLUMNS, COLUMNS, REFERENCE_COLUMNS, TOOL_USAGE_COLUMNS, Kind

__all__ = [
    "ANSWERS_SCHEMA",
    "CITATIONS_SCHEMA",
    "CITATION_FIELDS",
    "REFERENCES_SCHEMA",
    "source_schema",
]

_POLARS_TYPES: Final[dict[Kind, pl.DataType]] = {
    "str": pl.String(),
    "int": pl.Int32(),
    "float": pl.Float64(),
    "bool": pl.Boolean(),
    "words": pl.List(pl.String()),
}


def source_schema(names: Iterable[str]) -> pl.Schema:
    """The polars schema of source columns ``names`` (see ``citekit.core.columns``)."""
    return pl.Schema({name: _POLARS_TYPES[COLUMNS[name].kind] for name in names})


CITATION_FIELDS: Final = tuple(name for name in CITATION_COLUMNS if name != "marker")

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
