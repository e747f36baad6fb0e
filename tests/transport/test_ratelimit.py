"""A client's ``rate_limit=``: every HTTP request of the client waits its turn.

Timings are checked from below only, never with upper bounds, so a slow machine cannot fail
them: the time a call took (n requests at "k/s" take at least (n - 1) / k seconds), and, more
loosely, the span of the requests' arrivals at the server (the first request may arrive late
by the time it spent connecting, which shortens the span by as much).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from citekit.transport.ratelimit import _take
from tests.budget import examples
from tests.conftest import SECRET

INTERVAL = 0.1  # "10/s"


def magisterium(server: ProviderServer, **options: Any) -> tuple[ck.Magisterium, Any]:
    names = ("rate_limit", "max_retries", "on_quota")
    client_options = {k: options.pop(k) for k in names if k in options}
    scenario = server.add_scenario(**options)
    url = server.scenario_url(scenario, "magisterium")
    return ck.Magisterium(api_key=SECRET, base_url=url, **client_options), scenario


def starts(server: ProviderServer, scenario: Any) -> list[float]:
    return sorted(r.start for r in server.requests if r.scenario == scenario.id)


def assert_spaced(times: list[float], count: int, began: float, interval: float = INTERVAL) -> None:
    """``count`` requests arrived, and sending them took at least ``count - 1`` intervals."""
    elapsed = time.monotonic() - began
    assert len(times) == count
    assert elapsed >= (count - 1) * interval * 0.95, elapsed
    assert times[-1] - times[0] >= (count - 1) * interval * 0.5, times


# parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "count", "period"),
    [("3/min", 3, 60), ("60/min", 60, 60), ("5/s", 5, 1), (90, 90, 60), ("10/30s", 10, 30)],
)
def test_the_accepted_forms(spec: Any, count: float, period: float) -> None:
    mg = ck.Magisterium(api_key="k", rate_limit=spec)
    assert mg.rate_limit is not None
    assert (mg.rate_limit.count, mg.rate_limit.period) == (count, period)
    assert ck.Magisterium(api_key="k").rate_limit is None


@pytest.mark.parametrize("spec", ["fast", "5/fortnight", "0/s", "-1/min", True, "5 per"])
def test_bad_forms_name_the_accepted_ones(spec: Any) -> None:
    with pytest.raises(ValueError, match=r"'60/min', '5/s'|count > 0"):
        ck.Maritaca(api_key="k", rate_limit=spec)


def test_one_limiter_may_be_shared() -> None:
    limiter = ck.RateLimiter.parse("5/s")
    assert ck.Magisterium(api_key="k", rate_limit=limiter).rate_limit is limiter
    assert ck.GPTBots(api_key="k", rate_limit=limiter).rate_limit is limiter
    from citekit.providers import batch
    from citekit.transport import ratelimit

    assert ck.RateLimiter is ratelimit.RateLimiter is batch.RateLimiter  # one class


# counting requests ------------------------------------------------------------------------


def test_sync_requests_are_spaced(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="10/s")
    began = time.monotonic()
    for _ in range(5):
        mg.search("subsidiarity", num_results=1)
    assert_spaced(starts(server, scenario), 5, began)


def test_async_requests_in_flight_together_are_spaced(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="10/s")

    async def main() -> None:
        await asyncio.gather(*(mg.asearch("subsidiarity", num_results=1) for _ in range(5)))

    began = time.monotonic()
    asyncio.run(main())
    assert_spaced(starts(server, scenario), 5, began)


def test_threads_sync_and_async_share_the_client_limit(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="10/s")

    def work() -> None:
        mg.search("subsidiarity", num_results=1)
        asyncio.run(mg.asearch("subsidiarity", num_results=1))  # a loop of this thread's own

    threads = [threading.Thread(target=work) for _ in range(3)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert_spaced(starts(server, scenario), 6, began)


def test_retries_count(server: ProviderServer) -> None:
    mg, scenario = magisterium(
        server, rate_limit="10/s", fault="status", status=429, retry_after=0, times=2
    )
    began = time.monotonic()
    assert mg.search("subsidiarity", num_results=1)
    assert scenario.request_count == 3
    assert_spaced(starts(server, scenario), 3, began)


def test_streams_count(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="10/s")
    began = time.monotonic()
    for _ in range(2):
        with mg.stream("What is the principle of subsidiarity?", log=False) as stream:
            for _ in stream:
                pass
    mg.ask("What is the principle of subsidiarity?", log=False)
    assert_spaced(starts(server, scenario), 3, began)


def test_a_gptbots_question_is_three_requests(server: ProviderServer) -> None:
    scenario = server.add_scenario()
    url = server.scenario_url(scenario, "gptbots")
    gb = ck.GPTBots(api_key=SECRET, base_url=url, rate_limit="10/s")
    began = time.monotonic()
    gb.ask(server.samples("gptbots")[0].question, log=False)
    records = sorted(
        (r for r in server.requests if r.scenario == scenario.id), key=lambda r: r.start
    )
    assert [r.endpoint for r in records] == ["conversation", "message", "correlate"]
    assert_spaced([r.start for r in records], 3, began)


def test_ask_many_obeys_the_client_limit(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="20/s")
    questions = [f"{s.question} ({i})" for i, s in enumerate(server.samples("magisterium")[:6])]
    began = time.monotonic()
    answers = ck.ask_many(mg, questions, concurrency=6, progress=False, log=False)
    assert len(answers) == 6
    assert_spaced(starts(server, scenario), 6, began, interval=0.05)


def test_two_clients_sharing_a_limiter(server: ProviderServer) -> None:
    limiter = ck.RateLimiter.parse("10/s")
    one, first = magisterium(server, rate_limit=limiter)
    two, second = magisterium(server, rate_limit=limiter)
    began = time.monotonic()
    for _ in range(2):
        one.search("subsidiarity", num_results=1)
        two.search("subsidiarity", num_results=1)
    assert_spaced(sorted(starts(server, first) + starts(server, second)), 4, began)


# quotas: windows of an hour or more, counted, not spaced --------------------------------------
DAY = 86400.0


class FakeClock:
    """Injected time: the limiter reads it, the test moves it (no day-long waits)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def send(limiter: ck.RateLimiter, clock: FakeClock) -> float:
    """One request through ``limiter`` as ``wait_all_sync`` sends it, the clock moved instead
    of slept; the fake time it was sent at."""
    while (delay := _take([limiter])) > 0:
        clock.now += delay
    return clock.now


