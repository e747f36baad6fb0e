"""Citation health: how well each answer's text and its list of sources agree.

``health_frame`` gives one row per answer: how many of its sentences cite something, which
sources the provider listed but the text never points to, which markers point to no source,
and which works the answer cites under two numbers. Sentences come from
:func:`citekit.text.sentences.sentences`, markers from :func:`citekit.text.reader.read` (never
in code), sources and their works from :func:`citekit.data.corpus.works.sources_frame`.

What cites a sentence
    A footnote marker in it (``[^1]``, ``[1]``, ``$[1]$``; one written after the sentence's
    final punctuation belongs to it). In a Maritaca answer the sources are web pages the text
    links to: a sentence also cites when it overlaps a web source's annotated span or holds a
    link to one of its pages.

Which sources a marker points to
    The ones numbered by the provider, as the HTML draws them: Magisterium's citations and
    GPTBots' corner citations. Maritaca's web sources are cited by their links, so a marker
    in a Maritaca answer points to none (the HTML leaves it as the provider's own text):
    it is counted as a marker without a source. GPTBots' knowledge chunks are retrieved for
    the answer, never marked: they are counted (``chunks``), never called unmarked.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, Final

import polars as pl

from ...model import Answer
from ...text.reader import read
from ...text.sentences import Sentence, sentences
from ..frames.sources import Source, iter_items
from ..identity.aliases import AliasSpec
from .scorers import Embed, Scorer, scorer_for
from .support import figures, fit, judge, texts

__all__ = ["HEALTH_SCHEMA", "health_frame"]

_NUMBERS: Final = pl.List(pl.Int32())

#: One row per answer.
HEALTH_SCHEMA: Final = pl.Schema(
    {
        "provider": pl.String(),
        "answer_id": pl.String(),
        "question": pl.String(),
        "sentences": pl.Int32(),
        "cited_sentences": pl.Int32(),
        "coverage": pl.Float64(),
        "sources": pl.Int32(),
        "chunks": pl.Int32(),
        "n_unmarked": pl.Int32(),
        "n_unlisted": pl.Int32(),
        "n_same_work": pl.Int32(),
        "unmarked": _NUMBERS,
        "unlisted": _NUMBERS,
        "same_work": pl.List(pl.String()),
        "support_recall": pl.Float64(),
        "support_precision": pl.Float64(),
        "unused_chunks": _NUMBERS,
        "unfit_citations": _NUMBERS,
    }
)


def health_frame(
    source: Source,
    *,
    provider: str | None = None,
    aliases: AliasSpec = None,
    scorer: str | Embed | Scorer | None = None,
) -> pl.DataFrame:
    """One row per answer in ``source`` (schema ``HEALTH_SCHEMA``): how well its text cites
    its sources. Every answer has its row, also one without sources or without text.

    Columns: ``provider``, ``answer_id``, ``question``; ``sentences`` (of the answer's text,
    code and footnote definition lines left out: :func:`citekit.text.sentences.sentences`),
    ``cited_sentences`` (those carrying a marker or, in a Maritaca answer, overlapping a web
    source's span or link), ``coverage`` (``cited_sentences / sentences``; null without
    sentences), ``sources`` (distinct footnote numbers the provider listed: citations and
    web sources), ``chunks`` (GPTBots' knowledge chunks retrieved for the answer, which no
    marker points to; null when none were fetched); ``unmarked`` (numbers listed but never
    cited in the text), ``unlisted`` (markers in the text with no source: their numbers),
    ``same_work`` (works cited under two or more numbers, as ``"work [1, 3]"``, the work
    named as ``works_frame`` names it), each list with its count (``n_unmarked``,
    ``n_unlisted``, ``n_same_work``); ``support_recall`` (the share of sentences a citation
    supports) and ``support_precision`` (the share of citations with a passage that support
    their sentence), as ``support_frame`` judges them, null when no citation has a passage;
    the evidence left unused: ``unused_chunks`` (the ranks of GPTBots' knowledge chunks
    retrieved for the answer whose text no citation of it carries; null when none were
    fetched) and ``unfit_citations`` (markers none of whose passages supports any sentence of
    the answer even partly).

    Parameters
    ----------
    source
        Answers, saved responses or sample files; see ``citekit.data.frames``. Bare GPTBots
        ``References`` (without their answer) add no row.
    provider
        The provider of saved responses that do not name it.
    aliases
        Extra or hand-made work identities, as ``sources_frame`` takes them: they decide which
        citations are one work (``same_work``).
    scorer
        How support is scored, as ``support_frame`` takes it.

    Returns
    -------
    A frame with ``HEALTH_SCHEMA``, in the order of the answers; empty (and typed) without
    answers.

    Examples
    --------
    A Magisterium answer that lists a source its text never marks, and one with a marker
    that no source answers:

    >>> mg = ck.Magisterium()
    >>> wage = mg.ask("What is a just wage according to Catholic teaching?")
    >>> marriage = mg.ask("What does the Catholic Church teach about marriage?")
    >>> health = ck.health_frame([wage, marriage])
    >>> health.select("sources", "unmarked", "unlisted", "n_same_work")
    shape: (2, 4)
    ┌─────────┬───────────┬───────────┬─────────────┐
    │ sources ┆ unmarked  ┆ unlisted  ┆ n_same_work │
    │ ---     ┆ ---       ┆ ---       ┆ ---         │
    │ i32     ┆ list[i32] ┆ list[i32] ┆ i32         │
    ╞═════════╪═══════════╪═══════════╪═════════════╡
    │ 6       ┆ [6]       ┆ []        ┆ 0           │
    │ 5       ┆ []        ┆ [9]       ┆ 0           │
    └─────────┴───────────┴───────────┴─────────────┘
    >>> 0 < health["coverage"][0] <= 1
    True
    """
    from .works import sources_frame

    answers = [
        a
        for a in iter_items(source, provider=provider, caller="health_frame")
        if isinstance(a, Answer)
    ]
    # sources_frame lists each answer's citations first, in answer and citation order (as
    # citations_frame does), so its first rows belong to the answers in turn.
    n_cited = sum(len(a.citations) for a in answers)
    cited = sources_frame(answers, aliases=aliases).head(n_cited)
    owner = pl.Series("owner", _owners(answers), dtype=pl.UInt32)
    per_answer = _per_answer(cited.with_columns(owner))
    columns: dict[str, list[Any]] = {name: [] for name in HEALTH_SCHEMA.names()}
    judge_with = scorer_for(scorer)
    judged = judge(answers, cited)
    if judge_with.embeds:  # every distinct text encoded in one batch
        judged = list(judged)  # type: ignore[assignment]
        judge_with.prepare(texts(judged))
    for i, (a, found, rows) in enumerate(judged):
        _add(columns, a, per_answer.get(i))
        grid = fit(a, found, rows, judge_with)
        recall, precision = figures(found, grid)
        columns["support_recall"].append(recall)
        columns["support_precision"].append(precision)
        columns["unused_chunks"].append(unused_chunks(a))
        columns["unfit_citations"].append(grid.unfit())
    return pl.DataFrame(columns, schema=HEALTH_SCHEMA)


def unused_chunks(answer: Answer) -> list[int] | None:
    """The ranks of the knowledge chunks retrieved for ``answer`` whose text none of its
    citations carries (whole, or a part of it); None when no chunks were fetched."""
    refs = answer.references
    if refs is None:
        return None
    cited = [_squeezed(c.cited_text) for c in answer.citations if c.cited_text]
    cited = [c for c in cited if c]
    return [
        r.rank
        for r in refs.items
        if not (chunk := _squeezed(r.content)) or not any(c in chunk or chunk in c for c in cited)
    ]


def _squeezed(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _owners(answers: Sequence[Answer]) -> list[int]:
    return [i for i, a in enumerate(answers) for _ in a.citations]


class _Facts:
    """What the sources frame says about one answer's listed sources."""

    __slots__ = ("numbers", "same_work", "unmarked", "web")

    def __init__(
        self,
        numbers: list[int],
        unmarked: list[int],
        same_work: list[str],
        web: list[tuple[int, int | None, int | None, str | None]],
    ) -> None:
        self.numbers = numbers  # numbers a marker may point to
        self.unmarked = unmarked  # of those, never marked
        self.same_work = same_work
        self.web = web  # (number, span start, span end, url) of each web source row


