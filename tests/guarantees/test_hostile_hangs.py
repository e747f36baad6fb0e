"""Every call ends: ``Retry-After`` past the cap, rate limits that count requests, a total
``deadline=`` against servers that drip bytes or keep-alive comments, and Ctrl-C keeping the
partial answer.

The clients run against the loopback server (``citekit.testing``). Timings are bounded from
below where a limit is checked (request arrivals at the server) and only by generous guards
from above where a call must end (a hang would take minutes, the guard is seconds).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.errors import retry_wait, should_retry_header
from citekit.wire.retry import MAX_RETRY_AFTER, RetryPolicy
from tests.budget import examples
from tests.conftest import SECRET

#: A call that should end "at once" must end within this many seconds (a hang takes minutes).
GUARD = 10.0


def client(server: ProviderServer, provider: str, *, scenario: Any = None, **options: Any) -> Any:
    scenario = scenario if scenario is not None else server.add_scenario()
    url = server.scenario_url(scenario, provider)
    return ck.client(provider, api_key=SECRET, base_url=url, **options)


def arrivals(server: ProviderServer, scenario: Any) -> list[float]:
    return sorted(r.start for r in server.requests if r.scenario == scenario.id)


def assert_spaced(limiter: ck.RateLimiter, requests: int) -> None:
    """Every one of ``requests`` HTTP requests took a slot of ``limiter``, and the slots were
    evenly spaced: any ``k + 1`` in a row span at least ``k`` intervals, so no window of the
    limiter's period holds more than its count, and none comes in a burst.

    The slots are the limiter's own clock readings, not the server's arrival times (a request
    that spent a moment connecting arrives late, which a busy machine makes arbitrary): the
    check counts, and cannot be failed by a slow machine.
    """
    slots = list(limiter.slots)
    assert len(slots) == requests, (len(slots), requests)
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert min(gaps) >= limiter.interval - 1e-9, (limiter.interval, gaps)


# Retry-After past the cap ----------------------------------------------------------------


@pytest.mark.parametrize("how", ["ask", "stream", "aask"])
def test_a_retry_after_past_the_cap_raises_at_once(server: ProviderServer, how: str) -> None:
    scenario = server.add_scenario(fault="status", status=429, retry_after=999999)
    mt = client(server, "maritaca", scenario=scenario, max_retries=2)
    began = time.monotonic()
    with pytest.raises(ck.RateLimitError) as caught:
        if how == "ask":
            mt.ask("O que é o Pix?", log=False)
        elif how == "stream":
            mt.ask("O que é o Pix?", stream=True, display=False, log=False)
        else:
            asyncio.run(mt.aask("O que é o Pix?", log=False))
    assert time.monotonic() - began < GUARD  # no 2 x 120 s of sleep
    assert scenario.request_count == 1  # and no retry
    error = caught.value
    assert error.retry_after == 999999
    message = str(error)
    assert "999999 s" in message and "11.6 d" in message and "120 s" in message
    assert "try again after 20" in message and "UTC" in message


def test_a_retry_after_within_the_cap_is_still_obeyed(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="status", status=429, retry_after_ms=200, times=1)
    mt = client(server, "maritaca", scenario=scenario)
    began = time.monotonic()
    assert mt.ask("O que é o Pix?", log=False).text
    assert time.monotonic() - began >= 0.19
    assert scenario.request_count == 2


_HEADER_VALUES = st.one_of(
    st.text(max_size=40),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
)


@settings(max_examples=examples(200), deadline=None)
@given(
    header=_HEADER_VALUES,
    millis=st.none() | _HEADER_VALUES,
    should=st.none() | st.sampled_from(["true", "false"]) | st.text(max_size=8),
)
def test_any_retry_after_header_is_obeyed_or_explained(
    header: str, millis: str | None, should: str | None
) -> None:
    """Whatever a server puts in ``Retry-After``, ``retry-after-ms`` and ``x-should-retry``:
    a retry waits at most the cap, or the error is raised at once and says when to try
    again (or the server forbade the retry)."""
    headers = {"retry-after": header}
    if millis is not None:
        headers["retry-after-ms"] = millis
    if should is not None:
        headers["x-should-retry"] = should
    policy = RetryPolicy()
    wait = retry_wait(headers)
    error = ck.RateLimitError(
        "Busy",
        provider="magisterium",
        status=429,
        retry_after=wait,
        should_retry=should_retry_header(headers),
    )
    if policy.should_retry(error, 0, received=False):
        assert 0.0 <= policy.delay(0, error.retry_after) <= MAX_RETRY_AFTER
    elif error.should_retry is not False:
        assert error.retry_after is not None and error.retry_after > MAX_RETRY_AFTER
        policy.explain_wait(error, now=datetime(2026, 1, 1, tzinfo=UTC))
        assert "try again" in str(error)
    assert not math.isnan(policy.delay(0, error.retry_after))


# rate limits count HTTP requests ---------------------------------------------------------


def questions(server: ProviderServer, provider: str, n: int) -> list[str]:
    first = server.samples(provider)[0].question  # type: ignore[arg-type]
    return [f"{first} ({i})" for i in range(n)]


@pytest.mark.parametrize("where", ["client", "ask_many"])
def test_retries_count_against_the_limit(server: ProviderServer, where: str) -> None:
    # 6 of 20 questions (30%) first get a 500 and are retried: 26 requests in all.
    scenario = server.add_scenario(fault="status", status=500, times=6)
    limiter = ck.RateLimiter.parse("20/s")
    on_client = {"rate_limit": limiter} if where == "client" else {}
    mg = client(server, "magisterium", scenario=scenario, **on_client)
    answers = ck.ask_many(
        mg,
        questions(server, "magisterium", 20),
        concurrency=8,
        progress=False,
        log=False,
        **({"rate_limit": limiter} if where == "ask_many" else {}),
    )
    assert len(answers) == 20
    assert len(arrivals(server, scenario)) == 26
    assert_spaced(limiter, 26)


@pytest.mark.parametrize("where", ["client", "ask_many"])
def test_every_request_of_a_gptbots_question_counts(server: ProviderServer, where: str) -> None:
    scenario = server.add_scenario(fault="status", status=500, times=2, endpoint="message")
    limiter = ck.RateLimiter.parse("20/s")
    on_client = {"rate_limit": limiter} if where == "client" else {}
    gb = client(server, "gptbots", scenario=scenario, **on_client)
    answers = ck.ask_many(
        gb,
        questions(server, "gptbots", 7),
        concurrency=7,
        progress=False,
        log=False,
        **({"rate_limit": limiter} if where == "ask_many" else {}),
    )
    assert len(answers) == 7
    assert len(arrivals(server, scenario)) == 7 * 3 + 2
    assert_spaced(limiter, 7 * 3 + 2)


def test_the_batch_limit_and_the_client_limit_both_hold(server: ProviderServer) -> None:
    scenario = server.add_scenario()
    mg = client(server, "magisterium", scenario=scenario, rate_limit="40/s")
    other = client(server, "magisterium", scenario=scenario, rate_limit=mg.rate_limit)
    batch = ck.RateLimiter.parse("20/s")
    ck.ask_many(
        mg, questions(server, "magisterium", 12), rate_limit=batch, progress=False, log=False
    )
    # The client's other calls are not the batch's: they share only the client's limit.
    for _ in range(4):
        other.search("subsidiarity", num_results=1)
    assert len(arrivals(server, scenario)) == 16
    assert mg.rate_limit is not None
    assert_spaced(mg.rate_limit, 16)
    assert_spaced(batch, 12)
    # The batch's slots were each one of the client's too: taken in both at the same instant.
    assert set(batch.slots) <= set(mg.rate_limit.slots)


def test_an_asker_citekit_cannot_see_into_is_spaced_per_call() -> None:
    calls: list[str] = []

    class Echo:
        async def aask(self, question: str) -> ck.Answer:
            calls.append(question)
            return ck.Answer(provider="magisterium", text=question, question=question)

    limiter = ck.RateLimiter.parse("20/s")
    ck.ask_many(Echo(), ["a", "b", "c", "d"], rate_limit=limiter, progress=False)
    assert sorted(calls) == ["a", "b", "c", "d"]
    assert_spaced(limiter, 4)


# a total deadline -----------------------------------------------------------------------

#: What the first three events of the Magisterium subsidiarity sample say.
FIRST_THREE = "The **principle of subsidiarity** holds "
QUESTION = "What is the principle of subsidiarity?"


def logged(question: str) -> dict[str, Any]:
    [row] = ck.log.where(question_contains=question).rows()
    return row


def hostile(server: ProviderServer, fault: str, **options: Any) -> Any:
    """A scenario that sends three events, then keeps the call alive forever (30 s here)."""
    return server.add_scenario(fault=fault, after=3, interval=0.05, **options)


@pytest.mark.parametrize("fault", ["drip", "keepalive"])
@pytest.mark.parametrize("how", ["stream", "ask", "astream", "aask"])
def test_a_stream_kept_alive_ends_at_its_deadline(
    server: ProviderServer, fault: str, how: str
) -> None:
    mg = client(server, "magisterium", scenario=hostile(server, fault))
    question = f"{QUESTION} (deadline {fault} {how})"
    began = time.monotonic()
    with pytest.raises(ck.APITimeoutError) as caught:
        if how == "stream":
            with mg.stream(question, deadline=0.5) as stream:
                for _ in stream:
                    pass
        elif how == "ask":
            mg.ask(question, stream=True, display=False, deadline=0.5)
        elif how == "astream":

            async def consume() -> None:
                async with mg.astream(question, deadline=0.5) as events:
                    async for _ in events:
                        pass

            asyncio.run(consume())
        else:
            asyncio.run(mg.aask(question, stream=True, display=False, deadline=0.5))
    assert time.monotonic() - began < GUARD
    error = caught.value
    assert isinstance(error, ck.StreamTimeout) and isinstance(error, ck.StreamInterrupted)
    assert error.answer is not None and error.answer.partial
    assert error.answer.text == FIRST_THREE
    assert "deadline of 0.5 s" in str(error) and "deadline=" in str(error)
    if how == "stream":
        assert stream.answer is error.answer
    assert ck.last_answer is error.answer
    row = logged(question)
    assert row["partial"] and row["error_type"] == "StreamTimeout"


def test_the_clients_deadline_applies_to_every_call(server: ProviderServer) -> None:
    mg = client(server, "magisterium", scenario=hostile(server, "drip"), deadline=0.5)
    assert mg.deadline == 0.5
    began = time.monotonic()
    with pytest.raises(ck.StreamTimeout):
        mg.ask(f"{QUESTION} (client deadline)", stream=True, display=False)
    # A blocking call whose body drips a byte at a time: nothing arrived, no partial answer.
    with pytest.raises(ck.APITimeoutError) as caught:
        mg.ask(f"{QUESTION} (client deadline, blocking)")
    assert not isinstance(caught.value, ck.StreamInterrupted)
    assert caught.value.answer is None
    assert time.monotonic() - began < GUARD


@pytest.mark.parametrize("framing", ["lines", "sse"])
def test_a_gptbots_stream_of_keepalives_ends(server: ProviderServer, framing: str) -> None:
    scenario = hostile(server, "keepalive", framing=framing, endpoint="message")
    # One framing sets the deadline on the client, the other on the call.
    on_client, on_call = ({"deadline": 0.5}, {}) if framing == "lines" else ({}, {"deadline": 0.5})
    gb = client(server, "gptbots", scenario=scenario, **on_client)
    question = server.samples("gptbots")[0].question
    began = time.monotonic()
    with pytest.raises(ck.StreamTimeout) as caught:
        gb.ask(question, stream=True, display=False, log=False, **on_call)
    assert time.monotonic() - began < GUARD
    assert caught.value.answer.partial and caught.value.answer.text


def test_a_stream_that_hands_on_nothing_for_its_read_timeout_is_stalled(
    server: ProviderServer,
) -> None:
    # No deadline given: the default one is minutes away; keep-alives defeat the read timeout,
    # but not the rule that a stream must hand on an event within it.
    mg = client(server, "magisterium", scenario=hostile(server, "keepalive"), timeout=0.4)
    began = time.monotonic()
    with pytest.raises(ck.StreamTimeout) as caught:
        mg.ask(f"{QUESTION} (stalled)", stream=True, display=False, log=False)
    assert time.monotonic() - began < GUARD
    assert "handed on nothing for 0.4 s" in str(caught.value) and "timeout=" in str(caught.value)
    assert caught.value.answer.text == FIRST_THREE


@pytest.mark.slow
def test_slow_events_within_the_read_timeout_are_not_a_stall(server: ProviderServer) -> None:
    scenario = server.add_scenario(delay=0.05)
    mg = client(server, "magisterium", scenario=scenario, timeout=0.3)
    answer = mg.ask(QUESTION, stream=True, display=False, log=False)
    assert not answer.partial and answer.text.startswith(FIRST_THREE)


def test_a_retry_that_would_wait_past_the_deadline_is_not_waited_for(
    server: ProviderServer,
) -> None:
    scenario = server.add_scenario(fault="status", status=429, retry_after=5, times=1)
    mt = client(server, "maritaca", scenario=scenario)
    began = time.monotonic()
    with pytest.raises(ck.APITimeoutError, match=r"a retry would wait 5\.0 s"):
        mt.ask("O que é o Pix?", deadline=1, log=False)
    assert time.monotonic() - began < 4
    assert scenario.request_count == 1


def test_waiting_for_the_rate_limit_does_not_count(server: ProviderServer) -> None:
    mg = client(server, "magisterium", rate_limit="3/s", deadline=0.25)
    for _ in range(3):  # the third call waits ~0.33 s for its slot, past its own deadline
        assert mg.search("subsidiarity", num_results=1)


@pytest.mark.parametrize("deadline", [0, -1, "10", True, math.nan])
def test_a_bad_deadline_says_what_is_expected(deadline: Any) -> None:
    with pytest.raises(ck.ConfigurationError, match=r"deadline=.*seconds > 0.*math\.inf"):
        ck.Magisterium(api_key="k", deadline=deadline)
    with pytest.raises(ck.ConfigurationError, match="deadline="):
        ck.Magisterium(api_key="k").ask("q", deadline=deadline)


def test_a_stream_timeout_survives_pickling() -> None:
    import pickle

    partial = ck.Answer(provider="magisterium", text="So far", partial=True)
    error = pickle.loads(pickle.dumps(ck.StreamTimeout("Too late", answer=partial)))
    assert isinstance(error, ck.StreamTimeout) and str(error) == "Too late"
    assert error.answer == partial and not error.connect


def test_no_deadline_at_all() -> None:
    assert ck.Magisterium(api_key="k", deadline=math.inf).deadline == math.inf
    assert ck.Magisterium(api_key="k").deadline == 600.0


#: What a server may send between events that carries no text: comments, blank lines, fields
#: without data, unknown fields, stray spaces, chunks with an empty delta.
_NOT_AN_EVENT = st.sampled_from(
    [
        b": keep-alive\n\n",
        b":\n",
        b"\n",
        b"\r\n",
        b"event: ping\n\n",
        b"retry: 10\n\n",
        b" ",
        b"id: 7\n\n",
        b"x-unknown: 1\n\n",
        b": " + b"a" * 200 + b"\n\n",
        b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{}}]}\n\n',
        b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":""}}]}'
        b"\n\n",
    ]
)


@pytest.mark.slow
@settings(max_examples=examples(20), deadline=None)
@given(st.lists(_NOT_AN_EVENT, min_size=1, max_size=4), st.sampled_from(["deadline", "timeout"]))
def test_whatever_fills_the_silence_the_call_ends(filler: list[bytes], rule: str) -> None:
    """A stream of three events followed by anything that carries no text, forever, ends at
    the deadline, or once it has handed on nothing for its read timeout, with those three
    events' text."""
    import httpx

    from tests.conftest import sample_stream

    recorded = sample_stream("magisterium", "02_subsidiarity").replace(b"\r\n", b"\n")
    events = recorded.split(b"\n\n")[:3]
    head = b"".join(event + b"\n\n" for event in events)

    def body() -> Any:
        yield head
        while True:
            for piece in filler:
                time.sleep(0.01)
                yield piece

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    # 0.5 s: the three events must arrive within the limit even on a busy machine, where the
    # first call also imports what a call uses (0.2 s once failed there with no text yet).
    limit = {"deadline": 0.5} if rule == "deadline" else {"timeout": 0.5}
    mg = ck.Magisterium(api_key="k", transport=httpx.MockTransport(handler), **limit)
    began = time.monotonic()
    with pytest.raises(ck.StreamTimeout) as caught:
        mg.ask(QUESTION, stream=True, display=False, log=False)
    assert time.monotonic() - began < GUARD
    assert caught.value.answer.partial and caught.value.answer.text == FIRST_THREE


