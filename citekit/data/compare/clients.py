"""``compare(question, clients)``: one question to several clients at once, kept side by side.

Every client's own ``aask`` runs concurrently on citekit's background loop (``run_sync``, as
``ask_many`` runs its batch), with one status line (``make_progress``); what each returns, or
raises, fills its column of a ``citekit.data.compare.comparison.Comparison``. Only bad input raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...core.names import display_name
from ...model import Answer
from ...providers.maritaca import BUILT_IN_TOOLS
from ...render.progress import make_progress
from ...transport.loop import run_sync
from ..identity.aliases import AliasSpec
from .comparison import EXAMPLE, Comparison, check_question

__all__ = ["acompare", "compare", "default_labels"]


def _entries(clients: object) -> list[tuple[Any, dict[str, Any]]]:
    """``clients`` checked: each a client with ``aask``, or ``(client, {options})``."""
    if callable(getattr(clients, "aask", None)):
        raise TypeError(f"clients must be a list; wrap one client in [...]: {EXAMPLE}")
    if isinstance(clients, str | bytes | Mapping) or not isinstance(clients, Iterable):
        raise TypeError(
            "clients must be a list of clients (each a ck.Magisterium, ck.Maritaca, ck.GPTBots, "
            f"or (client, {{options}})), not {type(clients).__name__}: {EXAMPLE}"
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
        raise ValueError(f"clients is empty: pass at least one client, e.g. {EXAMPLE}")
    return entries


def default_labels(
    clients: Iterable[Any], options: Iterable[Mapping[str, Any]] | None = None
) -> list[str]:
    """Column names for ``clients``: provider, model and the built-in tools turned on
    (``"Maritaca · sabia-4 · web search"``), made distinct by a number where two are alike.

    >>> from citekit.data.compare.clients import default_labels
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
    check_question(question)
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
