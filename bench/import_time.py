"""``import citekit`` against ``import openai``, each in a fresh interpreter, alternating.

Each run starts a new Python, times the one ``import`` statement with ``perf_counter`` and
``process_time`` (CPU time: steadier than wall time on a shared machine) and prints both; the
runs of citekit and openai alternate so that load on the machine falls on
both alike. ``--tree PATH`` also times another checkout's citekit (the code before a change)
in the same sitting. Also printed: the heavy modules ``import citekit`` loaded (none is the
goal; ``tests/project/test_layout.py`` and ``tests/text/test_reader.py`` test it).

Run: ``.venv/bin/python bench/import_time.py [--repeat 15] [--tree /path/to/main]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Modules that ``import citekit`` should leave for the first call that needs them.
WATCHED = (
    "markdown_it",
    "msgspec",
    "polars",
    "httpx",
    "rich",
    "altair",
    "pandas",
    "citekit.model",
    "dataclasses",
)

_CODE = (
    "import sys, time; t = time.perf_counter(); c = time.process_time(); import {module}; "
    "s = time.perf_counter() - t; c = time.process_time() - c; "
    "print(s, c, ','.join(m for m in {watched!r} if m in sys.modules))"
)


def import_once(module: str, tree: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds for ``import module`` in a fresh interpreter run from ``tree``,
    and the watched modules it loaded."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", _CODE.format(module=module, watched=WATCHED)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, cpu, loaded = [*done.stdout.split(), ""][:3]
    return float(seconds), float(cpu), loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    args = parser.parse_args()
    trees = [ROOT, *args.tree]
    times: dict[str, list[float]] = {str(t): [] for t in trees}
    cpu: dict[str, list[float]] = {str(t): [] for t in trees}
    times["openai"], cpu["openai"] = [], []
    loaded: dict[str, str] = {}
    for _ in range(args.repeat):
        for tree in trees:
            seconds, cpu_seconds, loaded[str(tree)] = import_once("citekit", tree)
            times[str(tree)].append(seconds)
            cpu[str(tree)].append(cpu_seconds)
        seconds, cpu_seconds, _ = import_once("openai", ROOT)
        times["openai"].append(seconds)
        cpu["openai"].append(cpu_seconds)
    openai, openai_cpu = statistics.median(times["openai"]), statistics.median(cpu["openai"])
    print(f"Python {sys.version.split()[0]}, {args.repeat} fresh interpreters each, alternating")
    print(
        f"import openai: median {openai * 1000:.1f} ms (min {min(times['openai']) * 1000:.1f}), "
        f"CPU median {openai_cpu * 1000:.1f} ms"
    )
    for tree in trees:
        runs, cpu_runs = times[str(tree)], cpu[str(tree)]
        median, median_cpu = statistics.median(runs), statistics.median(cpu_runs)
        ratios = sorted(c / o for c, o in zip(cpu_runs, cpu["openai"], strict=True))
        print(
            f"import citekit ({tree}): median {median * 1000:.1f} ms (min {min(runs) * 1000:.1f}); "
            f"citekit / openai = {median / openai:.3f}x (goal <= 0.12x); "
            f"CPU median {median_cpu * 1000:.1f} ms, citekit / openai "
            f"{median_cpu / openai_cpu:.3f}x (run by run: min {ratios[0]:.3f}x, "
            f"max {ratios[-1]:.3f}x); "
            f"loaded: {loaded[str(tree)] or 'none of ' + ', '.join(WATCHED)}"
        )


if __name__ == "__main__":
    main()
