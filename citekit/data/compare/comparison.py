"""Several answers to one question side by side: the ``Comparison`` that ``compare`` returns.

A ``Comparison`` holds each label's answer, or the error its client raised, and reads them as
one corpus: ``.sources`` (one ``sources_frame`` over all of them, so a work has one identity in
every column), ``.frame()`` (label x work, with the other labels citing it), ``.overlap()``
(Jaccard per pair of labels), ``.shared()`` (the works two or more cite), and an HTML view
(``citekit.data.compare.html``): the answers in columns, shared works marked, a failed
client as an error card. ``citekit.data.compare.clients.compare`` asks the clients.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

import polars as pl

from ...model import Answer
from ..corpus.support import support_frame
from ..corpus.support_view import sentence_verdict
from ..corpus.works import sources_frame
from ..identity.aliases import AliasSpec

__all__ = [
    "EXAMPLE",
    "FRAME_SCHEMA",
    "OVERLAP_SCHEMA",
    "SUPPORT_SCHEMA",
    "Comparison",
    "check_question",
]

#: ``Comparison.frame()``: one row per label and work.
FRAME_SCHEMA: Final = pl.Schema(
    {
        "label": pl.String(),
        "provider": pl.String(),
        "work_id": pl.String(),
        "work": pl.String(),
        "author": pl.String(),
        "citations": pl.UInt32(),
        "shared_with": pl.List(pl.String()),
    }
)

#: ``Comparison.overlap()``: one row per pair of answered labels.
OVERLAP_SCHEMA: Final = pl.Schema(
    {
        "a": pl.String(),
        "b": pl.String(),
        "works_a": pl.UInt32(),
        "works_b": pl.UInt32(),
        "shared": pl.UInt32(),
        "jaccard": pl.Float64(),
    }
)

#: ``Comparison.support()``: one row per label, sentence and work supporting it.
SUPPORT_SCHEMA: Final = pl.Schema(
    {
        "label": pl.String(),
        "provider": pl.String(),
        "work_id": pl.String(),
        "work": pl.String(),
        "sentence_index": pl.Int32(),
        "sentence": pl.String(),
        "support": pl.Float64(),
        "verdict": pl.String(),
        "supported_with": pl.List(pl.String()),
    }
)

#: The verdicts with which a work supports a claim (at least partly).
_SUPPORTING: Final = ("supported", "partial")

#: What tells the answers' rows apart in a sources frame.
_KEY: Final = ("provider", "answer_id", "question")

#: A call to quote in error messages.
EXAMPLE: Final = "ck.compare('What is subsidiarity?', [mg, mt, gb])"


class Comparison:
    """Answers of several providers to one question, and the works they share.

    Made by ``compare``; also made by hand from answers you already have (saved, logged,
    asked one by one): ``Comparison(question, {label: answer_or_error, ...})``.

    Attributes
    ----------
    question
        The question asked.
    labels
        The column names, in order.
    answers
        label -> the ``Answer``, or the exception the client raised.
    errors
        label -> exception, for the clients that failed only.

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> a = mg.ask("What is the principle of subsidiarity?")
    >>> b = mg.ask("What does the Church teach about the common good?")
    >>> cmp = ck.Comparison("Two questions", {"subsidiarity": a, "common good": b})
    >>> cmp.labels
    ('subsidiarity', 'common good')
    >>> "catechism" in cmp.frame()["work_id"].to_list()
    True
    >>> cmp.overlap().columns
    ['a', 'b', 'works_a', 'works_b', 'shared', 'jaccard']
    """

    def __init__(
        self,
        question: str,
        answers: Mapping[str, Answer | BaseException],
        *,
        aliases: AliasSpec = None,
        lang: str | None = None,
    ) -> None:
        check_question(question)
        if not isinstance(answers, Mapping) or not answers:
            raise ValueError(
                "answers must be a non-empty mapping {label: Answer or exception}, e.g. "
                "{'Magisterium': ans}"
            )
        for label, value in answers.items():
            if not isinstance(label, str) or not label.strip():
                raise ValueError(f"label {label!r} must be a non-empty string")
            if not isinstance(value, Answer | BaseException):
                raise TypeError(
                    f"answers[{label!r}] is a {type(value).__name__}; pass an Answer "
                    "(or the exception its client raised)"
                )
        self.question: str = question
        self.labels: tuple[str, ...] = tuple(answers)
        self.answers: dict[str, Answer | BaseException] = dict(answers)
        self.errors: dict[str, BaseException] = {
            k: v for k, v in self.answers.items() if isinstance(v, BaseException)
        }
        self._aliases = aliases
        self._lang = lang
        self._sources: pl.DataFrame | None = None
        self._frame: pl.DataFrame | None = None
        self._support: pl.DataFrame | None = None
        #: label -> provider name of the client asked (known when ``compare`` made it).
        self._providers: dict[str, str] = {}

    @property
    def answered(self) -> dict[str, Answer]:
        """label -> Answer, for the clients that answered."""
        return {k: v for k, v in self.answers.items() if isinstance(v, Answer)}

    @property
    def sources(self) -> pl.DataFrame:
        """``sources_frame`` of the answers (work identity computed over all of them at once),
        with a first column ``label``: one row per source of each answered label."""
        if self._sources is None:
            self._sources = _labelled_sources(self.answered, self._aliases, self._lang)
        return self._sources

    def frame(self) -> pl.DataFrame:
        """One row per label and work it cites (schema ``FRAME_SCHEMA``).

        Columns: ``label``, ``provider``, ``work_id``, ``work`` and ``author`` (display names,
        as ``sources_frame`` gives them), ``citations`` (how many of the label's sources are
        of that work: citations, web sources, knowledge chunks) and ``shared_with`` (the other
        labels that cite the work, in label order; empty when only this one does). Rows follow
        the labels' order, each label's works most cited first. The Jaccard overlap of each
        pair of labels is ``overlap()``; failed labels have no rows.
        """
        if self._frame is None:
            self._frame = _frame(self.sources, self.labels)
        return self._frame

    def overlap(self) -> pl.DataFrame:
        """One row per pair of answered labels (schema ``OVERLAP_SCHEMA``), in label order.

        ``works_a`` / ``works_b``: the distinct works each cites; ``shared``: works both
        cite; ``jaccard``: shared / works either cites (null when neither cites any).
        """
        works = _works_by_label(self.frame())
        rows: list[dict[str, Any]] = []
        answered = [label for label in self.labels if label in self.answered]
        for i, a in enumerate(answered):
            for b in answered[i + 1 :]:
                wa, wb = works.get(a, set()), works.get(b, set())
                union = len(wa | wb)
                rows.append(
                    {
                        "a": a,
                        "b": b,
                        "works_a": len(wa),
                        "works_b": len(wb),
                        "shared": len(wa & wb),
                        "jaccard": len(wa & wb) / union if union else None,
                    }
                )
        return pl.DataFrame(rows, schema=OVERLAP_SCHEMA)

    def shared(self) -> pl.DataFrame:
        """The works two or more labels cite: ``work_id``, ``work``, ``author``, ``labels``
        (in label order) and ``citations`` (over all labels), most widely shared first."""
        frame = self.frame()
        order = {label: i for i, label in enumerate(self.labels)}
        grouped = frame.group_by("work_id", maintain_order=True).agg(
            work=pl.col("work").first(),
            author=pl.col("author").drop_nulls().first(),
            labels=pl.col("label"),
            citations=pl.col("citations").sum(),
        )
        grouped = grouped.with_columns(
            labels=pl.col("labels").list.eval(
                pl.element().sort_by(pl.element().replace_strict(order, default=len(order)))
            )
        )
        return (
            grouped.filter(pl.col("labels").list.len() >= 2)
            .with_columns(n=pl.col("labels").list.len())
            .sort(["n", "citations", "work"], descending=[True, True, False])
            .drop("n")
        )

    def support(self) -> pl.DataFrame:
        """The claims each label's answer supports with a work, and which labels support a
        claim with the same work (schema ``SUPPORT_SCHEMA``).

        One row per label, sentence and work whose cited passage supports the sentence at least
        partly (``support_frame``'s verdict ``supported`` or ``partial``; the best passage of
        the work counts): ``sentence_index``, ``sentence``, ``support``, ``verdict``, and
        ``supported_with``, the other labels with a sentence this work supports, in label
        order. ``cmp.support().filter(pl.col("supported_with").list.len() > 0)`` gives the
        claims two providers support with the same work. Rows follow the works supported by the
        most labels first, then the labels' order.
        """
        if self._support is None:
            found = _support(self.answered, self.labels, self._aliases)
            # The works named as the other views name them (``frame()``, in its language).
            names = dict(self.frame().select("work_id", "work").unique("work_id").iter_rows())
            self._support = found.with_columns(
                work=pl.col("work_id").replace_strict(names, default=pl.col("work"))
            )
        return self._support

    def _repr_html_(self) -> str:
        from .html import comparison_html, fallback_html

        try:
            return comparison_html(self)
        except Exception as exc:
            from ...render.fallback import report_render_error

            report_render_error("Comparison as text/html", exc)
            return fallback_html(self)

    def __repr__(self) -> str:
        try:
            return self._summary()
        except Exception:
            return f"<Comparison of {len(self.labels)} answers to {self.question!r}>"

    def _summary(self) -> str:
        lines = [f"Comparison of {len(self.labels)} answers to {self.question!r}"]
        frame = self.frame()
        for label in self.labels:
            value = self.answers[label]
            if isinstance(value, BaseException):
                lines.append(f"  {label}: failed: {type(value).__name__}: {value}")
                continue
            mine = frame.filter(pl.col("label") == label)
            shared = mine.filter(pl.col("shared_with").list.len() > 0).height
            sources = self.sources.filter(pl.col("label") == label).height
            lines.append(
                f"  {label}: {_plural(sources, 'source')}, {_plural(mine.height, 'work')}"
                + (f" ({shared} shared)" if shared else "")
            )
        lines.append(f"Works cited by two or more: {self.shared().height}")
        return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def check_question(question: object) -> None:
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, not {type(question).__name__}: {EXAMPLE}")
    if not question.strip():
        raise ValueError(f"question must not be blank: {EXAMPLE}")


def _support(
    answers: Mapping[str, Answer], labels: Sequence[str], aliases: AliasSpec
) -> pl.DataFrame:
    distinct: list[Answer] = []
    seen: dict[int, str] = {}  # id(answer) -> the id its rows carry
    taken: set[tuple[str, str | None]] = set()
    pairs: list[tuple[str, str, str]] = []  # (label, provider, row id)
    for label, answer in answers.items():
        if id(answer) not in seen:
            key = (answer.provider, answer.id)
            if key in taken:  # two answers under one id: the rows must tell them apart
                answer = replace(answer, id=f"{answer.id or ''}#{label}")
                key = (answer.provider, answer.id)
            taken.add(key)
            seen[id(answers[label])] = answer.id or ""
            distinct.append(answer)
        pairs.append((label, answer.provider, seen[id(answers[label])]))
    if not distinct:
        return pl.DataFrame(schema=SUPPORT_SCHEMA)
    rows = support_frame(distinct, aliases=aliases).filter(
        pl.col("verdict").is_in(_SUPPORTING) & pl.col("work_id").is_not_null()
    )
    table = pl.DataFrame(
        pairs,
        schema={"label": pl.String, "provider": pl.String, "answer_id": pl.String},
        orient="row",
    )
    joined = table.join(
        rows.with_columns(pl.col("answer_id").fill_null("")),
        on=["provider", "answer_id"],
        how="inner",
        maintain_order="left_right",
    )
    best = joined.group_by("label", "work_id", "sentence_index", maintain_order=True).agg(
        provider=pl.col("provider").first(),
        work=pl.col("work").first(),
        sentence=pl.col("sentence").first(),
        support=pl.col("support").max(),
        verdicts=pl.col("verdict"),
    )
    order = {label: i for i, label in enumerate(labels)}
    citing: dict[str, list[str]] = {}
    for label, work_id in zip(best["label"], best["work_id"], strict=True):
        if label not in citing.setdefault(work_id, []):
            citing[work_id].append(label)
    with_others = [
        sorted((x for x in citing[w] if x != label), key=order.__getitem__)
        for label, w in zip(best["label"], best["work_id"], strict=True)
    ]
    out = best.with_columns(
        verdict=pl.Series([sentence_verdict(v) for v in best["verdicts"]], dtype=pl.String),
        supported_with=pl.Series(with_others, dtype=pl.List(pl.String)),
        n=pl.Series([len(citing[w]) for w in best["work_id"]], dtype=pl.Int64),
        order=pl.col("label").replace_strict(order, default=len(order)),
    )
    return (
        out.sort(["n", "work", "order", "sentence_index"], descending=[True, False, False, False])
        .select(SUPPORT_SCHEMA.names())
        .cast(SUPPORT_SCHEMA)
    )


def _labelled_sources(
    answers: Mapping[str, Answer], aliases: AliasSpec, lang: str | None
) -> pl.DataFrame:
    """One ``sources_frame`` over every answer (one identity), each row with its label.

    Rows are told apart by (provider, answer_id, question); an answer given under two labels
    is framed once and its rows repeated per label; two different answers with the same key
    get distinct ids first.
    """
    distinct: list[Answer] = []
    keys: dict[tuple[Any, ...], Answer] = {}
    pairs: list[tuple[str, tuple[Any, ...]]] = []
    for label, answer in answers.items():
        key = (answer.provider, answer.id, answer.question)
        seen = keys.get(key)
        if seen is not None and seen is not answer and seen != answer:
            answer = replace(answer, id=f"{answer.id or ''}#{label}")
            key = (answer.provider, answer.id, answer.question)
        if key not in keys:
            keys[key] = answer
            distinct.append(answer)
        pairs.append((label, key))
    src = sources_frame(distinct, aliases=aliases, lang=lang)
    names = src.columns
    table = pl.DataFrame(
        {
            "label": [label for label, _ in pairs],
            "provider": [k[0] for _, k in pairs],
            "answer_id": [k[1] for _, k in pairs],
            "question": [k[2] for _, k in pairs],
        },
        schema={"label": pl.String, **{n: src.schema[n] for n in _KEY}},
    )
    joined = table.join(
        src, on=list(_KEY), how="inner", nulls_equal=True, maintain_order="left_right"
    )
    return joined.select("label", *names)


def _frame(sources: pl.DataFrame, labels: Sequence[str]) -> pl.DataFrame:
    known = sources.filter(pl.col("work_id").is_not_null())
    per = (
        known.group_by("label", "work_id", maintain_order=True)
        .agg(
            provider=pl.col("provider").first(),
            work=pl.col("work").first(),
            author=pl.col("author").drop_nulls().first(),
            citations=pl.len().cast(pl.UInt32),
        )
        .with_columns(
            order=pl.col("label").replace_strict(
                {label: i for i, label in enumerate(labels)}, default=len(labels)
            )
        )
        .sort(["order", "citations", "work"], descending=[False, True, False])
    )
    citing: dict[str, list[str]] = {}
    for label, work_id in zip(per["label"], per["work_id"], strict=True):
        citing.setdefault(work_id, []).append(label)
    order = {label: i for i, label in enumerate(labels)}
    shared = [
        sorted((x for x in citing[w] if x != label), key=order.__getitem__)
        for label, w in zip(per["label"], per["work_id"], strict=True)
    ]
    return (
        per.with_columns(shared_with=pl.Series(shared, dtype=pl.List(pl.String)))
        .select(FRAME_SCHEMA.names())
        .cast(FRAME_SCHEMA)
    )


def _works_by_label(frame: pl.DataFrame) -> dict[str, set[str]]:
    works: dict[str, set[str]] = {}
    for label, work_id in zip(frame["label"], frame["work_id"], strict=True):
        works.setdefault(label, set()).add(work_id)
    return works
