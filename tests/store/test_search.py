"""Full-text search of the log: questions, answers and cited passages, ranked, with a snippet;
kept in step by the write path (at once, and by the writer thread), by a trigger on delete,
and built by the migration for the logs already there (``test_migrations``). No text a user
types makes SQLite raise."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import citekit as ck
from citekit import Answer, CitekitError, log
from citekit.store import Log
from citekit.store.search import match_query
from citekit.wire.parsers import parse_response
from tests.budget import examples
from tests.store.test_log import CHAT, body


def answer(question: str, text: str, passage: str = "A passage.") -> Answer:
    raw: dict[str, Any] = copy.deepcopy(CHAT)
    raw["choices"][0]["message"]["content"] = text
    raw["citations"][0]["cited_text"] = passage
    return parse_response(raw, provider="magisterium", question=question)


def fill(target: Log) -> None:
    target.record(answer("What is grace?", "Grace is a free gift [^1]."), request=body("1"))
    target.record(
        answer("What is work?", "Work is for man [^1].", "The dignity of work comes first."),
        request=body("2"),
    )
    target.record(
        answer("On the dignity of work", "Labour ranks above capital [^1]."), request=body("3")
    )
    target.record(answer("O que é o trabálho?", "O trabalho dignifica [^1]."), request=body("4"))


def test_search_finds_questions_answers_and_passages_best_first() -> None:
    fill(log)
    hits = log.search("dignity of work")
    # Both calls hold the three words; the one whose question holds them comes first.
    assert hits["id"].to_list() == [3, 2]
    assert hits.columns == ["id", "time", "provider", "question", "snippet", "score"]
    assert hits["score"][0] > hits["score"][1]
    assert "**dignity**" in hits["snippet"][1] and "**work**" in hits["snippet"][1]
    assert log.search("capital")["id"].to_list() == [3]  # in an answer's text only
    assert log.search("comes first")["id"].to_list() == [2]  # in a cited passage only
    assert log.search("GRACE")["id"].to_list() == [1]  # case folded
    # Accents folded both ways: the question was written with one, the answer without.
    assert log.search("trabalho")["id"].to_list() == [4]
    assert log.search("trabálho")["id"].to_list() == [4]
    assert log.search('"work comes"')["id"].to_list() == [2]  # a phrase
    assert log.search('"comes work"').height == 0
    assert sorted(log.search("dign*")["id"].to_list()) == [2, 3, 4]  # dignity, dignifica
    assert log.search("dignity", limit=1)["id"].to_list() == [3]
    assert log.search("grace", log.where(provider="maritaca")).height == 0


def test_a_search_is_a_selection_the_frames_take() -> None:
    fill(log)
    chosen = log.where(text="dignity of work")
    assert sorted(a.question for a in chosen.answers()) == [
        "On the dignity of work",
        "What is work?",
    ]
    assert ck.answers_frame(chosen).height == 2
    assert ck.citations_frame(chosen)["cited_text"].to_list().count("A passage.") == 1
    assert chosen.count() == 2
    assert log.where(text="dignity", limit=1).count() == 1  # the newest that pass
    assert log.where(text="!!!").rows() == []  # no word: nothing, not everything


def test_every_write_path_indexes_and_a_deleted_call_leaves_the_index(tmp_path: Path) -> None:
    own = Log(tmp_path / "own" / "log.sqlite3")
    own.record(answer("At once", "Written at once."), request=body("a"))

    async def on_a_loop() -> None:  # rows recorded on an event loop go to the writer thread
        own.record(answer("Later", "Written by the writer thread."), request=body("b"))

    asyncio.run(on_a_loop())
    assert own.flush(30)
    assert sorted(own.search("written")["question"].to_list()) == ["At once", "Later"]
    with contextlib.closing(sqlite3.connect(own.path)) as conn, conn:
        conn.execute("DELETE FROM answers WHERE question = 'Later'")
    assert own.search("written")["question"].to_list() == ["At once"]
    own.close()


def test_a_log_without_the_index_says_why(tmp_path: Path) -> None:
    own = Log(tmp_path / "own" / "log.sqlite3")
    own.record(answer("At once", "Written at once."), request=body("a"))
    own.close()
    with contextlib.closing(sqlite3.connect(own.path)) as conn, conn:
        conn.execute("DROP TABLE log_text")
    again = Log(own.path)
    with pytest.raises(CitekitError, match="no search index"):
        again.search("written")
    # Every route that reads a selection by its text says so too, never a raw sqlite3 error.
    chosen = again.where(text="written")
    for read in (chosen.rows, chosen.answers, chosen.count, lambda: ck.citations_frame(chosen)):
        with pytest.raises(CitekitError, match="no search index"):
            read()
    assert again.where(provider="magisterium").count() == 1  # the rest of the log reads on
    again.close()


# Text a user types, with every character FTS5 reads as syntax, quotes, and any Unicode.
HOSTILE = st.one_of(
    st.text(),
    st.text(alphabet="\"*:^()-+ ANDORNEAR{}[]'\\.,;", max_size=30),
    st.sampled_from(["", " ", '"', '""', "*", "AND", "NOT x", "a:b", "NEAR(a b)", "^x", "\x00"]),
)


@hsettings(max_examples=examples(200))
@given(query=HOSTILE)
def test_no_query_makes_sqlite_raise(query: str) -> None:
    if not log.count():
        fill(log)
    hits = log.search(query)
    chosen = {row["id"] for row in log.where(text=query).rows(errors=False)}
    assert set(hits["id"].to_list()) == chosen  # the ranked search and the selection agree
    if match_query(query) is None:
        assert hits.height == 0
    if query.strip().isalnum():  # one plain word: found exactly where it is written
        holding = {1: "What is grace? Grace is a free gift", 3: "On the dignity of work Labour"}
        for ident, text in holding.items():
            if query.strip().casefold() in text.casefold().split():
                assert ident in chosen


@hsettings(max_examples=examples(100))
@given(query=HOSTILE, contains=HOSTILE, provider=st.sampled_from([None, "magisterium", "gptbots"]))
def test_a_search_within_any_selection_is_that_selection_searched(
    query: str, contains: str, provider: str | None
) -> None:
    """The selection's filters (a question's words too, whose column the search table also
    has) narrow the ranked search exactly as they narrow ``where(text=...)``."""
    if not log.count():
        fill(log)
    within = log.where(provider=provider, question_contains=contains)
    hits = log.search(query, within)
    chosen = log.where(provider=provider, question_contains=contains, text=query)
    assert set(hits["id"].to_list()) == {row["id"] for row in chosen.rows(errors=False)}


def test_the_words_found_are_marked_in_one_place(capsys: pytest.CaptureFixture[str]) -> None:
    """The frame of ``ck.log.search``, ``citekit log search --json`` and the plain terminal
    listing show each snippet as ``starred`` marks it: the words found in ``**``."""
    import io
    import json

    from citekit.cli.logview import search_json, search_table
    from citekit.store.search import MARK_END, MARK_START, search_hits, starred

    fill(log)
    hits = search_hits(log, "dignity of work", log.where(), 10)
    assert hits and all(MARK_START in h["snippet"] and MARK_END in h["snippet"] for h in hits)
    marked = [starred(h["snippet"]) for h in hits]
    assert all("**dignity**" in m and MARK_START not in m and MARK_END not in m for m in marked)
    assert log.search("dignity of work")["snippet"].to_list() == marked
    out = io.StringIO()
    search_json(hits, out)
    assert [h["snippet"] for h in json.loads(out.getvalue())] == marked
    out = io.StringIO()
    search_table(hits, out)
    shown = [line.strip() for line in out.getvalue().splitlines()[1::2]]
    assert shown == [" ".join(m.split()) for m in marked]
    assert starred(None) == ""
