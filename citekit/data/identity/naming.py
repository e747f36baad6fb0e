"""Naming the works ``identify`` found: their ids, display names and authors.

``name_works`` takes the groups of rows that are one work (``citekit.data.identity.clusters``)
and gives each its id (the alias table's, else ``"w-"`` and a hash of its least author, title
and year, so that the same work keeps its id in frames of other answers), its display name
and its author, and every author its display name.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from .aliases import Aliases
from .keys import file_title, title_key

__all__ = ["name_works"]


def name_works(
    rows: Sequence[tuple[Any, ...]],
    groups: list[list[int]],
    titles: list[str],
    aids: list[str | None],
    alias: list[str | None],
    counts: list[int],
    table: Aliases,
    lang: str | None,
) -> tuple[list[str | None], list[str | None], list[str | None], list[str | None]]:
    """``work_id``, ``work``, ``author_id`` and ``author`` of every distinct row, given the
    ``groups`` of rows that are one work: the alias table's id where its members name one
    (the most cited), else a stable hash; the table's name in ``lang``, else the title cited
    most; a row without author gets its work's."""
    work_id: list[str | None] = [None] * len(rows)
    work: list[str | None] = [None] * len(rows)
    author_id: list[str | None] = list(aids)
    author_titles: dict[str, Counter[str]] = defaultdict(Counter)
    taken: set[str] = set()
    for group in groups:
        titled = [m for m in group if titles[m] or rows[m][3] or rows[m][4]]
        if not titled:
            continue
        named: Counter[str] = Counter()
        for m in group:
            found = alias[m]
            if found is not None:
                named[found] += counts[m]
        if named:
            wid = min(named, key=lambda a: (-named[a], a))
        else:
            wid = _work_hash(group, titled, rows, titles, aids, taken)
        # A work of the table goes by the title cited most among its own names ("Quadragesimo
        # anno", not a page's "Quadragesimo anno - Pius XI (1931)"), else among all.
        own = [m for m in titled if named and table.work_by_key(title_key(titles[m])) == wid]
        display = table.work_name(wid, lang) or _most_cited(
            (titles[m] or rows[m][3] or rows[m][4], counts[m]) for m in (own or titled)
        )
        owner = _work_author(wid, group, aids, counts, table)
        for m in group:
            work_id[m], work[m] = wid, display
            if author_id[m] is None:
                author_id[m] = owner
    for m, row in enumerate(rows):
        aid, raw = author_id[m], row[1]
        if aid is not None and isinstance(raw, str) and raw.strip() and aids[m] is not None:
            author_titles[aid][raw.strip()] += counts[m]
    author: list[str | None] = []
    shown: dict[str, str | None] = {}
    for aid in author_id:
        if aid is None:
            author.append(None)
            continue
        if aid not in shown:
            shown[aid] = (
                table.author_name(aid, lang)
                or _most_cited(author_titles[aid].items())
                or table.author_name(aid, "en")
            )
        author.append(shown[aid])
    return work_id, work, author_id, author


def _work_hash(
    group: list[int],
    titled: list[int],
    rows: Sequence[tuple[Any, ...]],
    titles: list[str],
    aids: list[str | None],
    taken: set[str],
) -> str:
    """An id for a work the table does not know: a hash of its least (author, title, year),
    so that the same work keeps its id in frames of other answers; of its least row when
    another work already took that (two "Homily" of one year)."""
    basis = min(
        f"{aids[m] or ''}|{title_key(titles[m]) or rows[m][3] or rows[m][4]}" for m in titled
    )
    years = sorted(rows[m][2] for m in titled if rows[m][2] is not None)
    basis += f"|{years[0] if years else ''}"
    wid = "w-" + hashlib.blake2b(basis.encode(), digest_size=6).hexdigest()
    if wid in taken:
        basis += "|" + min(repr(rows[m][:5]) for m in group)
        wid = "w-" + hashlib.blake2b(basis.encode(), digest_size=6).hexdigest()
    taken.add(wid)
    return wid


def _work_author(
    wid: str, group: list[int], aids: list[str | None], counts: list[int], table: Aliases
) -> str | None:
    known = table.works.get(wid)
    if known is not None and known.author is not None:
        return known.author
    tally: Counter[str] = Counter()
    for m in group:
        if aids[m] is not None:
            tally[aids[m]] += counts[m]  # type: ignore[index]
    return min(tally, key=lambda a: (-tally[a], a)) if tally else None


def _most_cited(items: Iterable[tuple[str, int]]) -> str | None:
    """The text cited most often; a knowledge file's name ("compendium.pdf") only when
    nothing else names it; the shorter, then the first in order, of a tie."""
    tally: Counter[str] = Counter()
    for text, n in items:
        if text:
            tally[text] += n
    if not tally:
        return None
    return min(tally, key=lambda t: (file_title(t) != t, -tally[t], len(t), t))
