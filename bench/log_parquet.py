"""The answer log as a Parquet dataset: ``ck.to_parquet(log)`` against ``citations_frame(log)``.

Generates a log of N Magisterium-style answers with 10 citations each (``bench/log.py``'s
generator, written with ``Log.record`` from an event loop), then, each in a fresh interpreter
(time, and peak resident memory from ``/proc/self/status`` VmHWM), alternating:

* ``citations_frame(log)``: the citations read with SQL (the peer);
* ``ck.to_parquet(log, folder)``: the four tables, partitioned, with identity.

``--tree`` runs the two against another checkout's code on the same log file (the code
before a change, side by side in one sitting). Run:
``.venv/bin/python bench/log_parquet.py [--answers 10000 50000] [--repeat 2] [--tree PATH]
[--logs FOLDER]`` (``--logs`` keeps the generated logs there and reuses them)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_RUN = """
import json, sys, time, tempfile
from pathlib import Path
import citekit as ck
from citekit.store import Log
log = Log({path!r})
start = time.perf_counter()
if {parquet!r}:
    rows = ck.to_parquet(log, Path(tempfile.mkdtemp()) / "ds", progress=False).rows["citations"]
else:
    rows = ck.citations_frame(log).height
seconds = time.perf_counter() - start
peak = next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({{"seconds": seconds, "peak_mb": peak, "rows": rows}}))
"""


def build(path: Path, n: int) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from log import answers_of, make_bodies, write  # type: ignore[import-not-found]

    from citekit.store import Log

    log = Log(path)
    for start in range(0, n, 5_000):
        bodies = make_bodies(min(5_000, n - start), 10, seed=start + 7)
        for i, body in enumerate(bodies):  # distinct ids and times across the batches
            body["id"], body["created"] = f"chatcmpl-{start + i}", 1_760_000_000 + start + i
        write(log, answers_of(bodies), f"{start}-", loop=True)
    log.close()


def measure(tree: Path, path: Path, *, parquet: bool) -> dict[str, float]:
    code = textwrap.dedent(_RUN.format(path=str(path), parquet=parquet))
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--answers", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument(
        "--logs", type=Path, help="keep the generated logs in this folder, and reuse them"
    )
    args = parser.parse_args()
    trees = [ROOT, *args.tree]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.logs or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for n in args.answers:
            path = Path(folder) / f"log-{n}.sqlite"
            if not path.exists():
                build(path, n)
            print(f"{n:,} logged answers x 10 citations")
            for _ in range(args.repeat):
                for tree in trees:
                    peer = measure(tree, path, parquet=False)
                    ours = measure(tree, path, parquet=True)
                    print(
                        f"  {tree}: to_parquet(log) {ours['seconds']:.2f} s, "
                        f"{ours['peak_mb']:.0f} MiB; citations_frame(log) {peer['seconds']:.2f} s, "
                        f"{peer['peak_mb']:.0f} MiB; {ours['seconds'] / peer['seconds']:.2f}x the "
                        f"time, {ours['peak_mb'] / peer['peak_mb']:.2f}x the memory"
                    )


if __name__ == "__main__":
    main()
