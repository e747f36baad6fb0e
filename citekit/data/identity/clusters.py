"""Which sources are one work, and which authors one person: the clustering.

``identify`` gives every row of a sources frame a ``work_id``, ``work``, ``author_id`` and
``author``. The rules, strongest first (a wrong merge is worse than a missed one):

1. a hand assignment (``aliases={"works": {title: id}}``) decides;
2. an address of one of the alias table's works (the Catechism's archive in any language, an
   encyclical's page without its language) names that work;
3. a title the alias table knows names its work, when the author is one the work may be
   credited to (or none is given, and the page is not on another site than the work's own:
   an encyclopedia article titled "Laudato si'" is about it) and the year fits the work's
   editions; so does a title read without its genre ("Carta Encíclica ..."), a knowledge
   file's name ("Laudato_Si_PT.pdf"), a title whose head names the work when the author is
   the work's ("Gaudium et spes: Pastoral Constitution..."), and one whose first words name
   it when the rest only says where, in what language or by whom ("Suma Teológica - Tomás
   de Aquino (PDF)");
4. GPTBots' ``data_id`` and the same document address (``work_url``; not a site's home
   page) join rows;
5. the same title (``work_title``, then ``title_key``) by the same author, in years no more
   than ``YEAR_WINDOW`` apart, is one work, unless the title is one many documents share
   (``GENERIC_TITLES``: "Homily", "General Audience", "Message"; "Homily 2" and "Sermon 169"
   keep their number, ``keys.names_which``); a row without author joins
   the one author who has that title; titles by one author that differ only slightly
   (rapidfuzz ratio ``FUZZY_RATIO`` or more: typos, transliterations) join within the same
   year window; each title is scored against its neighbours in three sort orders
   (``candidate_pairs``), so an author with K titles costs O(K log K), not K x K.

Authors are one person when the alias table names them alike, else when ``author_key`` (case,
accents, honorifics and "Surname, Name" order apart) is the same. Identity is computed once per
distinct (title, author, year, address, data id), then joined back, so a million sources of a
few thousand documents cost a few thousand keys.

The display name is the alias table's name in ``lang`` when given, else the title (or name)
cited most often.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final, overload

import polars as pl

from .aliases import Aliases, AliasSpec, WorkAlias
from .keys import (
    GENERIC_TITLES,
    author_key,
    file_title,
    genre_free_key,
    is_locator,
    title_key,
    title_parts,
    work_title,
    work_url,
)
from .naming import name_works

__all__ = ["FUZZY_RATIO", "IDENTITY_COLUMNS", "YEAR_WINDOW", "identify"]

#: Two citations of one title by one author are one work when their years are this close.
YEAR_WINDOW: Final = 2
#: The rapidfuzz ratio (0-100) two titles by one author need to be taken for one.
FUZZY_RATIO: Final = 92.0
#: The columns ``identify`` adds.
IDENTITY_COLUMNS: Final = ("work_id", "work", "author_id", "author")
_KEYS: Final = ("document_title", "document_author", "year", "source_url", "data_id")
_URL: Final = "_identity_url"
_NUMBERS: Final = re.compile(r"\d+")


#: A run of one (author, title) group's rows in nearby years: (first year, last year, a row).
_Chain = tuple[int | None, int | None, int]
#: Each (author id, title key) group's chains.
_Chains = dict[tuple[str | None, str], list[_Chain]]


class _Rows:
    """Union-find over the distinct rows."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)

    def groups(self) -> list[list[int]]:
        """The rows of each set, the sets in the order of their first row."""
        members: dict[int, list[int]] = defaultdict(list)
        for i in range(len(self.parent)):
            members[self.find(i)].append(i)
        return sorted(members.values(), key=lambda g: g[0])

    def join(self, members: Iterable[int]) -> None:
        first = None
        for m in members:
            if first is None:
                first = m
            else:
                self.union(first, m)


