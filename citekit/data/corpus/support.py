"""Does the cited passage say what the sentence says? Every sentence with the sources citing it,
and the support each passage gives it.

Claims (:func:`claims`)
    Each sentence of an answer (:func:`citekit.text.sentences.sentences`, the one splitter),
    with its span in ``answer.text`` (code points) and the sources that cite it, each with how
    that is known (``origin``): ``"marker"`` (a footnote marker in the sentence: ``[^1]``,
    ``[1]``, GPTBots' ``$[1]$``, pointing to the citations of that number) or ``"provider
    span"`` (a web source whose annotated span, or a link to whose page, overlaps the
    sentence: Maritaca). The span is the answer's side; where in its document a passage stands
    (``document_reference``) is the source's side, a column of its own.

Support (:func:`support_frame`)
    For each sentence and each source citing it, a ``support`` score in [0, 1] from lexical
    evidence (``citekit.data.corpus.evidence``: the quote found, numbers had or contradicted,
    a negation on one side, the words shared), with the similarity of meaning from an
    embedding model when one is given (``scorer=``, ``citekit.data.corpus.scorers``), and a
    ``verdict``: ``"supported"`` (support >= 0.5), ``"partial"`` (>= 0.25),
    ``"unsupported"``; ``"unverifiable"`` for a source with no passage (a web page Maritaca
    links: its title is no passage) and ``"uncited"`` for a sentence no source cites. Which of
    the answer's sources fits a sentence best, and whether another fits it clearly better than
    the cited one (``best_source``, ``misattributed``): ``citekit.data.corpus.fit``.
    Support is not entailment: a passage on the same topic may share a sentence's words, or
    be near it in meaning, and still not say it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final, Literal, NamedTuple

import polars as pl

from ...model import Answer
from ...text.reader import read
from ...text.sentences import Sentence, sentences
from ..frames.schemas import source_schema
from ..frames.sources import Source, iter_items
from ..identity.aliases import AliasSpec
from .evidence import verdict
from .fit import AnswerFit, passage
from .scorers import Embed, Scorer, scorer_for

__all__ = [
    "SUPPORT_SCHEMA",
    "VERDICTS",
    "Cited",
    "Claim",
    "Origin",
    "claims",
    "support_frame",
]

Origin = Literal["marker", "provider span"]

#: Every verdict, in the order a legend lists them.
VERDICTS: Final = ("supported", "partial", "unsupported", "unverifiable", "uncited")

#: One row per (answer, sentence, source citing it); one row with null source columns for a
#: sentence no source cites.
SUPPORT_SCHEMA: Final = source_schema(
    (
        "provider",
        "answer_id",
        "sentence_index",
        "sentence",
        "span_start",
        "span_end",
        "origin",
        "kind",
        "marker",
        "document_reference",
        "work_id",
        "work",
        "cited_text",
        "support",
        "verdict",
        "quote_found",
        "numbers_found",
        "numbers_contradicted",
        "shared_words",
        "best_source",
        "misattributed",
        "scorer",
    )
)


class Cited(NamedTuple):
    """One source citing a sentence: its row in the answer's sources (``sources_frame``'s
    order) and how that is known."""

    row: int
    origin: Origin


class Claim(NamedTuple):
    """One sentence of an answer and the sources citing it."""

    position: int  # the sentence's place in the text, 0 first
    sentence: Sentence
    sources: tuple[Cited, ...]


class _Row(NamedTuple):
    kind: str
    marker: int | None
    span_start: int | None
    span_end: int | None
    source_url: str | None


def claims(text: str, rows: Sequence[_Row]) -> list[Claim]:
    """The sentences of ``text`` with the sources (``rows``: one answer's citations and web
    sources, as ``sources_frame`` lists them) that cite each."""
    by_number: dict[int, list[int]] = {}
    spans: list[tuple[int, int, int]] = []  # (start, end, row) of web sources
    by_url: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if row.kind == "web source":
            if row.span_start is not None and row.span_end is not None:
                spans.append((row.span_start, row.span_end, i))
            if row.source_url:
                by_url.setdefault(row.source_url, []).append(i)
        elif row.marker is not None:
            by_number.setdefault(row.marker, []).append(i)
    if by_url:
        for link in read(text).links:
            for i in by_url.get(link.url, ()):
                spans.append((link.start, link.end, i))
    # A sweep: spans sorted by start join the open ones as sentences reach them and leave when
    # a sentence starts past their end (sentences come in order): every open span overlaps the
    # sentence, so the work is sentences + spans + the pairs found, never sentences x spans.
    spans.sort()
    out: list[Claim] = []
    open_: list[tuple[int, int, int]] = []
    j = 0
    for position, s in enumerate(sentences(text)):
        seen: dict[int, Origin] = {}
        for m in s.markers:
            for i in by_number.get(m.number, ()):
                seen.setdefault(i, "marker")
        while j < len(spans) and spans[j][0] < s.end:
            open_.append(spans[j])
            j += 1
        open_ = [span for span in open_ if span[1] > s.start]
        for _, _, i in open_:
            seen.setdefault(i, "provider span")
        out.append(Claim(position, s, tuple(Cited(i, o) for i, o in seen.items())))
    return out


def plain(sentence: Sentence) -> str:
    """A sentence's text without its markers and link targets: what it says."""
    text = sentence.text
    if sentence.markers:
        parts: list[str] = []
        at = sentence.start
        for m in sentence.markers:
            parts.append(text[at - sentence.start : m.start - sentence.start])
            at = m.end
        parts.append(text[at - sentence.start :])
        text = " ".join(parts)
    if "://" in text or "](" in text:
        text = _URL.sub(" ", _LINK_TARGET.sub("]", text))
    return text.strip()


