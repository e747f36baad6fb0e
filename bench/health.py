"""How long ``ck.health_frame`` takes on 10,000 answers, and where the time goes.

The answers are the recorded samples of all three providers (40 answers: Magisterium's
footnoted answers, GPTBots' corner citations and knowledge chunks, Maritaca's linked web
sources), repeated to ``--answers`` with each copy's text made distinct (a sentence added
with the copy's number), so that no cache of the text reader or of the sentence splitter is
hit: every text is read and split afresh, as with a real collection of answers.

Times, best of ``--repeat`` runs, as wall-clock and as processor time (the processor time is
the figure to compare on a shared machine, where other work stretches the wall clock): the
whole ``health_frame``; ``sources_frame`` alone (its identity of works included), which
``health_frame`` builds on; and the sentence splitter alone over the same texts.

Run: ``.venv/bin/python bench/health.py [--answers 10000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import citekit as ck
from citekit.data.frames.sources import load_answers
from citekit.testing import default_data_dir
from citekit.text.reader import read
from citekit.text.sentences import _sentences


def answers(n: int) -> list[ck.Answer]:
    base = [a for a in load_answers(default_data_dir()) if isinstance(a, ck.Answer)]
    out = []
    for i in range(n):
        a = base[i % len(base)]
        out.append(replace(a, text=f"{a.text}\n\nCopy {i} of this answer.", id=f"{a.id}-{i}"))
    return out


def best(run: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """The best wall time and the best processor time of ``repeat`` runs, caches cleared."""
    walls, cpus = [], []
    for _ in range(repeat):
        read.cache_clear()
        _sentences.cache_clear()
        start, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    many = answers(args.answers)
    texts = [a.text for a in many]
    n_sources = sum(len(a.citations) + len(a.references or ()) for a in many)
    print(f"{len(many):,} answers, {n_sources:,} sources, {sum(map(len, texts)) / 1e6:.1f} MB")
    whole = best(lambda: ck.health_frame(many), args.repeat)
    sources = best(lambda: ck.sources_frame(many), args.repeat)
    split = best(lambda: [_sentences(t) for t in texts], args.repeat)
    n = len(many)
    print("                  wall      processor")
    each = whole[1] / n * 1e6
    print(f"health_frame      {whole[0]:6.2f} s  {whole[1]:6.2f} s  ({each:.0f} µs/answer)")
    print(f"  sources_frame   {sources[0]:6.2f} s  {sources[1]:6.2f} s")
    print(f"  sentences       {split[0]:6.2f} s  {split[1]:6.2f} s  (text reader included)")


if __name__ == "__main__":
    main()