@overload
def identify(
    frame: pl.DataFrame, *, aliases: AliasSpec = None, lang: str | None = None
) -> pl.DataFrame: ...
@overload
def identify(
    frame: pl.LazyFrame, *, aliases: AliasSpec = None, lang: str | None = None
) -> pl.LazyFrame: ...
def identify(
    frame: pl.DataFrame | pl.LazyFrame, *, aliases: AliasSpec = None, lang: str | None = None
) -> pl.DataFrame | pl.LazyFrame:
    """``frame`` (with ``document_title``, ``document_author``, ``year``, ``source_url`` and
    ``data_id``) with ``work_id``, ``work``, ``author_id`` and ``author`` added (see the module's
    rules). Rows with no title, address or data id have no work. A LazyFrame stays lazy: only
    its distinct keys are collected (streaming), and the identity is joined back lazily."""
    table = Aliases.resolve(aliases)
    lazy = isinstance(frame, pl.LazyFrame)
    columns = frame.collect_schema().names() if lazy else frame.columns
    keyed = frame.with_columns(
        [pl.lit(None, pl.String).alias(c) for c in _KEYS if c not in columns]
    )
    if "year" in columns:
        keyed = keyed.with_columns(pl.col("year").cast(pl.Int32))
    # A fragment never changes the document: paragraph anchors (#p12) are one address.
    keyed = keyed.with_columns(
        pl.col("source_url").cast(pl.String).str.replace(r"#.*$", "").alias(_URL)
    )
    keys = [*_KEYS[:3], _URL, _KEYS[4]]
    dropped = [c for c in IDENTITY_COLUMNS if c in columns]
    added = [c for c in _KEYS if c not in columns]
    if isinstance(keyed, pl.LazyFrame):  # row order is not kept: a lazy frame is aggregated
        counts = keyed.group_by(keys).agg(_n=pl.len()).collect(engine="streaming")
        ids = _identities(counts.sort(keys, nulls_last=True), keys, table, lang)
        out: pl.DataFrame | pl.LazyFrame = (
            keyed.drop(dropped).join(ids.lazy(), on=keys, how="left", nulls_equal=True).drop(_URL)
        )
        return out.drop(added) if added else out
    # Each row's distinct key found by the one grouping that counts them (its rows listed),
    # and the identity gathered back by that place: the keys are not hashed a second time by
    # a join, nor the frame's columns copied by one (a million sources are not held twice).
    grouped = (
        keyed.select(keys)
        .with_row_index("_row")
        .group_by(keys)
        .agg(_n=pl.len(), _rows=pl.col("_row"))
        .sort(keys, nulls_last=True)
    )
    ids = _identities(grouped.drop("_rows"), keys, table, lang)
    place = (
        grouped.select(_rows="_rows", _at=pl.int_range(pl.len(), dtype=pl.UInt32))
        .explode("_rows")
        .sort("_rows")
        .get_column("_at")
    )
    out = keyed.drop(*dropped, _URL).hstack(ids.select(IDENTITY_COLUMNS)[place])
    return out.drop(added) if added else out


def _identities(
    distinct: pl.DataFrame, keys: list[str], table: Aliases, lang: str | None
) -> pl.DataFrame:
    """The distinct ``keys`` (with their count ``_n``) with their work and author."""
    work_ids, works, author_ids, authors = _cluster(distinct.rows(), table, lang)
    return distinct.select(keys).with_columns(
        pl.Series("work_id", work_ids, pl.String),
        pl.Series("work", works, pl.String),
        pl.Series("author_id", author_ids, pl.String),
        pl.Series("author", authors, pl.String),
    )


