"""Every source of many answers as one corpus: sources and works across providers and languages.

``sources_frame`` lays out every source of every answer, whatever the provider: the passages
Magisterium cites, GPTBots' corner citations and knowledge chunks, Maritaca's web sources, each
with the work and author it belongs to (``citekit.data.identity.clusters``: the same encyclical
cited in English and Portuguese, by "Francis" and by "Franziskus", is one work by one author).
``works_frame`` counts them per work.

>>> from citekit.testing import default_data_dir
>>> src = ck.sources_frame(default_data_dir())
>>> src.group_by("kind").len().sort("kind")
shape: (3, 2)
┌─────────────────┬─────┐
│ kind            ┆ len │
│ ---             ┆ --- │
│ str             ┆ u32 │
╞═════════════════╪═════╡
│ citation        ┆ 145 │
│ knowledge chunk ┆ 85  │
│ web source      ┆ 13  │
└─────────────────┴─────┘
"""

from __future__ import annotations

from typing import Any, Final, Literal

import polars as pl

from ...core.names import REFERENCES_PROVIDER, WEB_SOURCE_PROVIDERS
from ...model import Answer, Citation, References
from ...text.reader import read
from ..frames.columnar import Header, read_source
from ..frames.rows import add_references, owned_citations
from ..frames.schemas import REFERENCES_SCHEMA, source_schema
from ..frames.sources import Source
from ..identity.aliases import AliasSpec
from ..identity.clusters import identify

__all__ = ["SOURCES_SCHEMA", "WORKS_SCHEMA", "SourceKind", "sources_frame", "works_frame"]

SourceKind = Literal["citation", "knowledge chunk", "web source"]

