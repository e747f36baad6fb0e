"""Batch benchmark: ``ask_many`` against the loopback server with 100 ms of latency.

    .venv/bin/python bench/batch.py [--questions 200] [--concurrency 16] [--latency 0.1]

Prints, in one run:
  * live ``ask_many``: wall time against the ideal ``questions / concurrency x latency``
    (goal: within 1.15x), and against ``ceil(questions / concurrency)`` latencies, the least
    any client keeping ``concurrency`` requests in flight can take; and the client's CPU time
    per answer (which machine load does not stretch as it stretches wall time); then the
    time until the answers are in the log file (written once the batch is done);
  * the floor: httpx + ``json.loads`` alone, ``concurrency`` requests in flight (an
    ``asyncio.Semaphore``), the same questions to the same server: what the server and the
    HTTP stack cost before citekit does anything;
  * the openai SDK called in a loop against the same Magisterium endpoint (goal: ask_many
    >= 12x faster);
  * the same questions again with ``cache=True``, answered from the local log (goal: >= 200x
    faster than live).
The server runs in its own process so that it does not share the interpreter lock with the
client being measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from citekit import ContentFilteredWarning, Magisterium  # noqa: E402
from citekit.providers.batch import ask_many  # noqa: E402
from citekit.store.answer_log import log  # noqa: E402

KEY = "sk-bench-0123456789"


def start_server(latency: float) -> tuple[subprocess.Popen[str], str, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "citekit.testing", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    url = None
    while url is None:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the loopback server did not start")
        m = re.match(r"\s+magisterium\s+(\S+)", line)
        if m:
            url = m.group(1)
    from citekit.testing import ProviderServer

    questions = [s.question for s in ProviderServer().samples("magisterium")]
    return proc, url, questions


async def floor(url: str, questions: list[str], conc: int) -> float:
    """Seconds for httpx + ``json.loads`` to ask every question, ``conc`` in flight."""
    headers = {"Authorization": f"Bearer {KEY}"}
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits) as http:
        gate = asyncio.Semaphore(conc)

        async def one(question: str) -> None:
            async with gate:
                body = {
                    "model": "magisterium-1",
                    "messages": [{"role": "user", "content": question}],
                }
                reply = await http.post("/chat/completions", json=body)
                reply.raise_for_status()
                json.loads(reply.content)

        await asyncio.gather(*(one(f"warm-up {i}") for i in range(conc)))
        start = time.perf_counter()
        await asyncio.gather(*(one(q) for q in questions))
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    n, conc, latency = args.questions, args.concurrency, args.latency

    os.environ["CITEKIT_HOME"] = tempfile.mkdtemp(prefix="citekit-bench-")
    # One sample question is withheld by the content filter on purpose; no warning per copy.
    warnings.simplefilter("ignore", ContentFilteredWarning)
    proc, url, samples = start_server(latency)
    try:
        questions = [f"{samples[i % len(samples)]} (#{i})" for i in range(n)]
        client: Magisterium = Magisterium(api_key=KEY, base_url=url)
        ask_many(client, ["warm-up"], progress=False)
        # Open the connection pool (one connection per worker), as the SDK's is opened below.
        warm = [f"warm-up {i}" for i in range(conc)]
        ask_many(client, warm, concurrency=conc, progress=False, log=False)

        start, cpu = time.perf_counter(), time.process_time()
        live = ask_many(client, questions, concurrency=conc, progress=False)
        live_s = time.perf_counter() - start
        live_cpu = time.process_time() - cpu
        # The answers are written to the log once the batch is done (``Log.holding``).
        log.flush()
        logged_s, logged_cpu = time.perf_counter() - start, time.process_time() - cpu
        ideal = n / conc * latency
        # With ``conc`` requests in flight, ``n`` of them take ceil(n / conc) latencies at least.
        waves = math.ceil(n / conc) * latency

        cpu = time.process_time()
        floor_s = asyncio.run(floor(url, questions, conc))
        floor_cpu = time.process_time() - cpu

        import openai

        sdk = openai.OpenAI(api_key=KEY, base_url=url, max_retries=0)
        sdk.chat.completions.create(
            model="magisterium-1", messages=[{"role": "user", "content": "w"}]
        )
        start = time.perf_counter()
        for q in questions:
            sdk.chat.completions.create(
                model="magisterium-1", messages=[{"role": "user", "content": q}]
            )
        sdk_s = time.perf_counter() - start

        def timed_cached(cold: bool) -> tuple[float, float]:
            if cold:
                log.forget()  # as in a new session: every answer is read back from the file
            start, cpu = time.perf_counter(), time.process_time()
            again = ask_many(client, questions, concurrency=conc, progress=False, cache=True)
            seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
            assert all(a.cached for a in again) and len(again) == len(live) == n
            assert [a.text for a in again] == [a.text for a in live]
            return seconds, cpu_s

        # Median of five runs each: these runs are short enough for scheduling noise to show.
        warm = [timed_cached(cold=False) for _ in range(5)]
        cached_s = statistics.median(w for w, _ in warm)
        cached_cpu = statistics.median(c for _, c in warm)
        cold_s = statistics.median(timed_cached(cold=True)[0] for _ in range(3))
    finally:
        proc.terminate()
        proc.wait(10)

    rows = [
        (
            "live ask_many",
            live_s,
            f"ideal {ideal:.3f} s, ratio {live_s / ideal:.2f}x (goal <= 1.15x); "
            f"{waves:.2f} s of latency at least, ratio {live_s / waves:.2f}x",
        ),
        (
            "  its CPU time",
            live_cpu,
            f"{live_cpu / n * 1000:.2f} ms per answer, the client's own work",
        ),
        (
            "  and logged",
            logged_s,
            f"the answers in the log file ({logged_cpu / n * 1000:.2f} ms of CPU per answer "
            "with their writing)",
        ),
        (
            "httpx floor",
            floor_s,
            f"ratio {floor_s / ideal:.2f}x ideal; citekit / floor {live_s / floor_s:.2f}x",
        ),
        (
            "  its CPU time",
            floor_cpu,
            f"{floor_cpu / n * 1000:.2f} ms per answer (with its warm-up's {conc} requests)",
        ),
        ("openai SDK loop", sdk_s, f"ask_many is {sdk_s / live_s:.1f}x faster (goal >= 12x)"),
        ("cached ask_many", cached_s, f"{live_s / cached_s:.0f}x faster than live (goal >= 200x)"),
        ("  its CPU time", cached_cpu, f"{cached_cpu / n * 1e6:.0f} us per answer"),
        ("cached, from file", cold_s, f"{live_s / cold_s:.0f}x faster than live (new session)"),
    ]
    print(f"{n} questions, {latency * 1000:.0f} ms latency, concurrency {conc}")
    for name, seconds, note in rows:
        print(f"  {name:<18} {seconds:8.3f} s   {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
