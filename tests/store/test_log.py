"""The SQLite answer log: round trips, the cache, secrets, and concurrent writers (the filters
and the migrations: ``tests/store``)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import citekit as ck
from citekit import Answer, CitekitWarning, GPTBots, Magisterium, ServerError, ask_many, log
from citekit.store import Log, LogWarning, default_path
from citekit.store.answer_log import LOG_SCHEMA, request_key
from citekit.testing import ProviderServer
from citekit.wire.parsers import parse_response

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-live-STORE-SECRET-0123456789abcdef"

CHAT = {
    "id": "chatcmpl-x",
    "object": "chat.completion",
    "created": 1767225600,
    "model": "magisterium-1",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Yes [^1]."},
            "finish_reason": "stop",
        }
    ],
    "citations": [
        {
            "cited_text": "A passage.",
            "document_index": 0,
            "document_title": "Centesimus Annus",
            "document_author": "John Paul II",
            "document_year": "1991",
            "document_reference": "48",
            "source_url": "https://example.org/ca",
        }
    ],
}


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    monkeypatch.delenv("CITEKIT_LOG", raising=False)
    monkeypatch.delenv("CITEKIT_CACHE", raising=False)


def body(question: str) -> dict[str, Any]:
    return {"model": "magisterium-1", "messages": [{"role": "user", "content": question}]}


def chat_answer(question: str) -> Answer:
    return parse_response(CHAT, provider="magisterium", question=question)


# -- round trips ----------------------------------------------------------------------------------
def test_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_path() == tmp_path / "log.sqlite3"
    monkeypatch.delenv("CITEKIT_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_path() == tmp_path / "xdg" / "citekit" / "log.sqlite3"


def test_live_answers_round_trip(server: ProviderServer, tmp_path: Path) -> None:
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    questions = [s.question for s in server.samples("magisterium")]
    answers = [client.ask(q) for q in questions]  # the client logs each call itself
    back = log.answers()
    assert back == answers
    assert [len(a.citations) for a in back] == [len(a.citations) for a in answers]
    assert (tmp_path / "log.sqlite3").is_file()


def test_gptbots_references_round_trip(server: ProviderServer) -> None:
    client = GPTBots(api_key=KEY, base_url=server.base_url("gptbots"))
    answer = client.ask(server.samples("gptbots")[0].question)
    assert answer.references
    (back,) = log.where(provider="gptbots").answers()
    assert back.references == answer.references
    assert back.text == answer.text and back.question == answer.question


@pytest.mark.parametrize("provider", ["magisterium", "maritaca", "gptbots"])
def test_streamed_answers_round_trip(server: ProviderServer, provider: str) -> None:
    client = ck.client(provider, base_url=server.base_url(provider), api_key=KEY)
    answer = client.ask(server.samples(provider)[0].question, stream=True, display=False)
    (back,) = log.answers()
    assert back == answer


def test_errors_are_logged_but_not_answers() -> None:
    err = ServerError("boom", provider="magisterium", status=500)
    log.record(None, provider="magisterium", request=body("q"), error=err, elapsed=0.5)
    log.record(chat_answer("q2"), request=body("q2"))
    assert [a.question for a in log.answers()] == ["q2"]
    frame = log.frame()
    assert frame.height == 2
    assert frame.schema == pl.Schema(
        {
            name: {
                "int": pl.Int64,
                "float": pl.Float64,
                "str": pl.String,
                "bool": pl.Boolean,
                "time": pl.Datetime("us", "UTC"),
            }[kind]
            for name, kind in LOG_SCHEMA
        }
    )
    first = frame.row(0, named=True)
    assert first["error_type"] == "ServerError" and first["error_status"] == 500
    assert first["question"] == "q"
    assert log.frame(errors=False).height == 1


def test_empty_log_frame_is_typed(tmp_path: Path) -> None:
    empty = Log(tmp_path / "none" / "log.sqlite3")
    assert empty.answers() == [] and empty.count() == 0
    assert empty.frame().height == 0 and empty.frame().width == len(LOG_SCHEMA)


def test_get_by_id() -> None:
    row = log.record(chat_answer("q"), request=body("q"))
    assert row is not None
    assert log.get(row).question == "q"
    with pytest.raises(KeyError):
        log.get(row + 100)


# -- switches -------------------------------------------------------------------------------------
def test_disabled_by_env_and_per_block(monkeypatch: pytest.MonkeyPatch) -> None:
    with log.options(log=False):
        assert log.record(chat_answer("q"), request=body("q")) is None
    assert log.record(chat_answer("q"), request=body("q"), log=False) is None
    monkeypatch.setenv("CITEKIT_LOG", "0")
    assert not log.enabled
    assert log.record(chat_answer("q"), request=body("q")) is None
    assert log.count() == 0


# -- cache ----------------------------------------------------------------------------------------
def test_lookup() -> None:
    answer = chat_answer("q")
    log.record(answer, request=body("q"), base_url="http://x")
    assert log.lookup("magisterium", body("q"), base_url="http://x") is None  # cache off
    hit = log.lookup("magisterium", body("q"), base_url="http://x", cache=True)
    assert hit is not None and hit.cached and hit == replace(answer, cached=True)
    assert log.lookup("magisterium", {**body("q"), "stream": True}, base_url="http://x", cache=True)
    assert log.lookup("magisterium", body("q"), base_url="http://y", cache=True) is None
    assert log.lookup("maritaca", body("q"), base_url="http://x", cache=True) is None
    assert log.lookup("magisterium", body("other"), base_url="http://x", cache=True) is None
    with log.options(cache=True):
        assert log.lookup("magisterium", body("q"), base_url="http://x") is not None


def test_request_key_ignores_key_order_and_transport_fields() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    b = {"messages": [{"content": "q", "role": "user"}], "model": "m", "stream": True}
    assert request_key("magisterium", a, "u") == request_key("magisterium", b, "u")


def test_cache_through_the_client_hook(server: ProviderServer) -> None:
    url = server.base_url("magisterium", latency=0.05)
    client = Magisterium(api_key=KEY, base_url=url)
    questions = [f"{s.question} {i}" for i, s in enumerate(server.samples("magisterium") * 3)]
    live = ask_many(client, questions, concurrency=4, progress=False)
    sent = server.scenario(url).request_count
    assert log.count() == len(questions)
    cached = ask_many(client, questions, concurrency=4, progress=False, cache=True)
    assert server.scenario(url).request_count == sent  # nothing went out
    assert all(a.cached for a in cached)
    assert [replace(a, cached=False) for a in cached] == live
    assert log.count() == len(questions)  # cache hits are not logged again


def test_failed_calls_recorded_by_the_client(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="status", status=500, times=1)
    client = Magisterium(api_key=KEY, base_url=url, max_retries=0)
    results = ask_many(client, ["q1"], errors="keep", progress=False)
    assert not results[0]
    (row,) = log.rows()
    assert row["error_type"] == "ServerError" and row["question"] == "q1"
    assert log.lookup("magisterium", body("q1"), base_url=url, cache=True) is None


# -- secrets --------------------------------------------------------------------------------------
def test_no_api_key_in_the_file(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_key = "env-KEY-should-never-be-stored-42"
    monkeypatch.setenv("MARITACA_API_KEY", env_key)
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    ask_many(client, [s.question for s in server.samples("magisterium")], progress=False)
    leaky = {**body("q"), "api_key": KEY, "headers": {"Authorization": f"Bearer {KEY}"}}
    err = ServerError(
        f"echo {KEY} and {env_key}, Bearer unknown-token-987654321",
        provider="magisterium",
        status=500,
    )
    log.record(None, provider="magisterium", request=leaky, error=err, secrets=[KEY])
    text = f"{KEY}: the key distinctions of a bearer instrument"
    answer = replace(chat_answer(f"my key is {env_key}"), text=text)
    log.record(answer, request=leaky, secrets=[KEY])
    log.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("log.sqlite3*"))
    assert blob, "no log written"
    for secret in (KEY, env_key):
        assert secret.encode() not in blob
        assert secret[4:20].encode() not in blob
    assert b"unknown-token-987654321" not in blob
    assert log.answers()[-1].text == "***: the key distinctions of a bearer instrument"


# -- several writers ------------------------------------------------------------------------------
def _write_many(path: str, worker: int, count: int) -> None:
    store = Log(path)
    for i in range(count):
        answer = parse_response(CHAT, provider="magisterium", question=f"w{worker}-{i}")
        # A row the busy file cannot take at once waits for the writer thread (None).
        store.record(answer, request=body(f"w{worker}-{i}"), elapsed=0.0)
    assert store.flush(60)  # a multiprocessing child exits without atexit: flush first


def test_four_processes_write_without_losing_anything(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite3")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(path, w, 500)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    store = Log(path)
    assert store.count() == 2000
    questions = {a.question for a in store.answers()}
    assert questions == {f"w{w}-{i}" for w in range(4) for i in range(500)}
    conn = store.connect()
    assert conn.execute("SELECT count(*) FROM citations").fetchone()[0] == 2000
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


_KILLED_WRITER = """
import sys
from citekit import parse_response
from citekit.store import Log
sys.path.insert(0, {tests!r})
from test_log import CHAT, body
store = Log({path!r})
i = 0
while True:
    store.record(parse_response(CHAT, provider="magisterium", question=f"k{{i}}"),
                 request=body(f"k{{i}}"))
    i += 1
