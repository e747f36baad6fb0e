"""Bibliographies of many answers' sources: BibTeX and CSL-JSON, one entry per work.

``documents_by_work(answers)`` gathers the sources of ``citekit.sources_frame`` by work
(``work_id``: the same encyclical cited in English and Portuguese, or the Catechism under five
titles, is one work) with the work's fields: its display name, its author's name, its year, the
address cited most, and where it was cited. ``bibtex`` and ``csl_json`` write them in those
formats' own field names; ``citekit.export_citations(answers, "refs.bib")`` writes the file.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.years import parse_year, parse_year_span
from ...model import Answer
from ..identity.keys import author_key, canonical_url, work_title, work_url
from .rows import export_frame

if TYPE_CHECKING:
    from ..identity.aliases import AliasSpec

__all__ = ["Document", "balanced_braces", "bibtex", "csl_json", "documents_by_work", "latex_escape"]

_STOPWORDS = frozenset(
    {"a", "an", "the", "of", "on", "in", "and", "or", "to", "for", "de", "da", "do", "das"}
    | {"dos", "la", "le", "les", "el", "los", "del", "et"}
)


@dataclass
class Document:
    """One cited work (or knowledge document) and the places it was cited from.

    ``title``, ``author`` and ``year`` are the work's (``citekit.data.corpus.works``): its display
    name, its author's display name, and its year as ``works_frame`` reads it, written as
    the sources wrote it where one of them did ("1931-1932", "c. 1270"). ``url`` is one
    address of it, the one cited most. ``places`` are the passages' references ("no. 45"),
    ``chunks`` the ids of the knowledge documents its chunks came from.
    """

    key: str
    title: str | None
    author: str | None
    year: str | None
    url: str | None
    kind: str
    places: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    work_id: str | None = None
    author_id: str | None = None

    @property
    def note(self) -> str | None:
        parts = []
        if self.places:
            parts.append(f"Cited at: {', '.join(self.places)}")
        if self.chunks:
            parts.append(f"Knowledge chunks: {', '.join(self.chunks)}")
        return "; ".join(parts) or None


@dataclass
class _Work:
    """What the rows of one work say, gathered in order of appearance."""

    first: dict[str, Any]
    titles: list[str] = field(default_factory=list)
    years: Counter[str] = field(default_factory=Counter)
    urls: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Dicts as ordered sets: a work cited at 40,000 places tests each place once, not 40,000
    # times.
    places: dict[str, None] = field(default_factory=dict)
    chunks: dict[str, None] = field(default_factory=dict)
    providers: dict[str, None] = field(default_factory=dict)


def documents_by_work(
    answers: Iterable[Answer] | Answer, *, aliases: AliasSpec = None, lang: str | None = None
) -> list[Document]:
    """The distinct works behind ``answers``, in order of first appearance: one per
    ``work_id`` of ``sources_frame`` (the same encyclical cited in English and Portuguese, or
    a Catechism cited under five titles, is one document), with the work's fields (see
    ``Document``). ``aliases`` and ``lang`` are ``citekit.sources_frame``'s. Sources with
    neither a title nor an address (no work) are grouped by author and year as written."""
    from ..corpus.works import works_frame
    from ..identity.aliases import Aliases

    src = export_frame(answers, aliases=aliases, lang=lang)
    # The work's author and year are works_frame's (the author and year cited most for it,
    # an alias-table work's first year), whatever the first source of it says.
    works = {row["work_id"]: row for row in works_frame(src, aliases=aliases).to_dicts()}
    table = Aliases.resolve(aliases)
    found: dict[tuple[Any, ...], _Work] = {}
    addresses: dict[str | None, Any] = {}
    for row in src.select(_DOCUMENT_COLUMNS).iter_rows(named=True):
        wid = row["work_id"]
        ident = (
            ("work", wid)
            if wid is not None
            else ("none", row["kind"], _norm(row["document_author"]), _norm(row["document_year"]))
        )
        work = found.get(ident)
        if work is None:
            work = found[ident] = _Work(row)
        if row["document_title"]:
            work.titles.append(row["document_title"])
        if row["document_year"] and row["document_year"].strip():
            work.years[row["document_year"].strip()] += 1
        address = addresses.get(row["source_url"], _UNSEEN)
        if address is _UNSEEN:  # each distinct URL read once: a million rows have a few
            address = addresses[row["source_url"]] = _address(row["source_url"])
        if address is not None:
            work.urls[address] += 1
        # Where in the work: a passage's reference, or the id of a knowledge chunk's document.
        chunk = row["kind"] == "knowledge chunk"
        place, places = (
            (row["data_id"], work.chunks) if chunk else (row["document_reference"], work.places)
        )
        if place:
            places[place] = None
        work.providers[row["provider"]] = None

    keys = _Keys()
    out = []
    for (how, *_), work in found.items():
        first = work.first
        if how == "work":
            wid = first["work_id"]
            titled = wid in table.works or any(map(work_title, work.titles))
            title = first["work"] if titled else None
            author, author_id = works[wid]["author"], works[wid]["author_id"]
            year = _year_text(works[wid]["year"], work.years)
        else:
            wid, title, author = None, first["document_title"], first["document_author"]
            author_id, year = first["author_id"], first["document_year"]
        doc = Document(
            key=keys.unique(_bib_key(author, year, title)),
            title=title,
            author=author,
            year=year,
            url=_most_cited_url(work.urls),
            kind=first["kind"],
            places=list(work.places),
            providers=list(work.providers),
            chunks=list(work.chunks),
            work_id=wid,
            author_id=author_id,
        )
        out.append(doc)
    return out


def _year_text(year: int | None, written: Counter[str]) -> str | None:
    """The work's ``year`` as its sources wrote it (the spelling cited most that reads as
    that year: "1931-1932", "c. 1270"), else the number; the text cited most when no source
    gives a year ("19th century")."""
    if year is None:
        return _most(written)
    return _most(Counter({t: n for t, n in written.items() if parse_year(t) == year})) or str(year)


_UNSEEN: Any = object()
#: What ``documents_by_work`` reads of each source.
_DOCUMENT_COLUMNS = (
    *("work_id", "work", "author_id", "kind", "provider", "document_title", "document_author"),
    *("document_year", "document_reference", "source_url", "data_id"),
)


def _address(url: str | None) -> tuple[str, str] | None:
    """The document ``url`` is an address of (``work_url``: translations together) and the
    address itself (``canonical_url``); None for what is not an http(s) address."""
    address = canonical_url(url)
    return None if address is None else (work_url(address) or address, address)


def _most_cited_url(urls: Counter[tuple[str, str]]) -> str | None:
    """The address cited most: of the document cited most (``work_url``, translations
    together), its spelling cited most (``canonical_url``); the first seen of a tie."""
    if not urls:
        return None
    by_document: Counter[str] = Counter()
    for (document, _), n in urls.items():
        by_document[document] += n
    best = _most(by_document)
    return _most(Counter({a: n for (d, a), n in urls.items() if d == best}))


def _most(tally: Counter[str]) -> str | None:
    # Counter.most_common keeps insertion order among equal counts: the first seen wins.
    return tally.most_common(1)[0][0] if tally else None


def _norm(value: str | None) -> str:
    return " ".join((value or "").split()).casefold()


def _ascii_words(text: str | None) -> list[str]:
    plain = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    return re.findall(r"[a-z0-9]+", plain.lower())


def _bib_key(author: str | None, year: str | None, title: str | None) -> str:
    # The name, not an honorific before it: "Pope Francis" keys as "francis2015...".
    names = _ascii_words(author_key(author) or author)
    number = parse_year(year)
    when = "nd" if number is None else f"{-number}bc" if number < 0 else str(number)
    words = [w for w in _ascii_words(title) if w not in _STOPWORDS][:2]
    return (names[0] if names else "anon") + when + "".join(words)


class _Keys:
    """BibTeX keys made unique: a key taken gets the next free suffix of its base ("a" to
    "z", then "a1"...). Each base remembers the next suffix it will try, so ``n`` entries of
    one base try about ``n`` candidates in all, not ``n`` squared; ``tried`` counts them."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next_suffix: dict[str, int] = {}
        self.tried = 0

    def unique(self, key: str) -> str:
        n = self.next_suffix.get(key, -1)
        candidate = key if n < 0 else _suffixed(key, n)
        self.tried += 1
        while candidate in self.taken:  # a suffixed key may be another base's key
            n += 1
            candidate = _suffixed(key, n)
            self.tried += 1
        self.next_suffix[key] = n + 1
        self.taken.add(candidate)
        return candidate


