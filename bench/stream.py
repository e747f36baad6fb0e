"""Streaming throughput and import time, citekit against its peers, measured in one run.

One 20,000-chunk Magisterium answer is taken once from the loopback server (``chunks=20000``),
its bytes framed as the server sends them (HTTP/1.1, chunked, 64 KiB blocks), and served from
a separate process that only writes those prepared bytes: the time measured is the client's
alone, with nothing of the server in its interpreter. Each round times, on the same request:

* citekit: ``Magisterium.stream()`` consumed to the final ``Answer`` (text, citations, logged);
* a floor: raw ``httpx`` ``iter_lines()`` + ``json.loads`` per event, text accumulated;
* the official ``openai`` SDK: ``chat.completions.create(stream=True)``, text accumulated.

The rounds alternate the order of the three; the minimum and the median of each are printed
(wall and CPU time of the client process), with the ratios of the medians and of the minimums,
and the spread of the CPU ratio of each round. Then ``import citekit`` against ``import openai``
in fresh interpreters. ``--profile N`` prints instead the top N lines of a cProfile of citekit's
client alone (five streams).

Run: ``python bench/stream.py [--chunks 20000] [--rounds 7] [--no-sdk] [--profile 25]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _replay import KEY, Replay, recorded  # noqa: E402


# -- the clients ----------------------------------------------------------------------------
def import_time(module: str, repeat: int) -> float:
    code = (
        "import time, sys; t = time.perf_counter(); import "
        + module
        + "; print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(repeat)
    ]
    return min(runs)


def heavy_modules_after_import() -> list[str]:
    code = (
        "import sys, citekit; "
        "print(','.join(m for m in ('polars', 'altair', 'ipywidgets', 'IPython', 'pandas', "
        "'httpx', 'rich', 'click', 'duckdb', 'rapidfuzz', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def clients(base: str, question: str, sdk: bool) -> dict[str, Callable[[], int]]:
    import httpx

    import citekit as ck

    messages = [{"role": "user", "content": question}]
    mg = ck.Magisterium(api_key=KEY, base_url=base)

    def run_citekit() -> int:
        answer = None
        for event in mg.stream(messages):
            answer = event
        assert isinstance(answer, ck.Answer) and answer.citations
        return len(answer.text)

    raw = httpx.Client(timeout=120)
    body = {"model": "magisterium-1", "messages": messages, "stream": True}

    def run_floor() -> int:
        parts = []
        with raw.stream(
            "POST",
            base + "/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {KEY}"},
        ) as response:
            for line in response.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    event = json.loads(line[6:])
                    for choice in event.get("choices") or ():
                        text = choice["delta"].get("content")
                        if text:
                            parts.append(text)
        return len("".join(parts))

    runs = {"citekit": run_citekit, "httpx floor": run_floor}
    if sdk:
        import openai

        oa = openai.OpenAI(api_key=KEY, base_url=base, max_retries=0)

        def run_openai() -> int:
            parts = []
            for chunk in oa.chat.completions.create(
                model="magisterium-1",
                messages=messages,  # type: ignore[arg-type]
                stream=True,
            ):
                if chunk.choices and chunk.choices[0].delta.content:
                    parts.append(chunk.choices[0].delta.content)
            return len("".join(parts))

        runs["openai SDK"] = run_openai
    return runs


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def profile(run: Callable[[], int], top: int, repeat: int = 5) -> None:
    """cProfile of ``repeat`` citekit runs (the client alone), its top lines by own time."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeat):
        run()
    profiler.disable()
    print(f"citekit's client, {repeat} streams, by own time:")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-sdk", action="store_true", help="leave the openai SDK out")
    parser.add_argument("--no-import", action="store_true", help="leave import times out")
    parser.add_argument(
        "--profile", type=int, metavar="N", help="print the top N lines of citekit's profile"
    )
    args = parser.parse_args()
    # Benchmark answers go to a throwaway answer log, not the user's.
    os.environ["CITEKIT_HOME"] = tempfile.mkdtemp(prefix="citekit-bench-")

    body, question = recorded(args.chunks)
    with Replay(body) as base:
        runs = clients(base, question, sdk=not args.no_sdk)
        lengths = {name: fn() for name, fn in runs.items()}  # warm up connections and caches
        assert len(set(lengths.values())) == 1, lengths
        if args.profile:
            profile(runs["citekit"], args.profile)
            return
        wall: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        names = list(runs)
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                w, c, _ = timed(runs[name])
                wall[name].append(w)
                cpu[name].append(c)

    def ms(values: list[float]) -> str:
        low, mid = min(values) * 1000, statistics.median(values) * 1000
        return f"min {low:7.1f} ms  median {mid:7.1f} ms"

    print(
        f"stream of {args.chunks:,} chunks ({len(body) / 2**20:.1f} MiB, "
        f"{lengths['citekit']:,} characters), served from a separate process, "
        f"{args.rounds} rounds; client wall time (CPU time):"
    )
    for name in runs:
        print(f"  {name:<12} wall {ms(wall[name])}   CPU {ms(cpu[name])}")

    def ratio(a: str, b: str, times: dict[str, list[float]]) -> str:
        return (
            f"{statistics.median(times[a]) / statistics.median(times[b]):5.2f}x median, "
            f"{min(times[a]) / min(times[b]):5.2f}x min"
        )

    def rounds(a: str, b: str) -> str:
        """The CPU ratio of each round (its two runs side by side): median and spread."""
        each = sorted(x / y for x, y in zip(cpu[a], cpu[b], strict=True))
        low, high = each[len(each) // 4], each[(3 * len(each)) // 4]
        return (
            f"per round: median {statistics.median(each):.2f}x, quartiles {low:.2f}-{high:.2f}x, "
            f"range {each[0]:.2f}-{each[-1]:.2f}x"
        )

    print(f"  citekit / floor      wall {ratio('citekit', 'httpx floor', wall)}", end="")
    print(f"   CPU {ratio('citekit', 'httpx floor', cpu)}   (goal <= 0.8x)")
    print(f"  citekit / floor      CPU {rounds('citekit', 'httpx floor')}")
    if "openai SDK" in runs:
        print(f"  openai SDK / citekit wall {ratio('openai SDK', 'citekit', wall)}", end="")
        print(f"   CPU {ratio('openai SDK', 'citekit', cpu)}   (goal >= 20x)")
        print(f"  openai SDK / citekit CPU {rounds('openai SDK', 'citekit')}")
    if args.no_import:
        return
    repeat = 5
    imp_citekit = import_time("citekit", repeat)
    imp_openai = import_time("openai", repeat)
    heavy = heavy_modules_after_import()
    print("import time, best of", repeat, "fresh interpreters:")
    print(f"  import citekit     {imp_citekit * 1000:8.1f} ms")
    print(
        f"  import openai      {imp_openai * 1000:8.1f} ms   citekit / openai = "
        f"{imp_citekit / imp_openai:4.2f}x (goal <= 0.12x)"
    )
    print(f"  heavy modules loaded by import citekit: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