_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"<?https?://[^\s>]+>?")


def support_frame(
    source: Source,
    *,
    provider: str | None = None,
    aliases: AliasSpec = None,
    scorer: str | Embed | Scorer | None = None,
) -> pl.DataFrame:
    """One row per (answer, sentence, source citing it) in ``source`` (schema
    ``SUPPORT_SCHEMA``): does the cited passage say what the sentence says?

    Columns: ``provider``, ``answer_id``; ``sentence_index`` (0 first), ``sentence`` (as
    written), ``span_start``/``span_end`` (its code-point span in ``answer.text``); the
    source: ``origin`` (``"marker"`` or ``"provider span"``), ``kind``, ``marker``,
    ``document_reference`` (where in its document), ``work_id``, ``work``, ``cited_text``;
    the support: ``support`` (in [0, 1]; null when it cannot be judged), ``verdict`` (one of
    ``VERDICTS``), and the evidence: ``quote_found`` (null when the sentence quotes nothing),
    ``numbers_found``, ``numbers_contradicted``, ``shared_words`` (stems); ``best_source``
    (the marker of the answer's own citation whose passage fits the sentence best, null when
    none has a passage), ``misattributed`` (a source the sentence does not cite fits it
    clearly better than the ones it cites; null when the source has no passage); ``scorer``
    (``"lexical"`` or the embedding model's name). A sentence no source cites has one row,
    its source columns null, verdict ``"uncited"``.

    Parameters
    ----------
    source
        Answers, saved responses, sample files, the log, a dataset; see
        ``citekit.data.frames``.
    provider
        The provider of saved responses that do not name it.
    aliases
        As ``sources_frame`` takes them (which work a source belongs to).
    scorer
        ``None`` or ``"lexical"``: lexical evidence alone. A function from a list of texts to
        their vectors (one row per text; a sentence-transformers model's ``encode``): the
        similarity of the vectors adds meaning across words and languages. Each distinct
        text is encoded once.

    Examples
    --------
    >>> import polars as pl
    >>> from citekit.data.corpus.support import VERDICTS
    >>> from citekit.testing import default_data_dir
    >>> support = ck.support_frame(default_data_dir() / "magisterium")
    >>> support.filter(pl.col("verdict") == "supported").height > 0
    True
    >>> set(support["verdict"]) <= set(VERDICTS)
    True
    """
    judge_with = scorer_for(scorer)
    judged = list(_judged(source, provider=provider, aliases=aliases))
    if judge_with.embeds:  # every distinct text encoded in one batch
        judge_with.prepare(texts(judged))
    columns: dict[str, list[Any]] = {name: [] for name in SUPPORT_SCHEMA.names()}
    for answer, found, cited in judged:
        _add(columns, answer, found, cited, judge_with)
    # The word lists are gathered as space-joined strings (words hold no space) and split by
    # polars: building a list column from Python lists costs more than the scoring.
    joined = {name: columns.pop(name) for name in _LISTS}
    frame = pl.DataFrame(columns, schema={n: SUPPORT_SCHEMA[n] for n in columns})
    lists = [
        pl.when(pl.col(name) == "")
        .then(pl.lit([], dtype=pl.List(pl.String)))
        .otherwise(pl.col(name).str.split(" "))
        .alias(name)
        for name in _LISTS
    ]
    strings = pl.DataFrame(joined, schema={n: pl.String() for n in _LISTS})
    return pl.concat([frame, strings.select(lists)], how="horizontal").select(
        SUPPORT_SCHEMA.names()
    )


_LISTS: Final = ("numbers_found", "numbers_contradicted", "shared_words")


_SOURCE_COLUMNS: Final = (
    "kind",
    "marker",
    "span_start",
    "span_end",
    "source_url",
    "document_reference",
    "work_id",
    "work",
    "cited_text",
)


