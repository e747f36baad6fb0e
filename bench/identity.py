"""How fast ``sources_frame`` lays out a million sources with their work and author identity.

Builds N answers (default 100,000) from the recorded samples of all three providers, about ten
sources each (Magisterium citations, GPTBots corner citations and knowledge chunks, Maritaca web
sources: ~1M rows), with the variation real answers carry so that identity is not trivial: each
source of an answer is a sample source under a title drawn from the titles its work was cited
under (the Catechism in six languages, an encyclical in English and Portuguese), sometimes with
a place in the work ("…, n. 17"), under an author spelling drawn from those of its author
(Francis, Franziskus, Papa Francesco), at an address with a paragraph fragment, tracking
parameters, ``http://`` or ``www.`` differences, another vatican.va language segment or another
page of a paginated document. Every answer's text is distinct (a numbered first line before
a sample's text), as a real corpus's are, so no reading of the markers is shared.

Times, best of ``--repeat`` runs:

* ``citekit.sources_frame(answers)`` end to end, from the ``Answer`` objects (the goal:
  under 10 s for 1M sources);
* ``identify`` alone: ``citekit.data.identity.clusters.identify`` on that frame without its identity
  columns (what identity costs);
* the floor: ``citations_frame(answers)`` + ``references_frame(answers)``, the same rows
  without kinds, spans or identity;
* the text reader alone: ``citekit.text.reader.read`` of every answer's text once (uncached),
  which both frames call for the inline markers;
* what ``sources_frame`` would cost if it read each answer's text once (today
  ``citations_frame`` and ``corpus`` each read it, and the reader's cache holds 512 texts):
  the same call with the reader given a cache of every text, a measurement only.

Peak memory is measured in a fresh interpreter per run, as ``bench/frames.py`` does: the
resident set's growth during the call (sampled every millisecond), and the process's high-water
mark (``ru_maxrss``: the answers themselves included). The goal is 2 GB.

Run: ``.venv/bin/python bench/identity.py [--answers 100000] [--repeat 2] [--profile]``
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import random
import re
import resource
import subprocess
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl
from frames import peak_growth

import citekit as ck
from citekit import Answer, Citation, Reference, References
from citekit.data.frames import citations_frame, load_answers, references_frame
from citekit.data.identity.clusters import IDENTITY_COLUMNS, identify
from citekit.testing import default_data_dir
from citekit.text import reader as text_module

GOAL_SECONDS = 10.0
GOAL_MIB = 2048.0
#: Share of answers per provider, and (citations, knowledge chunks) per answer, on average.
PROVIDERS = {"magisterium": (0.45, 10, 0), "gptbots": (0.35, 4, 6), "maritaca": (0.20, 10, 0)}
LANGUAGES = ["en", "pt", "es", "it", "fr", "de"]
#: Spellings drawn for each sample source (title, author and address variants).
VARIANTS = 200
TRACKERS = ["newsletter", "twitter", "facebook", "parish-bulletin", "search"]


@dataclasses.dataclass
class Pool:
    """What the samples give to draw from: sources by provider, and the variants of each."""

    texts: dict[str, list[str]]
    citations: dict[str, list[Citation]]
    chunks: list[Reference]
    titles: dict[str | None, list[str]]  # work_id -> titles it was cited under
    authors: dict[str | None, list[str]]  # author_id -> spellings it was cited under
    work_of: dict[tuple[str | None, str | None], tuple[str | None, str | None]]


def sample_pool() -> Pool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # content-filtered samples warn
        samples = [a for a in load_answers(default_data_dir()) if isinstance(a, Answer)]
    src = ck.sources_frame(samples)
    titles: dict[str | None, list[str]] = defaultdict(list)
    authors: dict[str | None, list[str]] = defaultdict(list)
    work_of: dict[tuple[str | None, str | None], tuple[str | None, str | None]] = {}
    for row in src.iter_rows(named=True):
        title, author = row["document_title"], row["document_author"]
        if title and title not in titles[row["work_id"]]:
            titles[row["work_id"]].append(title)
        if author and author not in authors[row["author_id"]]:
            authors[row["author_id"]].append(author)
        work_of[(title, author)] = (row["work_id"], row["author_id"])
    texts: dict[str, list[str]] = defaultdict(list)
    citations: dict[str, list[Citation]] = defaultdict(list)
    chunks: list[Reference] = []
    for a in samples:
        if a.text:
            texts[a.provider].append(a.text)
        citations[a.provider].extend(a.citations)
        chunks.extend(a.references or ())
    return Pool(dict(texts), dict(citations), chunks, titles, authors, work_of)


_VATICAN_LANG = re.compile(r"(vatican\.va/content/[^/]+/)([a-z]{2})/")
_PAGE = re.compile(r"__P([0-9A-Z]{2})\.HTM$")
_PAGE_CODES = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def vary_url(url: str | None, rng: random.Random) -> str | None:
    """``url`` as another answer may give it: another paragraph, page or language of the same
    document, a fragment, tracking parameters, http or www differences."""
    if not url:
        return url
    r = rng.random
    if r() < 0.3 and _VATICAN_LANG.search(url):
        url = _VATICAN_LANG.sub(lambda m: m.group(1) + rng.choice(LANGUAGES) + "/", url)
    if r() < 0.3 and _PAGE.search(url):  # the Catechism's archive: one page per section
        url = _PAGE.sub("__P" + "".join(rng.choices(_PAGE_CODES, k=2)) + ".HTM", url)
    if r() < 0.35:
        url += f"#{rng.choice(['p', 'n', 'par', ''])}{rng.randrange(1, 400)}"
    if r() < 0.12:
        tracker = rng.choice(TRACKERS)
        url = (
            f"{url}{'&' if '?' in url else '?'}utm_source={tracker}&utm_medium=c{rng.randrange(40)}"
        )
    if r() < 0.08:
        url = url.replace("https://", "http://", 1)
    if r() < 0.08:
        url = url.replace("://www.", "://", 1)
    return url


def vary(c: Citation, index: int, pool: Pool, rng: random.Random) -> Citation:
    """``c`` as another answer may cite it: under another title of its work (a translation),
    with a place in the work, under another spelling of its author, at a varied address."""
    work, author_id = pool.work_of.get((c.document_title, c.document_author), (None, None))
    title = c.document_title
    if title and rng.random() < 0.5:
        title = rng.choice(pool.titles.get(work) or [title])
    if title and rng.random() < 0.2:
        title = f"{title}, n. {rng.randrange(1, 300)}"
    author = c.document_author
    if author and rng.random() < 0.4:
        author = rng.choice(pool.authors.get(author_id) or [author])
    return dataclasses.replace(
        c,
        document_index=index,
        document_title=title,
        document_author=author,
        source_url=vary_url(c.source_url, rng),
    )


def vary_chunk(r: Reference, rank: int, rng: random.Random) -> Reference:
    """A knowledge chunk of the same document at a varied address."""
    url = r.source_url or f"https://files.example.com/kb/{r.data_name or 'doc'}"
    return dataclasses.replace(r, rank=rank, source_url=vary_url(url, rng))


def make_answers(n: int, *, variants: int = VARIANTS, seed: int = 12) -> list[Answer]:
    """``n`` answers drawn from the three providers' samples (see the module docstring).

    Each sample source gets ``variants`` spellings (title, author, address), drawn once; an
    answer cites a source under one of them, the first ones more often (Zipf-like), as a few
    spellings of a work are common and many are rare.
    """
    rng = random.Random(seed)
    pool = sample_pool()
    weights = [1 / (k + 1) for k in range(variants)]
    spelled: dict[str, list[list[Citation]]] = {
        provider: [[vary(c, 0, pool, rng) for _ in range(variants)] for c in cits]
        for provider, cits in pool.citations.items()
    }
    chunk_spellings = [[vary_chunk(r, 1, rng) for _ in range(variants)] for r in pool.chunks]
    names = list(PROVIDERS)
    shares = [PROVIDERS[p][0] for p in names]
    answers = []
    for i, provider in enumerate(rng.choices(names, weights=shares, k=n)):
        _, n_cit, n_chunks = PROVIDERS[provider]
        sources = rng.choices(spelled[provider], k=max(1, n_cit + rng.randrange(-3, 4)))
        picks = rng.choices(range(variants), weights=weights, k=len(sources))
        cits = tuple(
            dataclasses.replace(forms[k], document_index=j)
            for j, (forms, k) in enumerate(zip(sources, picks, strict=True))
        )
        refs = None
        if n_chunks:
            drawn = rng.choices(chunk_spellings, k=max(1, n_chunks + rng.randrange(-2, 3)))
            picks = rng.choices(range(variants), weights=weights, k=len(drawn))
            items = tuple(
                dataclasses.replace(forms[k], rank=rank + 1)
                for rank, (forms, k) in enumerate(zip(drawn, picks, strict=True))
            )
            refs = References(items=items, answer_id=f"{provider}-{i}")
        text = f"Answer {i}.\n\n{rng.choice(pool.texts[provider])}"
        answers.append(
            Answer(
                provider=provider,
                text=text,
                id=f"{provider}-{i}",
                question=f"Question {i % 5000}?",
                citations=cits,
                references=refs,
            )
        )
    return answers


def distinct_keys(frame: pl.DataFrame) -> str:
    """How many distinct keys identity works on, and how many distinct values in each."""
    keys = frame.select("document_title", "document_author", "year", "source_url", "data_id")
    each = ", ".join(f"{name} {keys[name].n_unique():,}" for name in keys.columns)
    return f"{keys.n_unique():,} ({each})"


def _runs(answers: list[Answer]) -> dict[str, Callable[[], Callable[[], Any]]]:
    """Each run's setup (not timed), which returns the call to time."""

    def sources() -> Callable[[], Any]:
        return lambda: ck.sources_frame(answers)

    def identity() -> Callable[[], Any]:
        bare = ck.sources_frame(answers).drop(IDENTITY_COLUMNS)
        return lambda: identify(bare)

    def floor() -> Callable[[], Any]:
        return lambda: (citations_frame(answers), references_frame(answers))

    def reading() -> Callable[[], Any]:
        return lambda: [text_module.read.__wrapped__(a.text).markers for a in answers]

    def read_once() -> Callable[[], Any]:
        return lambda: _reading_each_text_once(lambda: ck.sources_frame(answers))

    return {
        "citekit.sources_frame(answers)": sources,
        "identify(frame) alone": identity,
        "floor: citations_frame + references_frame": floor,
        "reader: read(a.text) once per answer": reading,
        "what if sources_frame read each text once": read_once,
    }


