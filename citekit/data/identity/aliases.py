"""The alias table: works and authors known under many names.

The table ships with citekit (``citekit/data/identity/aliases.json``): the works and authors that
Catholic teaching answers cite most (the Catechism, the Vatican II documents and the Council,
the major encyclicals, the popes, the Church as author, the Fathers and Doctors most quoted),
each with its display name in English, Portuguese, Spanish, Italian, French, German and Latin
and every other spelling a provider may use. ``Aliases.shipped()`` reads it; a user extends it
with a file of the same shape, or by hand:

>>> from citekit.data.identity.aliases import Aliases
>>> table = Aliases.shipped()
>>> [table.author_of(name) for name in ("Franziskus", "Papa Francesco", "Pope Francis")]
['francis', 'francis', 'francis']
>>> mine = table.extended({"works": {"Laborem exercens: a commentary": "baum-1982"}})
>>> mine.assigned_work("Laborem Exercens: A Commentary")
'baum-1982'

The file's shape (``version`` 1)::

    {"version": 1,
     "authors": [{"id", "names": {lang: display name}, "aliases": [other spellings],
                  "sites": [hosts whose pages are the author's when they name none]}],
     "works":   [{"id", "author": author id, "also_by": [author ids], "years": [first, last],
                  "kind", "names": {lang: display name}, "aliases": [...],
                  "urls": [work_url keys without "https://", or prefixes ending in "/"]}]}

Names are matched on a normalised key (``title_key``: case, accents and punctuation apart);
an author not found as written is looked up again without honorifics (``author_key``: "Papa
Francesco" as "Francesco"), so a name the table lists with its honorific ("San Francesco")
matches that entry first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

from .keys import author_key, content_key, title_key

__all__ = ["AliasSpec", "Aliases", "AuthorAlias", "WorkAlias"]

LANGUAGES: Final = ("en", "pt", "es", "it", "fr", "de", "la")


@dataclass(frozen=True)
class AuthorAlias:
    """One author of the table: its id, display names by language and other spellings."""

    id: str
    names: Mapping[str, str]
    aliases: tuple[str, ...] = ()
    #: Sites whose pages are this author's when they name none ("cnbb.org.br").
    sites: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkAlias:
    """One work of the table.

    ``years`` are the first and last years a citation of it may carry (an edition, a
    translation); ``author`` and ``also_by`` the author ids a provider may name for it.
    """

    id: str
    names: Mapping[str, str]
    aliases: tuple[str, ...] = ()
    author: str | None = None
    also_by: tuple[str, ...] = ()
    years: tuple[int, int] | None = None
    kind: str | None = None
    urls: tuple[str, ...] = ()

    def by(self, author_id: str | None) -> bool:
        """Whether ``author_id`` is one this work may be credited to."""
        return author_id is not None and (author_id == self.author or author_id in self.also_by)

    def in_years(self, year: int | None, *, slack: int = 1) -> bool:
        """Whether a citation dated ``year`` can be of this work (no year: it can)."""
        if year is None or self.years is None:
            return True
        return self.years[0] - slack <= year <= self.years[1] + slack


@dataclass(frozen=True)
class Aliases:
    """Works and authors by every name they go by; see ``citekit.data.identity.aliases``."""

    works: Mapping[str, WorkAlias] = field(default_factory=dict)
    authors: Mapping[str, AuthorAlias] = field(default_factory=dict)
    #: Hand assignments, by normalised key: a title to a work id, a name to an author id.
    work_hand: Mapping[str, str] = field(default_factory=dict)
    author_hand: Mapping[str, str] = field(default_factory=dict)
    _work_keys: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    _author_keys: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    _url_keys: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    _content_keys: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)
    _url_prefixes: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    #: What the matcher works out once per table (the words of each work's authors' names).
    memo: dict[object, object] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for work in self.works.values():
            for name in (*work.names.values(), *work.aliases):
                key = title_key(name)
                if key:
                    self._work_keys[key] = work.id  # a later entry (a user's) wins
                loose = content_key(name)
                if len(loose.split()) >= 2:  # one word is too little to go on
                    known = self._content_keys.get(loose, work.id)
                    self._content_keys[loose] = work.id if known == work.id else None
            for url in work.urls:
                plain = url.removeprefix("https://").removeprefix("http://")
                if plain.endswith("/"):
                    object.__setattr__(
                        self, "_url_prefixes", (*self._url_prefixes, (plain, work.id))
                    )
                else:
                    self._url_keys[plain] = work.id
        for author in self.authors.values():
            for name in (*author.names.values(), *author.aliases):
                key = title_key(name)
                if key:
                    self._author_keys[key] = author.id

    # -- reading -----------------------------------------------------------------------------
    @staticmethod
    @cache
    def shipped() -> Aliases:
        """The table that ships with citekit (read once)."""
        path = resources.files("citekit.data.identity") / "aliases.json"
        return Aliases.from_dict(json.loads(path.read_text(encoding="utf-8")), origin="citekit")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Aliases:
        """A table read from a JSON file of the shipped file's shape."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"No alias file at {file}.") from None
        except IsADirectoryError:
            raise ValueError(f"{file} is a folder: aliases= takes a JSON alias file.") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{file} is not a JSON alias table: {exc}") from None
        return cls.from_dict(data, origin=str(file))

    @classmethod
    def from_dict(cls, data: Any, *, origin: str = "the alias table") -> Aliases:
        """A table from the parsed JSON of an alias file."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{origin}: an alias table is a JSON object with works and authors.")
        authors = {a.id: a for a in map(_author, _entries(data, "authors", origin))}
        works = {w.id: w for w in map(_work, _entries(data, "works", origin))}
        return cls(works=works, authors=authors)

    @classmethod
    def resolve(cls, spec: Any) -> Aliases:
        """The table ``aliases=`` names (see ``AliasSpec``); None is the shipped one."""
        if spec is None:
            return cls.shipped()
        if isinstance(spec, Aliases):
            return spec
        if isinstance(spec, str | os.PathLike):
            return cls.shipped().extended(cls.from_file(spec))
        if isinstance(spec, Mapping):
            return cls.shipped().extended(spec)
        raise TypeError(
            "aliases= takes an Aliases table, the path of a JSON alias file, or a mapping "
            '{"works": {title: work id}, "authors": {name: author id}}; '
            f"got {type(spec).__name__}."
        )

    def extended(self, more: Aliases | Mapping[str, Any]) -> Aliases:
        """This table with ``more`` added: entries of the same id are joined (names and
        spellings added), new ones appended; hand assignments (``{"works": {title: id},
        "authors": {name: id}}``) merge a title or name into an id, or split it off into a
        new one."""
        if isinstance(more, Mapping):
            unknown = set(more) - {"works", "authors", "version"}
            if unknown:
                raise ValueError(
                    f"aliases= knows 'works' and 'authors', not {', '.join(sorted(unknown))}."
                )
            works_in, authors_in = more.get("works", []), more.get("authors", [])
            table = Aliases.from_dict(
                {
                    "works": [] if isinstance(works_in, Mapping) else works_in,
                    "authors": [] if isinstance(authors_in, Mapping) else authors_in,
                },
                origin="aliases=",
            )
            more = Aliases(
                table.works,
                table.authors,
                _hand(works_in, title_key, "works") if isinstance(works_in, Mapping) else {},
                _hand(authors_in, author_key, "authors") if isinstance(authors_in, Mapping) else {},
            )
        works = dict(self.works)
        for work in more.works.values():
            works[work.id] = _join_work(works[work.id], work) if work.id in works else work
        authors = dict(self.authors)
        for author in more.authors.values():
            old = authors.get(author.id)
            authors[author.id] = (
                author
                if old is None
                else AuthorAlias(
                    author.id,
                    {**old.names, **author.names},
                    (*old.aliases, *author.aliases),
                    (*old.sites, *author.sites),
                )
            )
        return Aliases(
            works,
            authors,
            {**self.work_hand, **more.work_hand},
            {**self.author_hand, **more.author_hand},
        )

    # -- looking up --------------------------------------------------------------------------
    def assigned_work(self, title: str | None) -> str | None:
        """The work id a hand assignment gives ``title``, or None."""
        return self.work_hand.get(title_key(title)) if self.work_hand else None

    def work_of(self, title: str | None) -> str | None:
        """The id of the table's work ``title`` names, or None."""
        return self._work_keys.get(title_key(title))

    def work_by_key(self, key: str) -> str | None:
        """The work whose ``title_key`` is ``key``, or None."""
        return self._work_keys.get(key)

    def work_by_content(self, title: str | None) -> str | None:
        """The one work whose name has the content words of ``title`` (``content_key``:
        "Compendio_Doutrina_Social_Igreja.pdf"), or None (none, or several)."""
        key = content_key(title)
        return self._content_keys.get(key) if key else None

    def work_of_url(self, plain_url: str | None) -> str | None:
        """The work whose pages ``plain_url`` (a ``work_url`` without ``https://``) is one of."""
        if not plain_url:
            return None
        found = self._url_keys.get(plain_url)
        if found is not None:
            return found
        for prefix, work_id in self._url_prefixes:
            if plain_url.startswith(prefix):
                return work_id
        return None

    def author_of(self, name: str | None) -> str | None:
        """The id of the table's author ``name`` names (a hand assignment first), or None."""
        # The name as written first ("San Francesco" may be an entry of its own), then
        # without honorifics ("Papa Francesco" -> "Francesco").
        for key in dict.fromkeys((title_key(name), author_key(name))):
            if key:
                found = self.author_hand.get(key) or self._author_keys.get(key)
                if found is not None:
                    return found
        return None

    def author_of_site(self, plain_url: str | None) -> str | None:
        """The author whose site ``plain_url`` (a ``work_url`` without ``https://``) is on."""
        if not plain_url:
            return None
        host = plain_url.split("/", 1)[0]
        for author in self.authors.values():
            for site in author.sites:
                if host == site or host.endswith("." + site):
                    return author.id
        return None

    def author_name(self, author_id: str, lang: str | None) -> str | None:
        author = self.authors.get(author_id)
        return None if author is None or lang is None else _name(author.names, lang)

    def work_name(self, work_id: str, lang: str | None) -> str | None:
        work = self.works.get(work_id)
        return None if work is None or lang is None else _name(work.names, lang)


