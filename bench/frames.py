"""How fast ``citations_frame`` turns answers into a frame, against two baselines.

Builds N Magisterium-style responses with C citations each (default 100,000 x 10), parses them
into ``Answer`` objects (timed apart), then times, best of ``--repeat`` runs:

* ``citekit.citations_frame(answers)``, the full frame (15 columns, years parsed,
  ``cited_inline`` from the inline markers of every answer);
* ``pandas.json_normalize`` of the same responses (citations as records, answer id, model and
  question as meta): the usual pandas route;
* a polars floor: ``pl.DataFrame`` of the raw citation dicts, plus the answer columns, the
  marker and the parsed year (no entity decoding, no ``cited_inline``).

Peak memory is the growth of the resident set during one call, sampled in a fresh interpreter
per run (polars allocates outside the Python heap, so ``tracemalloc`` would miss most of it).

Run: ``.venv/bin/python bench/frames.py [--answers 100000] [--citations 10] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import polars as pl

from citekit import Answer
from citekit.core.years import year_expr
from citekit.data.frames import citations_frame

AUTHORS = [
    "Pope Leo XIII",
    "Pope Francis",
    "Thomas Aquinas",
    "Second Vatican Council",
    "Augustine of Hippo",
    "Pope John Paul II",
    None,
    "",
]
YEARS = ["1891", "2015", "c. 1270", "1962-1965", "397", "1993", "", None]
WORDS = ["grace", "nature", "law", "faith", "reason", "church", "council", "labour", "wage"]


def make_records(n_answers: int, n_citations: int, seed: int = 7) -> list[dict[str, Any]]:
    """Sample-shaped records ``{question, response}`` with ``n_citations`` citations each."""
    rng = random.Random(seed)
    passages = [" ".join(rng.choices(WORDS, k=30)) + " &apos;quoted&apos;" for _ in range(500)]
    bodies = [" ".join(rng.choices(WORDS, k=120)) for _ in range(300)]
    markers = "".join(f"[^{k + 1}]" for k in range(0, n_citations, 2))
    records = []
    for i in range(n_answers):
        citations = []
        for j in range(n_citations):
            doc = rng.randrange(200)
            citations.append(
                {
                    "cited_text": passages[(i * 7 + j) % len(passages)],
                    "cited_text_heading": f"Chapter {doc % 12}" if doc % 3 else None,
                    "document_title": f"Document {doc}",
                    "document_index": j if j < n_citations - 2 else j - 1,
                    "document_author": AUTHORS[doc % len(AUTHORS)],
                    "document_year": YEARS[doc % len(YEARS)],
                    "document_reference": str(doc % 90),
                    "source_url": f"https://example.org/doc/{doc}",
                }
            )
        records.append(
            {
                "question": f"Question {i}?",
                "response": {
                    "id": f"chatcmpl-{i}",
                    "object": "chat.completion",
                    "created": 1_760_000_000 + i,
                    "model": "magisterium-1",
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": f"{bodies[i % len(bodies)]} {markers}.",
                            },
                            "finish_reason": "stop",
                        }
                    ],
                    "citations": citations,
                    "usage": {"prompt_tokens": 40, "completion_tokens": 300, "total_tokens": 340},
                },
            }
        )
    return records


def pandas_normalize(records: list[dict[str, Any]]) -> Any:
    import pandas as pd

    return pd.json_normalize(
        records,
        record_path=["response", "citations"],
        meta=["question", ["response", "id"], ["response", "model"]],
    )


def polars_floor(records: list[dict[str, Any]]) -> pl.DataFrame:
    raw = [c for r in records for c in r["response"]["citations"]]
    counts = [len(r["response"]["citations"]) for r in records]
    answers = pl.DataFrame(
        {
            "answer_id": [r["response"]["id"] for r in records],
            "question": [r["question"] for r in records],
            "model": [r["response"]["model"] for r in records],
        }
    )
    owner = pl.Series([i for i, n in enumerate(counts) for _ in range(n)], dtype=pl.UInt32)
    cits = pl.DataFrame(raw, infer_schema_length=None)
    return pl.concat([answers[owner], cits], how="horizontal").with_columns(
        provider=pl.lit("magisterium"),
        marker=(pl.col("document_index") + 1).cast(pl.Int32),
        year=year_expr("document_year"),
    )


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best = float("inf")
    result: Any = None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_growth(fn: Callable[[], Any]) -> float:
    """Highest resident set growth (MiB) while ``fn`` runs, sampled every millisecond."""
    gc.collect()
    before = _rss_bytes()
    peak = before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _rss_bytes())
            time.sleep(0.001)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    result = fn()
    peak = max(peak, _rss_bytes())
    done.set()
    sampler.join()
    del result
    return (peak - before) / 2**20


def _runs(records: list[dict[str, Any]], answers: list[Answer]) -> dict[str, Callable[[], Any]]:
    return {
        "citekit.citations_frame(answers)": lambda: citations_frame(answers),
        "pandas.json_normalize(responses)": lambda: pandas_normalize(records),
        "polars floor: pl.DataFrame(raw dicts)": lambda: polars_floor(records),
    }


def _parse(records: list[dict[str, Any]]) -> list[Answer]:
    return [
        Answer.from_response(r["response"], provider="magisterium", question=r["question"])
        for r in records
    ]


def _memory_child(name: str, n_answers: int, n_citations: int) -> None:
    records = make_records(n_answers, n_citations)
    answers = _parse(records)
    print(f"{peak_growth(_runs(records, answers)[name]):.1f}")


def memory_in_fresh_process(name: str, n_answers: int, n_citations: int) -> float | None:
    """Peak growth measured in a new interpreter, so no run inherits another's free memory."""
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--answers",
            str(n_answers),
            "--citations",
            str(n_citations),
            "--memory-of",
            name,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--citations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory runs")
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_of:
        _memory_child(args.memory_of, args.answers, args.citations)
        return

    print(f"polars {pl.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    records = make_records(args.answers, args.citations)
    print(
        f"built {args.answers:,} responses x {args.citations} citations "
        f"in {time.perf_counter() - t0:.2f} s"
    )
    t0 = time.perf_counter()
    answers = _parse(records)
    print(f"parsed into Answer objects in {time.perf_counter() - t0:.2f} s (not counted below)")

    times: dict[str, float] = {}
    print(f"\n{'run':40} {'best s':>8} {'rows':>10} {'cols':>5} {'peak MiB':>9}")
    for name, fn in _runs(records, answers).items():
        seconds, result = best_time(fn, args.repeat)
        times[name] = seconds
        rows, cols = result.shape
        del result
        memory = (
            None if args.no_memory else memory_in_fresh_process(name, args.answers, args.citations)
        )
        mem_text = f"{memory:9.0f}" if memory is not None else "      n/a"
        print(f"{name:40} {seconds:8.3f} {rows:10,} {cols:5} {mem_text}", flush=True)

    ours = times["citekit.citations_frame(answers)"]
    pandas_ratio = times["pandas.json_normalize(responses)"] / ours
    floor_ratio = ours / times["polars floor: pl.DataFrame(raw dicts)"]
    print(f"\npandas.json_normalize / citations_frame = {pandas_ratio:.1f}x faster (goal >= 5x)")
    print(f"citations_frame / polars floor          = {floor_ratio:.2f}x (goal <= 1.5x)")
    print(f"citations per second (citations_frame): {len(answers) * args.citations / ours:,.0f}")
    print("peak MiB: resident set growth during one call, each in a fresh interpreter")


if __name__ == "__main__":
    main()
