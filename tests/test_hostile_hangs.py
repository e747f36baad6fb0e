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
from citekit.wire.errors import parse_retry_after
from citekit.wire.retry import MAX_RETRY_AFTER, RetryPolicy

from .conftest import SECRET

#: A call that should end "at once" must end within this many seconds (a hang takes minutes).
GUARD = 10.0


def client(server: ProviderServer, provider: str, *, scenario: Any = None, **options: Any) -> Any:
    scenario = scenario if scenario is not None else server.add_scenario()
    url = server.scenario_url(scenario, provider)
    return ck.client(provider, api_key=SECRET, base_url=url, **options)


def arrivals(server: ProviderServer, scenario: Any) -> list[float]:
    return sorted(r.start for r in server.requests if r.scenario == scenario.id)


def assert_within(times: list[float], count: int, period: float) -> None:
    """No window of ``period`` seconds holds more than ``count`` arrivals, and none comes in
    a burst (each at least half an interval after the one before).

    Arrivals are stamped by the server, so a request that spent a moment connecting arrives a
    little late: the window is checked with a 5% allowance for that.
    """
    times = sorted(times)
    for first, last in zip(times, times[count:], strict=False):
        assert last - first >= period * 0.95, (count, period, times)
    interval = period / count
    for before, after in itertools.pairwise(times):
        assert after - before >= interval * 0.5, (interval, times)


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
    scenario = server.add_scenario(fault="status", status=429, retry_after=0.2, times=1)
    mt = client(server, "maritaca", scenario=scenario)
    began = time.monotonic()
    assert mt.ask("O que é o Pix?", log=False).text
    assert time.monotonic() - began >= 0.19
    assert scenario.request_count == 2


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.datetimes(timezones=st.just(UTC)).map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
    )
)
def test_any_retry_after_header_is_obeyed_or_explained(header: str) -> None:
    """Whatever a server puts in ``Retry-After``: a retry waits at most the cap, or the error
    is raised at once and says when to try again."""
    policy = RetryPolicy()
    wait = parse_retry_after(header)
    error = ck.RateLimitError("Busy", provider="magisterium", status=429, retry_after=wait)
    if policy.should_retry(error, 0, received=False):
        assert 0.0 <= policy.delay(0, error.retry_after) <= MAX_RETRY_AFTER
    else:
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
    limit = {"rate_limit": "20/s"}
    mg = client(server, "magisterium", scenario=scenario, **(limit if where == "client" else {}))
    answers = ck.ask_many(
        mg,
        questions(server, "magisterium", 20),
        concurrency=8,
        progress=False,
        log=False,
        **(limit if where == "ask_many" else {}),
    )
    assert len(answers) == 20
    times = arrivals(server, scenario)
    assert len(times) == 26
    assert_within(times, 20, 1.0)


@pytest.mark.parametrize("where", ["client", "ask_many"])
def test_every_request_of_a_gptbots_question_counts(server: ProviderServer, where: str) -> None:
    scenario = server.add_scenario(fault="status", status=500, times=2, endpoint="message")
    limit = {"rate_limit": "20/s"}
    gb = client(server, "gptbots", scenario=scenario, **(limit if where == "client" else {}))
    answers = ck.ask_many(
        gb,
        questions(server, "gptbots", 7),
        concurrency=7,
        progress=False,
        log=False,
        **(limit if where == "ask_many" else {}),
    )
    assert len(answers) == 7
    times = arrivals(server, scenario)
    assert len(times) == 7 * 3 + 2
    assert_within(times, 20, 1.0)


def test_the_batch_limit_and_the_client_limit_both_hold(server: ProviderServer) -> None:
    scenario = server.add_scenario()
    mg = client(server, "magisterium", scenario=scenario, rate_limit="40/s")
    other = client(server, "magisterium", scenario=scenario, rate_limit=mg.rate_limit)
    began = time.monotonic()
    ck.ask_many(
        mg, questions(server, "magisterium", 12), rate_limit="20/s", progress=False, log=False
    )
    # The client's other calls are not the batch's: they share only the client's limit.
    for _ in range(4):
        other.search("subsidiarity", num_results=1)
    times = arrivals(server, scenario)
    assert len(times) == 16
    assert_within(times, 40, 1.0)
    batch = times[:12]
    assert_within(batch, 20, 1.0)
    assert time.monotonic() - began >= 11 * 0.05 * 0.95


def test_an_asker_citekit_cannot_see_into_is_spaced_per_call() -> None:
    calls: list[float] = []

    class Echo:
        async def aask(self, question: str) -> ck.Answer:
            calls.append(time.monotonic())
            return ck.Answer(provider="magisterium", text=question, question=question)

    ck.ask_many(Echo(), ["a", "b", "c", "d"], rate_limit="20/s", progress=False)
    assert_within(calls, 20, 1.0)
    assert calls[-1] - calls[0] >= 3 * 0.05 * 0.95
