"""The answer log as a source: frames read from its tables equal the frames of its answers."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import citekit as ck
from citekit.data.frames import CITATIONS_SCHEMA, REFERENCES_SCHEMA
from citekit.store import Log
from citekit.store.decode import unpack
from citekit.store.encode import PACK_FROM
from citekit.store.schema import SCHEMA_VERSION
from citekit.testing import ProviderServer
from tests.budget import examples
from tests.conftest import SECRET, sample_records
from tests.providers.test_clients import ask_magisterium, maritaca_options, streams

MAG = sample_records("magisterium")
MAR = sample_records("maritaca")
GB = sample_records("gptbots")
FRAMES = (ck.citations_frame, ck.references_frame, ck.answers_frame, ck.sources_frame)


def ask_every_sample(server: ProviderServer) -> None:
    """Every recorded sample asked through the real clients, blocking and streamed."""
    mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))
    mt = ck.Maritaca(api_key=SECRET, base_url=server.base_url("maritaca"))
    gb = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
    for _, rec in MAG:
        ask_magisterium(mg, rec)
        ask_magisterium(mg, rec, stream=True, display=False)
    for _, rec in MAR:
        for stream in streams(rec["request"]):
            extra: dict[str, Any] = {"stream": True, "display": False} if stream else {}
            mt.chat(rec["request"]["messages"], **maritaca_options(rec["request"]), **extra)
    for _, rec in GB:
        cited = "citations" in rec["message"]
        gb.ask(rec["question"], citations=cited)
        gb.ask(rec["question"], citations=cited, stream=True, display=False)


@contextlib.contextmanager
def every_sample_log(server: ProviderServer, home: str) -> Iterator[Log]:
    """A log in ``home`` holding every sample (and one failed call), the log every client
    writes to while the block runs."""
    before = os.environ.get("CITEKIT_HOME")
    os.environ["CITEKIT_HOME"] = home
    try:
        ask_every_sample(server)
        failed = ck.parse_response(MAG[0][1]["response"], provider="magisterium")
        ck.log.record(failed, request={"q": "failed"}, error=RuntimeError("the call failed"))
        ck.log.flush()
        yield ck.log
    finally:
        ck.log.close()
        if before is None:
            os.environ.pop("CITEKIT_HOME", None)
        else:
            os.environ["CITEKIT_HOME"] = before


@pytest.fixture(scope="module")
def logged(server: ProviderServer) -> Iterator[Log]:
    """A log holding every sample (and one failed call), the log every client writes to."""
    with every_sample_log(server, tempfile.mkdtemp(prefix="citekit-log-frames-")) as log:
        yield log


def both(frame: Any, source: Any, answers: list[ck.Answer]) -> None:
    assert_frame_equal(frame(source), frame(answers))


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f.__name__)
def test_every_frame_of_the_log_equals_the_frame_of_its_answers(logged: Log, frame: Any) -> None:
    answers = logged.answers()
    assert len(answers) == logged.count() - 1  # the failed call is no answer
    both(frame, logged, answers)
    assert frame(logged).height > 0


@pytest.mark.parametrize(("stem", "rec"), [*MAG, *MAR, *GB], ids=[s for s, _ in [*MAG, *MAR, *GB]])
def test_each_sample_reads_back_the_same(logged: Log, stem: str, rec: dict[str, Any]) -> None:
    question = rec.get("question") or rec["request"]["messages"][-1]["content"]
    selection = logged.where(question_contains=question)
    answers = selection.answers()
    assert answers and any(a.sample and a.sample.endswith(stem) for a in answers)
    for frame in FRAMES:
        both(frame, selection, answers)


@pytest.mark.parametrize(
    "filters",
    [
        {"provider": "magisterium"},
        {"provider": "gptbots"},
        {"provider": "maritaca", "since": "2020-01-01"},
        {"until": "2000-01-01"},
        {"since": 0, "until": 4e9, "question_contains": "the"},
        {"question_contains": "100%_\\"},
        {"limit": 3},
        {"provider": "magisterium", "limit": 2},
        {"limit": 0},
    ],
)
def test_the_filters_choose_what_answers_chooses(logged: Log, filters: dict[str, Any]) -> None:
    selection = logged.where(**filters)
    answers = logged.answers(selection)
    assert selection.answers() == answers
    for frame in (ck.citations_frame, ck.references_frame, ck.answers_frame):
        both(frame, selection, answers)
    if filters.get("provider"):
        assert set(ck.answers_frame(selection)["provider"]) == {filters["provider"]}


def test_an_empty_log_gives_typed_empty_frames(tmp_path: Path) -> None:
    empty = Log(tmp_path / "none.sqlite3")
    assert ck.citations_frame(empty).schema == CITATIONS_SCHEMA
    assert ck.answers_frame(empty.where(provider="x")).height == 0
    assert ck.references_frame(empty).schema == REFERENCES_SCHEMA
    assert not (tmp_path / "none.sqlite3").exists()  # reading creates no file


def test_a_partial_answer_is_kept_as_answers_keeps_it(tmp_path: Path) -> None:
    store = Log(tmp_path / "log.sqlite3")
    full = ck.parse_response(MAG[0][1]["response"], provider="magisterium", question="q")
    store.record(replace(full, partial=True), request={"q": 1})
    store.record(full, request={"q": 2})
    answers = store.answers()
    assert [a.partial for a in answers] == [True, False]
    for frame in FRAMES:
        both(frame, store, answers)


# -- compact, and migrated ---------------------------------------------------------------------
def test_large_json_is_stored_compressed_and_read_back_exactly(tmp_path: Path) -> None:
    store = Log(tmp_path / "log.sqlite3")
    for stem, rec in MAG:
        answer = ck.parse_response(rec["response"], provider="magisterium", question=stem)
        row_id = store.record(answer, request={"q": stem})
        assert row_id is not None
        again = store.get(row_id)
        assert again == answer and dict(again.raw) == dict(answer.raw)
        assert json.dumps(dict(again.raw)) == json.dumps(dict(answer.raw))  # key order too
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        kinds = conn.execute(
            "SELECT typeof(response_json), length(response_json) FROM answers"
        ).fetchall()
        once = conn.execute("SELECT count(*) FROM answers WHERE citation_keys IS NOT NULL")
        assert once.fetchone()[0] > len(MAG) // 2  # citations stored once, in their table
    assert {kind for kind, _ in kinds} == {"blob", "text"}
    assert all(size < PACK_FROM for kind, size in kinds if kind == "text")  # too short to pay


def as_schema_2(path: Path) -> None:
    """Lay a log file out as schema 2 wrote it: JSON as text, without the schema 3 columns
    (the values schema 2 wrote are the same: the rows come from the same write path)."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        for column in ("response_json", "references_json"):
            for row_id, value in conn.execute(f"SELECT id, {column} FROM answers").fetchall():
                conn.execute(
                    f"UPDATE answers SET {column} = ? WHERE id = ?", (unpack(value), row_id)
                )
        conn.execute("ALTER TABLE answers DROP COLUMN created_us")
        conn.execute("ALTER TABLE answers DROP COLUMN tools_json")
        conn.execute("ALTER TABLE citations DROP COLUMN cited_inline")
        conn.execute("PRAGMA user_version = 2")


