"""The Parquet dataset: writing it, and charting from it lazily against charting an eager frame.

For each size (default 1M and 10M citations), each measured in a fresh interpreter (time, and
peak resident memory from ``/proc/self/status`` VmHWM: polars allocates outside the Python
heap, so ``tracemalloc`` would miss most of it):

* **write**: ``ck.to_parquet(answers, folder)`` of N/10 Magisterium answers with 10 citations
  each (the four tables, partitioned), against the eager peer ``citations_frame(answers)
  .write_parquet(file)`` (one table, one file). Both start from ``Answer`` objects, built
  before the clock starts (their memory counts in both peaks). Only up to 1M citations: 10M
  would hold a million ``Answer`` objects (about 10 GB); the 10M dataset is written by the
  chunked generator (``tests/data/io/synthetic_dataset.py``), timed apart.
* **chart**: ``ck.charts.authors``, ``works``, ``years`` and ``citations_per_answer`` from
  ``ck.scan_citations(folder)`` (streaming, only aggregated rows collected), against the same
  four charts from the eager frame (``pl.read_parquet`` of the same files, then the charts;
  the read is in its time and memory, as a notebook that loads its frame pays it).

Ratios are printed as dataset / peer. Run:
``.venv/bin/python bench/dataset.py [--sizes 1000000 10000000] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PEAK = """
def _peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
"""

_WRITE = (
    _PEAK
    + """
import sys, time, json
sys.path.insert(0, {bench!r})
from frames import make_records
import citekit as ck
from citekit import Answer
records = make_records({answers}, 10)
answers = [parse_response(r["response"], provider="magisterium", question=r["question"])
           for r in records]
del records
start = time.perf_counter()
if {mode!r} == "dataset":
    ck.to_parquet(answers, {out!r}, progress=False)
else:
    ck.citations_frame(answers).write_parquet({out!r})
print(json.dumps({{"seconds": time.perf_counter() - start, "peak_mb": _peak_mb()}}))
"""
)

_CHART = (
    _PEAK
    + """
import time, json
import polars as pl
import citekit as ck
start = time.perf_counter()
if {mode!r} == "lazy":
    cits = ck.scan_citations({folder!r})
else:
    cits = pl.read_parquet({folder!r} + "/citations/**/*.parquet", hive_partitioning=True)
for chart in (ck.charts.authors, ck.charts.works, ck.charts.years, ck.charts.citations_per_answer):
    chart(cits)
print(json.dumps({{"seconds": time.perf_counter() - start, "peak_mb": _peak_mb()}}))
"""
)


def _run(code: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _best(runs: list[dict[str, float]]) -> tuple[float, float, float, float]:
    seconds = [r["seconds"] for r in runs]
    peaks = [r["peak_mb"] for r in runs]
    return min(seconds), max(seconds), min(peaks), max(peaks)


def _line(what: str, ours: list[dict[str, float]], peer: list[dict[str, float]]) -> None:
    o, p = _best(ours), _best(peer)
    print(
        f"  {what:<34} {o[0]:7.2f}-{o[1]:.2f} s {o[2]:6.0f}-{o[3]:.0f} MB | "
        f"peer {p[0]:7.2f}-{p[1]:.2f} s {p[2]:6.0f}-{p[3]:.0f} MB | "
        f"time x{o[0] / p[0]:.2f}, peak x{o[3] / p[3]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    bench = str(ROOT / "bench")
    with tempfile.TemporaryDirectory(prefix="citekit-bench-") as tmp:
        for size in args.sizes:
            print(f"{size:,} citations")
            if size <= 1_000_000:
                ours, peer = [], []
                for k in range(args.repeat):
                    out = f"{tmp}/w{size}-{k}"
                    n = size // 10
                    ours.append(
                        _run(_WRITE.format(bench=bench, answers=n, mode="dataset", out=out))
                    )
                    peer.append(
                        _run(_WRITE.format(bench=bench, answers=n, mode="frame", out=out + ".pq"))
                    )
                _line("write: to_parquet vs frame+file", ours, peer)
            folder = f"{tmp}/d{size}"
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "tests" / "data" / "io" / "synthetic_dataset.py"),
                    folder,
                    str(size),
                ],
                cwd=ROOT,
                check=True,
            )
            print(f"  generated (chunked) in {time.perf_counter() - start:.1f} s")
            lazy = [_run(_CHART.format(mode="lazy", folder=folder)) for _ in range(args.repeat)]
            eager = [_run(_CHART.format(mode="eager", folder=folder)) for _ in range(args.repeat)]
            _line("4 charts: scan vs eager frame", lazy, eager)


if __name__ == "__main__":
    main()
