"""The near-title join of ``citekit.data.identity.clusters``: which pairs it scores, and how many.

One author with K distinct titles once cost a dense K x K rapidfuzz matrix (16k titles 1.1 GB,
32k a ``MemoryError``); the candidates are now blocked, and these tests count them.
"""

from __future__ import annotations

import itertools
import random

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.data.identity.clusters import (
    FUZZY_RATIO,
    NEAR_WINDOW,
    candidate_pairs,
    identify,
    near_titles,
)
from tests.budget import examples
from tests.data.identity.numbered import numbered_titles

_SYLLABLES = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "pa", "xo", "ri", "ba"]


def _titles(k: int, seed: int = 7) -> list[str]:
    """``k`` distinct titles of three to six made-up words, as one prolific author's are."""
    rng = random.Random(seed)
    found: dict[str, None] = {}
    while len(found) < k:
        words = (
            "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            for _ in range(rng.randint(3, 6))
        )
        found[" ".join(words)] = None
    return list(found)


def _typo(title: str, rng: random.Random) -> str:
    """``title`` with one letter changed, dropped or doubled, somewhere in it."""
    at = rng.randrange(len(title))
    how = rng.choice(["change", "drop", "double"])
    if how == "change":
        return title[:at] + ("z" if title[at] != "z" else "y") + title[at + 1 :]
    if how == "drop":
        return title[:at] + title[at + 1 :]
    return title[:at] + title[at] + title[at:]


def test_the_pairs_scored_grow_linearly_with_one_authors_titles() -> None:
    small = sum(1 for _ in candidate_pairs(_titles(2_000)))
    large = sum(1 for _ in candidate_pairs(_titles(8_000)))
    # Every pair would be 2.0M and 32.0M: four times the titles is sixteen times the pairs.
    assert small <= 3 * NEAR_WINDOW * 2_000
    assert large <= 3 * NEAR_WINDOW * 8_000
    assert large <= 4.2 * small, (small, large)


@settings(max_examples=examples(100))
@given(st.lists(st.text("abcde 12", max_size=8), max_size=NEAR_WINDOW + 1, unique=True))
def test_a_few_titles_have_every_pair_of_the_same_numbers_scored(keys: list[str]) -> None:
    import re

    def numbers(key: str) -> list[str]:
        return re.findall(r"\d+", key)

    every = {
        (i, j)
        for i, j in itertools.combinations(range(len(keys)), 2)
        if numbers(keys[i]) == numbers(keys[j])
    }
    got = list(candidate_pairs(keys))
    assert len(got) == len(set(got))  # no pair twice
    assert set(got) == every


def test_one_typo_among_thousands_of_titles_is_still_found() -> None:
    from rapidfuzz import fuzz

    rng = random.Random(3)
    titles = _titles(4_000)
    originals = rng.sample(range(len(titles)), 200)
    typos = []
    for i in originals:
        typo = _typo(titles[i], rng)
        if fuzz.ratio(typo, titles[i]) >= FUZZY_RATIO and typo not in titles:
            typos.append((i, len(titles)))
            titles.append(typo)
    assert len(typos) >= 150
    found = set(near_titles(titles))
    missed = [(titles[i], titles[j]) for i, j in typos if (i, j) not in found]
    assert not missed


def test_identify_joins_a_typo_of_one_authors_title_among_many() -> None:
    titles = _titles(3_000)
    typo = titles[1234][:5] + titles[1234][6:]
    frame = pl.DataFrame(
        {
            "document_title": [*titles, typo],
            "document_author": "Jane Q. Writer",
            "year": 2001,
            "source_url": None,
            "data_id": None,
        },
        schema_overrides={"source_url": pl.String, "data_id": pl.String},
    )
    ids = identify(frame)["work_id"].to_list()
    assert ids[-1] == ids[1234]
    assert len(set(ids)) == len(titles)


@settings(max_examples=examples(200))
@given(
    titles=numbered_titles(),
    author=st.sampled_from(["Augustine of Hippo", "Jerome", "Jane Q. Writer", None]),
)
def test_numbered_works_with_two_numbers_are_never_one_work(
    titles: tuple[str, str, str], author: str | None
) -> None:
    frame = pl.DataFrame(
        {
            "document_title": list(titles),
            "document_author": author,
            "year": 410,
            "source_url": None,
            "data_id": None,
        },
        schema_overrides={"document_author": pl.String, "source_url": pl.String},
    )
    one, other, again = identify(frame)["work_id"].to_list()
    assert one != other, titles
    assert one == again, titles