def test_a_schema_2_log_opens_and_reads_back_every_answer(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    answers = [
        ck.parse_response(rec["response"], provider=provider, question=rec["question"])
        for provider, records in (("magisterium", MAG), ("maritaca", MAR))
        for _, rec in records
    ]
    answers += [
        replace(
            ck.parse_response(rec["message"], provider="gptbots", question=rec["question"]),
            references=ck.References.from_response(rec["correlate"]),
        )
        for _, rec in GB
    ]
    writer = Log(path)
    for i, answer in enumerate(answers):
        writer.record(answer, request={"q": i})
    expected = writer.answers()
    assert len(expected) == len(answers)
    writer.close()
    as_schema_2(path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert {r[0] for r in conn.execute("SELECT typeof(response_json) FROM answers")} == {"text"}
    old = Log(path)
    rebuilt = old.answers()
    assert rebuilt == expected
    assert [dict(a.raw) for a in rebuilt] == [dict(a.raw) for a in expected]
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    for frame in FRAMES:
        both(frame, old, rebuilt)
    assert_frame_equal(ck.citations_frame(old), ck.citations_frame(expected))
    assert_frame_equal(ck.answers_frame(old), ck.answers_frame(expected))


# -- many writers ------------------------------------------------------------------------------
def _write_many(path: str, worker: int, n: int) -> None:
    store = Log(path)
    body = MAG[worker % len(MAG)][1]["response"]
    for i in range(n):
        answer = ck.parse_response(body, provider="magisterium", question=f"w{worker}-{i}")
        store.record(answer, request={"q": f"w{worker}-{i}"})
    store.close()


def test_four_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "log.sqlite3")
    n = 150
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(path, w, n)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    store = Log(path)
    questions = sorted(a.question or "" for a in store.answers())
    assert questions == sorted(f"w{w}-{i}" for w in range(4) for i in range(n))
    cits = ck.citations_frame(store)
    assert cits.height == sum(len(MAG[w][1]["response"]["citations"]) * n for w in range(4))


# -- any value round-trips ---------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    text=st.text(),
    question=st.text(),
    cited_text=st.text(),
    title=st.text() | st.none(),
    year=st.text(max_size=12) | st.none(),
    extra=json_values,
    with_extra=st.booleans(),
)
def test_any_text_and_json_round_trip(
    tmp_path: Path,
    text: str,
    question: str,
    cited_text: str,
    title: str | None,
    year: str | None,
    extra: Any,
    with_extra: bool,
) -> None:
    body = {
        "id": "chatcmpl-h",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "magisterium-1",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "citations": [
            {
                "cited_text": cited_text,
                "document_index": 0,
                "document_title": title,
                "document_year": year,
                **({"extra": extra} if with_extra else {}),
            }
        ],
        "extra": extra,
    }
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        store = Log(Path(folder) / "log.sqlite3")
        answer = ck.parse_response(body, provider="magisterium", question=question)
        row_id = store.record(answer, request={"q": question})
        assert row_id is not None
        assert store.get(row_id) == answer
        answers = store.answers()
        for frame in FRAMES:
            both(frame, store, answers)
        store.close()


