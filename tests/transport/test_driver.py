"""The async driver's way into the connection pool: requests sent in the same turn of the
event loop are each handed a connection of their own, and one waiting for a busy pool still
fails after its pool timeout."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpcore
import httpx
import pytest

import citekit as ck
from citekit.testing import ProviderServer
from citekit.transport import http
from tests.conftest import sample_records

MAG_Q = sample_records("magisterium")[1][1]["question"]


def test_a_burst_of_requests_is_handed_one_connection_each(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixteen requests sent at once, twice: each enters the pool's assignment once and
    leaves it once, never queued again because another request took its connection."""
    passes = 0
    assign = httpcore.AsyncConnectionPool._assign_requests_to_connections

    def counted(pool: httpcore.AsyncConnectionPool) -> Any:
        nonlocal passes
        passes += 1
        return assign(pool)

    monkeypatch.setattr(httpcore.AsyncConnectionPool, "_assign_requests_to_connections", counted)
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium", latency=0.05))

    async def burst(tag: str) -> list[ck.Answer]:
        asks = [mg.aask(f"{MAG_Q} ({tag} {i})", log=False) for i in range(16)]
        return await asyncio.gather(*asks)

    async def run() -> list[ck.Answer]:
        await burst("warm")  # sixteen connections open
        nonlocal passes
        passes = 0
        answers = await burst("again")  # every connection idle, sixteen requests at once
        await mg.aclose()
        return answers

    answers = asyncio.run(run())
    assert len(answers) == 16 and all(a.text for a in answers)
    assert passes == 2 * 16  # one on the way in, one as the response is closed


def test_a_request_waiting_for_a_busy_pool_still_times_out(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool of one connection held by an open stream: two more requests fail as pool
    timeouts, each about its pool timeout after it was sent (the second waits at the gate
    while the first waits in the pool), and the pool works once the stream is closed."""
    monkeypatch.setattr(http, "DEFAULT_CONNECTIONS", 1)
    url = server.base_url("magisterium", chunks=5000, delay=0.005)
    mg = ck.Magisterium(
        api_key="k", base_url=url, timeout=httpx.Timeout(10.0, pool=0.3), max_retries=0
    )

    async def run() -> tuple[list[Any], float, str]:
        async with mg.astream(MAG_Q, log=False) as stream:
            assert isinstance(await anext(aiter(stream)), ck.TextDelta)
            began = time.monotonic()
            waiting = [mg.aask(f"{MAG_Q} ({i})", log=False) for i in range(2)]
            failed = await asyncio.gather(*waiting, return_exceptions=True)
            waited = time.monotonic() - began
        after = await mg.aask(MAG_Q, log=False)
        await mg.aclose()
        return failed, waited, after.text

    failed, waited, text = asyncio.run(run())
    assert all(isinstance(e, ck.APITimeoutError) and "stayed busy" in str(e) for e in failed)
    assert waited < 3.0 and text


def test_a_grown_pool_has_a_gate_of_its_own(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request waiting in a full pool holds that pool's gate until its pool timeout; once the
    pool is grown (``connections``), a request sent through the new pool does not wait behind
    it at a gate the two pools would share: it is answered while the first still waits."""
    monkeypatch.setattr(http, "DEFAULT_CONNECTIONS", 1)
    url = server.base_url("magisterium", chunks=5000, delay=0.005)
    mg = ck.Magisterium(
        api_key="k", base_url=url, timeout=httpx.Timeout(10.0, pool=1.0), max_retries=0
    )

    async def run() -> tuple[BaseException | ck.Answer, float]:
        async with mg.astream(MAG_Q, log=False) as stream:  # the one connection, held
            assert isinstance(await anext(aiter(stream)), ck.TextDelta)
            stuck = asyncio.ensure_future(mg.aask(f"{MAG_Q} (stuck)", log=False))
            await asyncio.sleep(0.1)  # waiting in the pool, holding its gate
            began = time.monotonic()
            with http.connections(4):  # a larger pool for what is sent now
                answer = await mg.aask(f"{MAG_Q} (new pool)", log=False)
            answered = time.monotonic() - began
            assert answer.text
            (first,) = await asyncio.gather(stuck, return_exceptions=True)
        await mg.aclose()
        return first, answered

    first, answered = asyncio.run(run())
    assert isinstance(first, ck.APITimeoutError) and "stayed busy" in str(first)
    assert answered < 0.8  # not behind the first request's pool timeout (1 s after it)