def _cluster(
    rows: Sequence[tuple[Any, ...]], table: Aliases, lang: str | None
) -> tuple[list[str | None], list[str | None], list[str | None], list[str | None]]:
    n = len(rows)
    sets = _Rows(n)
    titles: list[str] = []  # work_title of each row
    tkeys: list[str] = []
    aids: list[str | None] = []
    years: list[int | None] = []
    alias: list[str | None] = []
    hand: list[bool] = []
    counts: list[int] = []
    by_alias: dict[str, list[int]] = defaultdict(list)
    by_data: dict[str, list[int]] = defaultdict(list)
    by_url: dict[str, list[int]] = defaultdict(list)
    by_title: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for i, (title, author, year, url, data_id, count) in enumerate(rows):
        wt = work_title(title)
        tkey = title_key(wt)  # "Homily 2" is not "Homily": work_title keeps the number
        plain = _plain(work_url(url))
        aid = _author_id(author, table) or table.author_of_site(plain)
        titles.append(wt)
        tkeys.append(tkey)
        aids.append(aid)
        years.append(year)
        counts.append(count)
        assigned = table.assigned_work(title)
        hand.append(assigned is not None)
        found = assigned or _alias_work(title, tkey, aid, year, plain, table)
        alias.append(found)
        if found is not None:
            by_alias[found].append(i)
        if assigned is not None:
            continue  # a hand assignment is not joined to anything else
        if isinstance(data_id, str) and data_id:
            by_data[data_id].append(i)
        if plain and "/" in plain:  # a site's home page is cited for many works
            by_url[plain].append(i)
        if found is not None:
            continue  # the table judged it: a same-titled source it turned away stays apart
        if tkey and tkey not in GENERIC_TITLES:  # "Homily": only an address joins those
            by_title[(aid, tkey)].append(i)
    for group in (*by_alias.values(), *by_data.values(), *by_url.values()):
        sets.join(group)
    chains = _year_chains(by_title, years, sets)
    _join_unattributed(chains, sets)
    _join_near_titles(chains, sets)
    return name_works(rows, sets.groups(), titles, aids, alias, counts, table, lang)


def _author_id(author: str | None, table: Aliases) -> str | None:
    found = table.author_of(author)
    if found is not None:
        return found
    if author and "(" in author:  # "Joseph Ratzinger (Pope Benedict XVI)"
        outside, _, inside = author.partition("(")
        for part in (inside.rstrip(") "), outside):
            found = table.author_of(part)
            if found is not None:
                return found
    key = author_key(author)
    return f"~{key}" if key else None


def _plain(url: str | None) -> str | None:
    return url.removeprefix("https://") if url else None


def _alias_work(
    title: str | None,
    tkey: str,
    aid: str | None,
    year: int | None,
    plain: str | None,
    table: Aliases,
) -> str | None:
    by_url = table.work_of_url(plain)
    if by_url is not None:
        return by_url
    if not tkey:
        return None
    read = file_title(title)
    keys = [
        k
        for k in dict.fromkeys(
            (title_key(title), tkey, title_key(work_title(read)), genre_free_key(read))
        )
        if k
    ]
    # The whole title is the table's.
    for key in keys:
        found = table.work_by_key(key)
        if found is not None and _may_be(table.works[found], aid, year, plain, table):
            return found
    # Its content words are, in any order, without articles ("Compendio_Doutrina_Social_
    # Igreja.pdf").
    found = table.work_by_content(title)
    if found is not None and _may_be(table.works[found], aid, year, plain, table):
        return found
    # Its head before a separator is, and the author is the work's ("Laudato si': Über die
    # Sorge für das gemeinsame Haus" by Franziskus).
    head, rest = title_parts(read)
    if rest:
        found = table.work_by_key(title_key(head))
        if found is not None:
            work = table.works[found]
            if work.by(aid) and work.in_years(year):
                return found
    # Its first words are, and the rest only says where, in what language or by whom
    # ("Suma Teológica - Tomás de Aquino (PDF)", "Confessions_Augustine_Chadwick.pdf").
    for key in keys:
        words = key.split()
        for cut in range(len(words) - 1, 0, -1):
            found = table.work_by_key(" ".join(words[:cut]))
            if found is None:
                continue
            work = table.works[found]
            fits, named = _only_says_where_or_who(words[cut:], work, table)
            # The title naming the work's author vouches for a page on any site.
            if fits and (
                _may_be(work, aid, year, plain, table)
                if not named
                else (aid is None or work.by(aid)) and work.in_years(year)
            ):
                return found
            break
    return None


