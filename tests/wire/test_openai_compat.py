"""Chat-completion replies (Maritaca, Magisterium): ``<think>`` blocks split out of the text."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from tests.budget import examples

_piece = st.sampled_from(["<think>", "</think>", "<", "<thi", "</th", "ink>", "Sim", " [^1]", "\n"])


def chunk(content: str, finish: str | None = None) -> dict[str, object]:
    choice = {"index": 0, "delta": {"content": content} if content else {}, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "choices": [choice]}


@settings(max_examples=examples(200), deadline=None)
@given(
    provider=st.sampled_from(["maritaca", "magisterium"]),
    pieces=st.lists(_piece, max_size=24),
    cuts=st.lists(st.integers(0, 300), max_size=10),
)
def test_think_blocks_in_any_deltas_give_the_blocking_answer(
    provider: str, pieces: list[str], cuts: list[int]
) -> None:
    whole = "".join(pieces)
    points = sorted({c % (len(whole) + 1) for c in cuts})
    parts = [whole[a:b] for a, b in itertools.pairwise([0, *points, len(whole)])]
    events = [chunk(p) for p in parts if p] + [chunk("", "stop")]
    streamed = ck.parse_chunks(events, provider=provider)
    blocking = ck.parse_response(
        {"id": "c1", "choices": [{"index": 0, "message": {"content": whole}}]}, provider=provider
    )
    assert (streamed.text, streamed.thoughts) == (blocking.text, blocking.thoughts)
    assert ck.parse_response(streamed.raw, provider=provider) == streamed
    assert streamed.raw["choices"][0]["message"]["content"] == whole  # kept as it came


def test_a_think_block_is_a_thought_and_its_markers_are_not_cited() -> None:
    body = {
        "id": "c1",
        "choices": [{"index": 0, "message": {"content": "<think>Cite [^2]?</think>\n\nSim.[^1]"}}],
    }
    answer = ck.parse_response(body, provider="magisterium")
    assert answer.text == "Sim.[^1]" and answer.thoughts == ("Cite [^2]?",)
    assert answer.cited_markers == {1}
