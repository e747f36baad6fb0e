"""The names of a source's columns: one vocabulary for the frames, the exports and the log.

A *source* is what an answer rests on: a passage it cites (a ``Citation``) or a knowledge chunk
retrieved for it (a GPTBots ``Reference``). Wherever citekit lays sources out as columns
(``citations_frame``, ``references_frame`` and ``sources_frame``, the CSV and Parquet rows of
``export_citations``, the ``citations`` and ``knowledge_references`` tables of the answer log)
a column of one of these meanings has the name given here, and a column with one of these
names has that meaning.

Magisterium's field names are the vocabulary. A knowledge chunk is mapped into it where the
meaning is the same (the name of its knowledge document is ``document_title``, its text
``cited_text``); what only GPTBots reports keeps GPTBots' name (``data_id``, ``score``).
BibTeX and CSL-JSON keep their own formats' field names: they are formats, not tables.

Types are named by kind (``"str"``, ``"int"``, ``"float"``, ``"bool"``; ``"words"``, a list of
strings, only in frames); each place maps a kind to its own type (polars: ``String``,
``Int32``, ``Float64``, ``Boolean``, ``List(String)``; SQLite: ``TEXT``, ``INTEGER``, ``REAL``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

    import polars as pl

__all__ = [
    "CITATION_COLUMNS",
    "COLUMNS",
    "COUNTS",
    "REFERENCE_COLUMNS",
    "TOOL_USAGE_COLUMNS",
    "Column",
    "Kind",
    "source_schema",
]

Kind = Literal["str", "int", "float", "bool", "words"]

#: The three words every count of citekit uses, each with its one meaning: the answers table,
#: the comparison's columns, the explorer, the charts and the demo page count these and call
#: them by these names.
COUNTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "sources": "what an answer lists as its sources: one per footnote number (a document "
        "it cites, however many passages), and one per knowledge chunk retrieved for it that "
        "no footnote already lists.",
        "citations": "the passages cited: one per citation row (citations_frame); a document "
        "cited for three passages is one source and three citations.",
        "works": "distinct works after identity merging: one work however many languages, "
        "editions, titles, answers or providers it was cited under.",
    }
)


class Column(NamedTuple):
    """One name of the vocabulary: its kind of value and what it means."""

    name: str
    kind: Kind
    meaning: str


_VOCABULARY: Final = (
    # The answer a source belongs to.
    Column("provider", "str", "The provider that answered: magisterium, maritaca or gptbots."),
    Column("answer_id", "str", "The provider's id of the answer."),
    Column("question", "str", "The question asked."),
    Column("model", "str", "The model that answered."),
    Column("conversation_id", "str", "The GPTBots conversation of the answer."),
    Column("question_id", "str", "GPTBots' id of the question message."),
    # The source.
    Column(
        "kind",
        "str",
        '"citation" (a passage the answer cites), "knowledge chunk" (a chunk retrieved for it) '
        'or "web source" (a page a web tool linked).',
    ),
    Column("marker", "int", "The one-based footnote number in the text (document_index + 1)."),
    Column("document_index", "int", "Zero-based; several cited passages may share a document."),
    Column("rank", "int", "A knowledge chunk's place in the provider's list, 1 first."),
    Column("cited_text", "str", "The passage cited, or the knowledge chunk's text."),
    Column("cited_text_heading", "str", "The heading above the cited passage."),
    Column("document_title", "str", "The document's title, or the knowledge document's name."),
    Column("document_author", "str", "The document's author as the provider wrote it."),
    Column("document_year", "str", 'The year as the provider wrote it ("c. 1270", "1891-1893").'),
    Column("year", "int", "The year read from document_year (parse_year); null when none."),
    Column("document_reference", "str", 'Where in the document ("no. 11", "2434").'),
    Column("source_url", "str", "The link to the passage or the document."),
    Column("score", "float", "The relevance the provider reported for a knowledge chunk."),
    Column("data_id", "str", "GPTBots' id of the knowledge document."),
    Column("cited_inline", "bool", "Whether the marker appears in the answer's text."),
    Column("span_start", "int", "Where in the answer's text the source is cited (its start)."),
    Column("span_end", "int", "Where in the answer's text its citation ends."),
    # The work and author a source belongs to (citekit.data.identity.clusters).
    Column("work_id", "str", "The work: one id for every language, edition or page of it."),
    Column("work", "str", "The work's display name."),
    Column("author_id", "str", "The author: one id for every spelling of the name."),
    Column("author", "str", "The author's display name."),
    # Support: a sentence of the answer and what a source citing it says of it
    # (citekit.data.corpus.support).
    Column("sentence_index", "int", "The sentence's place in the answer's text, 0 first."),
    Column("sentence", "str", "The sentence as written, markers included."),
    Column(
        "origin",
        "str",
        '"marker" (a footnote marker in the sentence) or "provider span" (a web source\'s '
        "annotated span or link overlaps it): how the source is known to cite it.",
    ),
    Column("support", "float", "How much the passage says what the sentence says, 0 to 1."),
    Column(
        "verdict",
        "str",
        '"supported", "partial", "unsupported"; "unverifiable" (a source with no passage) or '
        '"uncited" (a sentence no source cites).',
    ),
    Column("quote_found", "bool", "Whether the sentence's quoted text is in the passage."),
    Column("numbers_found", "words", "The sentence's numbers the passage has."),
    Column("numbers_contradicted", "words", "The sentence's numbers where the passage has others."),
    Column("shared_words", "words", "The sentence's content words (stems) the passage has."),
    Column(
        "best_source",
        "int",
        "The marker of the answer's citation whose passage fits the sentence best.",
    ),
    Column(
        "misattributed",
        "bool",
        "Whether a source the sentence does not cite fits it clearly better than its own.",
    ),
    Column("scorer", "str", 'How support was scored: "lexical" or the embedding model.'),
    # What Maritaca's built-in tools did for an answer (usage.tool_execution_details).
    Column("web_search_calls", "float", "Web searches Maritaca's web_search tool ran."),
    Column("page_reads", "float", "Pages Maritaca's web_search tool read."),
    Column("data_ocean_gb_processed", "float", "Gigabytes Maritaca's Data Ocean processed."),
    Column("code_execution_minutes", "float", "Minutes of Maritaca's code execution."),
)

#: The columns of ``Usage.tools`` (Maritaca's ``usage.tool_execution_details``), in order.
TOOL_USAGE_COLUMNS: Final = (
    "web_search_calls",
    "page_reads",
    "data_ocean_gb_processed",
    "code_execution_minutes",
)

#: The vocabulary, by name, in the order a table lists them.
COLUMNS: Final[Mapping[str, Column]] = MappingProxyType({c.name: c for c in _VOCABULARY})

#: A ``Citation``'s columns, in order; each holds the ``Citation`` field of the same name.
CITATION_COLUMNS: Final = (
    "marker",
    "document_index",
    "cited_text",
    "cited_text_heading",
    "document_title",
    "document_author",
    "document_year",
    "document_reference",
    "source_url",
)

#: A ``Reference``'s columns, in order, each with the ``Reference`` field it holds.
REFERENCE_COLUMNS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "rank": "rank",
        "cited_text": "content",
        "data_id": "data_id",
        "document_title": "data_name",
        "source_url": "source_url",
        "score": "score",
    }
)


def source_schema(names: Iterable[str]) -> pl.Schema:
    """The polars schema of source columns ``names``: each kind as its polars type (``str``
    ``String``, ``int`` ``Int32``, ``float`` ``Float64``, ``bool`` ``Boolean``)."""
    import polars as pl

    types: dict[Kind, pl.DataType] = {
        "str": pl.String(),
        "int": pl.Int32(),
        "float": pl.Float64(),
        "bool": pl.Boolean(),
        "words": pl.List(pl.String()),
    }
    return pl.Schema({name: types[COLUMNS[name].kind] for name in names})
