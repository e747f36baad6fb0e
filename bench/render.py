"""Rendering cost: a large footnoted answer, and the live display while a stream arrives.

1. A Magisterium-style answer of about 30 KB of Markdown with 200 citations (160 documents,
   some with several passages) is rendered, best of ``--repeat`` runs: the text's HTML alone
   (``render_markdown``), ``answer_html``, the strict variant, ``answer_markdown``,
   ``answer_text`` and the whole mimebundle, each against markdown-it-py rendering the same
   text with no footnotes at all (plain answers skip markdown-it: ``text/fast_html.py``).
2. One 20,000-chunk Magisterium stream, taken once from the loopback server and replayed from a
   separate process (``bench/_replay.py``: the process measured holds the client alone), is
   consumed with ``Magisterium.ask(..., stream=True)``:

   * ``display=False``: no display at all (the baseline);
   * the notebook live display: ``NotebookLiveAnswer`` re-rendering the growing text (about
     ten times a second) and finishing with the full footnoted render, its display handle
     JSON-encoding every update with the kernel's own packer before sending it;
   * the terminal live display, writing to an in-memory stream;
   * ``display=False``, then the answer's mimebundle sent once (what a notebook shows when
     the answer is displayed at the end instead of live).

   Measured in process CPU time (which other processes on the machine do not inflate), over
   ``--rounds`` rounds that run each arm ``--streams`` times, in an order that turns each
   round; the ratios are those of each round's arms, side by side, given as their median,
   quartiles and range. The goal: consuming the stream with the live display costs at most
   1.15x the CPU time without (``GOAL``), on the median; the last line says whether it is met.
   The time spent in the re-renders and in the final render is reported too.

Run: ``.venv/bin/python bench/render.py [--chunks 20000] [--repeat 15] [--rounds 21]
[--streams 3] [--live-only]``
"""

from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _replay import KEY, Replay, recorded
from jupyter_client.session import json_packer
from markdown_it import MarkdownIt

import citekit as ck
from citekit.model import Answer, Citation
from citekit.render import (
    LiveAnswer,
    NotebookLiveAnswer,
    TerminalLiveAnswer,
    answer_bundle,
    answer_html,
    answer_markdown,
    answer_text,
)
from citekit.text.markdown_html import render_markdown

#: Consuming a stream with the notebook live display costs at most this times no display.
GOAL = 1.15
WORDS = ["grace", "nature", "law", "faith", "reason", "church", "council", "labour", "wage",
         "dignity", "person", "common", "good", "family", "state", "truth"]  # fmt: skip


def large_answer(n_citations: int = 200, target_chars: int = 30_000, seed: int = 3) -> Answer:
    """About ``target_chars`` of Markdown citing ``n_citations`` passages."""
    rng = random.Random(seed)
    n_documents = n_citations * 4 // 5
    parts: list[str] = []
    section = 0
    while sum(map(len, parts)) < target_chars:
        if len(parts) % 6 == 0:
            section += 1
            parts.append(f"## Section {section}: {' '.join(rng.choices(WORDS, k=3))}\n\n")
        words = rng.choices(WORDS, k=55)
        words[5] = f"*{words[5]}*"
        words[20] = f"**{words[20]}**"
        marks = "".join(f"[^{rng.randrange(n_documents) + 1}]" for _ in range(rng.randint(1, 3)))
        if len(parts) % 4 == 3:
            items = [
                f"- {' '.join(rng.choices(WORDS, k=9))}[{rng.randrange(n_documents) + 1}]"
                for _ in range(4)
            ]
            parts.append("\n".join(items) + "\n\n")
        else:
            parts.append(" ".join(words) + marks + ".\n\n")
    citations = tuple(
        Citation(
            # Like the recorded samples: most passages are plain text, some carry Markdown.
            cited_text=" ".join(rng.choices(WORDS, k=60)) + (" — *quoted*." if i % 4 == 0 else "."),
            document_index=i % n_documents,
            cited_text_heading=f"Chapter {i % 17}" if i % 3 else None,
            document_title=f"Document {i % n_documents}",
            document_author="Pope Leo XIII" if i % 2 else "Second Vatican Council",
            document_year=str(1891 + i % 120),
            document_reference=str(i % 90 + 1),
            source_url=f"https://example.org/doc/{i % n_documents}",
        )
        for i in range(n_citations)
    )
    return Answer(
        provider="magisterium",
        model="magisterium-1",
        text="".join(parts),
        citations=citations,
        related_questions=("What is the common good?",),
    )


