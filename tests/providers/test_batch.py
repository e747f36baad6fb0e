"""ask_many / aask_many against the loopback server: concurrency, rate limit, failures,
interruption, cancellation, and the background event loop."""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import contextvars
import io
import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit import (
    Answer,
    BatchError,
    BatchInterrupted,
    BatchResult,
    Failed,
    GPTBots,
    Magisterium,
    Maritaca,
    RateLimiter,
    ServerError,
    aask_many,
    ask_many,
    log,
)
from citekit.render.progress import NullProgress, TextProgress, make_progress
from citekit.store.call import FLIGHTS
from citekit.testing import ProviderServer
from citekit.transport.loop import background_loop, run_sync
from tests.budget import examples

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-batch-0123456789"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))


def questions(server: ProviderServer, provider: str, n: int) -> list[str]:
    base = [s.question for s in server.samples(provider)]  # type: ignore[arg-type]
    assert base, f"no {provider} samples"
    return [f"{base[i % len(base)]} ({i})" for i in range(n)]


def scenario_requests(server: ProviderServer, url: str) -> list[Any]:
    sid = server.scenario(url).id
    return sorted((r for r in server.requests if r.scenario == sid), key=lambda r: r.start)


# -- concurrency, order ---------------------------------------------------------------------------
def test_concurrency_is_bounded_and_results_keep_input_order(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.1)
    client = Magisterium(api_key=KEY, base_url=url)
    qs = questions(server, "magisterium", 24)
    answers = ask_many(client, qs, concurrency=4, progress=False)
    assert [a.question for a in answers] == qs
    assert all(isinstance(a, Answer) for a in answers)
    scenario = server.scenario(url)
    assert scenario.request_count == 24
    assert scenario.max_concurrent == 4  # counted server side, not by wall clock


def test_concurrency_reaches_the_limit_with_many_questions(server: ProviderServer) -> None:
    url = server.base_url("maritaca", latency=0.1)
    client = Maritaca(api_key=KEY, base_url=url)
    answers = ask_many(client, questions(server, "maritaca", 32), concurrency=16, progress=False)
    assert len(answers) == 32
    assert server.scenario(url).max_concurrent == 16


def test_gptbots_through_ask_many(server: ProviderServer) -> None:
    url = server.base_url("gptbots", latency=0.02)
    client = GPTBots(api_key=KEY, base_url=url)
    qs = questions(server, "gptbots", 6)
    answers = ask_many(client, qs, concurrency=3, progress=False)
    assert [a.question for a in answers] == qs
    assert all(a.references is not None for a in answers)


# -- rate limit -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "count", "period"),
    [
        ("60/min", 60, 60),
        ("2/s", 2, 1),
        ("3/minute", 3, 60),
        ("100 per hour", 100, 3600),
        ("10/30s", 10, 30),
        (90, 90, 60),
    ],
)
def test_rate_limit_parsing(spec: Any, count: float, period: float) -> None:
    limiter = RateLimiter.parse(spec)
    assert (limiter.count, limiter.period) == (count, period)


@pytest.mark.parametrize("spec", ["fast", "0/s", "10/fortnight", "-1/s", True])
def test_rate_limit_rejects_nonsense(spec: Any) -> None:
    with pytest.raises(ValueError, match=r"rate_limit|count > 0"):
        RateLimiter.parse(spec)


def test_rate_limit_spaces_requests_evenly(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.0)
    client = Magisterium(api_key=KEY, base_url=url)
    limiter = RateLimiter.parse("20/s")
    ask_many(client, questions(server, "magisterium", 8), concurrency=8, rate_limit=limiter)
    assert len(scenario_requests(server, url)) == 8
    # Each request took a slot; the slots (the limiter's own clock, not arrival times a busy
    # machine shifts) are evenly spaced at 50 ms, not a burst of 8 and then a stall.
    gaps = [b - a for a, b in itertools.pairwise(limiter.slots)]
    assert len(limiter.slots) == 8
    assert min(gaps) >= limiter.interval - 1e-9, gaps


def test_rate_limit_with_latency_still_overlaps(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.3)
    client = Magisterium(api_key=KEY, base_url=url)
    ask_many(client, questions(server, "magisterium", 6), concurrency=6, rate_limit="20/s")
    assert server.scenario(url).max_concurrent >= 4


