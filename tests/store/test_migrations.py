"""The log's migrations: a file of every layout the log ever had, as the citekit of its day
wrote it, opened by today's ``Log``: every answer reads back as its clients returned it, the
frames agree, and the file is at today's version, with nothing lost on the way."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from polars.testing import assert_frame_equal

import citekit as ck
from citekit import log
from citekit.store import Log, LogWarning, schema
from citekit.store.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from tests.store.test_log import CHAT, body, chat_answer

OLD_LOGS = Path(__file__).parent / "old_logs"
LAYOUTS = sorted(path.stem for path in OLD_LOGS.glob("*.sql"))
CITATION_FIELDS = (
    "marker", "cited_text", "document_index", "cited_text_heading", "document_title",
    "document_author", "document_year", "document_reference", "source_url",
)  # fmt: skip
REFERENCE_FIELDS = ("content", "rank", "data_id", "data_name", "source_url", "score")


def seen(answer: ck.Answer) -> dict[str, Any]:
    """What a user sees of an answer, as ``old_logs/make.py`` wrote it down."""
    references = answer.references
    return {
        "provider": answer.provider,
        "question": answer.question,
        "text": answer.text,
        "partial": answer.partial,
        "citations": [{f: getattr(c, f) for f in CITATION_FIELDS} for c in answer.citations],
        "references": None
        if references is None
        else [{f: getattr(r, f) for f in REFERENCE_FIELDS} for r in references],
    }


def old_log(layout: str, path: Path) -> int:
    """The log file of ``layout`` written at ``path``; its schema version."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript((OLD_LOGS / f"{layout}.sql").read_text())
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def columns(path: Path) -> dict[str, list[str]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {
            table: [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            for table in ("answers", "citations", "knowledge_references")
        }


def test_the_versions_are_the_list_of_migrations() -> None:
    assert SCHEMA_VERSION == len(MIGRATIONS) == 4
    assert [m.__name__[:4] for m in MIGRATIONS] == [f"m{n:03d}" for n in range(1, 5)]


def test_a_log_of_every_layout_is_kept() -> None:
    versions = {
        int(re.match(r"PRAGMA user_version = (\d+);", (OLD_LOGS / f"{name}.sql").read_text())[1])
        for name in LAYOUTS
    }
    assert versions == set(range(1, SCHEMA_VERSION + 1))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_old_log_is_searched_once_migrated(layout: str, tmp_path: Path) -> None:
    path = tmp_path / "old" / "log.sqlite3"
    path.parent.mkdir()
    old_log(layout, path)
    old = Log(path)
    hits = old.search("dignity of work")  # opening the file built the index
    assert hits["id"].to_list() == [1]
    assert hits["question"][0].startswith("What does Catholic social teaching say")
    assert old.search("Great Wall")["provider"].to_list() == ["gptbots"]
    # The failed call's question is indexed too: its row, never an answer.
    assert [r["error_type"] for r in old.where(text="server fails").rows()] == ["ServerError"]
    assert old.where(text="server fails").answers() == []
    old.record(chat_answer("q new subsidiarity"), request=body("q new"))
    assert old.search("subsidiarity q new")["question"].to_list() == ["q new subsidiarity"]
    old.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_old_log_reads_back_as_its_clients_answered(layout: str, tmp_path: Path) -> None:
    path = tmp_path / "old" / "log.sqlite3"
    path.parent.mkdir()
    version = old_log(layout, path)
    assert version <= SCHEMA_VERSION
    old = Log(path)
    answers = old.answers()  # opening the file migrates it; no LogWarning (an error here)
    expected = json.loads((OLD_LOGS / f"{layout}.json").read_text())
    assert [seen(a) for a in answers] == expected
    assert [a.provider for a in answers] == ["magisterium", "maritaca", "gptbots", "magisterium"]
    rows = old.rows()
    assert len(rows) == 5 and rows[-1]["error_type"] == "ServerError"
    assert rows[-1]["question"] == "A question the server fails"
    assert old.frame(errors=False).height == 4
    for frame in (ck.citations_frame, ck.references_frame, ck.answers_frame):
        assert_frame_equal(frame(old), frame(answers))
    assert ck.citations_frame(old).height == sum(len(a.citations) for a in answers) > 0
    assert ck.references_frame(old).height == len(answers[2].references or ()) > 0

    # The file is at today's version, laid out as a new one is, and takes new answers.
    old.record(chat_answer("q new"), request=body("q new"))
    assert [a.question for a in old.where(question_contains="q new").answers()] == ["q new"]
    old.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    fresh = Log(tmp_path / "new" / "log.sqlite3")
    fresh.record(chat_answer("q"), request=body("q"))
    fresh.close()
    assert columns(path) == columns(tmp_path / "new" / "log.sqlite3")
    # Opened again, nothing changes.
    again = Log(path)
    assert [seen(a) for a in again.answers()[:4]] == expected
    again.close()


# -- a log of schema 1, cell by cell ------------------------------------------------------------
#: The tables as schema 1 laid them out (citekit 0.1.0), before the sources' columns took the
#: names of ``citekit.core.columns``.
SCHEMA_1 = """
CREATE TABLE answers (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    provider TEXT NOT NULL,
    base_url TEXT,
    request_key TEXT,
    request_json TEXT,
    stream INTEGER NOT NULL DEFAULT 0,
    elapsed REAL,
    question TEXT,
    model TEXT,
    answer_id TEXT,
    conversation_id TEXT,
    finish_reason TEXT,
    text TEXT,
    response_json TEXT,
    references_json TEXT,
    notes_json TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    n_citations INTEGER NOT NULL DEFAULT 0,
    n_references INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    sample TEXT,
    error_type TEXT,
    error_message TEXT,
    error_status INTEGER,
    error_code TEXT,
    pid INTEGER
);
CREATE INDEX answers_request ON answers (request_key, id);
CREATE INDEX answers_time ON answers (ts);
CREATE TABLE citations (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    marker INTEGER NOT NULL,
    document_index INTEGER NOT NULL,
    cited_text TEXT,
    heading TEXT,
    title TEXT,
    author TEXT,
    year TEXT,
    reference TEXT,
    url TEXT
);
CREATE INDEX citations_answer ON citations (answer);
CREATE TABLE knowledge_references (
    answer INTEGER NOT NULL REFERENCES answers (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    data_id TEXT,
    data_name TEXT,
    source_url TEXT,
    score REAL,
    content TEXT
);
CREATE INDEX references_answer ON knowledge_references (answer);
PRAGMA user_version = 1;
"""

GPTBOTS_MESSAGE = {
    "create_time": 1760354899071,
    "conversation_id": "c2",
    "message_id": "m2",
    "output": [{"content": {"text": "It is long."}}],
}
CORRELATE = {
    "correlate_dataset": [
        {"content": "The wall is long.", "data_id": "d1", "data_name": "wall.pdf", "score": 0.9},
        {"content": "Built by many.", "data_id": "d2", "data_name": "UNESCO", "score": 0.4},
    ]
}


def make_schema_1_log(path: Path) -> None:
    """A log file written by citekit 0.1.0: one Magisterium and one GPTBots answer."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.executescript(SCHEMA_1)
        conn.execute(
            "INSERT INTO answers (id, ts, provider, request_key, question, model, answer_id, "
            "text, response_json, n_citations) VALUES (1, 1e9, 'magisterium', 'k1', 'q1', "
            "'magisterium-1', 'chatcmpl-x', 'Yes [^1].', ?, 1)",
            (json.dumps(CHAT),),
        )
        conn.execute(
            "INSERT INTO citations VALUES (1, 0, 1, 0, 'A passage.', NULL, "
            "'Centesimus Annus', 'John Paul II', '1991', '48', 'https://example.org/ca')"
        )
        conn.execute(
            "INSERT INTO answers (id, ts, provider, question, answer_id, text, response_json, "
            "references_json, n_references) VALUES (2, 2e9, 'gptbots', 'q2', 'm2', "
            "'It is long.', ?, ?, 2)",
            (json.dumps(GPTBOTS_MESSAGE), json.dumps(CORRELATE)),
        )
        conn.executemany(
            "INSERT INTO knowledge_references VALUES (2, ?, ?, ?, NULL, ?, ?)",
            [
                (i + 1, r["data_id"], r["data_name"], r["score"], r["content"])
                for i, r in enumerate(CORRELATE["correlate_dataset"])
            ],
        )


def table_dump(path: Path) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    """Every table's column names and rows, and the schema version."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        dump: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {
            "user_version": ([], [conn.execute("PRAGMA user_version").fetchone()])
        }
        for table in ("answers", "citations", "knowledge_references"):
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            rows = conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            dump[table] = (columns, rows)
        return dump


def test_a_schema_1_log_is_migrated_in_place_with_nothing_lost(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    make_schema_1_log(path)
    before = table_dump(path)
    assert before["citations"][0][5:] == ["heading", "title", "author", "year", "reference", "url"]

    old = log.answers()  # opening the file migrates it
    log.close()
    after = table_dump(path)
    assert after["user_version"][1] == [(SCHEMA_VERSION,)] and SCHEMA_VERSION == 4
    # Schema 3 added columns at the end, filled from the answers: the rest stays as it was.
    added = ["created_us", "tools_json", "citation_keys", "text_elided", "reference_keys"]
    assert [row[: -len(added)] for row in after["answers"][1]] == before["answers"][1]
    assert after["answers"][0][-len(added) :] == added
    assert [row[-5:-3] for row in after["answers"][1]] == [
        (1767225600000000, None),
        (1760354899071000, None),
    ]
    assert [row[:-1] for row in after["citations"][1]] == before["citations"][1]
    assert [row[-1] for row in after["citations"][1]] == [1]
    assert after["knowledge_references"][1] == before["knowledge_references"][1]
    assert after["citations"][0] == [
        "answer", "position", "marker", "document_index", "cited_text", "cited_text_heading",
        "document_title", "document_author", "document_year", "document_reference", "source_url",
        "cited_inline",
    ]  # fmt: skip
    assert after["knowledge_references"][0] == [
        "answer", "rank", "data_id", "document_title", "source_url", "score", "cited_text"
    ]  # fmt: skip
    assert [a.question for a in old] == ["q1", "q2"]
    assert old[0].citations[0].document_title == "Centesimus Annus"
    assert [r.data_name for r in old[1].references or ()] == ["wall.pdf", "UNESCO"]

    # Written after the migration, a new answer lands in the renamed columns.
    log.record(chat_answer("q3"), request=body("q3"))
    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(
            "SELECT answer, document_title, document_year, source_url FROM citations"
        ).fetchall()
    assert rows == [(1, "Centesimus Annus", "1991", "https://example.org/ca"),
                    (3, "Centesimus Annus", "1991", "https://example.org/ca")]  # fmt: skip


def test_a_migration_that_fails_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.sqlite3"
    make_schema_1_log(path)
    before = table_dump(path)

    def rename_then_fail(conn: sqlite3.Connection, version: int) -> None:
        migrate(conn, version)  # every column renamed, then the process dies or the disk fills
        raise sqlite3.OperationalError("disk I/O error")

    with monkeypatch.context() as patched:
        patched.setattr(schema, "migrate", rename_then_fail)
        with pytest.warns(LogWarning, match="disk I/O error"):
            assert log.record(chat_answer("q3"), request=body("q3")) is None
    assert table_dump(path) == before  # one transaction: not a column renamed

    assert log.record(chat_answer("q3"), request=body("q3")) is not None
    assert table_dump(path)["user_version"][1] == [(SCHEMA_VERSION,)]
    assert len(log.answers()) == 3