def _reading_each_text_once(fn: Callable[[], Any]) -> Any:
    """``fn()`` with the frames' reader (``read``, cached for 512 texts) given a cache that
    holds every text of the call: what ``sources_frame`` would cost if it read each answer's
    text once, where today ``citations_frame`` (the inline markers) and ``corpus`` (their
    positions) each read it. A measurement only: it patches the two modules for the call."""
    from functools import lru_cache

    from citekit.data.corpus import works as corpus
    from citekit.data.frames import rows as frames

    once = lru_cache(maxsize=None)(text_module.read.__wrapped__)
    saved = corpus.read, frames.read
    corpus.read = frames.read = once
    try:
        return fn()
    finally:
        corpus.read, frames.read = saved


def best_times(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """The best wall time and the best CPU time (every thread of the process: polars runs
    several) of ``repeat`` runs. On a shared machine the CPU time is the steadier figure."""
    wall = cpu = float("inf")
    result: Any = None
    for _ in range(repeat):
        result = None
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu, result


def _rows(result: Any) -> int:
    if isinstance(result, tuple):
        return sum(f.height for f in result)
    if isinstance(result, list):
        return sum(map(len, result))  # markers read
    return int(result.height)


def _memory_child(name: str, n_answers: int) -> None:
    answers = make_answers(n_answers)
    growth = peak_growth(_runs(answers)[name]())
    high = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{growth:.1f} {high:.1f}")


def memory_in_fresh_process(name: str, n_answers: int) -> tuple[float, float] | None:
    done = subprocess.run(
        [sys.executable, __file__, "--answers", str(n_answers), "--memory-of", name],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        growth, high = done.stdout.strip().splitlines()[-1].split()
        return float(growth), float(high)
    except (ValueError, IndexError):
        print(done.stderr[-2000:], file=sys.stderr)
        return None


def profile(answers: list[Answer]) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile(time.process_time)  # CPU time: the machine may be shared
    profiler.enable()
    ck.sources_frame(answers)
    profiler.disable()
    stats = pstats.Stats(profiler).strip_dirs().sort_stats("cumulative")
    stats.print_stats(35)
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory runs")
    parser.add_argument("--profile", action="store_true", help="cProfile one sources_frame")
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_of:
        _memory_child(args.memory_of, args.answers)
        return

    print(f"polars {pl.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    answers = make_answers(args.answers)
    n_sources = sum(len(a.citations) + len(a.references or ()) for a in answers)
    print(
        f"built {len(answers):,} answers with {n_sources:,} sources from the samples of "
        f"{', '.join(PROVIDERS)} in {time.perf_counter() - t0:.1f} s (not counted below)"
    )
    if args.profile:
        profile(answers)
        return

    times: dict[str, float] = {}
    cpus: dict[str, float] = {}
    memory: dict[str, tuple[float, float] | None] = {}
    frame = None
    runs = _runs(answers)
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    head = f"{'run':44} {'best s':>7} {'CPU s':>7} {'rows':>10} {'growth MiB':>11} {'peak MiB':>9}"
    print(f"\n{head}")
    for name, setup in runs.items():
        seconds, cpu, result = best_times(setup(), args.repeat)
        times[name] = seconds
        cpus[name] = cpu
        rows = _rows(result)
        if name.startswith("citekit.sources_frame"):
            frame = result
        del result
        gc.collect()
        memory[name] = None if args.no_memory else memory_in_fresh_process(name, args.answers)
        mem = memory[name]
        mem_text = f"{mem[0]:11.0f} {mem[1]:9.0f}" if mem else f"{'n/a':>11} {'n/a':>9}"
        print(f"{name:44} {seconds:7.2f} {cpu:7.2f} {rows:10,} {mem_text}", flush=True)

    assert frame is not None
    print(
        f"\ndistinct (title, author, year, url, data_id): {distinct_keys(frame)}\n"
        f"works: {frame['work_id'].n_unique():,}; authors: {frame['author_id'].n_unique():,}; "
        f"kinds: {dict(frame.group_by('kind').len().iter_rows())}"
    )
    total = times["citekit.sources_frame(answers)"]
    floor = times["floor: citations_frame + references_frame"]
    ident = times["identify(frame) alone"]
    print(f"sources_frame / floor     = {total / floor:.2f}x")
    print(f"identify share of the run = {ident / total:.0%} ({ident:.2f} s of {total:.2f} s)")
    cpu_total = cpus["citekit.sources_frame(answers)"]
    print(f"identify share of the CPU = {cpus['identify(frame) alone'] / cpu_total:.0%}")
    reader = cpus["reader: read(a.text) once per answer"]
    print(f"reader share of the CPU   = {reader / cpu_total:.0%} per reading ({reader:.2f} s)")
    once = cpus["what if sources_frame read each text once"]
    print(f"reading each text once    = {once:.2f} s of CPU ({once / cpu_total:.0%} of today's)")
    print(f"sources per second        = {n_sources / total:,.0f}")
    verdict = "PASS" if total < GOAL_SECONDS else "FAIL"
    print(
        f"time:   {total:.2f} s for {n_sources:,} sources, goal < {GOAL_SECONDS:.0f} s: {verdict}"
    )
    mem = memory["citekit.sources_frame(answers)"]
    if mem is not None:
        growth, high = mem
        print(
            f"memory: {growth:,.0f} MiB growth during the call "
            f"({'PASS' if growth < GOAL_MIB else 'FAIL'}), {high:,.0f} MiB process peak with "
            f"the answers ({'PASS' if high < GOAL_MIB else 'FAIL'}), goal < {GOAL_MIB:,.0f} MiB"
        )


if __name__ == "__main__":
    main()