#: What ``aliases=`` accepts: a table, the path of a JSON file of the table's shape (added to
#: the shipped one), or a mapping ``{"works": ..., "authors": ...}`` whose values are lists of
#: entries (the file's shape) or ``{name: id}`` hand assignments.
AliasSpec = Aliases | str | os.PathLike[str] | Mapping[str, Any] | None


def _name(names: Mapping[str, str], lang: str) -> str | None:
    return names.get(lang) or names.get(lang.split("-")[0].lower())


def _entries(data: Mapping[str, Any], key: str, origin: str) -> list[Mapping[str, Any]]:
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise ValueError(f"{origin}: {key!r} must be a list of objects.")
    for item in items:
        if not isinstance(item.get("id"), str) or not item["id"]:
            raise ValueError(f"{origin}: every entry of {key!r} needs a string id.")
    return items


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        return tuple(v for v in value if isinstance(v, str) and v.strip())
    return ()


def _names(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str) and v.strip()}


def _author(item: Mapping[str, Any]) -> AuthorAlias:
    return AuthorAlias(
        item["id"],
        _names(item.get("names")),
        _strings(item.get("aliases")),
        tuple(s.lower().removeprefix("www.") for s in _strings(item.get("sites"))),
    )


def _work(item: Mapping[str, Any]) -> WorkAlias:
    years = item.get("years")
    span: tuple[int, int] | None = None
    if isinstance(years, list) and len(years) == 2 and all(isinstance(y, int) for y in years):
        span = (min(years), max(years))
    elif isinstance(years, int):
        span = (years, years)
    author = item.get("author")
    return WorkAlias(
        item["id"],
        _names(item.get("names")),
        _strings(item.get("aliases")),
        author if isinstance(author, str) else None,
        _strings(item.get("also_by")),
        span,
        item.get("kind") if isinstance(item.get("kind"), str) else None,
        _strings(item.get("urls")),
    )


def _join_work(old: WorkAlias, new: WorkAlias) -> WorkAlias:
    return WorkAlias(
        old.id,
        {**old.names, **new.names},
        (*old.aliases, *new.aliases),
        new.author or old.author,
        (*old.also_by, *new.also_by),
        new.years or old.years,
        new.kind or old.kind,
        (*old.urls, *new.urls),
    )


def _hand(assign: Mapping[Any, Any], key: Any, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, target in assign.items():
        if not isinstance(name, str) or not isinstance(target, str) or not target.strip():
            raise ValueError(
                f'aliases={{"{what}": ...}} maps names to ids (both strings); '
                f"got {name!r}: {target!r}."
            )
        normal = key(name)
        if not normal:
            raise ValueError(f"aliases= {what}: {name!r} has no words to match on.")
        out[normal] = target.strip()
    return out
