"""The recorded samples give each work one author and one year (sample_data/README.md, "Works,
authors and years").

A work is a normalised title (``citekit.data.identity.keys.title_key``), whatever the reference
says. Every citation and search result of the samples that names a work must give:

* one author per language of its answer (``None`` counts as a value: a missing author beside a
  named one is a difference). Across languages each language keeps its own spelling ("Leo XIII"
  and "Léon XIII", "Second Vatican Council" and "Concile Vatican II"): those are what work and
  author identity must merge, so they are not differences here;
* one year, in every language, except the differences ``sample_data/README.md`` documents,
  which this file spells out again in ``EDITIONS`` and ``PARTS``: the Catechism's English second
  edition (1997), which says so in its reference, and the Summa's parts, each with the years it
  was written, named at the start of its reference.

A sample edit that gives a work a second author or year fails here, with the work named.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import pytest

import citekit as ck
from citekit.data.frames import load_answers
from citekit.data.identity.keys import title_key
from citekit.wire.search import parse_search
from tests.conftest import SAMPLES

#: Works whose citations name an edition in their reference: the work's title key, then the
#: edition's mark (the reference's ending) and the year it carries. Citations without a mark
#: are of the first edition, whose year is the work's (checked by ``test_every_work...``).
EDITIONS: dict[str, dict[str, str]] = {
    "catechism of the catholic church": {"(2nd ed., 1997)": "1997"},
}
#: The first edition's year of the Catechism in each language's title the samples use: the
#: work is of 1992 (Fidei depositum, 11 October 1992); the German text came out in 1993 and
#: the German answer gives its year.
CATECHISM_YEARS: dict[str, str] = {
    "catechism of the catholic church": "1992",
    "catecismo de la iglesia catolica": "1992",
    "catecismo da igreja catolica": "1992",
    "catechismo della chiesa cattolica": "1992",
    "catechisme de l eglise catholique": "1992",
    "katechismus der katholischen kirche": "1993",
}
#: Works cited by part, each part with the years it was written; the part starts the reference
#: ("I-II, q. 113, a. 1").
PARTS: dict[str, dict[str, str]] = {
    "summa theologiae": {
        "I": "1265-1268",
        "I-II": "1271",
        "II-II": "1271-1272",
        "III": "1272-1273",
    },
}
_PART = re.compile(r"([IV]+(?:-[IV]+)?),")


@dataclass(frozen=True)
class Cited:
    """One work as one citation or search result names it."""

    where: str
    language: str
    title: str
    author: str | None
    year: str | None
    reference: str | None


def _records() -> Iterable[tuple[str, dict[str, Any]]]:
    for folder in ("magisterium", "maritaca", "gptbots"):
        for path in sorted((SAMPLES / folder).glob("*.json")):
            if path.name != "models.json":
                yield f"{folder}/{path.stem}", json.loads(path.read_text(encoding="utf-8"))


def sample_citations() -> list[Cited]:
    """Every citation and search result of the samples that has a title, as citekit reads it."""
    out: list[Cited] = []
    for where, record in _records():
        if "search_response" in record:
            found = parse_search(record["search_response"], query=record["query"])
            out += [
                Cited(where, record["language"], r.title, r.author, r.year, None)
                for r in found
                if r.title
            ]
            continue
        for answer in load_answers(record):
            assert isinstance(answer, ck.Answer)
            out += [
                Cited(
                    where,
                    record["language"],
                    c.document_title,
                    c.document_author,
                    c.document_year,
                    c.document_reference,
                )
                for c in answer.citations
                if c.document_title
            ]
    return out


def _variant(key: str, cited: Cited) -> tuple[str | None, str | None]:
    """The documented variant ``cited`` belongs to and the year it must carry (None: the
    work's own year, or no documented variant)."""
    ref = cited.reference or ""
    for mark, year in EDITIONS.get(key, {}).items():
        if ref.endswith(mark):
            return mark, year
    if key in PARTS:
        part = _PART.match(ref)
        name = part.group(1) if part else None
        return name, PARTS[key].get(name or "")
    return None, None


def inconsistencies(cited: Iterable[Cited]) -> list[str]:
    """What breaks the rule of the module docstring, one line per work and difference."""
    authors: dict[tuple[str, str], dict[str | None, list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    years: dict[tuple[str, str | None], dict[str | None, list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    problems: list[str] = []
    for c in cited:
        key = title_key(c.title)
        authors[key, c.language][c.author].append(c.where)
        variant, expected = _variant(key, c)
        if key in PARTS and expected is None:
            problems.append(f"{c.title!r} in {c.where}: {c.reference!r} names no part")
        if expected is not None and c.year != expected:
            problems.append(
                f"{c.title!r} ({variant}) in {c.where} gives {c.year!r}, documented {expected!r}"
            )
        years[key, variant][c.year].append(c.where)
    for (key, language), seen in authors.items():
        if len(seen) > 1:
            problems.append(f"{key!r} in {language}: authors {_listed(seen)}")
    for (key, variant), seen in years.items():
        if len(seen) > 1:
            what = f"{key!r}" + (f" ({variant})" if variant else "")
            problems.append(f"{what}: years {_listed(seen)}")
    return problems


def _listed(seen: dict[str | None, list[str]]) -> str:
    return "; ".join(f"{value!r} in {', '.join(sorted(set(w)))}" for value, w in seen.items())


@pytest.fixture(scope="module")
def cited() -> list[Cited]:
    return sample_citations()


def test_every_work_has_one_author_per_language_and_one_year(cited: list[Cited]) -> None:
    assert len(cited) > 100  # the samples were read
    assert inconsistencies(cited) == []


def test_the_documented_variants_are_in_the_samples(cited: list[Cited]) -> None:
    """The README's exceptions are real: the second edition and three Summa parts are cited."""
    variants = {_variant(title_key(c.title), c)[0] for c in cited}
    assert {"(2nd ed., 1997)", "I", "I-II", "III"} <= variants


def test_every_catechism_gives_the_year_of_its_edition(cited: list[Cited]) -> None:
    """1992 for the first edition in English, Spanish, Portuguese, Italian and French; 1993
    for the German text; 1997 only where the reference names the second edition."""
    seen = set()
    for c in cited:
        key = title_key(c.title)
        if key in CATECHISM_YEARS:
            seen.add(key)
            edition, expected = _variant(key, c)
            assert c.year == (expected or CATECHISM_YEARS[key]), (c, edition)
            if c.year == "1997":
                assert c.reference and c.reference.endswith("(2nd ed., 1997)"), c
    assert seen == set(CATECHISM_YEARS)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: replace(c, author=None), "authors"),
        (lambda c: replace(c, author="Pope Leo XIII"), "authors"),
        (lambda c: replace(c, year="1890"), "years"),
        (lambda c: replace(c, year="1997", reference="21 (2nd ed., 1997)"), "years"),
    ],
)
def test_a_second_author_or_year_for_one_citation_fails(
    cited: list[Cited], change: Callable[[Cited], Cited], expected: str
) -> None:
    """The rule notices one English citation of Rerum novarum changed, whatever the change;
    an edition mark is a variant only for a work whose editions are documented."""
    english = [i for i, c in enumerate(cited) if c.title == "Rerum novarum" and c.language == "en"]
    assert len(english) > 1
    edited = list(cited)
    edited[english[0]] = change(cited[english[0]])
    problems = inconsistencies(edited)
    assert len(problems) == 1 and "rerum novarum" in problems[0] and expected in problems[0]


def test_a_summa_citation_must_name_its_part_and_carry_its_years(cited: list[Cited]) -> None:
    summa = next(c for c in cited if title_key(c.title) == "summa theologiae")
    assert any("names no part" in p for p in inconsistencies([replace(summa, reference="q. 2")]))
    wrong = replace(summa, year="c. 1270")
    assert any("documented" in p for p in inconsistencies([wrong]))


def test_a_second_edition_year_without_its_mark_fails(cited: list[Cited]) -> None:
    ccc = [c for c in cited if c.title == "Catechism of the Catholic Church"]
    marked = next(i for i, c in enumerate(ccc) if c.year == "1997")
    unmarked = list(ccc)
    unmarked[marked] = replace(ccc[marked], reference="1778")
    assert any("years" in p for p in inconsistencies(unmarked))
    wrong_year = list(ccc)
    wrong_year[marked] = replace(ccc[marked], year="1994")
    assert any("documented '1997'" in p for p in inconsistencies(wrong_year))