"""


def test_a_writer_killed_mid_write_leaves_a_usable_file(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite3"
    code = _KILLED_WRITER.format(tests=str(Path(__file__).parent), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.2)
            try:
                if Log(path).count() > 200:
                    break
            except sqlite3.Error:
                continue
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    store = Log(path)
    count = store.count()
    assert count > 200
    conn = store.connect()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    answers = store.answers()
    assert len(answers) == count and answers[-1].text == "Yes [^1]."
    assert store.record(chat_answer("after"), request=body("after")) is not None


def test_citekit_home_changed_between_calls_moves_the_log(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log's path is worked out once per setting, yet follows ``CITEKIT_HOME`` at once:
    the next call writes to (and answers from) the new folder's log."""
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    question = server.samples("magisterium")[0].question
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    monkeypatch.setenv("CITEKIT_HOME", str(first))
    assert not client.ask(question, cache=True).cached
    assert client.ask(question, cache=True).cached
    monkeypatch.setenv("CITEKIT_HOME", str(second))  # not there yet: made by the first write
    assert not client.ask(question, cache=True).cached  # a new log: nothing to answer from
    log.flush()
    assert log.path == second / "log.sqlite3" and Log(second / "log.sqlite3").count() == 1
    assert Log(first / "log.sqlite3").count() == 1
    monkeypatch.setenv("CITEKIT_HOME", str(first))
    assert client.ask(question, cache=True).cached
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CITEKIT_HOME", str(blocker))
    for _ in range(2):  # refused every time, not only when first seen
        with pytest.raises(ck.ConfigurationError, match="is not a folder"):
            default_path()


