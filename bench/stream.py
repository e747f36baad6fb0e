"""Streaming throughput and import time, citekit against its peers, measured in one run.

Streams one 20,000-chunk Magisterium answer from the loopback server (``chunks=20000``) and
times, on the same server and request:

* citekit: ``Magisterium.stream()`` consumed to the final ``Answer`` (text, citations);
* the official ``openai`` SDK: ``chat.completions.create(stream=True)``, text accumulated;
* a floor: raw ``httpx`` ``iter_lines()`` + ``json.loads`` per event, text accumulated.

Then ``import citekit`` against ``import openai`` in fresh interpreters.

Run: ``python bench/stream.py [--chunks 20000] [--repeat 5]``
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

import httpx

import citekit as ck
from citekit.testing import ProviderServer

KEY = "bench-key"


def best_of(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times = []
    result = 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


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


def main() -> None:
    # Benchmark answers go to a throwaway answer log, not the user's.
    os.environ["CITEKIT_HOME"] = tempfile.mkdtemp(prefix="citekit-bench-")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import openai

    with ProviderServer() as srv:
        base = srv.base_url("magisterium", chunks=args.chunks)
        question = srv.samples("magisterium")[0].question
        messages = [{"role": "user", "content": question}]

        mg = ck.Magisterium(api_key=KEY, base_url=base)

        def run_citekit() -> int:
            answer = None
            for event in mg.stream(messages):
                answer = event
            assert isinstance(answer, ck.Answer) and answer.citations
            return len(answer.text)

        oa = openai.OpenAI(api_key=KEY, base_url=base, max_retries=0)

        def run_openai() -> int:
            parts = []
            for chunk in oa.chat.completions.create(
                model="magisterium-1",
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            ):
                if chunk.choices and chunk.choices[0].delta.content:
                    parts.append(chunk.choices[0].delta.content)
            return len("".join(parts))

        raw = httpx.Client(timeout=120)
        body = {
            "model": "magisterium-1",
            "messages": messages,
            "stream": True,
            "return_related_questions": True,
        }

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

        run_citekit()  # warm up connections and caches
        t_citekit, n1 = best_of(run_citekit, args.repeat)
        t_openai, n2 = best_of(run_openai, args.repeat)
        t_floor, n3 = best_of(run_floor, args.repeat)
        assert n1 == n2 == n3, (n1, n2, n3)

    imp_citekit = import_time("citekit", args.repeat)
    imp_openai = import_time("openai", args.repeat)
    heavy = heavy_modules_after_import()

    print(f"stream of {args.chunks:,} chunks ({n1:,} characters), median of {args.repeat}:")
    print(f"  citekit            {t_citekit * 1000:8.1f} ms")
    print(
        f"  openai SDK         {t_openai * 1000:8.1f} ms   citekit is {t_openai / t_citekit:5.1f}x "
        "faster (goal >= 10x)"
    )
    print(
        f"  httpx floor        {t_floor * 1000:8.1f} ms   citekit / floor = "
        f"{t_citekit / t_floor:4.2f}x (goal <= 1.3x)"
    )
    print("import time, best of", args.repeat, "fresh interpreters:")
    print(f"  import citekit     {imp_citekit * 1000:8.1f} ms")
    print(
        f"  import openai      {imp_openai * 1000:8.1f} ms   citekit / openai = "
        f"{imp_citekit / imp_openai:4.2f}x (goal <= 0.3x)"
    )
    print(f"  heavy modules loaded by import citekit: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
