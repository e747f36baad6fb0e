"""A client's ``rate_limit=``: every HTTP request of the client waits its turn.

Timings are checked from below only, never with upper bounds, so a slow machine cannot fail
them: the time a call took (n requests at "k/s" take at least (n - 1) / k seconds), and, more
loosely, the span of the requests' arrivals at the server (the first request may arrive late
by the time it spent connecting, which shortens the span by as much).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer
from tests.conftest import SECRET

INTERVAL = 0.1  # "10/s"


def magisterium(server: ProviderServer, **options: Any) -> tuple[ck.Magisterium, Any]:
    client_options = {k: options.pop(k) for k in ("rate_limit", "max_retries") if k in options}
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