def _may_be(
    work: WorkAlias, aid: str | None, year: int | None, plain: str | None, table: Aliases
) -> bool:
    """Whether a source by ``aid``, of ``year``, at ``plain`` can be ``work``: the author is
    the work's or none is given, the year fits, and a page on another site than the work's
    own is the work only when its author says so (a Wikipedia article titled "Laudato si'"
    is about the encyclical, not the encyclical)."""
    if not work.in_years(year):
        return False
    if work.by(aid):
        return True
    if aid is not None:
        return False
    if plain is None:
        return True
    host = plain.split("/", 1)[0]
    return host in _own_hosts(work)


def _own_hosts(work: WorkAlias) -> frozenset[str]:
    return frozenset({"vatican.va", *(u.split("/", 1)[0] for u in work.urls)})


_WHERE_OR_WHO: Final = frozenset({"pdf", "doc", "by", "trans", "tr", "ed", "text", "full"})


def _author_words(work: WorkAlias, table: Aliases) -> frozenset[str]:
    key = ("author words", work.id)
    found = table.memo.get(key)
    if not isinstance(found, frozenset):
        names: set[str] = set()
        for author_id in (work.author, *work.also_by):
            author = table.authors.get(author_id or "")
            if author is not None:
                for name in (*author.names.values(), *author.aliases):
                    names.update(author_key(name).split())
        found = table.memo[key] = frozenset(names)
    return found


def _only_says_where_or_who(rest: list[str], work: WorkAlias, table: Aliases) -> tuple[bool, bool]:
    """Whether the words after a known title only give a place in it, a language, a file
    kind or its author's name, with at most one other word (a translator's name)."""
    names = _author_words(work, table)
    if rest and (rest[0] in _PART_WORDS or _PART_NUMBER.match(rest[0])):
        return True, False  # "CCC Part 3: Life in Christ", "Terceira Parte: A vida em Cristo"
    other = named = 0
    for word in rest:
        if word in names:
            named += 1
        elif not (word in _WHERE_OR_WHO or word in _FILE_WORDS or is_locator(word)):
            other += 1
    # "catecismo resumo" is a summary, "KKK Kompendium" another work: an unknown word is
    # allowed only beside the author's name.
    return other == 0 or (other == 1 and named > 0), named > 0


#: Words that open the name of a part of a work: "Part", "Book", "Terceira Parte".
_PART_WORDS: Final = frozenset(
    {"part", "parte", "partie", "teil", "pars", "book", "liber", "livro", "libro", "livre"}
    | {"buch", "chapter", "capitulo", "capitolo", "chapitre", "kapitel", "section", "secao"}
    | {"seccion", "sezione", "volume", "vol", "first", "second", "third", "fourth", "primeira"}
    | {"segunda", "terceira", "quarta", "prima", "seconda", "terza", "premiere", "deuxieme"}
    | {"troisieme", "quatrieme", "erster", "zweiter", "dritter", "vierter", "primera", "tercera"}
    | {"cuarta", "erste", "zweite", "dritte", "vierte"}
)
_PART_NUMBER: Final = re.compile(r"^(part|parte|book|vol|chap|cap|sec|q|art|n|no)\d+$")
_FILE_WORDS: Final = frozenset({"pt", "br", "es", "it", "fr", "de", "en", "la", "lat", "eng"})


