"""Places in flight: ``ask_many`` keeps at most ``concurrency`` requests out, and the next one
leaves as soon as a reply is in, before the answer before it is read."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import citekit as ck
import citekit.wire.openai_compat as openai_compat
from citekit.providers.batch import ask_many
from citekit.testing import ProviderServer
from citekit.transport import inflight
from citekit.transport.inflight import InFlight, went_out
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


def test_the_rate_limit_spaces_the_requests_that_leave(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests in flight at most, 20 a second: the first two replies arrive together, and
    the two requests waiting for their places still leave 50 ms apart (each takes its place
    first, then its turn of the limit; taken the other way round, both would have had their
    turns long before and left at once)."""
    url = server.base_url("magisterium", latency=0.3)
    scenario = server.scenario(url)
    seen = threading.Event()

    def second_ends_with_the_first() -> None:
        while not seen.wait(0.001):
            if any(r.scenario == scenario.id for r in server.requests):
                scenario.latency = 0.25  # the second request arrives about 50 ms later
                return

    watcher = threading.Thread(target=second_ends_with_the_first)
    watcher.start()
    client = ck.Magisterium(api_key="k", base_url=url)
    questions = [f"{QUESTIONS[i % len(QUESTIONS)]} <{i}>" for i in range(4)]
    try:
        ask_many(client, questions, concurrency=2, rate_limit="20/s", progress=False, log=False)
    finally:
        seen.set()
        watcher.join()
    starts = sorted(r.start for r in server.requests if r.scenario == scenario.id)
    assert len(starts) == 4
    assert min(b - a for a, b in itertools.pairwise(starts)) > 0.025, starts


def test_a_twin_waiting_for_a_request_that_waits_for_a_place_keeps_its_deadline(
    server: ProviderServer,
) -> None:
    """A question asked twice in a batch: the second waits for the first's request, which
    waits for a place. Neither wait counts against the deadline, as a request's wait for a
    place does not: every question is answered, the repeated one by one request."""
    url = server.base_url("magisterium", latency=0.3)
    client = ck.Magisterium(api_key="k", base_url=url, deadline=0.5)
    a, b, c = QUESTIONS[:3]
    answers = ask_many(client, [a, b, c, c], concurrency=2, progress=False, cache=True)
    assert [x.question for x in answers] == [a, b, c, c]
    assert server.scenario(url).request_count == 3


def _run(scene: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scene(), 10))


def test_a_place_handed_over_goes_to_the_request_that_waited_longest() -> None:
    """Two places taken, two requests waiting: each place handed over goes to the earliest
    waiting request, and each giver reads on once *its* request has gone out."""

    async def scene() -> list[str]:
        order: list[str] = []
        places = InFlight(2)
        assert await places.take() is None and await places.take() is None
        first = asyncio.create_task(places.take())
        await asyncio.sleep(0)
        second = asyncio.create_task(places.take())
        await asyncio.sleep(0)

        async def give(name: str) -> None:
            await places.hand_over()
            order.append(name)

        givers = [asyncio.create_task(give("one")), asyncio.create_task(give("two"))]
        sent_first, sent_second = await first, await second
        assert sent_first is not None and sent_second is not None
        await asyncio.sleep(0.01)
        assert order == []  # neither request has gone out yet
        went_out(sent_second)  # the later one goes out first: the giver that handed it on
        await asyncio.sleep(0.01)
        assert order == ["two"]
        went_out(sent_first)
        await asyncio.gather(*givers)
        return order

    assert _run(scene) == ["two", "one"]


def test_a_giver_with_nobody_waiting_goes_on_at_once_and_frees_the_place() -> None:
    """Replies that arrive in the same turn of the loop: more givers than waiting requests.
    Only those that handed a place to a request wait; the rest go on at once, their places
    free."""

    async def scene() -> None:
        places = InFlight(2)
        await places.take()
        await places.take()
        waiter = asyncio.create_task(places.take())
        await asyncio.sleep(0)
        started = time.monotonic()
        handed, freed = (
            asyncio.create_task(places.hand_over()),
            asyncio.create_task(places.hand_over()),
        )
        await freed
        assert time.monotonic() - started < inflight.HAND_OVER / 2
        went_out(await waiter)
        await handed
        assert await asyncio.wait_for(places.take(), 0.05) is None  # the freed place

    _run(scene)


