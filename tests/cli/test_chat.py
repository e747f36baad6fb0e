"""Conversations on the command line: ``citekit ask -c`` continues the last one of the log (the
message history for Magisterium and Maritaca, the ``conversation_id`` for GPTBots) and
``citekit chat`` holds one until Ctrl-D: from a pipe, and in a real terminal (a pty)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.cli.main import main
from citekit.core.names import ENTRIES
from citekit.testing import ProviderServer
from tests.budget import examples

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-cli-chat-0123456789"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:
        monkeypatch.setenv(entry.api_key_env, KEY)


def _user_turns(server: ProviderServer, path_end: str) -> list[list[str]]:
    """The contents of the messages each chat request to ``path_end`` carried."""
    return [
        [m["content"] for m in r.json["messages"]]
        for r in server.requests
        if r.path.endswith(path_end) and isinstance(r.json, dict) and "messages" in r.json
    ]


@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
def test_ask_c_sends_the_history_of_the_last_conversation(
    provider: str, server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url(provider)
    first, second = (s.question for s in server.samples(provider)[:2])
    assert main(["ask", first, "--provider", provider, "--base-url", url, "--no-stream"]) == 0
    answer = capsys.readouterr().out.split("\n\n")[0]
    before = len(server.requests)
    assert main(["ask", "-c", second, "--base-url", url, "--no-stream"]) == 0  # its provider
    sent = server.requests[before].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == first and sent[2]["content"] == second
    assert answer[:60].split("[")[0].strip()[:30] in sent[1]["content"]
    # And again: the history grows by the turn just asked.
    assert main(["ask", "-c", "And then?", "--base-url", url, "--no-stream"]) in (0, 3)
    assert [m["role"] for m in server.requests[-1].json["messages"]] == [
        "user", "assistant", "user", "assistant", "user",
    ]  # fmt: skip


def test_ask_c_continues_the_gptbots_conversation(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url("gptbots")
    question = server.samples("gptbots")[0].question
    assert main(["ask", question, "--provider", "gptbots", "--base-url", url, "--json"]) == 0
    capsys.readouterr()
    opened = [r for r in server.requests if r.path.endswith("/v1/conversation")]
    asked = [r for r in server.requests if r.path.endswith("/v2/conversation/message")]
    conversation = asked[-1].json["conversation_id"]
    assert main(["ask", "-c", "--provider", "gptbots", "And who built it?", "--base-url", url,
                 "--no-stream"]) in (0, 3)  # fmt: skip
    assert [r for r in server.requests if r.path.endswith("/v1/conversation")] == opened
    again = [r for r in server.requests if r.path.endswith("/v2/conversation/message")][-1]
    assert again.json["conversation_id"] == conversation
    assert again.json["messages"][-1]["content"] == "And who built it?"


def test_ask_c_resends_the_question_as_typed(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A word shaped like a key in a question ("key AB12cd34ef") is the user's own text: the
    next ``ask -c`` sends it as it was typed, and says nothing of it."""
    url = server.base_url("magisterium")
    first = "Which door does the key AB12cd34ef open, and is it key 4 or Bearer x9?"
    assert main(["ask", first, "--provider", "magisterium", "--base-url", url, "--no-stream"]) in (
        0,
        3,
    )
    capsys.readouterr()
    assert main(["ask", "-c", "And then?", "--base-url", url, "--no-stream"]) in (0, 3)
    sent = server.requests[-1].json["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [first, "And then?"]
    assert "note" not in capsys.readouterr().err


def test_ask_c_says_when_a_question_is_resent_without_the_api_key(
    server: ProviderServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The API key typed into a question never reaches the log: ``ask -c`` resends that
    question with ``***`` in its place, and says so."""
    url = server.base_url("maritaca")
    first = f"Is {KEY} the key I should use?"
    assert main(["ask", first, "--provider", "maritaca", "--base-url", url, "--no-stream"]) in (
        0,
        3,
    )
    capsys.readouterr()
    assert main(["ask", "-c", "And then?", "--base-url", url, "--no-stream"]) in (0, 3)
    sent = server.requests[-1].json["messages"]
    assert sent[0]["content"] == "Is *** the key I should use?"
    err = capsys.readouterr().err
    assert "question 1 of this conversation is sent as the answer log holds it" in err
    assert KEY not in err
    blob = b"".join(p.read_bytes() for p in (tmp_path / "home").glob("log.sqlite3*"))
    assert KEY.encode() not in blob


def test_ask_c_restores_the_last_question_a_former_log_masked(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log written before questions were kept as typed holds "key ***" in the request but
    the question as typed in its own column: the next ``ask -c`` sends the typed one."""
    from citekit.store import log

    url = server.base_url("magisterium")
    typed = "Where does the key AB12cd34ef fit?"
    sample = server.samples("magisterium")[0]
    answer = ck.parse_response(sample.response, provider="magisterium", question=typed)
    old_body = {"model": "magisterium-1", "messages": [{"role": "user", "content": "Where does "
                "the key *** fit?"}]}  # fmt: skip
    log.record(answer, request=old_body, base_url=url)
    log.flush()
    assert main(["ask", "-c", "And then?", "--base-url", url, "--no-stream"]) in (0, 3)
    sent = server.requests[-1].json["messages"]
    assert sent[0]["content"] == typed
    assert "note" not in capsys.readouterr().err


def test_ask_c_with_nothing_to_continue_says_what_to_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ask", "-c", "And then?"]) == 2
    err = capsys.readouterr().err
    assert "holds no answer to continue from" in err and "without -c" in err


def _env_offline(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    return env | {"CITEKIT_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}


def test_offline_chat_from_a_pipe_holds_one_conversation(tmp_path: Path) -> None:
    questions = "What is the principle of subsidiarity?\n\nAnd how does it serve the common good?\n"
    done = subprocess.run(
        [sys.executable, "-m", "citekit", "--offline", "chat"],
        input=questions, env=_env_offline(tmp_path) | {"NO_COLOR": "1"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("> What is the principle of subsidiarity?\n")
    assert "\n> And how does it serve the common good?\n" in out
    assert out.count("Sources:") == 2 and out.count("recorded sample") == 2
    # The second question went with the first turn: the log holds the history it was sent.
    listed = subprocess.run(
        [sys.executable, "-m", "citekit", "log", "list", "--json"],
        env=_env_offline(tmp_path), capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert listed.stdout.count('"question"') == 2
    continued = subprocess.run(
        [sys.executable, "-m", "citekit", "--offline", "ask", "-c", "Who wrote on it first?"],
        env=_env_offline(tmp_path), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert continued.returncode in (0, 3), continued.stderr


def _read_until(fd: int, wanted: bytes, seconds: float = 60) -> bytes:
    seen = b""
    end = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


@pytest.mark.skipif(sys.platform == "win32", reason="a pty is POSIX")
def test_offline_chat_in_a_terminal_ends_with_ctrl_d(tmp_path: Path) -> None:
    main_fd, child_fd = pty.openpty()
    env = _env_offline(tmp_path) | {"TERM": "xterm-256color", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    child = subprocess.Popen(
        [sys.executable, "-m", "citekit", "--offline", "chat", "--provider", "gptbots"],
        stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env, close_fds=True,
    )  # fmt: skip
    os.close(child_fd)
    try:
        greeting = _read_until(main_fd, b"> ")
        assert b"Chatting with GPTBots, a new conversation. Ctrl-D" in greeting
        os.write(main_fd, b"Why was the Great Wall built?\r")
        first = _read_until(main_fd, b"> ")
        assert b"Great Wall" in first and b"Sources" in first
        os.write(main_fd, b"Who built it?\r")
        second = _read_until(main_fd, b"> ")
        assert b"recorded sample" in second
        os.write(main_fd, b"\x04")  # Ctrl-D at the prompt
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
        os.close(main_fd)
    log = subprocess.run(
        [sys.executable, "-m", "citekit", "log", "list", "--json"],
        env=_env_offline(tmp_path), capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    import json

    rows = json.loads(log.stdout)
    assert [r["question"] for r in rows] == ["Why was the Great Wall built?", "Who built it?"]
    assert rows[0]["conversation_id"] == rows[1]["conversation_id"] is not None


@settings(max_examples=examples(300))
@given(text=st.text())
def test_any_piped_text_is_read_as_questions_a_line_each(text: str) -> None:
    import io

    from citekit.cli.chat import questions

    echoed = io.StringIO()
    asked = list(questions(io.StringIO(text), echoed))
    expected = []
    for line in io.StringIO(text):  # the lines a pipe gives, up to an exit or quit
        if line.strip().lower() in ("exit", "quit"):
            break
        if line.strip():
            expected.append(line.strip())
    assert asked == expected
    assert echoed.getvalue() == "".join(f"> {' '.join(q.split())}\n" for q in expected)
