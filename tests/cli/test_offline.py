"""``citekit --offline``: the loopback server for the command, and a notice and exit code 3 when
the answer shown is the recorded answer to another question."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from citekit.cli.main import EXIT_OTHER_QUESTION, main
from citekit.core.names import ENTRIES
from citekit.testing import ProviderServer

ROOT = Path(__file__).resolve().parents[2]
NOTICE = "No recorded answer for this question; showing the recorded answer to "


@pytest.fixture(autouse=True)
def _no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:  # offline needs no key and no address
        monkeypatch.delenv(entry.api_key_env, raising=False)
        monkeypatch.delenv(entry.base_url_env, raising=False)


@pytest.mark.parametrize("provider", [e.name for e in ENTRIES])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_an_unmatched_question_gets_the_notice_on_top_and_exit_3(
    provider: str, stream: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--offline", "ask", "What is the best pizza topping?", "--provider", provider,
                 stream])  # fmt: skip
    out = capsys.readouterr().out
    assert code == EXIT_OTHER_QUESTION == 3
    assert NOTICE in out
    if stream == "--no-stream":
        assert out.startswith(NOTICE)
    for entry in ENTRIES:  # the variables were the command's only
        assert entry.base_url_env not in os.environ


@pytest.mark.parametrize("provider", [e.name for e in ENTRIES])
def test_a_sample_question_gets_its_answer_without_notice(
    provider: str, server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    question = server.samples(provider)[0].question
    assert main(["--offline", "ask", question, "--provider", provider]) == 0
    out = capsys.readouterr().out
    assert NOTICE not in out
    assert "recorded sample" in out


def test_the_command_offline_in_a_real_process_names_the_sample_question(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env |= {"CITEKIT_HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "citekit", "--offline", "ask", "What is the best pizza topping?"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == NOTICE + "'What is the principle of subsidiarity?'"


def test_log_list_has_a_header_and_says_which_answers_are_recorded(
    server: ProviderServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["--offline", "ask", "What is the best pizza topping?"]) == 3
    capsys.readouterr()
    assert main(["log", "list"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["id", "time", "provider", "sources", "elapsed", "kind", "question"]
    assert row.split()[-7:-5] == ["sample", "What"]
