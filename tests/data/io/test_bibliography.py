"""BibTeX keys and the places of one work (``citekit.data.io.bibliography``), counted.

Colliding keys once rescanned their suffixes from ``a`` (16k entries of one key: 100 s), and a
work's places were a list scanned for each new one (one work at 40k places: 27 s).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citekit import Answer, Citation
from citekit.data.identity.keys import work_title
from citekit.data.io.bibliography import _Keys, bibtex, documents_by_work
from tests.budget import examples
from tests.data.identity.numbered import numbered_titles


def _assign(bases: list[str]) -> tuple[list[str], int]:
    keys = _Keys()
    return [keys.unique(b) for b in bases], keys.tried


def test_colliding_keys_try_each_suffix_once_at_any_size() -> None:
    for n in (2_000, 16_000):
        got, tried = _assign(["francis2015laudato"] * n)
        assert len(set(got)) == n
        assert tried == n  # rescanning from "a" tried n * n / 2
    assert got[:3] == ["francis2015laudato", "francis2015laudatoa", "francis2015laudatob"]
    assert got[26:29] == ["francis2015laudatoz", "francis2015laudatoa1", "francis2015laudatob1"]


@settings(max_examples=examples(200))
@given(st.lists(st.sampled_from(["k", "ka", "kb", "ka1", "kaa", "x", "xa"]), max_size=200))
def test_keys_are_unique_and_keep_their_base_whatever_collides(bases: list[str]) -> None:
    got, tried = _assign(bases)
    assert len(set(got)) == len(got)
    assert all(key.startswith(base) for key, base in zip(got, bases, strict=True))
    # A suffixed key may be another base's key and is skipped: a few extra tries, never a scan.
    assert tried <= 4 * len(bases)


def _cited_at(places: list[str]) -> Answer:
    return Answer(
        provider="magisterium",
        text="See [^1].",
        citations=tuple(
            Citation(
                "...",
                0,
                document_title="Summa Theologiae",
                document_author="Thomas Aquinas",
                document_year="1270",
                document_reference=place,
            )
            for place in places
        ),
    )


def test_one_work_cited_at_forty_thousand_places_keeps_each_once_in_order() -> None:
    places = [f"I-II, q. {i}" for i in range(40_000)]
    (doc,) = documents_by_work(_cited_at([*places, *places[:100]]))
    assert doc.places == places
    assert doc.providers == ["magisterium"]
    assert bibtex(_cited_at(places[:3])).count("@misc") == 1


@settings(max_examples=examples(100))
@given(titles=numbered_titles())
def test_numbered_works_with_two_numbers_are_two_entries(titles: tuple[str, str, str]) -> None:
    one, other, _ = titles
    answer = Answer(
        provider="magisterium",
        text="See [^1].",
        citations=tuple(
            Citation("...", 0, document_title=t, document_author="Augustine of Hippo")
            for t in titles
        ),
    )
    docs = documents_by_work(answer)
    assert len(docs) == 2, [d.title for d in docs]
    assert len({d.key for d in docs}) == 2
    assert bibtex(answer).count("@misc") == 2
    # Each entry's title keeps the number that says which work it is.
    assert [work_title(d.title or "") for d in docs] == [work_title(one), work_title(other)]
