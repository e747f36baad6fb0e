"""Saved responses to a citations frame, end to end, against pandas and a polars floor.

Builds N Magisterium-style responses with C citations each (default 100,000 x 10; every
answer's text is its own, as in a real corpus), as sample records ``{question, response}``,
and times, best of ``--repeat`` runs, from the data the user has:

(a) a list of response dicts (what ``json.load`` of a saved corpus gives):

* ``citekit.citations_frame(dicts)``: the full frame (15 columns, entities decoded, years
  parsed, ``cited_inline`` from each answer's inline markers), read column-wise;
* ``pandas.json_normalize`` of the same dicts (citations as records, answer id, model and
  question as meta): the usual pandas route, with no entity decoding, years or markers;
* a polars floor: ``pl.DataFrame`` of the raw citation dicts plus the answer columns, the
  marker and the parsed year (no entity decoding, no ``cited_inline``).

(b) a JSON Lines file on disk (one record per line):

* ``citekit.citations_frame(path)``;
* pandas: ``json.loads`` of each line, then ``json_normalize``;
* a polars floor: ``pl.read_ndjson`` of the file, exploded and unnested, with the marker
  and the parsed year.

With ``--from-answers``, also the old figure: ``citations_frame`` of ``Answer`` objects
parsed beforehand (the parse, which a user with saved responses pays, is not timed there).

Peak memory is the growth of the resident set during one call, sampled in a fresh interpreter
per run (polars allocates outside the Python heap, so ``tracemalloc`` would miss most of it).

Run: ``.venv/bin/python bench/frames.py [--answers 100000] [--citations 10] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citekit.wire.parsers import parse_response

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
                                # every text its own: no reading is a cache hit
                                "content": f"Answer {i}: {bodies[i % len(bodies)]} {markers}.",
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


def write_jsonl(records: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")


def pandas_normalize(records: list[dict[str, Any]]) -> Any:
    import pandas as pd

    return pd.json_normalize(
        records,
        record_path=["response", "citations"],
        meta=["question", ["response", "id"], ["response", "model"]],
    )


def pandas_jsonl(path: Path) -> Any:
    with path.open("rb") as f:
        records = [json.loads(line) for line in f if line.strip()]
    return pandas_normalize(records)


def _floor_columns(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        provider=pl.lit("magisterium"),
        marker=(pl.col("document_index") + 1).cast(pl.Int32),
        year=year_expr("document_year"),
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
    return _floor_columns(pl.concat([answers[owner], cits], how="horizontal"))


def polars_floor_jsonl(path: Path) -> pl.DataFrame:
    response = pl.col("response")
    frame = (
        pl.read_ndjson(path)
        .select(
            "question",
            response.struct.field("id").alias("answer_id"),
            response.struct.field("model").alias("model"),
            response.struct.field("citations").alias("citation"),
        )
        .explode("citation")
        .unnest("citation")
    )
    return _floor_columns(frame)


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[list[float], list[float], Any]:
    """Wall-clock seconds and CPU seconds (all threads of the process) of each run."""
    times, cpu = [], []
    result: Any = None
    for _ in range(repeat):
        result = None
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu, result


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


CITEKIT_DICTS = "(a) citekit.citations_frame(dicts)"
PANDAS_DICTS = "(a) pandas.json_normalize(dicts)"
FLOOR_DICTS = "(a) polars floor: pl.DataFrame(dicts)"
CITEKIT_FILE = "(b) citekit.citations_frame(file)"
PANDAS_FILE = "(b) pandas: json.loads + normalize"
FLOOR_FILE = "(b) polars floor: read_ndjson+explode"
FROM_ANSWERS = "citekit.citations_frame(Answers)*"


def _runs(
    records: list[dict[str, Any]], path: Path, answers: list[Answer] | None
) -> dict[str, Callable[[], Any]]:
    runs: dict[str, Callable[[], Any]] = {
        CITEKIT_DICTS: lambda: citations_frame(records),
        PANDAS_DICTS: lambda: pandas_normalize(records),
        FLOOR_DICTS: lambda: polars_floor(records),
        CITEKIT_FILE: lambda: citations_frame(path),
        PANDAS_FILE: lambda: pandas_jsonl(path),
        FLOOR_FILE: lambda: polars_floor_jsonl(path),
    }
    if answers is not None:
        runs[FROM_ANSWERS] = lambda: citations_frame(answers)
    return runs


def _parse(records: list[dict[str, Any]]) -> list[Answer]:
    return [
        parse_response(r["response"], provider="magisterium", question=r["question"])
        for r in records
    ]


def _memory_child(name: str, n_answers: int, n_citations: int, path: Path) -> None:
    file_run = name.startswith("(b)")
    records = [] if file_run else make_records(n_answers, n_citations)
    answers = _parse(records) if name == FROM_ANSWERS else None
    print(f"{peak_growth(_runs(records, path, answers)[name]):.1f}")


def memory_in_fresh_process(
    name: str, n_answers: int, n_citations: int, path: Path
) -> float | None:
    """Peak growth measured in a new interpreter, so no run inherits another's free memory."""
    command = [sys.executable, __file__, "--answers", str(n_answers)]
    command += ["--citations", str(n_citations), "--memory-of", name, "--file", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
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
    parser.add_argument(
        "--from-answers",
        action="store_true",
        help="also time citations_frame of Answer objects parsed beforehand (the old figure)",
    )
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_of:
        _memory_child(args.memory_of, args.answers, args.citations, Path(args.file))
        return

    print(f"polars {pl.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    records = make_records(args.answers, args.citations)
    folder = Path(tempfile.mkdtemp(prefix="citekit-bench-frames-"))
    path = folder / "responses.jsonl"
    write_jsonl(records, path)
    size = path.stat().st_size / 2**20
    print(
        f"built {args.answers:,} responses x {args.citations} citations "
        f"({size:,.0f} MiB as JSON Lines) in {time.perf_counter() - t0:.2f} s"
    )
    answers = None
    if args.from_answers:
        t0 = time.perf_counter()
        answers = _parse(records)
        print(f"parsed into Answer objects in {time.perf_counter() - t0:.2f} s (* not counted)")

    times: dict[str, float] = {}
    cpu_times: dict[str, float] = {}
    memory: dict[str, float | None] = {}
    head = f"{'run':42} {'best s':>7} {'runs s':>17} {'CPU s':>7} {'rows':>10} {'cols':>4}"
    print(f"\n{head} {'peak MiB':>8}")
    try:
        for name, fn in _runs(records, path, answers).items():
            runs, cpu, result = best_time(fn, args.repeat)
            times[name] = min(runs)
            cpu_times[name] = min(cpu)
            rows, cols = result.shape
            del result
            mem = (
                None
                if args.no_memory
                else memory_in_fresh_process(name, args.answers, args.citations, path)
            )
            memory[name] = mem
            mem_text = f"{mem:8.0f}" if mem is not None else "     n/a"
            shown = " ".join(f"{t:.2f}" for t in runs)
            line = f"{name:42} {min(runs):7.3f} {shown:>17} {min(cpu):7.2f} {rows:10,} {cols:4}"
            print(f"{line} {mem_text}", flush=True)
    finally:
        path.unlink(missing_ok=True)
        folder.rmdir()

    print()
    # The goals of issue 27: (a) citekit / floor <= 0.7x; (b) pandas / citekit >= 2.5x with
    # peak memory <= 0.5x pandas'.
    for label, ours, pandas, floor in (
        ("(a) dicts", CITEKIT_DICTS, PANDAS_DICTS, FLOOR_DICTS),
        ("(b) JSONL", CITEKIT_FILE, PANDAS_FILE, FLOOR_FILE),
    ):
        dicts = label.startswith("(a)")
        speedup = times[pandas] / times[ours]
        to_floor = times[ours] / times[floor]
        print(f"{label}: pandas / citekit = {speedup:.2f}x faster", end="")
        print("" if dicts else " (goal >= 2.5x)", end="")
        print(f"; citekit / polars floor = {to_floor:.2f}x", end="")
        print(" (goal <= 0.7x)" if dicts else "", end="")
        cpu_speedup = cpu_times[pandas] / cpu_times[ours]
        cpu_floor = cpu_times[ours] / cpu_times[floor]
        print(f"; in CPU time {cpu_speedup:.2f}x and {cpu_floor:.2f}x", end="")
        ours_mem, pandas_mem = memory.get(ours), memory.get(pandas)
        if ours_mem is not None and pandas_mem is not None:
            goal = "" if dicts else " (goal <= 0.5x)"
            print(f"; peak memory citekit / pandas = {ours_mem / pandas_mem:.2f}x{goal}")
        else:
            print()
    n = args.answers * args.citations
    print(f"citations per second, citekit from dicts: {n / times[CITEKIT_DICTS]:,.0f}")
    print("peak MiB: resident set growth during one call, each in a fresh interpreter")
    print("CPU s: process CPU time (every thread), steadier than wall time on a shared machine")


if __name__ == "__main__":
    main()
