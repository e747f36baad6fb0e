"""``citekit.store.lifecycle``: where the log file is for a whole session, and what reading it
needs of the file system."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import citekit as ck
from citekit import Answer, log
from citekit.store import Log, LogWarning, default_path
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


@contextlib.contextmanager
def _read_only_after(folder: Path) -> Iterator[Callable[[], None]]:
    """``folder`` and a call that makes it read-only for this process, for real: a tmpfs
    mounted there and remounted read-only when run as root (root writes past any permission
    bits), the write bits taken off the folder and its files otherwise."""
    folder.mkdir()
    if os.geteuid() != 0:

        def chmod() -> None:
            for each in folder.iterdir():
                each.chmod(0o444)
            folder.chmod(0o555)

        try:
            yield chmod
        finally:
            folder.chmod(0o755)
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"root here cannot mount a tmpfs: {mounted.stderr.decode().strip()}")

    def remount() -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)

    try:
        yield remount
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_log_on_a_read_only_file_system_is_read_and_says_so_once(tmp_path: Path) -> None:
    """A cleanly closed log on a read-only file system (or without write permission): its
    count, answers, rows and frames read; a record is not kept, with one ``LogWarning`` for
    the whole session saying the log is read-only; nothing is written beside the file."""
    with _read_only_after(tmp_path / "shared") as make_read_only:
        path = tmp_path / "shared" / "log.sqlite3"
        writer = Log(path)
        for question in ("grace", "nature", "law"):
            writer.record(_answer(question))
        expected = ck.citations_frame(writer), ck.answers_frame(writer)
        writer.close()
        assert [p.name for p in path.parent.iterdir()] == ["log.sqlite3"]  # no WAL files
        make_read_only()
        reader = Log(path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert reader.count() == 3
            assert [a.question for a in reader.answers()] == ["grace", "nature", "law"]
            assert len(reader.rows()) == 3 and reader.frame().height == 3
            assert ck.citations_frame(reader).equals(expected[0])
            assert ck.answers_frame(reader).equals(expected[1])
            assert reader.get(1).question == "grace"
            assert reader.record(_answer("virtue")) is None
            assert reader.record(_answer("hope")) is None

            async def on_a_loop() -> None:  # handed to the writer thread
                reader.record(_answer("faith"))

            asyncio.run(on_a_loop())
            assert reader.flush(5) and reader.count() == 3
        said = [str(w.message) for w in caught if issubclass(w.category, LogWarning)]
        assert len(said) == 1 and "read-only" in said[0] and "not recorded" in said[0], said
        assert [p.name for p in path.parent.iterdir()] == ["log.sqlite3"]
        reader.close()
