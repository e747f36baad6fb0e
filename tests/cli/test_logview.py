"""``citekit log list`` and ``log show`` as a reader and a script use them: a header row,
``-n``, ``--json``, and an answer that reads as Markdown when piped."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from citekit import log
from citekit.cli.logview import HEADER
from citekit.cli.main import main
from citekit.wire.parsers import parse_response

BODY = {
    "id": "c1",
    "model": "magisterium-1",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Work is good [^1]."}}],
    "citations": [{"cited_text": "Man must work", "document_index": 0,
                   "document_title": "Laborem exercens", "document_author": "John Paul II",
                   "document_year": "1981"}],
}  # fmt: skip


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))


def _logged(count: int) -> list[int]:
    ids = []
    for n in range(count):
        answer = parse_response(BODY, provider="magisterium", question=f"question {n}")
        row = log.record(answer, request={"n": n}, elapsed=1.0 + n)
        assert row is not None
        ids.append(row)
    return ids


def test_log_list_has_a_header_and_takes_n(capsys: pytest.CaptureFixture[str]) -> None:
    _logged(5)
    assert main(["log", "list", "-n", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == HEADER and lines[0].split() == [
        "id", "time", "provider", "sources", "elapsed", "kind", "question"
    ]  # fmt: skip
    assert len(lines) == 4 and all("question " in line for line in lines[1:])
    # The columns line up under their names.
    assert lines[1].index("magisterium") == HEADER.index("provider")
    assert lines[1].rindex("question") == HEADER.index("question")
    assert main(["log", "list", "--limit", "2"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_log_list_json_is_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    ids = _logged(3)
    assert main(["log", "list", "--json", "-n", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and {row["id"] for row in rows} <= set(ids)
    assert {row["question"] for row in rows} <= {"question 0", "question 1", "question 2"}
    for row in rows:
        assert dt.datetime.fromisoformat(row["time"]).tzinfo is not None
        assert row["provider"] == "magisterium" and row["n_citations"] == 1
    assert main(["log", "list", "--json", "--provider", "gptbots"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_log_show_piped_is_a_markdown_document(capsys: pytest.CaptureFixture[str]) -> None:
    (row,) = _logged(1)
    assert main(["log", "show", str(row)]) == 0
    shown = capsys.readouterr().out
    tokens = MarkdownIt().parse(shown)
    heading = next(i for i, t in enumerate(tokens) if t.type == "heading_open")
    assert tokens[heading].tag == "h1" and tokens[heading + 1].content == "question 0"
    assert f"*Magisterium · call {row} of the log*" in shown
    assert "Work is good [^1]." in shown
    assert "[^1]: Laborem exercens — John Paul II · 1981" in shown
