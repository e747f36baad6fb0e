"""One question, several providers side by side: ``compare`` asks them all at once.

``compare(question, [mg, mt_web, gb])`` sends the question to every client concurrently (each
client's own ``aask``, on citekit's background loop, as ``ask_many`` does) and returns a
``Comparison``: the answers in columns, each with its footnotes, the works two or more of them
cite marked (work identity from ``sources_frame``), ``.frame()`` (label x work) and
``.overlap()`` (Jaccard per pair). A client that fails (a refused key, a 5xx, a timeout,
anything) becomes an error card in its column; the others are shown all the same. Only bad
input raises.

A client may come with options of its own, as ``(client, {"web_search": True})``; options
given to ``compare`` itself go to every client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

import polars as pl

from ..core.models import Answer
from ..core.names import display_name
from ..providers.maritaca import BUILT_IN_TOOLS
from ..render.progress import make_progress
from ..transport.loop import run_sync
from .aliases import AliasSpec
from .corpus import sources_frame

__all__ = [
    "FRAME_SCHEMA",
    "OVERLAP_SCHEMA",
    "Comparison",
    "acompare",
    "compare",
    "default_labels",
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

#: What tells the answers' rows apart in a sources frame.
_KEY: Final = ("provider", "answer_id", "question")

_EXAMPLE = "ck.compare('What is subsidiarity?', [mg, mt, gb])"


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
        _check_question(question)
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

    def _repr_html_(self) -> str:
        from ._comparison_html import comparison_html, fallback_html

        try:
            return comparison_html(self)
        except Exception as exc:
            from ..render._safe import report_render_error

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


def _check_question(question: object) -> None:
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, not {type(question).__name__}: {_EXAMPLE}")
    if not question.strip():
        raise ValueError(f"question must not be blank: {_EXAMPLE}")


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


# -- asking -----------------------------------------------------------------------------------


def _entries(clients: object) -> list[tuple[Any, dict[str, Any]]]:
    """``clients`` checked: each a client with ``aask``, or ``(client, {options})``."""
    if callable(getattr(clients, "aask", None)):
        raise TypeError(f"clients must be a list; wrap one client in [...]: {_EXAMPLE}")
    if isinstance(clients, str | bytes | Mapping) or not isinstance(clients, Iterable):
        raise TypeError(
            "clients must be a list of clients (each a ck.Magisterium, ck.Maritaca, ck.GPTBots, "
            f"or (client, {{options}})), not {type(clients).__name__}: {_EXAMPLE}"
        )
    entries: list[tuple[Any, dict[str, Any]]] = []
    for i, item in enumerate(clients):
        client, options = item, {}
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], Mapping):
                raise TypeError(
                    f"clients[{i}] must be a client or (client, {{options}}), e.g. "
                    "(mt, {'web_search': True})"
                )
            client, options = item[0], dict(item[1])
        if not callable(getattr(client, "aask", None)):
            raise TypeError(
                f"clients[{i}] is a {type(client).__name__}, not a client: pass "
                "ck.Magisterium(), ck.Maritaca(), ck.GPTBots() (or anything with aask)"
            )
        entries.append((client, options))
    if not entries:
        raise ValueError(f"clients is empty: pass at least one client, e.g. {_EXAMPLE}")
    return entries


def default_labels(
    clients: Iterable[Any], options: Iterable[Mapping[str, Any]] | None = None
) -> list[str]:
    """Column names for ``clients``: provider, model and the built-in tools turned on
    (``"Maritaca · sabia-4 · web search"``), made distinct by a number where two are alike.

    >>> from citekit.data.comparison import default_labels
    >>> default_labels([ck.Maritaca(), ck.Maritaca()], [{}, {"web_search": True}])
    ['Maritaca · sabia-4', 'Maritaca · sabia-4 · web search']
    """
    clients = list(clients)
    opts = list(options) if options is not None else [{}] * len(clients)
    names: list[str] = []
    for client, given in zip(clients, opts, strict=True):
        provider = getattr(client, "name", None)
        parts = [display_name(provider) if isinstance(provider, str) else type(client).__name__]
        model = given.get("model") or getattr(client, "model", None)
        if isinstance(model, str) and model:
            parts.append(model)
        for tool in BUILT_IN_TOOLS:
            on = given.get(tool, getattr(client, tool, None))
            if on is True:
                parts.append(tool.replace("_", " "))
        names.append(" · ".join(parts))
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    counts: dict[str, int] = {}
    out: list[str] = []
    for name in names:
        if seen[name] == 1:
            out.append(name)
            continue
        counts[name] = counts.get(name, 0) + 1
        out.append(f"{name} ({counts[name]})")
    return out


def _check_labels(labels: object, count: int) -> list[str]:
    if isinstance(labels, str) or not isinstance(labels, Iterable):
        raise TypeError(f"labels must be a list of {count} strings, one per client")
    found = list(labels)
    if len(found) != count:
        raise ValueError(f"labels has {len(found)} names for {count} clients: give one per client")
    for i, label in enumerate(found):
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"labels[{i}]={label!r} must be a non-empty string")
    if len(set(found)) != len(found):
        twice = sorted({x for x in found if found.count(x) > 1})
        raise ValueError(f"labels must be distinct; {twice} appear more than once")
    return found


class _Run:
    """Asks every client once, concurrently; a failure is kept in its slot."""

    def __init__(self, entries: list[tuple[Any, dict[str, Any]]]) -> None:
        self.entries = entries
        self.done = 0
        self.failed = 0

    async def one(self, client: Any, question: str, options: dict[str, Any]) -> Any:
        try:
            result = await client.aask(question, **options)
            if not isinstance(result, Answer):
                raise TypeError(f"{type(client).__name__}.aask returned {type(result).__name__}")
            return result
        except Exception as exc:
            self.failed += 1
            return exc
        finally:
            self.done += 1

    async def all(self, question: str) -> list[Any]:
        return list(await asyncio.gather(*(self.one(c, question, o) for c, o in self.entries)))


def _prepare(
    question: object,
    clients: object,
    labels: object,
    ask_kwargs: dict[str, Any],
) -> tuple[list[tuple[Any, dict[str, Any]]], list[str]]:
    _check_question(question)
    entries = _entries(clients)
    names = (
        default_labels([c for c, _ in entries], [o for _, o in entries])
        if labels is None
        else _check_labels(labels, len(entries))
    )
    merged: list[tuple[Any, dict[str, Any]]] = []
    for client, options in entries:
        opts = {**ask_kwargs, **options}
        if opts.get("stream") and "display" not in opts:
            opts["display"] = False  # several live displays at once would flood the cell
        merged.append((client, opts))
    return merged, names


def _comparison(
    question: str,
    entries: list[tuple[Any, dict[str, Any]]],
    names: list[str],
    results: list[Any],
    aliases: AliasSpec,
    lang: str | None,
) -> Comparison:
    cmp = Comparison(question, dict(zip(names, results, strict=True)), aliases=aliases, lang=lang)
    for label, (client, _) in zip(names, entries, strict=True):
        provider = getattr(client, "name", None)
        if isinstance(provider, str):
            cmp._providers[label] = provider
    return cmp


def compare(
    question: str,
    clients: Sequence[Any],
    *,
    labels: Sequence[str] | None = None,
    aliases: AliasSpec = None,
    lang: str | None = None,
    progress: bool | None = None,
    **ask_kwargs: Any,
) -> Comparison:
    """Ask every client ``question`` at once and show the answers side by side.

    Parameters
    ----------
    question
        The question (a non-empty string).
    clients
        The clients (``ck.Magisterium()``, ``ck.Maritaca()``, ``ck.GPTBots()``, or anything
        with ``aask``), each optionally with options of its own: ``(mt, {"web_search":
        True})``. The same client may appear twice with different options.
    labels
        Column names, one per client; by default provider, model and the built-in tools
        turned on, numbered where two would be alike.
    aliases, lang
        Passed to ``sources_frame`` (work identity and display names).
    progress
        One status line while the answers come (a widget in a notebook, a line on a
        terminal's stderr); None shows it where it can be seen, False never.
    **ask_kwargs
        Passed to every client's ``aask`` (a client's own options win).

    Returns
    -------
    A ``Comparison``. A client that fails (refused key, server error, timeout, an option
    it does not take) is kept as its error in ``.answers`` and ``.errors`` and shown as an
    error card; nothing is raised for it.

    Raises
    ------
    TypeError, ValueError
        Bad input: a blank question, no clients, something that is not a client, labels
        that do not fit.

    Examples
    --------
    >>> mg, mt, gb = ck.Magisterium(), ck.Maritaca(), ck.GPTBots()
    >>> cmp = ck.compare("What is subsidiarity?", [mg, (mt, {"web_search": True}), gb],
    ...                  progress=False)
    >>> cmp.labels
    ('Magisterium · magisterium-1', 'Maritaca · sabia-4 · web search', 'GPTBots')
    >>> cmp.errors
    {}
    >>> cmp.frame().columns
    ['label', 'provider', 'work_id', 'work', 'author', 'citations', 'shared_with']
    >>> bad = ck.Magisterium(api_key="not-a-valid-key", base_url="http://127.0.0.1:9/api")
    >>> cmp = ck.compare("What is subsidiarity?", [mg, bad], labels=["ok", "down"],
    ...                  progress=False, deadline=5)
    >>> type(cmp.errors["down"]).__name__
    'TransportError'
    """
    entries, names = _prepare(question, clients, labels, ask_kwargs)
    run = _Run(entries)
    bar = make_progress(len(entries), progress, description="compare")
    try:
        results = run_sync(run.all(question), poll=lambda: bar.update(run.done, run.failed))
    finally:
        bar.close(run.done, run.failed)
    return _comparison(question, entries, names, results, aliases, lang)


async def acompare(
    question: str,
    clients: Sequence[Any],
    *,
    labels: Sequence[str] | None = None,
    aliases: AliasSpec = None,
    lang: str | None = None,
    progress: bool | None = None,
    **ask_kwargs: Any,
) -> Comparison:
    """Async twin of ``compare``: ``cmp = await ck.acompare(question, [mg, mt])`` in a
    notebook cell or a coroutine.

    >>> import asyncio
    >>> cmp = asyncio.run(ck.acompare("What is subsidiarity?", [ck.Magisterium()], progress=False))
    >>> cmp.labels, cmp.errors
    (('Magisterium · magisterium-1',), {})
    """
    entries, names = _prepare(question, clients, labels, ask_kwargs)
    run = _Run(entries)
    bar = make_progress(len(entries), progress, description="compare")
    try:
        results = await run.all(question)
    finally:
        bar.close(run.done, run.failed)
    return _comparison(question, entries, names, results, aliases, lang)