def _suffixed(key: str, n: int) -> str:
    return key + chr(ord("a") + n % 26) + ("" if n < 26 else str(n // 26))


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX))


def balanced_braces(text: str) -> str:
    """``text`` without the braces that have no partner: BibTeX and pybtex count braces
    whatever stands before them (``\\}`` included), so one unpaired brace would end a field
    early or swallow the rest of the file. Paired braces are kept.

    >>> from citekit.data.io.bibliography import balanced_braces
    >>> balanced_braces("Rerum {Novarum}} and {more")
    'Rerum {Novarum} and more'
    """
    if "{" not in text and "}" not in text:
        return text
    dropped: set[int] = set()
    opened: list[int] = []
    for i, ch in enumerate(text):
        if ch == "{":
            opened.append(i)
        elif ch == "}":
            if opened:
                opened.pop()
            else:
                dropped.add(i)
    dropped.update(opened)
    return "".join(ch for i, ch in enumerate(text) if i not in dropped)


def latex_escape(text: str) -> str:
    """``text`` safe inside a BibTeX ``{...}`` value: braces balanced
    (:func:`balanced_braces`), LaTeX specials escaped, on one line."""
    return _LATEX_RE.sub(lambda m: _LATEX[m.group(0)], balanced_braces(" ".join(text.split())))