def best_time(
    fn: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.process_time
) -> float:
    """The fastest of ``repeat`` runs (CPU time): other work on the machine only ever adds
    time."""
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


class KernelLikeDisplay:
    """``IPython.display.display`` stand-in: JSON-encodes what a kernel would send, with the
    kernel's own packer (``jupyter_client.session.json_packer``: UTF-8 JSON bytes)."""

    def __call__(self, obj: dict[str, str], **kw: Any) -> KernelLikeDisplay:
        self.update(obj)
        return self

    def update(self, obj: dict[str, str], **kw: Any) -> None:
        json_packer({"data": obj, "metadata": {}, "transient": {"display_id": "x"}})


class TimedNotebookLive(NotebookLiveAnswer):
    """The notebook live display, timing its re-renders and its final render."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refresh_seconds = 0.0
        self.finish_seconds = 0.0

    def _refresh(self, status: str) -> None:
        start = time.thread_time()
        super()._refresh(status)
        self.refresh_seconds += time.thread_time() - start

    def finish(self, answer: Answer) -> None:
        start = time.thread_time()
        super().finish(answer)
        self.finish_seconds += time.thread_time() - start


def bench_large_answer(repeat: int) -> None:
    answer = large_answer()
    floor = MarkdownIt("commonmark", {"html": False})
    answer_html(answer)  # warm up
    t_floor = best_time(lambda: floor.render(answer.text), repeat)
    rows = [
        ("render_markdown (text)", best_time(lambda: render_markdown(answer.text), repeat)),
        ("answer_html", best_time(lambda: answer_html(answer), repeat)),
        ("answer_html strict", best_time(lambda: answer_html(answer, strict=True), repeat)),
        ("answer_markdown", best_time(lambda: answer_markdown(answer), repeat)),
        ("answer_text", best_time(lambda: answer_text(answer), repeat)),
        ("mimebundle (3 types)", best_time(lambda: answer_bundle(answer), repeat)),
    ]
    size = len(answer_html(answer))
    print(
        f"render of a {len(answer.text) / 1000:.1f} KB answer with {len(answer.citations)} "
        f"citations ({size / 1000:.0f} KB of HTML), best of {repeat}:"
    )
    print(f"  {'markdown-it-py':22} {t_floor * 1000:7.1f} ms   (Markdown to HTML, no sources)")
    for name, seconds in rows:
        print(f"  {name:22} {seconds * 1000:7.1f} ms   {seconds / t_floor:5.2f}x markdown-it-py")


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    """The lower quartile, the median and the upper quartile of ``values``."""
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 4], statistics.median(ordered), ordered[(3 * n) // 4]


def bench_live_display(chunks: int, rounds: int, streams: int) -> None:
    original_start = LiveAnswer.start
    mode = {"live": "notebook"}
    lives: list[TimedNotebookLive] = []

    def start(cls: type[LiveAnswer], **kw: Any) -> LiveAnswer:
        if mode["live"] == "notebook":
            live = TimedNotebookLive(
                kw["provider"], kw.get("question"), display=KernelLikeDisplay()
            )
            lives.append(live)
            return live
        return TerminalLiveAnswer(kw["provider"], kw.get("question"), stream=io.StringIO())

    body, question = recorded(chunks)
    # What the clients call; swapped so the notebook display runs outside a kernel.
    LiveAnswer.start = classmethod(start)  # type: ignore[assignment, method-assign]
    try:
        with Replay(body) as base:
            mg = ck.Magisterium(api_key=KEY, base_url=base)

            def plain() -> None:
                mg.ask(question, stream=True, display=False)

            def plain_then_display() -> None:
                KernelLikeDisplay()(answer_bundle(mg.ask(question, stream=True, display=False)))

            def notebook() -> None:
                mode["live"] = "notebook"
                mg.ask(question, stream=True, display=True)

            def terminal() -> None:
                mode["live"] = "terminal"
                mg.ask(question, stream=True, display=True)

            streamed = mg.ask(question, stream=True, display=False)
            arms = {"plain": plain, "then": plain_then_display, "nb": notebook, "term": terminal}
            for fn in arms.values():  # warm up connections and caches
                fn()
            lives.clear()
            cpu: dict[str, list[float]] = {name: [] for name in arms}
            wall: dict[str, list[float]] = {name: [] for name in arms}
            names = list(arms)
            for r in range(rounds):  # the order turns each round: drift hits every arm alike
                for name in names[r % len(names) :] + names[: r % len(names)]:
                    fn = arms[name]
                    started, used = time.perf_counter(), time.process_time()
                    for _ in range(streams):
                        fn()
                    cpu[name].append((time.process_time() - used) / streams)
                    wall[name].append((time.perf_counter() - started) / streams)
    finally:
        LiveAnswer.start = original_start  # type: ignore[method-assign]

    def ratios(a: str, b: str) -> list[float]:
        """The CPU ratio of ``a`` to ``b`` in each round (measured side by side)."""
        return [x / y for x, y in zip(cpu[a], cpu[b], strict=True)]

    refresh = statistics.median(live.refresh_seconds for live in lives) * 1000
    final = statistics.median(live.finish_seconds for live in lives) * 1000
    renders = statistics.median(live.renders for live in lives)
    print(
        f"stream of {chunks:,} chunks ({len(streamed.text):,} characters, "
        f"{len(streamed.citations)} citations), served from a separate process; {rounds} rounds "
        f"of {streams} streams per arm, the order turning; process CPU time per stream:"
    )
    print("                                  CPU min  CPU median (quartiles)     wall median")
    rows = [
        ("no display", "plain"),
        ("notebook live display", "nb"),
        ("terminal live display", "term"),
        ("no display, then shown once", "then"),
    ]
    for label, name in rows:
        low, mid, high = (v * 1000 for v in _quartiles(cpu[name]))
        print(
            f"  {label:29} {min(cpu[name]) * 1000:7.1f}  {mid:7.1f} ({low:5.1f}-{high:5.1f}) ms"
            f"   {statistics.median(wall[name]) * 1000:7.1f} ms"
        )
    print("  CPU ratios, per round:        median (quartiles, range)   ratio of the minimums")
    for label, a, b in [
        ("notebook / no display", "nb", "plain"),
        ("terminal / no display", "term", "plain"),
        ("shown once / no display", "then", "plain"),
        ("notebook / shown once", "nb", "then"),
    ]:
        each = ratios(a, b)
        low, mid, high = _quartiles(each)
        spread = f"{low:4.2f}-{high:4.2f}x, {min(each):4.2f}-{max(each):4.2f}x"
        print(f"  {label:29} {mid:5.2f}x ({spread})   {min(cpu[a]) / min(cpu[b]):5.2f}x")
    print(
        f"  inside the notebook live display (thread CPU, median): {renders:g} re-renders of the "
        f"growing text {refresh:5.1f} ms, the final footnoted render {final:5.1f} ms"
    )
    _, median, high = _quartiles(ratios("nb", "plain"))
    verdict = "met" if median <= GOAL else "NOT met"
    print(
        f"goal: the notebook live display <= {GOAL:.2f}x no display (CPU, median of the rounds): "
        f"{verdict} ({median:.2f}x; upper quartile {high:.2f}x)"
    )


def main() -> None:
    # Benchmark answers go to a throwaway answer log, not the user's.
    os.environ["CITEKIT_HOME"] = tempfile.mkdtemp(prefix="citekit-bench-")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=15, help="runs of each large render")
    parser.add_argument("--rounds", type=int, default=21, help="rounds of the live display")
    parser.add_argument("--streams", type=int, default=3, help="streams per arm and round")
    parser.add_argument("--live-only", action="store_true", help="leave the large render out")
    args = parser.parse_args()
    if not args.live_only:
        bench_large_answer(args.repeat)
    bench_live_display(args.chunks, args.rounds, args.streams)


if __name__ == "__main__":
    main()
