"""The shipped alias table of Catholic works and authors (citekit/data/identity/aliases.json).

The table is data: these tests hold it to its format and to the facts it must agree with.

- Shape: ``{"version": 1, "authors": [...], "works": [...]}``; an author is ``id``, ``names``
  (all seven languages en, pt, es, it, fr, de, la) and ``aliases``; a work adds ``author``,
  ``also_by`` (author ids a provider may name instead), ``years`` ([first, last] a citation of it
  may carry), ``kind`` and ``urls`` (``work_url`` keys without the scheme, or prefixes of them
  ending in "/").
- Every name and alias is matched on its ``title_key``: no key may stand for two works or two
  authors, an alias must say something its entry's names and other aliases do not already say
  (case, accents, punctuation and a leading article are the key's business), and no alias is a
  two-letter abbreviation ("GS" could be anything).
- Authors are also compared with a leading honorific taken off ("Saint", "Pope", "São", "San"...,
  as the matcher reads them), so "San Francesco" (Assisi) could never pass for "Francesco" (the
  pope): the saints are listed under their full names ("Francesco d'Assisi").
- Birth names are listed for the popes only, as persons (Karol Wojtyła, Joseph Ratzinger, Jorge
  Mario Bergoglio): a book Joseph Ratzinger wrote is still by the same person. No other pre-
  religious or secular name is listed.
- Every Catholic work and author the recorded Magisterium answers cite
  (sample_data/_source/magisterium.json) has a key in the table, and the table agrees with
  them: the citation's author is the work's author (or one of its ``also_by``), its year falls
  within the work's years, and a URL the table knows belongs to the same work as the title.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from citekit.core.years import parse_year_span
from citekit.data.identity.aliases import Aliases
from citekit.data.identity.keys import title_key, work_url

LANGUAGES = {"en", "pt", "es", "it", "fr", "de", "la"}
AUTHOR_FIELDS = {"id", "names", "aliases"}
#: Fields an author may add: the sites whose pages are the author's when they name none.
AUTHOR_OPTIONAL = {"sites"}
WORK_FIELDS = {"id", "author", "years", "kind", "names", "aliases", "urls", "also_by"}
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: Words the matcher ignores before a person's name (compared after ``title_key``).
HONORIFICS = frozenset(
    {"pope", "papa", "pape", "papst", "saint", "sainte", "st", "ste", "s", "ss", "sao", "san"}
    | {"santo", "santa", "sant", "sankt", "hl", "heiliger", "heilige", "blessed", "beato", "beata"}
    | {"bienheureux", "selige", "seliger", "sanctus", "sancta"}
)
SAMPLES = Path(__file__).resolve().parents[3] / "sample_data" / "_source" / "magisterium.json"
#: Titles and authors the recorded answers cite that are outside the table's scope, and why.
OUT_OF_SCOPE_TITLES = {"Segundo libro de los Macabeos": "a book of the Bible, not a Church text"}
OUT_OF_SCOPE_AUTHORS = {
    "Lutheran World Federation and Pontifical Council for Promoting Christian Unity": (
        "two signatories; the Catholic one is in the table on its own"
    )
}


@cache
def table() -> dict[str, Any]:
    text = (files("citekit.data.identity") / "aliases.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def authors() -> list[dict[str, Any]]:
    return list(table()["authors"])


def works() -> list[dict[str, Any]]:
    return list(table()["works"])


def spellings(entry: dict[str, Any]) -> list[str]:
    return [*entry["names"].values(), *entry["aliases"]]


def person_key(name: str) -> str:
    words = title_key(name).split()
    while len(words) > 1 and words[0] in HONORIFICS:
        words = words[1:]
    return " ".join(words)


@cache
def keys(kind: str, key: Any = title_key) -> dict[str, str]:
    """Every key of ``kind`` ("authors" or "works") to the id of the entry that has it."""
    found: dict[str, str] = {}
    for entry in table()[kind]:
        for spelling in spellings(entry):
            found.setdefault(key(spelling), entry["id"])
    return found


def works_at(url: str) -> set[str]:
    """The works whose ``urls`` claim ``url``."""
    canonical = work_url(url)
    if canonical is None:
        return set()
    bare = canonical.removeprefix("https://")
    return {
        work["id"]
        for work in works()
        for claim in work["urls"]
        if bare == claim or (claim.endswith("/") and bare.startswith(claim))
    }


def test_the_file_has_the_documented_shape() -> None:
    assert set(table()) == {"version", "authors", "works"}
    assert table()["version"] == 1
    for author in authors():
        assert AUTHOR_FIELDS <= set(author) <= AUTHOR_FIELDS | AUTHOR_OPTIONAL, author.get("id")
        sites = author.get("sites", [])
        assert all(isinstance(s, str) and "/" not in s and "." in s for s in sites), author["id"]
    for work in works():
        assert set(work) == WORK_FIELDS, work.get("id")
        assert isinstance(work["kind"], str) and work["kind"] == work["kind"].strip().lower()
        assert work["kind"], work["id"]
        for field in ("aliases", "urls", "also_by"):
            assert isinstance(work[field], list), (work["id"], field)
            assert all(isinstance(v, str) and v for v in work[field]), (work["id"], field)
    for entry in authors() + works():
        assert isinstance(entry["aliases"], list)
        assert all(isinstance(a, str) and a == a.strip() and a for a in entry["aliases"]), entry


#: What the table must hold at least: the authors and works Catholic answers cite most.
REQUIRED_AUTHORS = {
    *("leo-xiii", "pius-x", "benedict-xv", "pius-xi", "pius-xii", "john-xxiii", "paul-vi"),
    *("john-paul-i", "john-paul-ii", "benedict-xvi", "francis", "leo-xiv"),
    *("catholic-church", "holy-see", "second-vatican-council", "first-vatican-council"),
    *("council-of-trent", "council-of-nicaea", "council-of-florence", "doctrine-of-the-faith"),
    *("justice-and-peace", "augustine", "thomas-aquinas", "gregory-the-great", "ambrose", "jerome"),
    *("john-chrysostom", "irenaeus", "athanasius", "basil-the-great", "teresa-of-avila"),
    *("john-of-the-cross", "catherine-of-siena", "therese-of-lisieux", "francis-de-sales"),
    *("francis-of-assisi", "margaret-mary-alacoque", "john-henry-newman", "bonaventure", "anselm"),
}
REQUIRED_WORKS = {
    *("catechism", "compendium-of-the-catechism", "code-of-canon-law"),
    *("compendium-of-the-social-doctrine", "code-of-canon-law-1917", "rerum-novarum"),
    *("quadragesimo-anno", "mater-et-magistra", "pacem-in-terris", "populorum-progressio"),
    *("octogesima-adveniens", "laborem-exercens", "sollicitudo-rei-socialis", "centesimus-annus"),
    *("veritatis-splendor", "evangelium-vitae", "fides-et-ratio", "redemptor-hominis"),
    *("ecclesia-de-eucharistia", "familiaris-consortio", "deus-caritas-est", "spe-salvi"),
    *("caritas-in-veritate", "lumen-fidei", "evangelii-gaudium", "laudato-si", "amoris-laetitia"),
    *("gaudete-et-exsultate", "fratelli-tutti", "dilexit-nos", "humanae-vitae", "mysterium-fidei"),
    *("haurietis-aquas", "mystici-corporis", "humani-generis", "divino-afflante-spiritu"),
    *("casti-connubii", "aeterni-patris", "pascendi", "dilexi-te", "summa-theologiae"),
    *("summa-contra-gentiles", "confessions", "city-of-god", "de-trinitate", "nicene-creed"),
    *("apostles-creed", "athanasian-creed"),
}


def test_the_table_covers_what_the_issue_names() -> None:
    assert not REQUIRED_AUTHORS - {a["id"] for a in authors()}
    assert not REQUIRED_WORKS - {w["id"] for w in works()}
    council = [w for w in works() if w["author"] == "second-vatican-council"]
    assert len(council) == 16
    assert all(w["also_by"] == ["paul-vi"] for w in council)


@pytest.mark.parametrize("kind", ["authors", "works"])
def test_ids_are_unique_slugs(kind: str) -> None:
    ids = [entry["id"] for entry in table()[kind]]
    assert len(ids) == len(set(ids))
    assert all(isinstance(i, str) and SLUG.fullmatch(i) for i in ids), ids


@pytest.mark.parametrize("kind", ["authors", "works"])
def test_every_entry_is_named_in_all_seven_languages(kind: str) -> None:
    for entry in table()[kind]:
        names = entry["names"]
        assert isinstance(names, dict) and set(names) == LANGUAGES, entry["id"]
        for language, name in names.items():
            assert isinstance(name, str) and name == name.strip(), (entry["id"], language)
            assert title_key(name), (entry["id"], language)


@pytest.mark.parametrize("kind", ["authors", "works"])
def test_each_alias_adds_a_key_of_at_least_three_characters(kind: str) -> None:
    for entry in table()[kind]:
        seen = {title_key(name) for name in entry["names"].values()}
        for alias in entry["aliases"]:
            key = title_key(alias)
            assert len(key.replace(" ", "")) >= 3, (entry["id"], alias)
            assert key not in seen, f"{entry['id']}: {alias!r} repeats a name or an alias"
            seen.add(key)


@pytest.mark.parametrize(
    ("kind", "key"),
    [("works", title_key), ("authors", title_key)],
    ids=["works", "authors"],
)
def test_no_key_stands_for_two_entries(kind: str, key: Any) -> None:
    owners: dict[str, set[str]] = {}
    for entry in table()[kind]:
        for spelling in spellings(entry):
            owners.setdefault(key(spelling), set()).add(entry["id"])
    shared = {k: sorted(ids) for k, ids in owners.items() if len(ids) > 1}
    assert not shared


def test_every_spelling_finds_its_own_entry() -> None:
    """What the matcher does: a name as written first, then without honorifics ("San
    Francesco" is Francis of Assisi because the table lists it; "Papa Francesco" is the pope
    because "Francesco" is his). No spelling of one entry may lead to another."""
    loaded = Aliases.shipped()
    for entry in authors():
        for spelling in spellings(entry):
            assert loaded.author_of(spelling) == entry["id"], spelling
    for entry in works():
        for spelling in spellings(entry):
            assert loaded.work_of(spelling) == entry["id"], spelling


def test_authors_of_works_are_authors_of_the_table() -> None:
    author_ids = {a["id"] for a in authors()}
    for work in works():
        assert work["author"] in author_ids, work["id"]
        also = work["also_by"]
        assert len(also) == len(set(also)) and work["author"] not in also, work["id"]
        assert set(also) <= author_ids, (work["id"], set(also) - author_ids)


def test_years_are_a_first_and_last_year() -> None:
    for work in works():
        years = work["years"]
        assert isinstance(years, list) and len(years) == 2, work["id"]
        first, last = years
        assert type(first) is int and type(last) is int, work["id"]
        assert 1 <= first <= last <= 2100, work["id"]


def test_urls_are_canonical_work_keys_or_folder_prefixes() -> None:
    claims: dict[str, str] = {}
    for work in works():
        for url in work["urls"]:
            assert "://" not in url and not url.startswith("www."), (work["id"], url)
            if url.endswith("/"):
                # A prefix must survive canonicalisation of the pages under it.
                page = work_url("https://www." + url + "page.html")
                assert page is not None and page.startswith("https://" + url), (work["id"], url)
            else:
                assert work_url("https://www." + url) == "https://" + url, (work["id"], url)
            claims[url] = work["id"]
    for url, owner in claims.items():
        for other, other_owner in claims.items():
            if other_owner != owner and other.endswith("/"):
                assert not url.startswith(other), (url, other)


def test_vatican_pages_in_every_language_find_their_work() -> None:
    va = "https://www.vatican.va/"
    ccc = "catechism"
    pages = {
        va + "content/francesco/pt/encyclicals/documents/"
        "papa-francesco_20150524_enciclica-laudato-si.html#_ftn12": "laudato-si",
        "http://vatican.va/content/john-paul-ii/de/encyclicals/documents/"
        "hf_jp-ii_enc_14091981_laborem-exercens.html": "laborem-exercens",
        va + "archive/hist_councils/ii_vatican_council/documents/"
        "vat-ii_const_19651207_gaudium-et-spes_po.html": "gaudium-et-spes",
        va + "archive/ENG0015/_INDEX.HTM": ccc,
        va + "archive/catechism_it/p3s2c2a5_it.htm": ccc,
        va + "archive/catechism_lt/p2s2c2a4_lt.htm": ccc,
        va + "content/catechism/en/part_three/section_one/chapter_one/article_7.html": ccc,
        va + "holy_father/paul_vi/encyclicals/documents/"
        "hf_p-vi_enc_25071968_humanae-vitae_en.html": "humanae-vitae",
        va + "content/john-paul-ii/pt/apost_letters/1984/documents/"
        "hf_jp-ii_apl_11021984_salvifici-doloris.html": "salvifici-doloris",
        va + "archive/compendium_ccc/documents/archive_2005_compendium-ccc_en.html": (
            "compendium-of-the-catechism"
        ),
        "https://www.newadvent.org/summa/1029.htm#article4": "summa-theologiae",
        "https://www.newadvent.org/fathers/110110.htm": "confessions",
    }
    for url, work in pages.items():
        assert works_at(url) == {work}, url
    assert works_at("https://www.vatican.va/content/francesco/en/homilies/2015.html") == set()


def recorded_citations() -> list[dict[str, Any]]:
    answers = json.loads(SAMPLES.read_text(encoding="utf-8"))["answers"]
    return [doc for answer in answers for doc in answer.get("documents") or []]


def test_every_catholic_work_and_author_the_samples_cite_is_in_the_table() -> None:
    missing_works = set()
    missing_authors = set()
    for doc in recorded_citations():
        title, author = doc.get("document_title"), doc.get("document_author")
        if title and title not in OUT_OF_SCOPE_TITLES and title_key(title) not in keys("works"):
            missing_works.add(title)
        known = keys("authors")
        if author and author not in OUT_OF_SCOPE_AUTHORS and title_key(author) not in known:
            missing_authors.add(author)
    assert not missing_works
    assert not missing_authors


def test_the_table_agrees_with_the_samples_on_author_year_and_address() -> None:
    by_id = {w["id"]: w for w in works()}
    checked = 0
    for doc in recorded_citations():
        work_id = keys("works").get(title_key(doc.get("document_title")))
        if work_id is None:
            continue
        work = by_id[work_id]
        author = keys("authors").get(title_key(doc.get("document_author")))
        if author is not None:
            assert author in {work["author"], *work["also_by"]}, (work_id, doc["document_author"])
        span = parse_year_span(doc.get("document_year"))
        if span is not None:
            first, last = work["years"]
            assert first <= span[0] <= span[1] <= last, (work_id, doc["document_year"])
        claimed = works_at(doc.get("source_url") or "")
        assert claimed <= {work_id}, (work_id, doc["source_url"], claimed)
        checked += 1
    assert checked >= 60