# Ctrl-C keeps the partial answer ---------------------------------------------------------


def test_ctrl_c_in_the_loop_over_a_stream_keeps_the_partial_answer(server: ProviderServer) -> None:
    mg = client(server, "magisterium")
    question = f"{QUESTION} (Ctrl-C in the loop)"
    with pytest.raises(KeyboardInterrupt) as caught, mg.stream(question) as stream:
        for index, _ in enumerate(stream):
            if index == 2:
                raise KeyboardInterrupt
    partial = caught.value.answer  # type: ignore[attr-defined]
    # What arrived: the events handed on, and any the same read brought with them.
    assert partial.partial and partial.text.startswith(FIRST_THREE)
    assert stream.answer is partial
    assert ck.last_answer is partial
    row = logged(question)
    assert row["partial"] and row["error_type"] == "KeyboardInterrupt"


def test_ctrl_c_while_blocked_on_the_server_keeps_the_partial_answer(
    server: ProviderServer,
) -> None:
    """A real SIGINT delivered while the call waits in a read on a silent server."""
    import signal
    import threading

    scenario = server.add_scenario(fault="stall", after=3, stall=20)
    mg = client(server, "magisterium", scenario=scenario)
    question = f"{QUESTION} (Ctrl-C while blocked)"
    main = threading.get_ident()
    stop = threading.Event()

    def press_ctrl_c() -> None:
        # Once the server has sent its three events (and stalls), and the client had a moment
        # to read them.
        while not stop.is_set():
            sent = [r for r in server.requests if r.scenario == scenario.id and r.status]
            if sent:
                time.sleep(0.3)
                signal.pthread_kill(main, signal.SIGINT)
                return
            time.sleep(0.02)

    presser = threading.Thread(target=press_ctrl_c)
    began = time.monotonic()
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            mg.ask(question, stream=True, display=False)
    finally:
        stop.set()
        presser.join()
    assert time.monotonic() - began < GUARD
    partial = caught.value.answer  # type: ignore[attr-defined]
    assert partial.partial and partial.text == FIRST_THREE
    assert ck.last_answer is partial
    assert caught.value.__notes__ == [
        "citekit kept the partial answer (40 characters): citekit.last_answer "
        "(and this exception's .answer)"
    ]
    # What IPython prints after Kernel > Interrupt, in place of the traceback: one line.
    assert caught.value._render_traceback_() == [  # type: ignore[attr-defined]
        "Interrupted: citekit kept the partial answer (40 characters): citekit.last_answer "
        "(and this exception's .answer), logged as partial."
    ]
    row = logged(question)
    assert row["partial"] and row["error_type"] == "KeyboardInterrupt"