#: One row per source: what the provider reported, then the work and author it belongs to.
SOURCES_SCHEMA: Final = source_schema(
    (
        "provider",
        "answer_id",
        "question",
        "kind",
        "marker",
        "rank",
        "document_title",
        "document_author",
        "document_year",
        "year",
        "document_reference",
        "source_url",
        "data_id",
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

#: One row per work.
WORKS_SCHEMA: Final = pl.Schema(
    {
        "work_id": pl.String(),
        "work": pl.String(),
        "author_id": pl.String(),
        "author": pl.String(),
        "year": pl.Int32(),
        "citations": pl.UInt32(),
        "answers": pl.UInt32(),
        "providers": pl.List(pl.String()),
        "titles": pl.List(pl.String()),
        "languages": pl.List(pl.String()),
        "urls": pl.List(pl.String()),
    }
)


def sources_frame(
    source: Source,
    *,
    provider: str | None = None,
    aliases: AliasSpec = None,
    lang: str | None = None,
) -> pl.DataFrame:
    """One row per source of every answer in ``source``, all providers, with its work and
    author (schema ``SOURCES_SCHEMA``).

    ``kind`` says what the row is: a ``"citation"`` (a passage Magisterium cites, a GPTBots
    corner citation), a ``"knowledge chunk"`` (GPTBots' retrieved chunks, ranked and scored)
    or a ``"web source"`` (a page Maritaca's tools linked). Then, named as in
    ``citekit.core.columns``: ``provider``, ``answer_id``, ``question``, ``marker`` (the
    footnote number; null for a chunk), ``rank`` (a chunk's place), ``document_title``,
    ``document_author``, ``document_year`` and ``year``, ``document_reference``,
    ``source_url``, ``data_id`` (GPTBots' document id), ``cited_text``, ``score`` (a chunk's
    relevance), ``span_start``/``span_end`` (where in the answer's text the source is cited:
    the annotated span of a web source, else the first marker of the citation's number; null
    when it is not cited inline), ``cited_inline``; and the identity:

    * ``work_id`` / ``work``: the work the source belongs to, the same for every language,
      edition, page or paragraph of one text (an id from the alias table, such as
      ``"laudato-si"``, else ``"w-"`` and a hash), and its display name;
    * ``author_id`` / ``author``: the person or body, under any of its names (``"francis"``
      for Francis, Francesco, Franziskus, Papa Francisco), and its display name. A source
      that names no author gets its work's (the Catechism's is the Catholic Church).

    Parameters
    ----------
    source
        Answers, saved responses or sample files; see ``citekit.data.frames``.
    provider
        The provider of saved responses that do not name it.
    aliases
        Extends the shipped alias table (``citekit.data.identity.aliases``): the path of a JSON
        alias file, an ``Aliases`` table, or hand assignments ``{"works": {title: work_id},
        "authors": {name: author_id}}`` that merge a title into a work (an existing id) or
        split it off (a new id).
    lang
        Display works and authors by their names in this language where the alias table has
        them ("en", "pt", "es", "it", "fr", "de", "la"); else by the title or name cited most.

    Returns
    -------
    A frame with ``SOURCES_SCHEMA``; empty (and typed) when there are no sources.

    Examples
    --------
    Pope Francis, cited in four languages, is one author:

    >>> import polars as pl
    >>> from citekit.testing import default_data_dir
    >>> src = ck.sources_frame(default_data_dir() / "magisterium")
    >>> francis = src.filter(pl.col("author_id") == "francis")
    >>> sorted(francis["document_author"].unique())
    ['Francesco', 'Francis', 'Francisco', 'Franziskus']
    >>> ck.sources_frame(default_data_dir() / "magisterium", lang="pt").filter(
    ...     pl.col("author_id") == "francis")["author"].unique().to_list()
    ['Papa Francisco']
    """
    answers: list[Answer | Header] = []
    bare: list[References] = []
    for item in read_source(source, provider=provider, caller="sources_frame"):
        if isinstance(item, References):
            bare.append(item)
        else:
            answers.append(item)
    parts = [_cited(answers), _chunks(answers, bare)]
    frame = pl.concat(parts, how="diagonal_relaxed")
    return identify(frame, aliases=aliases, lang=lang).select(SOURCES_SCHEMA.names())


def _cited(answers: list[Answer | Header]) -> pl.DataFrame:
    """Citations and web sources, in citations_frame's row order, with kind, span and data id.

    A citation's span is its number's first marker in the text (a join on the answer and the
    number, so a saved response's citations stay columns); a web source's is its annotated
    span, read off its raw JSON; a GPTBots citation's data id too."""
    cits, kept = owned_citations(answers, keep=True)
    n = cits.height
    data_ids: list[str | None] = [None] * n
    starts: list[int | None] = [None] * n
    ends: list[int | None] = [None] * n
    firsts: dict[str, list[int]] = {"owner": [], "marker": [], "start": [], "end": []}
    row = 0  # the rows of one answer are contiguous, in its citations' order
    counts = [0] * len(kept)  # (an answer whose citations were all dropped has no rows)
    for owner, count in cits.group_by("owner").len().iter_rows():
        counts[owner] = count
    for position, (a, count) in enumerate(zip(kept, counts, strict=True)):
        if a.provider in WEB_SOURCE_PROVIDERS:  # a web source is cited where its annotated span is
            cs = a.citations() if isinstance(a, Header) else a.citations
            length = len(a.text)
            for k, c in enumerate(cs):
                starts[row + k], ends[row + k] = annotated_span(c, length)
        else:
            first: dict[int, tuple[int, int]] = {}
            for m in read(a.text).markers:
                first.setdefault(m.number, (m.start, m.end))
            firsts["owner"].extend([position] * len(first))
            firsts["marker"].extend(first)
            firsts["start"].extend(start for start, _ in first.values())
            firsts["end"].extend(end for _, end in first.values())
            if a.provider == REFERENCES_PROVIDER and isinstance(a, Answer):
                data_ids[row : row + count] = map(_data_id, a.citations)
        row += count
    spans = pl.DataFrame(
        firsts,
        schema={"owner": pl.UInt32(), "marker": pl.Int32(), "start": pl.Int32(), "end": pl.Int32()},
    )
    web = pl.col("provider").is_in(list(WEB_SOURCE_PROVIDERS))
    cits = cits.join(spans, on=["owner", "marker"], how="left", maintain_order="left")
    return (
        cits.with_columns(
            # A web source is cited where its annotated span or link is: a "[1]" in a Maritaca
            # answer points to no source (the HTML leaves it as text).
            span_start=pl.when(web).then(pl.Series(starts, dtype=pl.Int32)).otherwise("start"),
            span_end=pl.when(web).then(pl.Series(ends, dtype=pl.Int32)).otherwise("end"),
            data_id=pl.Series(data_ids, dtype=pl.String),
        )
        .with_columns(
            cited_inline=pl.when(web)
            .then(pl.col("span_start").is_not_null())
            .otherwise(pl.col("cited_inline")),
            kind=pl.when(web).then(pl.lit("web source")).otherwise(pl.lit("citation")),
        )
        .drop("model", "document_index", "cited_text_heading", "owner", "start", "end")
    )


_NO_SPAN: Final = (None, None)


def _data_id(citation: Citation) -> str | None:
    value = citation.raw.get("data_id") if citation.raw else None
    return value if isinstance(value, str) and value else None


def annotated_span(citation: Citation, length: int) -> tuple[int | None, int | None]:
    """The span of the text (of ``length``) a web source's annotation covers, when it fits."""
    raw = citation.raw or {}
    start, end = raw.get("start_index"), raw.get("end_index")
    if (
        isinstance(start, int)
        and isinstance(end, int)
        and not isinstance(start, bool)
        and not isinstance(end, bool)
        and 0 <= start < end <= length
    ):
        return start, end
    return _NO_SPAN


def _chunks(answers: list[Answer | Header], bare: list[References]) -> pl.DataFrame:
    columns: dict[str, list[Any]] = {name: [] for name in REFERENCES_SCHEMA.names()}
    questions: list[str | None] = []
    for a in answers:
        if isinstance(a, Header):
            continue  # a chat completion has no knowledge chunks
        refs = a.references
        if refs is None or not refs.items:
            continue
        add_references(columns, refs, a.provider, a.conversation_id, a.id)
        questions.extend([a.question] * len(refs.items))
    for refs in bare:
        add_references(columns, refs, REFERENCES_PROVIDER, None, None)
        questions.extend([None] * len(refs.items))
    frame = pl.DataFrame(columns, schema=REFERENCES_SCHEMA)
    return frame.with_columns(
        question=pl.Series(questions, dtype=pl.String),
        kind=pl.lit("knowledge chunk", pl.String),
    ).drop("conversation_id", "question_id")


def works_frame(
    source: Source | pl.DataFrame | pl.LazyFrame,
    *,
    provider: str | None = None,
    aliases: AliasSpec = None,
    lang: str | None = None,
) -> pl.DataFrame:
    """One row per work cited in ``source`` (schema ``WORKS_SCHEMA``), most cited first.

    Columns: ``work_id``, ``work`` (display title), ``author_id``, ``author``, ``year`` (the
    year cited most often for it, the earliest of a tie), ``citations`` (sources of the work:
    citations, web sources and knowledge chunks), ``answers`` (how many answers cite it),
    ``providers``, ``titles`` (every title it was cited under), ``languages`` (of those
    titles, where the alias table knows them: the languages its display names are in) and
    ``urls`` (the distinct document addresses, ``work_url``).

    Parameters
    ----------
    source
        A ``sources_frame`` (or a LazyFrame of one, ``scan_sources``: only the distinct
        works, titles and addresses are collected), or anything ``sources_frame`` accepts.
    provider, aliases, lang
        As ``sources_frame`` takes them (ignored for a frame).

    Examples
    --------
    >>> import polars as pl
    >>> from citekit.testing import default_data_dir
    >>> works = ck.works_frame(default_data_dir())
    >>> ccc = works.filter(pl.col("work_id") == "catechism")
    >>> ccc["answers"].item() > 1, sorted(ccc["languages"].item())[:3]
    (True, ['de', 'en', 'es'])
    """
    from ..identity.aliases import Aliases
    from ..identity.keys import work_url

    src = (
        source
        if isinstance(source, pl.DataFrame | pl.LazyFrame)
        else sources_frame(source, provider=provider, aliases=aliases, lang=lang)
    )
    table = Aliases.resolve(aliases)
    # Counted in two steps, so that a LazyFrame (``scan_sources``) streams: the distinct
    # (work, author, year, provider, title, address) rows with their count and first row,
    # then, from those few, the works. Lists keep the order values were first seen in.
    parts = ("work_id", "work", "author_id", "author", "year", "provider")
    distinct = (
        src.lazy()
        .filter(pl.col("work_id").is_not_null())
        .with_row_index("_row")
        .group_by(*parts, "document_title", "source_url")
        .agg(_n=pl.len(), _first=pl.col("_row").min())
        .collect(engine="streaming")
        .sort("_first")
    )
    answers = (
        src.lazy()
        .filter(pl.col("work_id").is_not_null())
        .group_by("work_id")
        .agg(answers=pl.struct("provider", "answer_id", "question").hash(seed=0).n_unique())
        .collect(engine="streaming")
    )

    def most(column: str) -> pl.DataFrame:  # mode().sort().first() of the rows behind
        return (
            distinct.filter(pl.col(column).is_not_null())
            .group_by("work_id", column)
            .agg(pl.col("_n").sum())
            .sort(["work_id", "_n", column], descending=[False, True, False])
            .group_by("work_id", maintain_order=True)
            .agg(pl.col(column).first())
        )

    grouped = (
        distinct.group_by("work_id", maintain_order=True)
        .agg(
            work=pl.col("work").first(),
            citations=pl.col("_n").sum().cast(pl.UInt32),
            providers=pl.col("provider").unique(maintain_order=True),
            titles=pl.col("document_title").drop_nulls().unique(maintain_order=True),
            urls=pl.col("source_url").drop_nulls().unique(maintain_order=True),
        )
        .join(most("author_id"), on="work_id", how="left", maintain_order="left")
        .join(most("year"), on="work_id", how="left", maintain_order="left")
        .join(answers, on="work_id", how="left", maintain_order="left")
        .with_columns(pl.col("answers").cast(pl.UInt32))
        .sort(["citations", "work"], descending=[True, False], maintain_order=True)
    )
    authors = distinct.select("author_id", "author").drop_nulls().unique("author_id")
    grouped = grouped.join(authors, on="author_id", how="left", maintain_order="left")
    languages = [
        _languages(table, wid, titles, urls)
        for wid, titles, urls in zip(
            grouped["work_id"], grouped["titles"], grouped["urls"], strict=True
        )
    ]
    urls = [list(dict.fromkeys(u for u in map(work_url, found) if u)) for found in grouped["urls"]]
    years = [
        (table.works[w].years or (y, y))[0] if w in table.works else y
        for w, y in zip(grouped["work_id"], grouped["year"], strict=True)
    ]
    return grouped.with_columns(
        year=pl.Series(years, dtype=pl.Int32),
        languages=pl.Series(languages, dtype=pl.List(pl.String)),
        urls=pl.Series(urls, dtype=pl.List(pl.String)),
    ).select(WORKS_SCHEMA.names())


def _languages(table: Any, work_id: str, titles: Any, urls: Any) -> list[str]:
    """The languages a work was cited in: from its addresses (vatican.va says it), and from
    titles that are its alias-table name in one language only."""
    from ..identity.keys import title_key, url_language, work_title

    found = {code for code in map(url_language, urls) if code}
    work = table.works.get(work_id)
    if work is not None:
        for title in titles:
            key = title_key(work_title(title))
            codes = {code for code, name in work.names.items() if title_key(name) == key}
            if len(codes) == 1:
                found |= codes
    return sorted(found)
