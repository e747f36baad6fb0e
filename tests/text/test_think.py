"""``<think>`` blocks split out of a text, whole or streamed in any chunks."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.text.think import ThinkSplitter, split_thoughts
from tests.budget import examples


def streamed(chunks: list[str]) -> tuple[str, tuple[str, ...]]:
    splitter = ThinkSplitter()
    shown = "".join(splitter.feed(c) for c in chunks) + splitter.flush()
    return shown, tuple(splitter.thoughts)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>Let me see.</think>\n\nIt opens at 10.", ("It opens at 10.", ("Let me see.",))),
        ("No thoughts here [1].", ("No thoughts here [1].", ())),
        ("A<think>one</think> B<think>two</think>", ("A B", ("one", "two"))),
        ("<think>cut short", ("", ("cut short",))),
        ("stray</think> end", ("stray end", ())),
        ("a < b and <thin", ("a < b and <thin", ())),
        ("<think>\n</think>Answer", ("Answer", ())),
        ("<think>see [2]$[3]$</think>Answer [1]", ("Answer [1]", ("see [2]$[3]$",))),
    ],
)
def test_think_blocks_are_taken_out(text: str, expected: tuple[str, tuple[str, ...]]) -> None:
    assert split_thoughts(text) == expected
    assert streamed(list(text)) == expected  # one character at a time, every tag cut


_piece = st.sampled_from(
    ["<think>", "</think>", "<", "<th", "</", "think", ">", "a", "b c", " ", "\n", "[1]", "é"]
)


@settings(max_examples=examples(300), deadline=None)
@given(pieces=st.lists(_piece, max_size=30), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_any_chunking_gives_the_text_and_thoughts_of_the_whole(
    pieces: list[str], cuts: list[int]
) -> None:
    text = "".join(pieces)
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in itertools.pairwise([0, *points, len(text)])]
    shown, thoughts = split_thoughts(text)
    assert streamed(chunks) == (shown, thoughts)
    assert all(thoughts) and len(thoughts) <= text.count("<think>")
