"""How long ``citekit.text.reader.read`` takes on answer shapes, against a markdown-it parse.

Times, best of ``--repeat`` runs, one uncached ``read`` (the cache is bypassed) of:

* a 1 KB Magisterium-style answer (headings, a list, emphasis, ``[^N]`` markers): the scan;
* the same answer with an inline code span: markdown-it parses the blocks, and the inline
  text of the block holding the code (the other blocks are scanned);
* the 30 KB answer of ``bench/render.py`` (200 citations), and that answer with one code span;

next to a whole markdown-it parse of the same text (the peer: what a correct reading would
cost without the reader's shortcuts) and a bare ``re.findall`` of marker shapes (the floor: fast,
but it counts markers in code and links). Then the frames' use: the cited numbers of 100,000
answers (300 distinct bodies, as ``bench/frames.py`` builds them), through the cache and
without it, against the bare regex.

Run: ``.venv/bin/python bench/text_reader.py [--repeat 200]``
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from markdown_it import MarkdownIt

from bench.render import large_answer
from citekit.text import reader
from citekit.text.reader import read

_SHAPE = re.compile(r"\[\^?([1-9][0-9]{0,3})\]")


def regex_numbers(text: str) -> set[int]:
    return {int(n) for n in _SHAPE.findall(text)}


WORDS = ["grace", "nature", "law", "faith", "reason", "church", "council", "labour", "wage"]


def typical_answer(seed: int = 1, code: bool = False) -> str:
    """About 1 KB: a heading, three paragraphs with markers, a short list."""
    rng = random.Random(seed)

    def sentence(k: int) -> str:
        return " ".join(rng.choices(WORDS, k=k)).capitalize()

    parts = [
        f"{sentence(30)}, *{sentence(2).lower()}*.[^1] {sentence(25)}.[^2][^3]",
        f"## {sentence(3)}",
        f"{sentence(28)} **{sentence(2).lower()}** {sentence(10).lower()} [4].",
        "\n".join(f"- {sentence(8)}.[^{n}]" for n in (1, 5, 2)),
        f"{sentence(20)}" + (" `code [6]`" if code else " more words here") + ".[^6]",
    ]
    return "\n\n".join(parts)


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    def uncached(text: str) -> reader.Reading:
        read.cache_clear()
        reader._plain_reading.cache_clear()
        return read(text)

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    large = large_answer().text
    shapes = {
        "1 KB, no code": typical_answer(),
        "1 KB, a code span": typical_answer(code=True),
        "30 KB, no code": large,
        "30 KB, a code span": large.replace("## Section 2", "## Section `2`", 1),
    }
    print(f"{'text':<22}{'chars':>7}{'read()':>11}{'md parse':>11}{'md/read':>9}{'bare regex':>12}")
    for name, text in shapes.items():
        t_read = best(lambda text=text: uncached(text), args.repeat)
        t_md = best(lambda text=text: md.parse(text), max(args.repeat // 4, 5))
        t_re = best(lambda text=text: regex_numbers(text), args.repeat)
        print(
            f"{name:<22}{len(text):>7}{t_read * 1e6:>9.0f}µs{t_md * 1e6:>9.0f}µs"
            f"{t_md / t_read:>8.1f}x{t_re * 1e6:>10.0f}µs"
        )
    rng = random.Random(7)
    bodies = [" ".join(rng.choices(WORDS, k=120)) for _ in range(300)]
    markers = "".join(f"[^{k + 1}]" for k in range(0, 10, 2))
    texts = [f"{bodies[i % len(bodies)]} {markers}." for i in range(100_000)]
    for label, fn in (
        ("read(t).numbers, cached", lambda: [read(t).numbers for t in texts]),
        ("read(t).numbers, uncached", lambda: [uncached(t).numbers for t in texts]),
        ("bare regex (floor)", lambda: [regex_numbers(t) for t in texts]),
    ):
        read.cache_clear()
        print(f"100,000 answers, {label:<31}{best(fn, 3):>7.2f} s")


if __name__ == "__main__":
    main()