# -- the pool follows the concurrency ------------------------------------------------------------
def test_the_pool_holds_the_concurrency_asked_for(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a default pool of 10 connections and ``concurrency=12`` of slow answers, all 12
    are sent at once: none waits for a connection (and times out there, ``pool=`` 0.1 s)."""
    monkeypatch.setattr("citekit.transport.http.DEFAULT_CONNECTIONS", 10)
    url = server.base_url("magisterium", latency=0.5)
    timeout = httpx.Timeout(10.0, pool=0.1)
    client = Magisterium(api_key=KEY, base_url=url, timeout=timeout, max_retries=0)
    answers = ask_many(client, questions(server, "magisterium", 12), concurrency=12)
    assert len(answers) == 12
    scenario = server.scenario(url)
    assert scenario.request_count == 12 and scenario.max_concurrent == 12


def test_a_request_never_sent_is_retried(server: ProviderServer) -> None:
    """A pool smaller than the batch (the user's own client of 10 connections): the two
    requests that time out waiting for a connection were never sent, and are sent again."""
    url = server.base_url("magisterium", latency=0.3)
    own = httpx.AsyncClient(
        limits=httpx.Limits(max_connections=10), timeout=httpx.Timeout(10.0, pool=0.05)
    )
    client = Magisterium(api_key=KEY, base_url=url, async_http_client=own, max_retries=4)
    try:
        answers = ask_many(client, questions(server, "magisterium", 12), concurrency=12)
    finally:
        run_sync(own.aclose())
    assert len(answers) == 12
    scenario = server.scenario(url)
    # Every question answered by exactly one request: the retried ones had never left.
    assert scenario.request_count == 12 and scenario.max_concurrent <= 10


# -- identical requests in flight are sent once ----------------------------------------------------
_nonce = itertools.count()


def test_twenty_identical_questions_in_flight_send_one_request(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.3)
    client = Magisterium(api_key=KEY, base_url=url)
    [q] = questions(server, "magisterium", 1)
    answers = ask_many(client, [q] * 20, cache=True, concurrency=20, progress=False)
    assert server.scenario(url).request_count == 1
    assert len(answers) == 20 and sum(not a.cached for a in answers) == 1
    assert {a.text for a in answers} == {answers[0].text} and answers[0].text
    assert len(FLIGHTS) == 0  # nothing left in the air


@settings(max_examples=examples(40), deadline=None)
@given(
    picks=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=16),
    concurrency=st.integers(min_value=1, max_value=16),
)
def test_each_distinct_request_is_sent_once(
    server: ProviderServer, picks: list[int], concurrency: int
) -> None:
    """Any mix of repeated questions at any concurrency, with ``cache=True``: the server gets
    one request per distinct question (a twin in flight waits, a later one reads the log)."""
    url = server.base_url("magisterium", latency=0.02)
    client = Magisterium(api_key=KEY, base_url=url)
    run = next(_nonce)
    base = questions(server, "magisterium", 5)
    asked = [f"{base[i]} [{run}]" for i in picks]
    answers = ask_many(client, asked, cache=True, concurrency=concurrency, progress=False)
    assert [a.question for a in answers] == asked
    assert server.scenario(url).request_count == len(set(asked))
    assert sum(not a.cached for a in answers) == len(set(asked))


def test_twins_of_a_failed_request_send_their_own(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="status", status=400, times=1, latency=0.2)
    client = Magisterium(api_key=KEY, base_url=url, max_retries=0)
    [q] = questions(server, "magisterium", 1)
    results = ask_many(client, [q] * 6, cache=True, concurrency=6, errors="keep", progress=False)
    assert sum(isinstance(r, Failed) for r in results) == 1
    assert sum(isinstance(r, Answer) for r in results) == 5  # none lost with the first
    assert len(FLIGHTS) == 0


def test_a_twin_waits_within_its_own_deadline(server: ProviderServer) -> None:
    """A call waiting for an identical one in flight is held to its deadline like any call;
    the one it waited for goes on and answers."""
    url = server.base_url("magisterium", latency=1.0)
    client = Magisterium(api_key=KEY, base_url=url)
    q = f"What is grace? [{next(_nonce)}]"

    async def both() -> tuple[Any, Any]:
        first = asyncio.create_task(client.aask(q, cache=True))
        await asyncio.sleep(0.1)
        second = asyncio.create_task(client.aask(q, cache=True, deadline=0.3))
        return await asyncio.gather(first, second, return_exceptions=True)

    first, second = run_sync(both())
    assert isinstance(first, Answer) and not first.cached
    assert isinstance(second, ck.APITimeoutError)
    assert "identical request in flight" in str(second)
    assert server.scenario(url).request_count == 1


def test_identical_sync_calls_on_two_threads_send_one_request(server: ProviderServer) -> None:
    url = server.base_url("maritaca", latency=0.3)
    client = Maritaca(api_key=KEY, base_url=url)
    q = f"O que é o Pix? [{next(_nonce)}]"
    got: list[Answer] = []
    threads = [
        threading.Thread(target=lambda: got.append(client.ask(q, cache=True))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(got) == 4 and server.scenario(url).request_count == 1
    assert sorted(a.cached for a in got) == [False, True, True, True]


# -- failures -------------------------------------------------------------------------------------
def test_partial_failure_kept_in_place(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="status", status=400, times=1)
    client = Magisterium(api_key=KEY, base_url=url, max_retries=0)
    qs = questions(server, "magisterium", 5)
    results = ask_many(client, qs, concurrency=1, errors="keep", progress=False)
    assert isinstance(results[0], Failed)
    assert not results[0]
    assert results[0].question == qs[0] and results[0].index == 0
    assert [r.question for r in results[1:] if isinstance(r, Answer)] == qs[1:]


def test_partial_failure_raises_after_the_others(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="status", status=500, times=2)
    client = Magisterium(api_key=KEY, base_url=url, max_retries=0)
    with pytest.raises(BatchError, match="2 of 6 questions failed") as info:
        ask_many(client, questions(server, "magisterium", 6), concurrency=2, progress=False)
    err = info.value
    assert len(err.results) == 6 and len(err.answers) == 4
    assert all(isinstance(f.error, ServerError) for f in err.failures)
    assert err.batch is ck.last_batch and err.batch is not None
    assert err.batch.failures == err.failures and err.batch.answers == err.answers
    assert (err.batch.done, err.batch.total, err.batch.unfinished) == (6, 6, [])
    assert not err.batch.running and not err.batch.interrupted


def test_retries_come_from_the_client(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="status", status=503, retry_after=0, times=2)
    client = Magisterium(api_key=KEY, base_url=url, max_retries=2)
    answers = ask_many(client, questions(server, "magisterium", 3), concurrency=1)
    assert len(answers) == 3
    assert server.scenario(url).request_count == 5


def test_bad_arguments() -> None:
    client = Magisterium(api_key=KEY, base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="concurrency"):
        ask_many(client, ["q"], concurrency=0)
    with pytest.raises(ValueError, match="errors="):
        ask_many(client, ["q"], errors="ignore")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match=r"questions\[1\]"):
        ask_many(client, ["q", ""])
    with pytest.raises(TypeError, match="aask"):
        ask_many(object(), ["q"])  # type: ignore[arg-type]
    assert ask_many(client, []) == []


# -- interruption and cancellation ----------------------------------------------------------------
@contextlib.contextmanager
def ctrl_c_once_done(answers: int) -> Iterator[None]:
    """Press Ctrl-C once the running batch itself holds ``answers`` answers (not after a fixed
    time, nor when the server has sent them: a loaded machine may take longer to take them in)."""
    stop = threading.Event()

    def press_ctrl_c() -> None:
        while not stop.is_set():
            batch = ck.last_batch
            if batch is not None and batch.running and batch.done >= answers:
                _thread.interrupt_main()
                return
            time.sleep(0.01)

    presser = threading.Thread(target=press_ctrl_c, daemon=True)
    presser.start()
    try:
        yield
    finally:
        stop.set()
        presser.join(5)


def test_ctrl_c_keeps_what_finished(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.2)
    client = Magisterium(api_key=KEY, base_url=url)
    qs = questions(server, "magisterium", 20)
    with ctrl_c_once_done(2), pytest.raises(BatchInterrupted) as info:
        ask_many(client, qs, concurrency=2, progress=False)
    results = info.value.results
    assert isinstance(info.value, KeyboardInterrupt)
    assert len(results) == 20
    done = [r for r in results if r is not None]
    assert 2 <= len(done) < 20
    assert all(r.question == qs[i] for i, r in enumerate(results) if isinstance(r, Answer))
    assert info.value.answers == done
    # In a notebook the exception is gone with the cell: the run stays as ck.last_batch.
    batch = ck.last_batch
    assert isinstance(batch, BatchResult) and info.value.batch is batch
    assert batch.results == results and batch.answers == done
    assert batch.interrupted and not batch.running
    assert (batch.done, batch.total) == (len(done), 20)
    assert batch.unfinished == [q for q, r in zip(qs, results, strict=True) if r is None]
    assert "citekit.last_batch" in str(info.value)
    seen = server.scenario(url).request_count
    time.sleep(0.4)  # the in-flight requests were cancelled: nothing more goes out
    assert server.scenario(url).request_count == seen


def test_task_cancellation_keeps_what_finished(server: ProviderServer) -> None:
    url = server.base_url("maritaca", latency=0.2)
    client = Maritaca(api_key=KEY, base_url=url)
    qs = questions(server, "maritaca", 12)

    scenario = server.scenario(url)

    async def main() -> None:
        task = asyncio.create_task(aask_many(client, qs, concurrency=2, progress=False))
        # Cancel once two answers are out of the server (not after a fixed time: a loaded
        # machine may take longer), with a moment for the client to take them in.
        while sum(r.end is not None for r in server.requests if r.scenario == scenario.id) < 2:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.15)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    batch = ck.last_batch
    assert batch is not None and batch.interrupted and not batch.running
    assert batch.questions == tuple(qs) and len(batch.results) == 12
    assert 2 <= len(batch.answers) == batch.done < 12
    assert [a.question for a in batch.answers] == [q for q in qs if q not in batch.unfinished]


def test_last_batch_follows_each_run_and_cannot_be_assigned() -> None:
    class Echo:
        async def aask(self, question: str, **options: Any) -> Answer:
            if ck.last_batch is not None:
                seen.append((ck.last_batch.running, ck.last_batch.total))
            return Answer(provider="magisterium", text=question.upper(), question=question)

    seen: list[tuple[bool, int]] = []
    ask_many(Echo(), ["a", "b", "c"], concurrency=1, progress=False)
    first = ck.last_batch
    assert first is not None and seen == [(True, 3)] * 3  # a running batch is there too
    assert [a.text for a in first.answers] == ["A", "B", "C"]
    assert (first.done, first.running, first.interrupted, first.failures) == (3, False, False, [])
    assert repr(first) == "<BatchResult finished: 3 of 3 done>"
    first.results.clear()  # a copy: the run is not changed by its readers
    assert len(first.results) == 3

    asyncio.run(aask_many(Echo(), ["d"], progress=False))
    assert ck.last_batch is not first and ck.last_batch.questions == ("d",)
    with pytest.raises(ValueError, match="concurrency"):
        ask_many(Echo(), ["e"], concurrency=0)
    assert ck.last_batch.questions == ("d",)  # a batch refused before it starts is not one
    with pytest.raises(AttributeError, match="no setter"):
        ck.last_batch = first
    assert "last_batch" in dir(ck) and "last_batch" not in ck.__all__


# -- event loops ----------------------------------------------------------------------------------
def test_sync_api_inside_a_running_loop(server: ProviderServer) -> None:
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))

    async def cell() -> list[Answer]:
        # What a notebook cell does: a sync call while the kernel's loop is running.
        return ask_many(client, questions(server, "magisterium", 3), progress=False)

    assert len(asyncio.run(cell())) == 3


def test_aask_many_on_the_callers_loop(server: ProviderServer) -> None:
    client = Maritaca(api_key=KEY, base_url=server.base_url("maritaca"))
    answers = asyncio.run(aask_many(client, questions(server, "maritaca", 4), concurrency=2))
    assert len(answers) == 4


def test_run_sync_passes_context_and_refuses_reentry() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller")

    async def read() -> str:
        return var.get()

    assert run_sync(read()) == "caller"

    async def nested() -> None:
        run_sync(read())

    with pytest.raises(RuntimeError, match="async API"):
        run_sync(nested())
    assert background_loop() is background_loop()


def test_options_reach_the_client() -> None:
    class Probe:
        def __init__(self) -> None:
            self.seen: list[tuple[bool, bool, dict[str, Any]]] = []

        async def aask(self, question: str, **options: Any) -> Answer:
            self.seen.append((log.enabled, log.cache_enabled(), options))
            return Answer(provider="magisterium", text="ok", question=question)

    probe = Probe()
    ask_many(probe, ["a", "b"], cache=True, log=False, system="Be brief.")
    assert probe.seen == [(False, True, {"system": "Be brief."})] * 2
    assert log.enabled and not log.cache_enabled()


# -- progress -------------------------------------------------------------------------------------
def test_text_progress_bar() -> None:
    out = io.StringIO()
    bar = TextProgress(4, stream=out, width=8)
    bar.update(1, 0)
    bar.close(4, 1)
    text = out.getvalue()
    assert "[##......] 1/4" in text
    assert text.rstrip().endswith("s") and "[########] 4/4 (1 failed)" in text


def test_progress_off_when_not_a_terminal() -> None:
    assert isinstance(make_progress(10, None), NullProgress)  # pytest captures stderr
    assert isinstance(make_progress(10, False), NullProgress)
    assert isinstance(make_progress(10, True), TextProgress)


def test_widget_progress_updates() -> None:
    from citekit.render.progress import WidgetProgress

    bar = WidgetProgress(5, description="Magisterium")
    bar.update(2, 0)
    assert bar.bar.value == 2 and bar.label.value.startswith("2/5")
    bar.close(5, 1)
    assert bar.bar.value == 5 and bar.bar.bar_style == "warning"
    assert "(1 failed)" in bar.label.value
    # The label is the client's whole name, not cut to fit a fixed width.
    assert bar.bar.style.description_width == "initial"


def test_an_interrupted_batch_says_so_on_its_bar() -> None:
    from citekit.render.progress import WidgetProgress

    bar = WidgetProgress(40, description="Magisterium")
    bar.update(12, 0)
    bar.close(12, 0, interrupted=True)
    assert bar.bar.bar_style == "danger"
    assert bar.label.value.startswith("interrupted at 12/40")
    assert "citekit.last_batch" in bar.label.value
    out = io.StringIO()
    text = TextProgress(40, stream=out, width=8)
    text.close(12, 1, interrupted=True)
    assert "interrupted at 12/40 (1 failed)" in out.getvalue()


def test_ctrl_c_in_ask_many_closes_the_bar_as_interrupted(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import citekit.providers.batch as batch_module

    closed: list[bool] = []

    class Recorder(NullProgress):
        def close(self, done: int, failed: int, *, interrupted: bool = False) -> None:
            closed.append(interrupted)

    monkeypatch.setattr(batch_module, "make_progress", lambda *a, **k: Recorder())
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium", latency=0.2))
    qs = questions(server, "magisterium", 10)
    with ctrl_c_once_done(1), pytest.raises(BatchInterrupted):
        ask_many(client, qs, concurrency=2)
    assert closed == [True]


def test_allow_nested_asyncio_in_a_fresh_process() -> None:
    # Patches asyncio for the whole process: checked in a child, not in the test process.
    code = (
        "import asyncio, citekit.transport.loop as L\n"
        "L.allow_nested_asyncio()\n"
        "async def inner():\n    return 42\n"
        "async def cell():\n    return asyncio.run(inner())\n"
        "print(asyncio.run(cell()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"


def test_one_string_is_not_a_list_of_questions(server: ProviderServer) -> None:
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    before = len(server.requests)
    with pytest.raises(TypeError, match=r"wrap one question in \[...\]"):
        ask_many(client, "What is grace?")
    assert len(server.requests) == before


def test_cancelled_waiters_give_their_rate_slots_back() -> None:
    limiter = RateLimiter.parse("60/min")  # one slot a second

    async def scenario() -> float:
        await limiter.wait()  # takes the first slot at once
        waiters = [asyncio.create_task(limiter.wait()) for _ in range(5)]
        await asyncio.sleep(0.05)
        for task in waiters:
            task.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        start = asyncio.get_running_loop().time()
        await limiter.wait()  # the next slot, not the sixth
        return asyncio.get_running_loop().time() - start

    assert asyncio.run(scenario()) < 3  # the old reservations made it 6 s


def test_a_batch_quota_that_raises_keeps_what_it_allowed(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.0)
    client = Magisterium(api_key=KEY, base_url=url)
    qs = questions(server, "magisterium", 5)
    results = ask_many(client, qs, rate_limit="3/day", on_quota="raise", errors="keep")
    assert sum(isinstance(r, Answer) for r in results) == 3
    assert all(isinstance(r.error, ck.QuotaExceededError) for r in results if isinstance(r, Failed))
    assert server.scenario(url).request_count == 3


def test_a_cached_rerun_is_answered_without_the_event_loop(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Questions answered in memory are settled on the caller's thread: a cached re-run
    never waits for the event loop; a batch mixing held and new questions sends the new ones
    only, and keeps the order."""
    url = server.base_url("magisterium")
    client = Magisterium(api_key=KEY, base_url=url)
    qs = questions(server, "magisterium", 6)
    first = ask_many(client, qs, progress=False)

    def no_loop(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the event loop was waited for")

    with monkeypatch.context() as patched:
        patched.setattr("citekit.providers.batch.run_sync", no_loop)
        again = ask_many(client, qs, cache=True, progress=False)
    assert [a.text for a in again] == [a.text for a in first]
    assert all(a.cached for a in again) and not any(a.cached for a in first)
    batch = ck.last_batch
    assert batch is not None and batch.done == 6 and not batch.running and not batch.interrupted
    sent = len(server.requests)
    new = f"{qs[0]} (a new one)"
    mixed = ask_many(client, [qs[0], new, qs[1]], cache=True, progress=False)
    assert [a.question for a in mixed] == [qs[0], new, qs[1]]
    assert [a.cached for a in mixed] == [True, False, True]
    assert len(server.requests) == sent + 1
