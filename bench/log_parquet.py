"""The answer log as a Parquet dataset: ``ck.to_parquet(log)`` against ``citations_frame(log)``.

Generates a log of N Magisterium-style answers with 10 citations each (``bench/log.py``'s
generator, written with ``Log.record`` from an event loop; with ``--mixed``, a third each of
those, of Maritaca's and of GPTBots' recorded samples, copied with ids of their own and without
their sample label, so that every provider's partitions are exported), then, each in a fresh
interpreter (wall and CPU time, and peak resident memory from ``/proc/self/status`` VmHWM: the
interpreter's whole peak, imports included), alternating:

* ``citations_frame(log)``: the citations read with SQL (the peer);
* ``ck.to_parquet(log, folder)``: the four tables, partitioned, with identity.

``--tree`` runs the two against another checkout's code on the same log file (the code
before a change, side by side in one sitting). Run:
``.venv/bin/python bench/log_parquet.py [--answers 10000 50000] [--repeat 2] [--tree PATH]
[--logs FOLDER] [--mixed]`` (``--logs`` keeps the generated logs there and reuses one made
by the same generator code: ``log-N-DIGEST.sqlite``, ``log-mixed-N-DIGEST.sqlite``)
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_RUN = """
import json, sys, time, tempfile
from pathlib import Path
import citekit as ck
from citekit.store import Log
log = Log({path!r})
start, cpu = time.perf_counter(), time.process_time()
if {parquet!r}:
    rows = ck.to_parquet(log, Path(tempfile.mkdtemp()) / "ds", progress=False).rows["citations"]
else:
    rows = ck.citations_frame(log).height
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({{"seconds": seconds, "cpu": cpu, "peak_mb": peak, "rows": rows}}))
"""


def build(path: Path, n: int, *, mixed: bool = False) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from log import answers_of, make_bodies, write  # type: ignore[import-not-found]

    from citekit.store import Log

    log = Log(path)
    generated = n - 2 * (n // 3) if mixed else n
    for start in range(0, generated, 5_000):
        bodies = make_bodies(min(5_000, generated - start), 10, seed=start + 7)
        for i, body in enumerate(bodies):  # distinct ids and times across the batches
            body["id"], body["created"] = f"chatcmpl-{start + i}", 1_760_000_000 + start + i
        write(log, answers_of(bodies), f"{start}-", loop=True)
    if mixed:
        for provider in ("maritaca", "gptbots"):
            write(log, copies(provider, n // 3), f"{provider}-", loop=True)
    log.close()


def copies(provider: str, n: int) -> list[Any]:
    """``n`` answers copied from ``provider``'s recorded samples in turn, each with an id of its
    own and no sample label (an export leaves samples out), parsed as the client parses them."""
    from dataclasses import replace

    from citekit.data.frames.sources import load_answers
    from citekit.model import SAMPLE_FIELD, Answer, References
    from citekit.testing import default_data_dir
    from citekit.wire.parsers import parse_response

    def unlabelled(raw: Any) -> dict[str, Any]:
        return {k: v for k, v in raw.items() if k != SAMPLE_FIELD}

    samples = [a for a in load_answers(default_data_dir() / provider) if isinstance(a, Answer)]
    key = "message_id" if provider == "gptbots" else "id"
    out = []
    for i in range(n):
        a = samples[i % len(samples)]
        body = {**unlabelled(a.raw), key: f"{a.id}-{i}"}
        answer = parse_response(body, provider=provider, question=a.question)
        if a.references is not None:
            refs = References.from_response(unlabelled(a.references.raw), message_id=answer.id)
            answer = replace(answer, references=refs)
        assert answer.sample is None
        out.append(answer)
    return out


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


def _generator() -> str:
    """A digest of the code that makes the logs (``bench/log.py`` and this file's)."""
    code = (ROOT / "bench" / "log.py").read_bytes() + inspect.getsource(build).encode()
    code += inspect.getsource(copies).encode()
    return hashlib.sha256(code).hexdigest()[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--answers", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument(
        "--logs", type=Path, help="keep the generated logs in this folder, and reuse them"
    )
    parser.add_argument(
        "--mixed", action="store_true", help="a third each of Magisterium, Maritaca, GPTBots"
    )
    args = parser.parse_args()
    trees = [ROOT, *args.tree]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.logs or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for n in args.answers:
            # Named after the generator's code too: a log made by another version is not reused.
            path = Path(folder) / f"log-{'mixed-' if args.mixed else ''}{n}-{_generator()}.sqlite"
            if not path.exists():
                build(path, n, mixed=args.mixed)
            what = "of the three providers" if args.mixed else "x 10 citations"
            print(f"{n:,} logged answers {what}")
            for _ in range(args.repeat):
                for tree in trees:
                    peer = measure(tree, path, parquet=False)
                    ours = measure(tree, path, parquet=True)
                    print(
                        f"  {tree}: to_parquet(log) {ours['seconds']:.2f} s "
                        f"({ours['cpu']:.2f} s CPU), {ours['peak_mb']:.0f} MiB; "
                        f"citations_frame(log) {peer['seconds']:.2f} s ({peer['cpu']:.2f} s CPU), "
                        f"{peer['peak_mb']:.0f} MiB; {ours['seconds'] / peer['seconds']:.2f}x the "
                        f"time ({ours['cpu'] / peer['cpu']:.2f}x in CPU), "
                        f"{ours['peak_mb'] / peer['peak_mb']:.2f}x the memory"
                    )


if __name__ == "__main__":
    main()