def test_vacuum_shrinks_a_log_and_keeps_every_answer(tmp_path: Path) -> None:
    store = Log(tmp_path / "log.sqlite3")
    for stem, rec in MAG:
        store.record(
            ck.parse_response(rec["response"], provider="magisterium", question=stem),
            request={"q": stem},
        )
    kept = store.answers()
    with contextlib.closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("DELETE FROM answers WHERE id > 3")
        conn.execute("DELETE FROM citations WHERE answer > 3")
    before, after = store.vacuum()
    assert after < before
    assert store.answers() == kept[:3]
    assert pl.DataFrame({"n": [store.count()]})["n"].item() == 3


def test_what_the_tables_hold_is_stored_once(logged: Log) -> None:
    [(citations, texts, chunks, answers)] = logged.fetch(
        "SELECT count(citation_keys), sum(text_elided), count(reference_keys), count(*) "
        "FROM answers WHERE response_json IS NOT NULL AND error_type IS NULL"
    )
    assert citations >= len(MAG) and texts >= len(MAG) + len(MAR) and chunks >= len(GB)
    # ... and every answer comes back whole, raw JSON and all, key order included.
    for row in logged.rows():
        again = logged.get(row["id"])
        assert json.loads(json.dumps(dict(again.raw))) == dict(again.raw)
    assert answers == len(logged.answers())


def test_answers_recorded_on_an_event_loop_are_written_in_batches(tmp_path: Path) -> None:
    import asyncio
    import warnings

    store = Log(tmp_path / "log.sqlite3")
    body = MAG[0][1]["response"]
    answers = [
        ck.parse_response(body, provider="magisterium", question=f"q{i}") for i in range(300)
    ]
    huge = replace(answers[7], usage=ck.Usage(prompt_tokens=2**70))  # no SQLite INTEGER holds it

    async def record_all() -> None:  # as ask_many and the async clients record
        for i, answer in enumerate(answers):
            assert store.record(huge if i == 7 else answer, request={"q": i}) is None

    asyncio.run(record_all())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.flush()
    # The bad row costs only itself: the batch it was in is written without it.
    assert [str(w.message) for w in caught if "could not write" in str(w.message)]
    assert [a.question for a in store.answers()] == [f"q{i}" for i in range(300) if i != 7]
    assert ck.citations_frame(store).height == 299 * len(body["citations"])


@given(
    bound=st.one_of(
        st.text(max_size=30),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
)
def test_a_bad_bound_is_named_when_the_selection_is_made(bound: object) -> None:
    """``where(since=...)`` takes ISO dates and times, dates, datetimes and Unix seconds;
    anything else is refused at once with what it takes, not at the first frame."""
    log = Log(Path(tempfile.mkdtemp()) / "log.sqlite3")
    try:
        selection = log.where(since=bound)  # type: ignore[arg-type]
    except ValueError as exc:
        assert "since/until takes an ISO date or time" in str(exc)
        return
    except TypeError as exc:
        assert "since/until takes" in str(exc)
        return
    # an ISO string python reads: the selection is usable
    assert isinstance(bound, str)
    assert ck.citations_frame(selection).height == 0