def _per_answer(cited: pl.DataFrame) -> dict[int, _Facts]:
    if cited.is_empty():
        return {}
    marked = pl.col("kind") == "citation"
    grouped = cited.group_by("owner").agg(
        numbers=pl.col("marker").filter(marked).unique().sort(),
        unmarked=pl.col("marker").filter(marked & ~pl.col("cited_inline")).unique().sort(),
    )
    works = (
        cited.filter(pl.col("work_id").is_not_null() & pl.col("marker").is_not_null())
        .group_by("owner", "work_id")
        .agg(work=pl.col("work").first(), numbers=pl.col("marker").unique().sort())
        .filter(pl.col("numbers").list.len() > 1)
        .sort("owner", pl.col("numbers").list.first())
        .group_by("owner", maintain_order=True)
        .agg(
            same_work=pl.format(
                "{} [{}]",
                pl.col("work").fill_null(pl.col("work_id")),
                pl.col("numbers").cast(pl.List(pl.String)).list.join(", "),
            )
        )
    )
    same = dict(zip(works["owner"].to_list(), works["same_work"].to_list(), strict=True))
    web_rows = cited.filter(pl.col("kind") == "web source").select(
        "owner", "marker", "span_start", "span_end", "source_url"
    )
    web: dict[int, list[tuple[int, int | None, int | None, str | None]]] = {}
    for owner, number, start, end, url in web_rows.iter_rows():
        web.setdefault(owner, []).append((number, start, end, url))
    out: dict[int, _Facts] = {}
    for owner, numbers, unmarked in grouped.iter_rows():
        out[owner] = _Facts(numbers, unmarked, same.get(owner, []), web.get(owner, []))
    return out