def _bib_url(url: str) -> str:
    # url fields are read verbatim; only what would unbalance the braces is percent-encoded.
    return (
        url.strip().replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")
    )


def bibtex(
    answers: Iterable[Answer] | Answer, *, aliases: AliasSpec = None, lang: str | None = None
) -> str:
    """A BibTeX file: one ``@misc`` entry per work (``documents_by_work``), with the work's title,
    author and year; the author is one name, never split into first and last.

    The Catechism cited in English and in Portuguese is one entry:

    >>> from citekit import Answer, Citation
    >>> from citekit.data.io.bibliography import bibtex
    >>> def cited(title, author, url, *places):
    ...     return Answer(provider="magisterium", text="See [^1].", citations=tuple(Citation(
    ...         "...", 0, document_title=title, document_author=author, document_year="1992",
    ...         document_reference=place, source_url=url) for place in places))
    >>> en = cited("Catechism of the Catholic Church", "Catholic Church",
    ...            "https://www.vatican.va/archive/ENG0015/__P8B.HTM", "2427", "2428")
    >>> pt = cited("Catecismo da Igreja Católica", "Igreja Católica", "https://www.vatican.va/"
    ...            "archive/cathechism_po/p3s1cap2_1877-1948_po.html", "1913")
    >>> print(bibtex([en, pt]))
    @misc{catholic1992catechismcatholic,
      title = {Catechism of the Catholic Church},
      author = {{Catholic Church}},
      year = {1992},
      url = {https://vatican.va/archive/ENG0015/__P8B.HTM},
      note = {Cited at: 2427, 2428, 1913}
    }
    <BLANKLINE>
    """
    entries = []
    for doc in documents_by_work(answers, aliases=aliases, lang=lang):
        fields: list[tuple[str, str]] = [("title", latex_escape(doc.title or "Untitled"))]
        if doc.author:
            # Double braces: an author such as "Catholic Church" is a name, not First Last.
            fields.append(("author", "{" + latex_escape(doc.author) + "}"))
        if doc.year:
            fields.append(("year", latex_escape(doc.year)))
        if doc.url:
            fields.append(("url", _bib_url(doc.url)))
        if doc.note:
            fields.append(("note", latex_escape(doc.note)))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@misc{{{doc.key},\n{body}\n}}\n")
    return "\n".join(entries)


_NUMBERS_ONLY = re.compile(r"\s*[0-9]{1,4}\s*(?:[-\u2013/]\s*[0-9]{1,4}\s*)?")


def _issued(year: str | None) -> dict[str, Any] | None:
    """CSL ``issued``: the year (or both ends of a range; negative before Christ, as CSL-JSON
    writes it) read by ``parse_year_span``, with the provider's text as ``raw`` when it says
    more than the numbers; text without a year is kept as ``literal``."""
    if not year or not year.strip():
        return None
    span = parse_year_span(year)
    if span is None:
        return {"literal": year.strip()}
    first, last = span
    issued: dict[str, Any] = {"date-parts": [[first]] if first == last else [[first], [last]]}
    if not _NUMBERS_ONLY.fullmatch(year):  # "c. 1270", "500 BC": keep what the source wrote
        issued["raw"] = year.strip()
    return issued


def csl_json(
    answers: Iterable[Answer] | Answer, *, aliases: AliasSpec = None, lang: str | None = None
) -> list[dict[str, Any]]:
    """CSL-JSON items (type ``document``), one per work (``documents_by_work``), with the work's
    title, author (a literal name) and year (``issued``)."""
    items = []
    for doc in documents_by_work(answers, aliases=aliases, lang=lang):
        item: dict[str, Any] = {"id": doc.key, "type": "document", "title": doc.title or ""}
        if doc.author:
            item["author"] = [{"literal": doc.author}]
        issued = _issued(doc.year)
        if issued is not None:
            item["issued"] = issued
        if doc.url:
            item["URL"] = doc.url
        if doc.note:
            item["note"] = doc.note
        items.append(item)
    return items