def _year_chains(
    by_title: dict[tuple[str | None, str], list[int]],
    years: list[int | None],
    sets: _Rows,
) -> _Chains:
    """Join each (author, title) group's rows whose years are within ``YEAR_WINDOW`` of the
    next; a row without a year joins the group's largest chain. Returns each group's chains as
    (first year, last year, a member)."""
    out: _Chains = {}
    for key, members in by_title.items():
        dated = sorted((m for m in members if years[m] is not None), key=lambda m: years[m] or 0)
        undated = [m for m in members if years[m] is None]
        chains: list[list[int]] = []
        for m in dated:
            if chains and (years[m] or 0) - (years[chains[-1][-1]] or 0) <= YEAR_WINDOW:
                chains[-1].append(m)
            else:
                chains.append([m])
        if undated:
            if chains:
                max(chains, key=len).extend(undated)
            else:
                chains.append(undated)
        found = []
        for chain in chains:
            sets.join(chain)
            known = [years[m] for m in chain if years[m] is not None]
            found.append((min(known, default=None), max(known, default=None), chain[0]))  # type: ignore[type-var]
        out[key] = found
    return out


def _fits(a: _Chain, b: _Chain) -> bool:
    if a[0] is None or b[0] is None or a[1] is None or b[1] is None:
        return True
    return a[0] - YEAR_WINDOW <= b[1] and b[0] - YEAR_WINDOW <= a[1]


def _join_unattributed(chains: _Chains, sets: _Rows) -> None:
    """A title cited without an author is the work of the one author who has that title."""
    authors_of: dict[str, list[tuple[str | None, str]]] = defaultdict(list)
    for key in chains:
        if key[0] is not None:
            authors_of[key[1]].append(key)
    for key, found in chains.items():
        if key[0] is not None:
            continue
        owners = authors_of.get(key[1], [])
        if len(owners) != 1:
            continue
        for chain in found:
            fitting = [c for c in chains[owners[0]] if _fits(chain, c)]
            if len(fitting) == 1:
                sets.union(chain[2], fitting[0][2])


def _join_near_titles(chains: _Chains, sets: _Rows) -> None:
    """Titles by one author that differ only slightly, in fitting years, are one work."""
    titles_of: dict[str, list[str]] = defaultdict(list)
    for aid, tkey in chains:
        if aid is not None:
            titles_of[aid].append(tkey)
    for aid, keys in titles_of.items():
        for i, j in near_titles(keys):
            for a in chains[(aid, keys[i])]:
                for b in chains[(aid, keys[j])]:
                    if _fits(a, b):
                        sets.union(a[2], b[2])


#: How many neighbours in each order a title is compared with (see ``candidate_pairs``).
NEAR_WINDOW: Final = 12


def candidate_pairs(keys: Sequence[str]) -> Iterator[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, of ``keys`` worth scoring for a near title: titles with
    the same numbers ("50th Message" and "51st Message" are two), and of those each with its
    ``NEAR_WINDOW`` next ones in three orders (of the letters, of the letters read backwards,
    of the words): a typo or a transliteration leaves two titles near in at least one order.
    About ``3 * NEAR_WINDOW`` pairs per title, so one author with K titles costs O(K log K),
    not the K x K of scoring every pair; an author with a few titles has every pair scored."""
    by_numbers: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        by_numbers[tuple(_NUMBERS.findall(key))].append(i)
    for members in by_numbers.values():
        seen: set[tuple[int, int]] = set()
        for order in (
            sorted(members, key=lambda m: keys[m]),
            sorted(members, key=lambda m: keys[m][::-1]),
            sorted(members, key=lambda m: sorted(keys[m].split())),
        ):
            for at, i in enumerate(order):
                for j in order[at + 1 : at + 1 + NEAR_WINDOW]:
                    pair = (i, j) if i < j else (j, i)
                    if pair not in seen:
                        seen.add(pair)
                        yield pair


def near_titles(keys: Sequence[str]) -> Iterator[tuple[int, int]]:
    """The pairs of ``candidate_pairs(keys)`` whose rapidfuzz ratio is ``FUZZY_RATIO`` or
    more."""
    if len(keys) < 2:
        return
    from rapidfuzz import fuzz

    for i, j in candidate_pairs(keys):
        if fuzz.ratio(keys[i], keys[j], score_cutoff=FUZZY_RATIO):
            yield i, j
