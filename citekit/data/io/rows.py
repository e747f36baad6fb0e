"""The rows of the CSV and Parquet exports: one per source, with its work and author, in the
column order of ``SOURCE_COLUMNS`` (the vocabulary of ``citekit.core.columns``). The exports
and the bibliography read them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...core.columns import COLUMNS
from ...model import Answer

if TYPE_CHECKING:
    import polars as pl

    from ..identity.aliases import AliasSpec

__all__ = ["SOURCE_COLUMNS", "answers_only", "export_frame", "export_rows"]

#: Columns of the CSV and Parquet exports (``export_frame``): (name, kind), named and typed as
#: every table of sources is (``citekit.core.columns``). They are ``citekit.sources_frame``'s
#: (``citekit.data.corpus.works.SOURCES_SCHEMA``, in its order) with ``document_index`` after
#: ``marker`` and ``cited_text_heading`` before ``cited_text``.
SOURCE_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (name, COLUMNS[name].kind)
    for name in (
        "provider",
        "answer_id",
        "question",
        "kind",  # "citation", "knowledge chunk" or "web source"
        "marker",
        "document_index",
        "rank",
        "document_title",
        "document_author",
        "document_year",
        "year",
        "document_reference",
        "source_url",
        "data_id",
        "cited_text_heading",
        "cited_text",
        "score",
        "span_start",
        "span_end",
        "cited_inline",
        "work_id",
        "work",
        "author_id",
        "author",
    )
)


def export_frame(
    answers: Iterable[Answer] | Answer, *, aliases: AliasSpec = None, lang: str | None = None
) -> pl.DataFrame:
    """The rows of the CSV and Parquet exports: ``citekit.sources_frame`` (one row per source,
    with its work and author) with the two columns only a file of sources keeps,
    ``document_index`` and ``cited_text_heading``, in the ``SOURCE_COLUMNS`` order.

    ``Failed`` or ``None`` items (from ``ask_many``) are skipped.
    """
    import polars as pl

    from ..corpus.works import sources_frame as corpus_sources

    items = answers_only(answers)
    frame = corpus_sources(items, aliases=aliases, lang=lang)
    # corpus.sources_frame lays out every answer's citations first, in citations_frame's
    # order (answer by answer, the provider's order within each), then the knowledge chunks.
    headings = [c.cited_text_heading for a in items for c in a.citations]
    cited = frame.height - frame["kind"].eq("knowledge chunk").sum()
    if cited != len(headings):  # pragma: no cover - a change in corpus.sources_frame's order
        raise AssertionError("corpus.sources_frame no longer lists the citations first")
    headings.extend([None] * (frame.height - len(headings)))
    return frame.with_columns(
        document_index=(pl.col("marker") - 1).cast(pl.Int32),
        cited_text_heading=pl.Series(headings, dtype=pl.String),
    ).select(name for name, _ in SOURCE_COLUMNS)


def export_rows(
    answers: Iterable[Answer] | Answer, *, aliases: AliasSpec = None, lang: str | None = None
) -> list[dict[str, Any]]:
    """One dict per source (``export_frame``'s rows), with the ``SOURCE_COLUMNS`` keys."""
    return export_frame(answers, aliases=aliases, lang=lang).to_dicts()


def answers_only(answers: Iterable[Answer] | Answer) -> list[Answer]:
    """``answers`` as a list, without the ``Failed`` or ``None`` items ``ask_many`` leaves."""
    if isinstance(answers, Answer):
        return [answers]
    return [a for a in answers if isinstance(a, Answer)]  # Failed / None slots are skipped