@pytest.mark.parametrize(
    ("spec", "limits", "interval"),
    [
        ("100/day", ((100, DAY),), 0.0),
        ("50000/day", ((50000, DAY),), 0.0),
        ("100/24h", ((100, DAY),), 0.0),
        ("1000/h", ((1000, 3600),), 0.0),
        ("5/min,100/day", ((5, 60), (100, DAY)), 12.0),
        (" 5 per minute , 100/d ", ((5, 60), (100, DAY)), 12.0),
        ("10/s,5/min,100/day", ((10, 1), (5, 60), (100, DAY)), 12.0),  # the strictest spacing
    ],
)
def test_quota_forms(spec: str, limits: tuple[tuple[float, float], ...], interval: float) -> None:
    limiter = ck.Magisterium(api_key="k", rate_limit=spec).rate_limit
    assert limiter is not None
    assert limiter.limits == limits and limiter.interval == interval


@settings(max_examples=examples(300))
@given(
    st.text(max_size=30)
    | st.from_regex(r"\A[0-9. ]{0,4}/[0-9a-z ]{0,6}(,[0-9]{0,3}/[a-z]{0,4})?\Z")
)
def test_any_rate_limit_text_is_a_limiter_or_says_how(spec: str) -> None:
    try:
        limiter = ck.RateLimiter.parse(spec)
    except ValueError as exc:
        assert "'5/min,100/day'" in str(exc) or "count > 0" in str(exc) or "quota" in str(exc)
    else:
        assert limiter.limits and all(c > 0 and p > 0 for c, p in limiter.limits)


