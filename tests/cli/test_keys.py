"""``citekit keys``: a key stored once is used without any variable, read after the
environment, kept in a file only the user can read, and never printed, logged or exported."""

from __future__ import annotations

import io
import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from citekit import log
from citekit.cli.main import main
from citekit.core.keys import keys_path
from citekit.core.names import ENTRIES
from citekit.testing import ProviderServer

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

STORED = "sk-stored-key-5f3a9c0e77d1"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:
        monkeypatch.delenv(entry.api_key_env, raising=False)


def _set(provider: str, key: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(key + "\n"))
    return main(["keys", "set", provider])


def test_a_stored_key_answers_without_a_variable_and_is_never_shown(
    server: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    assert _set("Magisterium", STORED, monkeypatch) == 0
    path = keys_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text("utf-8")) == {"magisterium": STORED}
    sample = server.samples("magisterium")[0]
    url = server.base_url("magisterium", api_key=STORED)  # the server takes only this key
    assert main(["ask", sample.question, "--base-url", url, "--no-stream"]) == 0
    assert main(["ask", sample.question, "--base-url", url, "--json"]) == 0
    assert main(["keys", "list"]) == 0
    assert main(["keys", "list", "--json"]) == 0
    assert main(["log", "list", "--json"]) == 0
    assert main(["log", "export", str(tmp_path / "rows.csv"), "--rows", "--include-samples"]) == 0
    captured = capsys.readouterr()
    assert server.requests[-1].headers["authorization"] == f"Bearer {STORED}"
    seen = [captured.out, captured.err, caplog.text, log.path.read_bytes().decode("latin-1"),
            (tmp_path / "rows.csv").read_text("utf-8")]  # fmt: skip
    for text in seen:
        assert STORED not in text
    assert f"magisterium  stored ({path})" in captured.out


def test_the_environment_wins_over_the_stored_key(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _set("maritaca", STORED, monkeypatch) == 0
    monkeypatch.setenv("MARITACA_API_KEY", "sk-from-the-environment-1234")
    sample = server.samples("maritaca")[0]
    url = server.base_url("maritaca")
    assert main(["ask", sample.question, "--provider", "maritaca", "--base-url", url,
                 "--no-stream"]) == 0  # fmt: skip
    assert server.requests[-1].headers["authorization"] == "Bearer sk-from-the-environment-1234"
    capsys.readouterr()
    assert main(["keys", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    by_name = {row["provider"]: row for row in listed}
    assert by_name["maritaca"]["from"] == "environment (MARITACA_API_KEY)"
    assert by_name["gptbots"] == {"provider": "gptbots", "set": False, "from": None}


def test_keys_remove_and_the_missing_key_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _set("gptbots", STORED, monkeypatch) == 0
    assert main(["keys", "remove", "gptbots"]) == 0
    assert "Removed the stored GPTBots key" in capsys.readouterr().out
    assert main(["ask", "Why?", "--provider", "gptbots"]) == 2
    err = capsys.readouterr().err
    assert "set GPTBOTS_API_KEY or run `citekit keys set gptbots`" in err
    assert "api_key=" not in err


@pytest.mark.parametrize("key", ["", "   ", "sk-abc\u200bdef"])
def test_an_empty_or_broken_key_is_refused_and_not_stored(
    key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _set("magisterium", key, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and (not key.strip() or key not in err)
    assert not keys_path().exists()


def test_keys_set_in_a_real_process_from_a_pipe(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(CITEKIT_HOME=str(tmp_path / "child"), PYTHONPATH=os.getcwd())
    done = subprocess.run([sys.executable, "-m", "citekit", "keys", "set", "maritaca"],
                          input=STORED + "\n", capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert STORED not in done.stdout + done.stderr
    stored = tmp_path / "child" / "keys.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    listed = subprocess.run([sys.executable, "-m", "citekit", "keys", "list"],
                            capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert "maritaca     stored" in listed.stdout and STORED not in listed.stdout