def test_a_cancelled_task_keeps_the_partial_answer(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="stall", after=3, stall=20)
    mg = client(server, "magisterium", scenario=scenario)
    question = f"{QUESTION} (cancelled)"

    async def cancel_it() -> BaseException:
        task = asyncio.create_task(mg.aask(question, stream=True, display=False))
        await asyncio.sleep(0.5)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError as exc:
            return exc
        raise AssertionError("the task was not cancelled")

    began = time.monotonic()
    stop = asyncio.run(cancel_it())
    assert time.monotonic() - began < GUARD
    partial = stop.answer  # type: ignore[attr-defined]
    assert partial.partial and partial.text == FIRST_THREE
    assert ck.last_answer is partial
    row = logged(question)
    assert row["partial"] and row["error_type"] == "CancelledError"


def test_cancelling_the_loop_over_an_async_stream_keeps_the_partial_answer(
    server: ProviderServer,
) -> None:
    mg = client(server, "magisterium")
    question = f"{QUESTION} (async loop stopped)"

    async def consume() -> ck.AsyncStream:
        async with mg.astream(question) as events:
            count = 0
            async for _ in events:
                count += 1
                if count == 3:
                    raise KeyboardInterrupt
        return events

    with pytest.raises(KeyboardInterrupt) as caught:
        asyncio.run(consume())
    partial = caught.value.answer  # type: ignore[attr-defined]
    assert partial.partial and partial.text.startswith(FIRST_THREE)
    assert ck.last_answer is partial
    assert logged(question)["partial"]


def test_ctrl_c_before_any_text_keeps_nothing_and_logs_nothing(server: ProviderServer) -> None:
    mg = client(server, "magisterium")
    question = f"{QUESTION} (Ctrl-C at once)"
    with pytest.raises(KeyboardInterrupt) as caught, mg.stream(question) as stream:
        raise KeyboardInterrupt
    assert getattr(caught.value, "answer", None) is None
    assert stream.answer is None
    assert ck.log.where(question_contains=question).rows() == []