@pytest.mark.parametrize("spec", ["5/min,", ",100/day", "5/min,fast", "0.5/day"])
def test_bad_quota_forms(spec: str) -> None:
    with pytest.raises(ValueError, match=r"'5/min,100/day'|at least 1 request"):
        ck.RateLimiter.parse(spec)


def test_a_daily_quota_alone_is_spent_without_spacing_then_raises() -> None:
    clock = FakeClock()
    limiter = ck.RateLimiter(100, DAY, on_quota="raise", clock=clock)
    began = clock.now
    sent = [send(limiter, clock) for _ in range(100)]
    assert sent == [began] * 100  # all 100 at once: no 14.4-minute spacing
    clock.now += 3600
    with pytest.raises(ck.QuotaExceededError) as info:
        send(limiter, clock)
    error = info.value
    assert isinstance(error, ck.RateLimitError) and error.should_retry is False
    assert error.retry_after == DAY - 3600 and error.resets_at is not None
    assert "quota of 100 requests per day" in str(error) and "UTC" in str(error)
    assert "on_quota='wait'" in str(error)
    clock.now = began + DAY  # the first request leaves the window: one is free again
    assert send(limiter, clock) == began + DAY


@settings(max_examples=examples(100))
@given(
    per_min=st.integers(min_value=1, max_value=30),
    quota=st.integers(min_value=1, max_value=60),
    sent=st.integers(min_value=1, max_value=150),
    period=st.sampled_from([3600.0, DAY]),
)
def test_a_quota_goes_as_fast_as_the_short_limit_allows(
    per_min: int, quota: int, sent: int, period: float
) -> None:
    """``"{per_min}/min,{quota}/{period}"`` in fake time: the requests are spaced by the short
    limit only until the quota is spent, no window of the quota's length ever holds more than
    the quota, and the next request waits (``on_quota="wait"``) until one leaves the window."""
    clock = FakeClock()
    limiter = ck.RateLimiter(per_min, 60, also=[(quota, period)], clock=clock)
    times = [send(limiter, clock) for _ in range(sent)]
    gap = 60 / per_min
    assert all(b - a >= gap - 1e-6 for a, b in itertools.pairwise(times))
    first = times[: min(quota, sent)]  # the quota's share: at the short limit's pace
    assert all(b - a == pytest.approx(gap) for a, b in itertools.pairwise(first))
    for i in range(len(times) - quota):  # any quota + 1 in a row span at least the window
        assert times[i + quota] - times[i] >= period - 1e-6
    if sent > quota:
        assert times[quota] == pytest.approx(max(times[0] + period, times[quota - 1] + gap))


def test_quota_over_the_wire_raises_before_sending(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="5/s,3/day", on_quota="raise")
    for _ in range(3):
        assert mg.ask("What is grace?", log=False).text
    with pytest.raises(ck.QuotaExceededError, match="frees a request in"):
        mg.ask("What is grace?", log=False)
    assert scenario.request_count == 3  # the fourth was never sent


def test_on_quota_raise_in_a_batch_keeps_the_answers(server: ProviderServer) -> None:
    mg, scenario = magisterium(server, rate_limit="2/day", on_quota="raise")
    results = ck.ask_many(mg, [f"What is grace? ({i})" for i in range(5)], errors="keep")
    assert sum(isinstance(r, ck.Answer) for r in results) == 2
    failed = [r for r in results if isinstance(r, ck.Failed)]
    assert len(failed) == 3 and all(isinstance(f.error, ck.QuotaExceededError) for f in failed)
    assert scenario.request_count == 2
