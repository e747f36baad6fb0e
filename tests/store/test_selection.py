"""``ck.log.where(...)``: the one declaration of the log's filters, and what the log's reads,
the frames and ``ck.to_parquet`` take."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

import citekit as ck
from citekit import log
from citekit.core.errors import ServerError
from citekit.store import Log, LogSelection
from tests.store.test_log import body, chat_answer


def test_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([1_000_000.0, 2_000_000.0, 3_000_000.0])
    monkeypatch.setattr("citekit.store.write.time.time", lambda: next(clock))
    log.record(chat_answer("What is subsidiarity?"), request=body("a"))
    log.record(replace(chat_answer("Qual é a capital?"), provider="maritaca"), request=body("b"))
    log.record(chat_answer("What is solidarity?"), request=body("c"))
    assert [a.question for a in log.where(provider="magisterium").answers()] == [
        "What is subsidiarity?",
        "What is solidarity?",
    ]
    assert len(log.where(since=1_500_000.0).answers()) == 2
    assert len(log.where(until=1_500_000.0).answers()) == 1
    assert [a.question for a in log.where(question_contains="SOLID").answers()] == [
        "What is solidarity?"
    ]
    assert log.where(question_contains="100%").answers() == []
    assert [a.question for a in log.where(limit=1).answers()] == ["What is solidarity?"]
    assert len(log.where(since="1970-01-01").answers()) == 3
    assert log.where(since="2999-01-01").answers() == []


def three_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Magisterium answers around a failed call, at 1e6, 2e6 and 3e6 seconds."""
    clock = iter([1_000_000.0, 2_000_000.0, 3_000_000.0])
    monkeypatch.setattr("citekit.store.write.time.time", lambda: next(clock))
    log.record(chat_answer("What is subsidiarity?"), request=body("a"))
    failed = ServerError("boom", provider="magisterium", status=500)
    log.record(None, provider="magisterium", request=body("Why did it fail?"), error=failed)
    log.record(chat_answer("What is solidarity?"), request=body("c"))


def test_no_selection_is_the_whole_log(monkeypatch: pytest.MonkeyPatch) -> None:
    three_calls(monkeypatch)
    whole = log.where()
    assert log.answers() == whole.answers() == log.answers(whole)
    assert [a.question for a in log.answers()] == ["What is subsidiarity?", "What is solidarity?"]
    assert log.rows() == whole.rows() and len(log.rows()) == 3
    assert_frame_equal(log.frame(), whole.frame())
    assert not whole.narrowed and log.where(limit=0).narrowed


def test_a_selection_reads_itself_as_the_log_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    three_calls(monkeypatch)
    chosen = log.where(since=dt.datetime.fromtimestamp(1_500_000.0), limit=2)
    assert chosen.answers() == log.answers(chosen)
    assert [a.question for a in chosen.answers()] == ["What is solidarity?"]
    assert [r["question"] for r in chosen.rows()] == ["Why did it fail?", "What is solidarity?"]
    assert [r["question"] for r in chosen.rows(errors=False)] == ["What is solidarity?"]
    assert chosen.frame().height == 2 and log.frame(chosen, errors=False).height == 1


def test_the_limit_counts_what_each_read_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    three_calls(monkeypatch)
    last = log.where(limit=1)
    assert last.rows()[0]["question"] == "What is solidarity?"  # the failed call is older
    assert [r["error_type"] for r in log.where(limit=2).rows()] == ["ServerError", None]
    assert [a.question for a in log.where(limit=2).answers()] == [
        "What is subsidiarity?",
        "What is solidarity?",
    ]
    for frame in (ck.citations_frame, ck.answers_frame):
        assert_frame_equal(frame(last), frame(last.answers()))
        assert frame(log.where(limit=0)).height == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "3"])
def test_a_bad_limit_is_refused_when_the_selection_is_made(bad: object) -> None:
    with pytest.raises(ValueError, match="limit= takes a number of rows, 0 or more"):
        log.where(limit=bad)  # type: ignore[arg-type]


def test_a_bad_bound_is_refused_when_the_selection_is_made() -> None:
    with pytest.raises(ValueError, match="since/until takes an ISO date or time"):
        log.where(until="last week")
    with pytest.raises(TypeError, match="since/until takes"):
        LogSelection(log, since=[2026])  # type: ignore[arg-type]


def test_the_reads_take_a_selection_and_say_so_otherwise() -> None:
    with pytest.raises(TypeError, match=r"take a selection: ck\.log\.where\(provider="):
        log.answers("magisterium")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        log.rows(provider="magisterium")  # type: ignore[call-arg]


def test_a_selection_shows_its_filters(tmp_path: Path) -> None:
    other = Log(tmp_path / "x.sqlite3")
    chosen = other.where(provider="gptbots", limit=5)
    assert repr(chosen) == f"{other!r}.where(provider='gptbots', limit=5)"
    assert chosen.filters == {
        "provider": "gptbots",
        "since": None,
        "until": None,
        "text": None,
        "samples": None,
        "question_contains": None,
        "limit": 5,
    }
    assert replace(chosen, limit=None).filters["limit"] is None


def test_the_log_has_one_way_to_write_a_dataset(tmp_path: Path) -> None:
    assert not hasattr(log, "to_parquet")  # ck.to_parquet(ck.log.where(...), folder)
    log.record(chat_answer("What is subsidiarity?"), request=body("a"))
    written = ck.to_parquet(log.where(provider="magisterium"), tmp_path / "ds", progress=False)
    assert written.rows["answers"] == 1 and written.rows["citations"] == 1