def _add(columns: dict[str, list[Any]], answer: Answer, facts: _Facts | None) -> None:
    text = answer.text
    found = sentences(text)
    listed = facts.numbers if facts else []
    unmarked = list(facts.unmarked) if facts else []
    marked = read(text).numbers
    web = facts.web if facts else []
    cited = sum(1 for s in found if s.markers)
    numbers = set(listed)
    if web:
        spans, linked = _web_spans(text, web)
        cited = sum(1 for s, hit in zip(found, _overlapping(found, spans), strict=True)
                    if s.markers or hit)  # fmt: skip
        numbers |= {number for number, *_ in web}
        unmarked = sorted({*unmarked, *(n for n, *_ in web if n not in linked)})
    unlisted = sorted(marked - set(listed))
    same_work = facts.same_work if facts else []
    refs = answer.references
    columns["provider"].append(answer.provider)
    columns["answer_id"].append(answer.id)
    columns["question"].append(answer.question)
    columns["sentences"].append(len(found))
    columns["cited_sentences"].append(cited)
    columns["coverage"].append(cited / len(found) if found else None)
    columns["sources"].append(len(numbers))
    columns["chunks"].append(None if refs is None else len(refs.items))
    columns["n_unmarked"].append(len(unmarked))
    columns["n_unlisted"].append(len(unlisted))
    columns["n_same_work"].append(len(same_work))
    columns["unmarked"].append(unmarked)
    columns["unlisted"].append(unlisted)
    columns["same_work"].append(same_work)


def _web_spans(
    text: str, web: list[tuple[int, int | None, int | None, str | None]]
) -> tuple[list[tuple[int, int]], set[int]]:
    """Where the text cites its web sources (annotated spans, links to their pages) and the
    numbers of the sources cited so."""
    spans: list[tuple[int, int]] = []
    linked: set[int] = set()
    by_url: dict[str, int] = {}
    for number, start, end, url in web:
        if start is not None and end is not None and start < end:
            spans.append((start, end))
            linked.add(number)
        if url:
            by_url.setdefault(url, number)
    for link in read(text).links:
        target = by_url.get(link.url)
        if target is not None:
            spans.append((link.start, link.end))
            linked.add(target)
    return spans, linked


def _overlapping(found: Sequence[Sentence], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For each sentence, whether a span ``(start, end)`` overlaps it (``start < sentence.end``
    and ``sentence.start < end``).

    The spans are sorted and merged into disjoint runs once; each sentence then looks up the
    last run that starts before it ends (a bisection), the only one that can reach it: the
    work is ``(sentences + spans) x log(spans)``, never ``sentences x spans``."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(spans):
        if ends and start < ends[-1]:  # overlapping runs merge; touching ones stay apart
            if end > ends[-1]:
                ends[-1] = end
        else:
            starts.append(start)
            ends.append(end)
    # The runs are disjoint and sorted, so their ends grow with their starts.
    out = []
    for sentence in found:
        i = bisect_left(starts, sentence.end) - 1
        out.append(i >= 0 and ends[i] > sentence.start)
    return out