def test_a_giver_goes_on_when_the_request_it_handed_a_place_never_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request that took a handed place and never says it went out (a failure that never
    reaches ``went_out``): its giver reads on after ``HAND_OVER``."""
    monkeypatch.setattr(inflight, "HAND_OVER", 0.05)

    async def scene() -> float:
        places = InFlight(1)
        await places.take()
        waiter = asyncio.create_task(places.take())
        await asyncio.sleep(0)
        started = time.monotonic()
        await places.hand_over()
        waited = time.monotonic() - started
        assert await waiter is not None
        return waited

    assert 0.04 <= _run(scene) < 1.0


def test_a_request_cancelled_as_it_is_handed_a_place_passes_it_on() -> None:
    """Cancelled while a place is being handed to it: the place goes on to the next waiting
    request, and the giver reads on at once."""

    async def scene() -> None:
        places = InFlight(1)
        await places.take()
        cancelled = asyncio.create_task(places.take())
        await asyncio.sleep(0)
        later = asyncio.create_task(places.take())
        await asyncio.sleep(0)
        giver = asyncio.create_task(places.hand_over())
        await asyncio.sleep(0)  # the place is handed to ``cancelled``...
        cancelled.cancel()  # ...which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        started = time.monotonic()
        await giver
        assert time.monotonic() - started < inflight.HAND_OVER / 2
        assert await asyncio.wait_for(later, 0.05) is None  # passed on by a plain give-back
        places.give_back()
        assert await asyncio.wait_for(places.take(), 0.05) is None

    _run(scene)


def test_a_giver_cancelled_in_the_turn_its_request_goes_out_stays_cancelled() -> None:
    """A batch cancelled: its workers are cancelled in one turn, the giver waiting for its
    request and that request, which says it went out as it ends. The giver is cancelled (it
    does not go on to read and ask again), and no place is lost."""

    async def scene() -> tuple[BaseException | str, BaseException | str]:
        places = InFlight(1)
        await places.take()

        async def receiver() -> str:
            sent = await places.take()
            try:
                await asyncio.sleep(10)  # the request in flight
            finally:
                went_out(sent)
                places.give_back()
            return "receiver ended"

        async def giver() -> str:
            await places.hand_over()
            await asyncio.sleep(0)
            return "giver went on"

        got = asyncio.create_task(receiver())
        await asyncio.sleep(0)
        gave = asyncio.create_task(giver())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        got.cancel()
        gave.cancel()
        ends = await asyncio.gather(got, gave, return_exceptions=True)
        assert await asyncio.wait_for(places.take(), 0.05) is None  # the place is free
        return ends[0], ends[1]

    ends = _run(scene)
    assert all(isinstance(end, asyncio.CancelledError) for end in ends), ends


def test_a_twin_of_a_call_outside_the_batch_keeps_its_own_deadline(
    server: ProviderServer,
) -> None:
    """The identical request in flight belongs to a call outside the batch (no deadline, a
    slow answer): the question in the batch waits for it no longer than its own deadline."""
    url = server.base_url("magisterium", latency=1.5)
    question = QUESTIONS[0]

    async def scene() -> tuple[Any, float]:
        alone = ck.Magisterium(api_key="k", base_url=url)
        batched = ck.Magisterium(api_key="k", base_url=url, deadline=0.4)
        leader = asyncio.create_task(alone.aask(question, cache=True))
        await asyncio.sleep(0.1)  # in flight
        started = time.monotonic()
        results = await ck.aask_many(batched, [question], errors="keep", progress=False, cache=True)
        took = time.monotonic() - started
        await leader
        return results[0], took

    result, took = asyncio.run(scene())
    assert not result and "identical request in flight" in str(result.error)
    assert took < 1.2
