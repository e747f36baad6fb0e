"""``citekit.store.lifecycle``: where the log file is for a whole session, and what reading it
needs of the file system."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from citekit import Answer, log
from citekit.store import Log, default_path
from citekit.wire.parsers import parse_response


def _answer(question: str) -> Answer:
    chat = {
        "id": f"chatcmpl-{question}",
        "created": 1767225600,
        "model": "magisterium-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": f"On {question}."}}],
    }
    return parse_response(chat, provider="magisterium", question=question)


def test_a_relative_home_is_resolved_once_so_a_chdir_keeps_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CITEKIT_HOME=.citekit``: the folder is the one below the working folder when the log
    was first used; after ``os.chdir`` the same log is read, with no warning that it was
    deleted (it was not), and nothing is created below the new working folder."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    monkeypatch.setenv("CITEKIT_HOME", ".citekit-relative-home")
    own = Log("own.sqlite3")  # a relative path given is taken against the folder of now
    for question in ("grace", "nature", "law"):
        log.record(_answer(question))
        own.record(_answer(question))
    assert log.count() == 3 and own.count() == 3
    monkeypatch.chdir(second)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "was deleted ... a new log was started"
        assert log.count() == 3 and own.count() == 3
        assert [a.question for a in log.answers()] == ["grace", "nature", "law"]
        log.record(_answer("virtue"))
        assert log.count() == 4
    assert default_path() == first / ".citekit-relative-home" / "log.sqlite3"
    assert own.path == first / "own.sqlite3"
    assert list(second.iterdir()) == []
    log.close()
    own.close()