# -- a log that cannot be written never costs an answer --------------------------------------------
def test_unwritable_log_home_still_answers(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CITEKIT_HOME", str(blocker))
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    question = server.samples("magisterium")[0].question
    with pytest.warns(LogWarning, match="could not write the answer log"):
        answer = client.ask(question)
    assert answer.text and answer.citations
    with pytest.warns(LogWarning):
        assert client.ask(question, stream=True, display=False, cache=True).text == answer.text


def test_gptbots_cache_is_per_agent(server: ProviderServer) -> None:
    url = server.base_url("gptbots")
    question = server.samples("gptbots")[0].question
    first = GPTBots(api_key="agent-A-key-000", base_url=url).ask(question, cache=True)
    again = GPTBots(api_key="agent-A-key-000", base_url=url).ask(question, cache=True)
    other = GPTBots(api_key="agent-B-key-111", base_url=url).ask(question, cache=True)
    assert not first.cached and again.cached and not other.cached


def test_answer_without_its_references_is_not_cached(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="status", status=503, endpoint="correlate", times=3)
    client = GPTBots(api_key=KEY, base_url=server.scenario_url(scenario, "gptbots"))
    question = server.samples("gptbots")[0].question
    with pytest.warns(CitekitWarning, match="could not be fetched"):
        missing = client.ask(question, cache=True)
    assert missing.references is None and log.count() == 1
    complete = client.ask(question, cache=True)  # asked anew: the references come this time
    assert not complete.cached and complete.references
    assert client.ask(question, cache=True).cached


def test_a_newer_log_is_neither_written_nor_downgraded(
    server: ProviderServer, tmp_path: Path
) -> None:
    path = tmp_path / "log.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    client = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    with pytest.warns(LogWarning, match="newer citekit"):
        assert client.ask(server.samples("magisterium")[0].question).text
    log.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 99
