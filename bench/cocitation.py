"""How fast ``cocitation_frame`` counts the work pairs of many answers, and its heatmap.

Builds a sources frame of N answers with S sources each (default 100,000 x 10 = 1M sources)
whose works follow a Zipf law over W works (default 3,000: a few works cited everywhere, a long
tail), with the identity columns already there (as ``sources_frame`` gives them: this times the
co-citation itself, not the clustering), then times, best of ``--repeat`` runs:

* ``cocitation_frame(frame)``: the pairs with their counts, totals and Jaccard index;
* ``charts.cocitation(co).to_dict()``: the heatmap of the top 15 works (altair imported first).

Run: ``.venv/bin/python bench/cocitation.py [--answers 100000] [--sources 10] [--works 3000]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import polars as pl

from citekit.data import charts
from citekit.data.corpus.cocitation import cocitation_frame


def make_frame(n_answers: int, per_answer: int, n_works: int, seed: int = 7) -> pl.DataFrame:
    rng = random.Random(seed)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(n_works)]
    works = rng.choices(range(n_works), weights=weights, k=n_answers * per_answer)
    providers = rng.choices(["magisterium", "gptbots", "maritaca"], k=n_answers)
    return pl.DataFrame(
        {
            "provider": [p for p in providers for _ in range(per_answer)],
            "answer_id": [f"a{i}" for i in range(n_answers) for _ in range(per_answer)],
            "question": pl.Series([None] * (n_answers * per_answer), dtype=pl.String),
            "work_id": [f"w-{w:05d}" for w in works],
            "work": [f"Work number {w}" for w in works],
        }
    )


def best(repeat: int, run: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--sources", type=int, default=10)
    parser.add_argument("--works", type=int, default=3_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frame = make_frame(args.answers, args.sources, args.works)
    co = cocitation_frame(frame)
    charts.cocitation(co.head(10)).to_dict()  # altair imported outside the timing
    frame_s = best(args.repeat, lambda: cocitation_frame(frame))
    chart_s = best(args.repeat, lambda: charts.cocitation(co).to_dict())
    print(
        f"{args.answers:,} answers x {args.sources} sources over {args.works:,} works: "
        f"{co.height:,} pairs"
    )
    print(f"cocitation_frame      {frame_s:6.2f} s")
    print(f"charts.cocitation     {chart_s:6.2f} s (top 15 works)")


if __name__ == "__main__":
    main()
