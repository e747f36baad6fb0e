"""The log's front and its parts: ``Log`` composes the file's life cycle, the write path and
the read path. (That the store imports nothing above it, not even inside a function, is
``tests/project/test_layout.py``'s rule for every floor.)"""

from __future__ import annotations

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
