"""The log's front and its parts: ``Log`` composes the file's life cycle, the write path and
the read path. (That the store imports nothing above it, not even inside a function, is
``tests/project/test_layout.py``'s rule for every floor.)"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from pathlib import Path

import citekit.store
from citekit import log
from citekit.store import Log
from tests.store.test_log import body, chat_answer

STORE = Path(citekit.store.__file__).parent


def test_no_module_of_the_store_is_over_400_lines() -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in STORE.glob("*.py")}
    assert max(sizes.values()) <= 400, sizes


def test_a_log_of_its_own_writes_and_reads_its_own_file(tmp_path: Path) -> None:
    own = Log(tmp_path / "own" / "log.sqlite3")
    row_id = own.record(chat_answer("What is subsidiarity?"), request=body("a"))
    assert row_id == 1 and own.count() == 1 and log.count() == 0
    assert own.get(1).question == "What is subsidiarity?"
    assert own.fetch("SELECT count(*) FROM citations") == [(1,)]
    assert own.size() > 0 and own.flush() is True
    before, after = own.vacuum()
    assert after <= before and own.count() == 1
    own.close()


def test_answers_recorded_on_a_loop_while_held_are_written_when_the_hold_ends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.sqlite3"
    own = Log(path)
    own.record(chat_answer("first"), request=body("first"))  # written at once

    def in_file() -> int:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            return int(conn.execute("SELECT count(*) FROM answers").fetchone()[0])

    async def on_a_loop(*questions: str) -> None:  # as ask_many records: on its event loop
        for q in questions:
            own.record(chat_answer(q), request=body(q))

    with own.holding():
        asyncio.run(on_a_loop("a", "b", "c"))
        time.sleep(0.3)
        assert in_file() == 1  # held back while the batch runs
        assert own.count() == 4  # a read has them written at once
        asyncio.run(on_a_loop("d", "e"))
        time.sleep(0.3)
        assert in_file() == 4
    deadline = time.monotonic() + 5
    while in_file() < 6 and time.monotonic() < deadline:  # written once the hold ends
        time.sleep(0.02)
    assert in_file() == 6
