"""The answer log at scale: reading it into frames, its size, and how fast it is written.

Generates N Magisterium-style responses with C citations each (default 100,000 x 10: a million
citations; words drawn from a vocabulary of 4,000 made-up words, so that zlib finds about what it
finds in prose, not the repeats of a tiny vocabulary), builds each ``Answer`` with
``parse_response`` and writes them with ``Log.record``, the call every client makes. Then,
side by side, with ratios:

(a) reading: ``citations_frame(log)`` (SQL, no Answer rebuilt) against a bare
    ``SELECT * FROM citations`` into polars (``pl.DataFrame(cursor.fetchall(), orient="row")``),
    and against the old route ``citations_frame(log.answers())`` (best of ``--repeat``);
(b) size: log bytes per answer (file and WAL after a checkpoint) against the raw response JSON
    (compact, as the log dumps it), for the generated answers and for the recorded samples;
(c) writing: answers/s from one process, and from 4 processes writing one file at once (each
    writes N/4; every answer is counted back); recorded on an event loop, as ``ask_many`` and
    the async clients record (the writer thread writes the rows waiting in one transaction),
    and on a plain thread (one transaction per answer).

Run: ``.venv/bin/python bench/log.py [--answers 100000] [--citations 10] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from citekit.wire.parsers import parse_response

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import polars as pl

from citekit import Answer
from citekit.data.frames import citations_frame
from citekit.store import Log

AUTHORS = ["Pope Leo XIII", "Pope Francis", "Thomas Aquinas", "Second Vatican Council", None]
YEARS = ["1891", "2015", "c. 1270", "1962-1965", "397", "1993", "", None]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 7, 7, 6, 6, 6, 5, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    return ["".join(rng.choices(letters, weights, k=rng.randint(2, 10))) for _ in range(size)]


def make_bodies(n_answers: int, n_citations: int, seed: int = 7) -> list[dict[str, Any]]:
    """Magisterium ``chat.completion`` bodies (question in ``_question``), ``n_citations`` each."""
    rng = random.Random(seed)
    words = vocabulary(rng)

    def prose(k: int) -> str:
        return " ".join(rng.choices(words, k=k))

    passages = [prose(45) for _ in range(4000)]
    markers = "".join(f"[^{k + 1}]" for k in range(0, n_citations, 2))
    bodies = []
    for i in range(n_answers):
        citations = []
        for j in range(n_citations):
            doc = rng.randrange(400)
            citations.append(
                {
                    "cited_text": passages[rng.randrange(len(passages))],
                    "cited_text_heading": f"Chapter {doc % 12}" if doc % 3 else None,
                    "document_title": f"Document {doc}",
                    "document_index": j if j < n_citations - 2 else j - 1,
                    "document_author": AUTHORS[doc % len(AUTHORS)],
                    "document_year": YEARS[doc % len(YEARS)],
                    "document_reference": str(doc % 90),
                    "source_url": f"https://example.org/doc/{doc}",
                }
            )
        bodies.append(
            {
                "id": f"chatcmpl-{i}",
                "object": "chat.completion",
                "created": 1_760_000_000 + i,
                "model": "magisterium-1",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"{prose(150)} {markers}."},
                        "finish_reason": "stop",
                    }
                ],
                "citations": citations,
                "usage": {"prompt_tokens": 40, "completion_tokens": 300, "total_tokens": 340},
                "_question": f"Question {i}: {prose(8)}?",
            }
        )
    return bodies


def answers_of(bodies: list[dict[str, Any]]) -> list[Answer]:
    return [parse_response(b, provider="magisterium", question=b["_question"]) for b in bodies]


def raw_bytes(bodies: list[dict[str, Any]]) -> int:
    return sum(
        len(json.dumps(b, ensure_ascii=False, separators=(",", ":")).encode()) for b in bodies
    )


def write(log: Log, answers: list[Answer], tag: str = "", *, loop: bool = False) -> float:
    """Seconds to record ``answers`` and have every one in the file: from a plain thread (one
    transaction per answer, in the file when ``record`` returns), or with ``loop`` from a
    thread running an event loop, where ``ask_many`` and the async clients record (the rows go
    to the writer thread, which writes those waiting in one transaction)."""

    def each() -> None:
        for i, a in enumerate(answers):
            log.record(a, request={"model": "magisterium-1", "q": f"{tag}{i}"}, elapsed=0.5)

    async def on_loop() -> None:
        each()

    start = time.perf_counter()
    if loop:
        asyncio.run(on_loop())
    else:
        each()
    log.flush()
    return time.perf_counter() - start


def _worker(path: str, n: int, citations: int, seed: int, loop: bool, ready: Any, go: Any) -> None:
    answers = answers_of(make_bodies(n, citations, seed=seed))
    log = Log(path)
    log.connect()
    ready.release()
    go.wait()
    write(log, answers, tag=f"p{seed}-", loop=loop)
    log.close()


def four_writers(path: str, n: int, citations: int, *, loop: bool) -> float:
    """Answers/s of 4 processes writing ``n`` answers in all to one file at once."""
    ctx = multiprocessing.get_context("spawn")
    ready, go = ctx.Semaphore(0), ctx.Event()
    each = n // 4
    procs = [
        ctx.Process(target=_worker, args=(path, each, citations, 100 + w, loop, ready, go))
        for w in range(4)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    start = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    wall = time.perf_counter() - start
    assert all(p.exitcode == 0 for p in procs)
    counted = Log(path).count()
    assert counted == 4 * each, f"{counted} answers in the file, {4 * each} written"
    return 4 * each / wall


def bare_select(path: Path) -> pl.DataFrame:
    conn = sqlite3.connect(path)
    cur = conn.execute("SELECT * FROM citations")
    names = [d[0] for d in cur.description]
    types = {
        "answer": pl.Int64,
        "position": pl.Int64,
        "marker": pl.Int32,
        "document_index": pl.Int32,
        "cited_inline": pl.Int8,
    }
    frame = pl.DataFrame(
        cur.fetchall(), orient="row", schema={n: types.get(n, pl.String) for n in names}
    )
    conn.close()
    return frame


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def samples_ratio(folder: Path) -> tuple[int, float, float]:
    """(answers, log bytes per answer, raw bytes per answer) for the recorded samples."""
    from citekit.data.frames.sources import load_answers
    from citekit.testing import default_data_dir

    # Each sample 100 times: a few dozen answers would measure the file's fixed pages.
    answers = [a for a in load_answers(default_data_dir()) if isinstance(a, Answer)] * 100
    raw = sum(
        len(json.dumps(dict(a.raw), ensure_ascii=False, separators=(",", ":")).encode())
        + (
            len(json.dumps(dict(a.references.raw), separators=(",", ":")).encode())
            if a.references
            else 0
        )
        for a in answers
    )
    log = Log(folder / "samples.sqlite3")
    write(log, answers)
    log.vacuum()
    return len(answers), log.size() / len(answers), raw / len(answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--citations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-four", action="store_true", help="no 4-process runs")
    args = parser.parse_args()
    n, c = args.answers, args.citations
    folder = Path(tempfile.mkdtemp(prefix="citekit-bench-log-"))
    print(f"{n:,} answers x {c} citations = {n * c:,} citations; files in {folder}")

    bodies = make_bodies(n, c)
    raw = raw_bytes(bodies)
    answers = answers_of(bodies)
    del bodies

    # (c) writing, one process
    log = Log(folder / "log.sqlite3")
    one_loop = n / write(log, answers, loop=True)
    plain = Log(folder / "plain.sqlite3")
    one_plain = n / write(plain, answers)
    plain.close()

    # (b) size
    log.vacuum()  # a checkpoint: the WAL folded into the file (no free pages to drop here)
    size = log.size()
    s_n, s_log, s_raw = samples_ratio(folder)

    # (a) reading
    path = log.path
    # Taken in turns, so that a busy moment of the machine does not fall on one of them.
    sql_times, bare_times = [], []
    for _ in range(args.repeat):
        t_bare, bare = best(lambda: bare_select(path), 1)
        t_sql, frame = best(lambda: citations_frame(log), 1)
        bare_times.append(t_bare)
        sql_times.append(t_sql)
    t_bare, t_sql = min(bare_times), min(sql_times)
    t_old, old = best(lambda: citations_frame(log.answers()), 1)
    assert frame.height == bare.height == old.height == n * c
    assert frame.equals(old), "the SQL frame differs from the frame of the answers"

    # (c) writing, 4 processes at once
    four_loop = four_plain = float("nan")
    if not args.skip_four:
        four_loop = four_writers(str(folder / "four-loop.sqlite3"), n, c, loop=True)
        four_plain = four_writers(str(folder / "four-plain.sqlite3"), n, c, loop=False)

    print()
    print("(a) 1M citations from the log into a frame" if n * c == 1_000_000 else "(a) reading")
    print(f"    bare SELECT * FROM citations -> polars  {t_bare:7.2f} s   1.00x", end="")
    print(f"   (runs: {', '.join(f'{x:.2f}' for x in bare_times)})")
    print(
        f"    citations_frame(log)  (SQL)             {t_sql:7.2f} s   {t_sql / t_bare:.2f}x",
        end="",
    )
    print(f"   (runs: {', '.join(f'{x:.2f}' for x in sql_times)})")
    print(
        f"    citations_frame(log.answers())  (old)   {t_old:7.2f} s   {t_old / t_bare:.2f}x"
        f"   (SQL is {t_old / t_sql:.1f}x faster)"
    )
    print("(b) log bytes per answer vs raw response JSON")
    print(f"    generated: {size / n:8.0f} B vs {raw / n:8.0f} B raw   {size / raw:.2f}x")
    print(f"    samples ({s_n}): {s_log:8.0f} B vs {s_raw:8.0f} B raw   {s_log / s_raw:.2f}x")
    print("(c) write throughput, Log.record, every answer read back")
    print("    recorded on an event loop (ask_many, async clients; batched by the writer thread)")
    print(f"      one process   {one_loop:8.0f} answers/s")
    print(f"      4 processes   {four_loop:8.0f} answers/s in all")
    print("    recorded on a plain thread (one transaction each, in the file when record returns)")
    print(f"      one process   {one_plain:8.0f} answers/s")
    print(f"      4 processes   {four_plain:8.0f} answers/s in all")


if __name__ == "__main__":
    main()
