"""Places in flight: ``ask_many`` keeps at most ``concurrency`` requests out, and the next one
leaves as soon as a reply is in, before the answer before it is read."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import citekit as ck
import citekit.wire.openai_compat as openai_compat
from citekit.providers.batch import ask_many
from citekit.testing import ProviderServer
from citekit.transport import inflight
from citekit.transport.inflight import InFlight, in_flight
from citekit.transport.loop import run_sync
from tests.conftest import sample_records

# The samples Magisterium answers (one is withheld by its content filter, on purpose).
QUESTIONS = [
    rec["question"]
    for _, rec in sample_records("magisterium")
    if "content_filter" not in str(rec.get("response"))
]


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))


def _slow_reading(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[float]:
    """Each answer read (parsed) takes ``seconds`` of the event loop's time, as a large answer
    does; the times the readings ended."""
    ended: list[float] = []
    parse = openai_compat.parse_chat_completion

    def slow(*args: Any, **kwargs: Any) -> ck.Answer:
        time.sleep(seconds)  # holds the loop, as CPU work does
        answer = parse(*args, **kwargs)
        ended.append(time.monotonic())
        return answer

    monkeypatch.setattr(openai_compat, "parse_chat_completion", slow)
    return ended


@pytest.mark.parametrize("own_pool", [True, False], ids=["citekit's pool", "the user's client"])
def test_the_next_request_leaves_before_the_answer_before_it_is_read(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, own_pool: bool
) -> None:
    """One request in flight at a time, answers that take 40 ms to read: each request after
    the first reaches the server before the answer before it has been read, and never two at
    once. In citekit's own pool the request is seen to go out (httpcore's trace) before the
    answer is read; with the user's client, the place is given back without waiting."""
    ended = _slow_reading(monkeypatch, 0.04)
    url = server.base_url("magisterium", latency=0.05)
    own = None if own_pool else httpx.AsyncClient(timeout=10.0)
    client = ck.Magisterium(api_key="k", base_url=url, async_http_client=own)
    questions = [f"{QUESTIONS[i % len(QUESTIONS)]} ({i})" for i in range(6)]
    try:
        answers = ask_many(client, questions, concurrency=1, progress=False, log=False)
    finally:
        if own is not None:
            run_sync(own.aclose())
    assert [a.question for a in answers] == questions
    scenario = server.scenario(url)
    assert scenario.request_count == 6 and scenario.max_concurrent == 1
    starts = sorted(r.start for r in server.requests if r.scenario == scenario.id)
    assert len(starts) == len(ended) == 6
    if own_pool:
        # Request k + 1 was out while answer k was still being read.
        assert all(start < end for start, end in zip(starts[1:], sorted(ended), strict=False))


def test_concurrency_still_bounds_the_requests_in_flight(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.05)
    client = ck.Magisterium(api_key="k", base_url=url)
    questions = [f"{QUESTIONS[i % len(QUESTIONS)]} [{i}]" for i in range(30)]
    answers = ask_many(client, questions, concurrency=3, progress=False, log=False)
    assert [a.question for a in answers] == questions
    scenario = server.scenario(url)
    assert scenario.request_count == 30 and scenario.max_concurrent == 3


def test_a_giver_goes_on_when_the_request_it_waits_for_never_leaves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker that gave back its place waits for the next request to go out: if that one
    is cancelled while it waits for the place, the giver still goes on, after ``HAND_OVER``."""
    monkeypatch.setattr(inflight, "HAND_OVER", 0.05)

    async def scene() -> float:
        with in_flight(1) as places:
            await places.take()
            waiter = asyncio.create_task(places.take())
            await asyncio.sleep(0)  # the waiter waits
            waiter.cancel()
            started = time.monotonic()
            await places.hand_over()
            waited = time.monotonic() - started
            await places.take()  # the place is free again: taken at once
            places.give_back()
            return waited

    waited = asyncio.run(scene())
    assert 0.04 <= waited < 1.0


def test_givers_go_on_in_turn_as_the_requests_they_wait_for_leave() -> None:
    """Two places taken, two requests waiting: each request that goes out (``sent``) lets
    one giver read on, the earliest first; a giver with nobody waiting goes on at once."""

    async def scene() -> list[str]:
        order: list[str] = []
        places = InFlight(2)
        await places.take()
        await places.take()
        waiters = [asyncio.create_task(places.take()) for _ in range(2)]
        await asyncio.sleep(0)

        async def give(name: str) -> None:
            await places.hand_over()
            order.append(name)

        first = asyncio.create_task(give("first"))
        await asyncio.sleep(0)
        second = asyncio.create_task(give("second"))
        await asyncio.gather(*waiters)  # both took the places the givers freed
        await asyncio.sleep(0.01)
        assert order == []  # neither request has gone out yet
        places.sent()
        await asyncio.sleep(0.01)
        assert order == ["first"]
        places.sent()
        await asyncio.gather(first, second)
        places.give_back()  # the waiters' places
        places.give_back()
        await places.take()
        started = time.monotonic()
        await places.hand_over()  # nobody waits: at once
        assert time.monotonic() - started < inflight.HAND_OVER / 2
        return order

    assert asyncio.run(scene()) == ["first", "second"]
