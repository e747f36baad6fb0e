"""The answer log under stress: deleted or replaced under a running session, held busy by
another program, laid out by a newer citekit, or pointed at a file; and the command line's
refusals. Every test runs the real clients against the loopback server."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit import ConfigurationError, Magisterium, ask_many, log
from citekit.cli.main import main
from citekit.render.markdown import neutralize
from citekit.store import Log, LogWarning
from citekit.testing import ProviderServer
from citekit.text import reader
from tests.budget import examples

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-hostile-store-0123456789"
#: Generous guard: a test that would hang on a lock fails after this many seconds instead.
GUARD = 60.0


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    monkeypatch.delenv("CITEKIT_LOG", raising=False)
    monkeypatch.delenv("CITEKIT_CACHE", raising=False)
    yield
    with warnings.catch_warnings():  # what a test left waiting is not its successor's
        warnings.simplefilter("ignore")
        log.close()


def questions(server: ProviderServer, n: int) -> list[str]:
    base = [s.question for s in server.samples("magisterium")]
    return [f"{base[i % len(base)]} ({i})" for i in range(n)]


def client(server: ProviderServer) -> Magisterium:
    return Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))


def logged_questions() -> list[str | None]:
    return [row["question"] for row in log.rows()]


# -- the log file deleted or replaced while a session runs ----------------------------------------
@pytest.mark.parametrize("sidecars", [False, True], ids=["main-file", "with-wal-files"])
def test_a_deleted_log_is_noticed_and_started_anew(
    server: ProviderServer, tmp_path: Path, sidecars: bool
) -> None:
    mg = client(server)
    q1, q2, q3 = questions(server, 3)
    mg.ask(q1)
    path = tmp_path / "log.sqlite3"
    assert logged_questions() == [q1]
    for name in ["log.sqlite3", *(["log.sqlite3-wal", "log.sqlite3-shm"] if sidecars else [])]:
        with contextlib.suppress(FileNotFoundError):
            (tmp_path / name).unlink()
    with pytest.warns(LogWarning, match="was deleted while this session ran"):
        mg.ask(q2)
    assert path.is_file()
    mg.ask(q3)  # once noticed, nothing more to say
    assert logged_questions() == [q2, q3]
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 2


def test_a_replaced_log_is_noticed_and_written_where_it_now_is(
    server: ProviderServer, tmp_path: Path
) -> None:
    mg = client(server)
    q1, q2, q3 = questions(server, 3)
    other = Log(tmp_path / "other" / "log.sqlite3")
    with log.options(log=False):
        seed = mg.ask(q3)
    other.record(seed, request={"messages": [{"role": "user", "content": q3}]})
    other.close()
    with contextlib.closing(sqlite3.connect(other.path)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")  # one file, as a copied log would be

    mg.ask(q1)
    path = tmp_path / "log.sqlite3"
    shutil.copy(other.path, tmp_path / "incoming.sqlite3")
    (tmp_path / "incoming.sqlite3").replace(path)  # an atomic replace, as a sync tool does
    with pytest.warns(LogWarning, match="replaced by another file"):
        mg.ask(q2)
    assert logged_questions() == [q3, q2]
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_log_deleted_under_ask_many_is_noticed_by_the_writer(
    server: ProviderServer, tmp_path: Path
) -> None:
    mg = client(server)
    first, *rest = questions(server, 4)
    mg.ask(first)
    (tmp_path / "log.sqlite3").unlink()
    answers = ask_many(mg, rest, progress=False)
    # Rows recorded on the event loop are written by the writer thread; its notice is
    # warned on the caller's thread at the next call of the log.
    with pytest.warns(LogWarning, match="was deleted while this session ran"):
        assert log.flush(GUARD)
    assert sorted(q for q in logged_questions() if q) == sorted(a.question for a in answers)


# -- a log held busy by another program -----------------------------------------------------------
@contextlib.contextmanager
def held(path: Path) -> Iterator[threading.Event]:
    """Another connection holding the log's write lock until the block ends (at most GUARD
    seconds); the event is set once the lock is released."""
    locked, release, released = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE answers SET elapsed = elapsed")  # a real write in progress
            locked.set()
            release.wait(GUARD)
            conn.execute("COMMIT")
        finally:
            conn.close()
            released.set()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert locked.wait(GUARD)
    try:
        yield released
    finally:
        release.set()
        thread.join(GUARD)


def test_ask_many_is_not_frozen_by_a_busy_log(server: ProviderServer, tmp_path: Path) -> None:
    mg = client(server)
    qs = questions(server, 41)
    mg.ask(qs[0])  # the log exists and is set up, as in a running session
    url = server.base_url("magisterium", latency=0.01)
    batch_client = Magisterium(api_key=KEY, base_url=url)
    with held(tmp_path / "log.sqlite3") as released:
        answers = ask_many(batch_client, qs[1:], concurrency=8, progress=False)
        # Every answer came back while the lock was still held: no request waited for it.
        assert not released.is_set()
        assert server.scenario(url).request_count == 40
        assert [a.question for a in answers] == qs[1:]
        assert log.flush(0.2) is False  # the rows wait for the file
    assert log.flush(GUARD)
    logged = logged_questions()
    assert logged[0] == qs[0] and sorted(logged) == sorted(qs)  # nothing lost


def test_a_busy_log_delays_the_record_not_the_answer(
    server: ProviderServer, tmp_path: Path
) -> None:
    mg = client(server)
    qs = questions(server, 4)
    mg.ask(qs[0])
    with held(tmp_path / "log.sqlite3") as released:
        for q in qs[1:]:
            assert mg.ask(q).text  # each waits at most RECORD_WAIT, then the row is queued
        assert mg.ask(qs[1], cache=True).cached  # the waiting answers serve the cache already
        assert not released.is_set()
    assert logged_questions() == qs  # a read waits for the rows still pending


_EXITS_WHILE_BUSY = """
import warnings
import citekit as ck
from citekit.store import writer
writer.EXIT_WAIT = {wait}
mg = ck.Magisterium(api_key="k", base_url={url!r})
for q in {questions!r}:
    mg.ask(q)