def _judged(
    source: Source | Iterable[Answer], *, provider: str | None, aliases: AliasSpec
) -> Iterator[tuple[Answer, list[Claim], list[dict[str, Any]]]]:
    """Each answer with its claims and its cited sources (``sources_frame`` rows)."""
    from .works import sources_frame

    answers = [
        a
        for a in iter_items(source, provider=provider, caller="support_frame")
        if isinstance(a, Answer)
    ]
    yield from judge(answers, sources_frame(answers, aliases=aliases))


def judge(
    answers: Sequence[Answer], sources: pl.DataFrame
) -> Iterator[tuple[Answer, list[Claim], list[dict[str, Any]]]]:
    """Each answer with its claims and its cited sources, from ``sources`` (a
    ``sources_frame`` of exactly ``answers``, whose first rows are their citations in turn)."""
    rows = sources.head(sum(len(a.citations) for a in answers)).select(_SOURCE_COLUMNS)
    at = 0
    for a in answers:
        own = rows.slice(at, len(a.citations)).to_dicts()
        at += len(a.citations)
        keys = [_Row(*(r[c] for c in _Row._fields)) for r in own]
        yield a, claims(a.text, keys), own


def texts(judged: Iterable[tuple[Answer, list[Claim], list[dict[str, Any]]]]) -> Iterator[str]:
    """The sentences a passage is cited for and the passages of judged answers: the texts a
    scorer compares."""
    for answer, found, cited in judged:
        for claim in found:
            if any(passage(answer, cited[c.row]) is not None for c in claim.sources):
                yield plain(claim.sentence)
        for row in cited:
            text = passage(answer, row)
            if text is not None:
                yield text


def fit(
    answer: Answer, found: list[Claim], cited: list[dict[str, Any]], scorer: Scorer
) -> AnswerFit:
    """The sentences of an answer against the passages of its citations."""
    said = [plain(c.sentence) for c in found]
    cites = [[c.row for c in claim.sources] for claim in found]
    return AnswerFit(answer, said, cites, cited, scorer)


def _add(
    columns: dict[str, list[Any]],
    answer: Answer,
    found: list[Claim],
    cited: list[dict[str, Any]],
    scorer: Scorer,
) -> None:
    grid = fit(answer, found, cited, scorer)
    for position, claim in enumerate(found):
        s = claim.sentence
        judged = any(grid.passage_of(c.row) is not None for c in claim.sources)
        best = grid.best_source(position) if judged else None  # judged where a passage is cited
        wrong = grid.misattributed(position)
        pairs: list[tuple[Cited | None, dict[str, Any] | None]] = [
            (c, cited[c.row]) for c in claim.sources
        ] or [(None, None)]
        for c, row in pairs:
            columns["provider"].append(answer.provider)
            columns["answer_id"].append(answer.id)
            columns["sentence_index"].append(claim.position)
            columns["sentence"].append(s.text)
            columns["span_start"].append(s.start)
            columns["span_end"].append(s.end)
            columns["origin"].append(c.origin if c else None)
            for name in ("kind", "marker", "document_reference", "work_id", "work"):
                columns[name].append(row[name] if row else None)
            columns["cited_text"].append(row["cited_text"] if row else None)
            columns["best_source"].append(best)
            columns["scorer"].append(scorer.name)
            at = None if c is None else grid.passage_of(c.row)
            if row is None or at is None:
                columns["support"].append(None)
                columns["verdict"].append("uncited" if row is None else "unverifiable")
                columns["misattributed"].append(None)
                for name in ("quote_found", *_LISTS):
                    columns[name].append(None)
                continue
            e, value = grid.judged(position, at)
            columns["support"].append(value)
            columns["verdict"].append(verdict(value))
            columns["misattributed"].append(wrong)
            columns["quote_found"].append(e.quote_found)
            columns["numbers_found"].append(" ".join(e.numbers_found))
            columns["numbers_contradicted"].append(" ".join(e.numbers_contradicted))
            columns["shared_words"].append(" ".join(e.shared_words))


def figures(found: list[Claim], grid: AnswerFit) -> tuple[float | None, float | None]:
    """An answer's support recall (the share of its sentences that a citation supports) and
    support precision (the share of its judged citations that support their sentence), as
    ALCE counts them; null when no citation of the answer has a passage to judge by."""
    sentences_supported = 0
    judged = 0
    supporting = 0
    for position, claim in enumerate(found):
        any_supported = False
        for c in claim.sources:
            at = grid.passage_of(c.row)
            if at is None:
                continue
            judged += 1
            if verdict(grid.judged(position, at)[1]) == "supported":
                supporting += 1
                any_supported = True
        sentences_supported += any_supported
    if not judged:
        return None, None
    return sentences_supported / len(found), supporting / judged