print("answered", flush=True)
"""


def test_rows_still_waiting_at_exit_are_written_or_reported(
    server: ProviderServer, tmp_path: Path
) -> None:
    seed = client(server)
    qs = questions(server, 5)
    seed.ask(qs[0])
    url = server.base_url("magisterium")
    path = tmp_path / "log.sqlite3"

    def run(questions: list[str], wait: float) -> subprocess.CompletedProcess[str]:
        code = _EXITS_WHILE_BUSY.format(wait=wait, url=url, questions=questions)
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=GUARD
        )

    # The lock is released while the process waits at exit: its rows are written.
    with held(path) as released:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _EXITS_WHILE_BUSY.format(wait=GUARD, url=url, questions=qs[1:3]),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "answered"  # answered under the lock
        assert not released.is_set()
    _, err = proc.communicate(timeout=GUARD)
    assert proc.returncode == 0, err
    assert "LogWarning" not in err
    assert logged_questions() == qs[:3]

    # Still locked when the wait at exit runs out: a warning says how many were not logged.
    with held(path):
        done = run(qs[3:], 0.3)
    assert done.returncode == 0 and "answered" in done.stdout
    assert "LogWarning" in done.stderr and "could not write 2 answer(s)" in done.stderr
    assert logged_questions() == qs[:3]


# -- a log laid out by a newer citekit ------------------------------------------------------------
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_newer_log_is_read_but_not_changed_by_a_byte(
    server: ProviderServer, tmp_path: Path
) -> None:
    mg = client(server)
    qs = questions(server, 4)
    seed = Log(tmp_path / "seed" / "log.sqlite3")
    with log.options(log=False):
        first = mg.ask(qs[0])
    seed.record(first, request={"messages": [{"role": "user", "content": qs[0]}]})
    seed.close()
    path = tmp_path / "log.sqlite3"
    with contextlib.closing(sqlite3.connect(seed.path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA user_version = 99")
    shutil.copy(seed.path, path)
    before = _digest(path)

    with pytest.warns(LogWarning, match="newer citekit"):
        assert mg.ask(qs[1]).text  # the answer is still returned
    with pytest.warns(LogWarning, match="newer citekit"):
        assert mg.ask(qs[2], stream=True, display=False).text
    answers = ask_many(mg, qs[2:], progress=False)
    assert len(answers) == 2
    with pytest.warns(LogWarning, match="newer citekit"):
        log.flush(GUARD)  # the writer thread refused them too
    assert [row["question"] for row in log.rows()] == [qs[0]]  # reads work
    assert log.count() == 1 and log.answers()[0].question == qs[0]
    log.close()
    assert _digest(path) == before
    assert not (tmp_path / "log.sqlite3-wal").exists()


# -- CITEKIT_HOME naming a file, and the command line's refusals -----------------------------------
def test_citekit_home_naming_a_file_is_a_clear_error(
    server: ProviderServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CITEKIT_HOME", str(blocker))
    with pytest.raises(ConfigurationError, match=r"CITEKIT_HOME=.* is not a folder"):
        log.rows()
    with pytest.raises(ConfigurationError, match="set CITEKIT_HOME to a folder"):
        _ = log.path
    assert "is not a folder" in repr(log)
    with pytest.warns(LogWarning, match="CITEKIT_HOME"):
        assert client(server).ask(questions(server, 1)[0]).text  # the answer is kept
    for command in (["log", "list"], ["log", "path"], ["log", "export", "x.bib"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "CITEKIT_HOME" in err and "is not a folder" in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder"


@pytest.mark.parametrize("value", ["-5", "-1", "x", "1.5"])
def test_log_list_refuses_a_bad_limit(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "list", "--limit", value]) == 2
    err = capsys.readouterr().err
    assert "--limit" in err and "0 or more" in err


def test_a_negative_limit_is_refused_by_the_log(server: ProviderServer) -> None:
    client(server).ask(questions(server, 1)[0])
    for bad in (-5, 1.5, "3"):
        with pytest.raises(ValueError, match="limit= takes a number of rows"):
            log.where(limit=bad).rows()  # type: ignore[arg-type]
    assert len(log.where(limit=0).rows()) == 0 and len(log.where(limit=1).rows()) == 1
    assert main(["log", "list", "--limit", "0"]) == 0


@settings(max_examples=examples(60), deadline=None)
@given(st.text(max_size=12))
def test_any_limit_text_is_a_count_or_a_usage_error(value: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["log", "list", f"--limit={value}"])
    try:
        valid = int(value) >= 0
    except ValueError:
        valid = False
    assert code == (0 if valid else 2)


@settings(max_examples=examples(60), deadline=None)
@given(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5))
def test_any_limit_value_reads_rows_or_says_why_not(value: object) -> None:
    try:
        rows = log.where(limit=value).rows()  # type: ignore[arg-type]
    except ValueError as exc:
        assert "limit= takes a number of rows, 0 or more" in str(exc)
    else:
        assert rows == []  # an empty log


def test_flush_says_when_everything_is_written(server: ProviderServer) -> None:
    assert log.flush() is True  # nothing waiting
    ck.Magisterium(api_key=KEY, base_url=server.base_url("magisterium")).ask(
        questions(server, 1)[0]
    )
    assert log.flush(GUARD) is True and log.count() == 1


def test_the_log_never_runs_sqlite_on_an_event_loop(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every connection a thread running a loop would use is refused: the async path must not
    # touch SQLite there (the cache look-up is off, as by default).
    import asyncio

    from citekit.store import schema

    real = schema.Connections.get
    seen: list[str] = []

    def watched(self: schema.Connections, path: Path, **kw: float) -> sqlite3.Connection:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return real(self, path, **kw)
        seen.append(threading.current_thread().name)
        raise AssertionError("SQLite on an event loop's thread")

    monkeypatch.setattr(schema.Connections, "get", watched)
    mg = client(server)
    answers = ask_many(mg, questions(server, 6), progress=False)

    async def one() -> ck.Answer:
        return await mg.aask(questions(server, 7)[-1])

    answers.append(asyncio.run(one()))
    assert log.flush(GUARD) and not seen
    assert sorted(q for q in logged_questions() if q) == sorted(a.question for a in answers)


# -- linear text reading ----------------------------------------------------------------------
# A crafted answer must not take quadratic time to read or display. The work for a text
# repeated N and 8N times is compared with a loose guard (linear work grows 8x, quadratic 64x),
# measured two ways: the Python calls made (deterministic, independent of timing: rescanning
# per marker shows there), over hypothesis-generated repetitions of Markdown syntax; and for the
# crafted answers, whose cost is inside the regex engine where calls do not show it, the
# thread's CPU time (best of three, garbage collection off, a few KB of text).
_GROWTH = 8
_LIMIT = 20


def _fresh() -> None:
    reader.read.cache_clear()
    reader._plain_reading.cache_clear()
    reader._links.cache_clear()


def _consumers() -> dict[str, Callable[[str], object]]:
    cits = [ck.Citation(cited_text="Passage.", document_index=i) for i in range(3)]

    def answer(text: str) -> ck.Answer:
        return ck.Answer(provider="magisterium", text=text, question="Q?", citations=cits)

    return {
        "read": lambda t: (
            reader.read(t).markers,
            reader.read(t).code_spans,
            reader.read(t).links,
            reader.read(t).definitions,
            ck.citations_frame([answer(t)])["cited_inline"].to_list(),
        ),
        "html": lambda t: answer(t).to_html(),
        "markdown": lambda t: answer(t).to_markdown(),
        "text": lambda t: answer(t)._repr_mimebundle_(include=["text/plain"]),
    }


def _calls(work: Callable[[str], object], text: str) -> int:
    _fresh()
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        work(text)
    finally:
        sys.setprofile(None)
    return count


def _cpu(work: Callable[[str], object], text: str, *, fresh: bool = True) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            if fresh:
                _fresh()
            start = time.thread_time()
            work(text)
            best = min(best, time.thread_time() - start)
    finally:
        gc.enable()
    return best


#: The issue's crafted answers, and what a search over repeated Markdown fragments found
#: (``]( <`` sent the Markdown output's link pattern to the end of the text for every link;
#: lines opening with ``[`` and no ``]`` after them sent its reference-definition pattern to the
#: end from every line): ``(opening, fragment, repetitions)``.
CRAFTED = {
    "marker-code-span": ("", "[^1]`[2]` ", 30),
    "open-link": ("", "[a](", 60),
    "angle-link": ("", " ](<'(", 50),
    "open-labels": ("See [x](http://e.org).\n", "[a\n", 50),
    "labels-defined": ("", "[a]:\n[b\n", 30),
    "corner-marks": ("", "$[1]$[2]", 40),
    "open-code": ("", "`a[1] ", 50),
    "emphasis": ("", "**[1]_", 50),
}
#: The Markdown output's escaping of a text already read (its own patterns, none of the
#: parse) is cheap: it is measured on texts 16 times longer, where a quadratic pattern's cost
#: dominates everything else it does.
_SCALE = {"escapes": 16}


def _escapes(text: str) -> object:
    return neutralize(text, lambda marker, source: None)


@pytest.mark.parametrize("name", CRAFTED)
def test_crafted_answers_are_read_and_shown_in_linear_time(name: str) -> None:
    opening, fragment, n = CRAFTED[name]
    for consumer, work in {**_consumers(), "escapes": _escapes}.items():
        count = n * _SCALE.get(consumer, 1)
        small = opening + fragment * count
        large = opening + fragment * (count * _GROWTH)
        work(small)  # first use: imports and compiled patterns are not the text's work
        work(large)  # (and the escapes run on texts already read: the reading is cached)
        fresh = consumer != "escapes"
        ratios: list[float] = []
        # Linear work measures 5-13x here; a loaded machine can blow up one measure, never
        # three in a row, while quadratic work measures 40-80x every time.
        while len(ratios) < 3 and (not ratios or ratios[-1] >= _LIMIT):
            large_cpu = _cpu(work, large, fresh=fresh)
            ratios.append(large_cpu / max(_cpu(work, small, fresh=fresh), 1e-4))
        cpu = min(ratios)
        assert cpu < _LIMIT, f"{consumer}: {cpu:.0f}x the CPU time for {_GROWTH}x the text"


_SYNTAX = [
    "[", "]", "(", ")", "[^1]", "[2]", "$[3]$", "`", "``", "~~~", "\\", "<", ">", "<http://a.b>",
    "](", "]:", "[^1]: ", "![", "*", "_", "|", "#", "> ", "- ", "1. ", "&#", ";", "\n", "\n\n",
    "    ", "\t", "a", " ", "http://e.org", '"', "'",
]  # fmt: skip


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_SYNTAX), min_size=1, max_size=6).map("".join))
def test_repeated_markdown_fragments_take_linear_work(fragment: str) -> None:
    n = max(1, 150 // len(fragment))
    small, large = fragment * n, fragment * (n * _GROWTH)
    for consumer, work in _consumers().items():
        work(large)
        ratio = _calls(work, large) / _calls(work, small)
        assert ratio < _LIMIT, f"{consumer}: {ratio:.0f}x the calls for {_GROWTH}x the text"
