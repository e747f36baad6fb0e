"""``citekit.cli.args``: the command line as a shell user types it: a question on stdin,
suggestions for a mistyped option or provider, provider names in any case, messages that name
the environment variable, and no command line that ends in a traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit import log
from citekit.cli.main import main
from citekit.core.names import ENTRIES, PROVIDERS
from citekit.testing import ProviderServer
from tests.budget import examples

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-cli-args-0123456789"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:
        monkeypatch.setenv(entry.api_key_env, KEY)


def _child_env(tmp_path: Path, server: ProviderServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAGISTERIUM", "MARITACA"))}
    env.update(CITEKIT_HOME=str(tmp_path / "child"), NO_COLOR="1", PYTHONPATH=os.getcwd())
    env.update(MAGISTERIUM_API_KEY=KEY, MAGISTERIUM_BASE_URL=server.base_url("magisterium"))
    return env


@pytest.mark.parametrize("argv", [["ask", "-"], ["ask"]], ids=["dash", "pipe"])
def test_the_question_comes_from_a_pipe(
    argv: list[str], server: ProviderServer, tmp_path: Path
) -> None:
    sample = server.samples("magisterium")[0]
    done = subprocess.run([sys.executable, "-m", "citekit", *argv, "--no-stream"],
                          input=sample.question + "\n", capture_output=True, text=True,
                          env=_child_env(tmp_path, server), timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert server.requests[-1].json["messages"][-1]["content"] == sample.question
    text = sample.response["choices"][0]["message"]["content"]
    assert done.stdout.startswith(text[:40])


def test_an_empty_pipe_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("  \n"))
    assert main(["ask", "-"]) == 2
    assert capsys.readouterr().err == (
        "citekit: error: ask: the question is empty; write it after `ask`, or pipe it in\n"
    )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_question_at_a_terminal_says_how_to_give_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal())
    assert main(["ask"]) == 2
    err = capsys.readouterr().err
    assert 'citekit ask "What is grace?"' in err and "| citekit ask -" in err


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["ask", "q", "--provder", "maritaca"], "(did you mean --provider?)"),
        (["ask", "q", "--no-strem"], "(did you mean --no-stream?)"),
        (["log", "list", "--limt", "3"], "(did you mean --limit?)"),
        (["aks", "q"], "(did you mean ask?)"),
        (["log", "lst"], "(did you mean list?)"),
        (["ask", "q", "--provider", "maritacca"], "(did you mean maritaca?)"),
        (["ask", "q", "--provider", "GPTBot"], "(did you mean gptbots?)"),
    ],
)
def test_a_mistyped_option_or_name_gets_a_suggestion(
    argv: list[str], suggestion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert suggestion in err and "Traceback" not in err


@pytest.mark.parametrize("spelled", ["Magisterium", "MARITACA", "GPTBots", " gptbots"])
def test_provider_names_are_case_blind(
    spelled: str, server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    name = spelled.strip().lower()
    sample = server.samples(name)[0]
    url = server.base_url(name)
    assert main(["ask", sample.question, "--provider", spelled, "--base-url", url,
                 "--no-stream"]) == 0  # fmt: skip
    capsys.readouterr()
    assert log.where(limit=1).answers()[0].provider == name
    assert main(["log", "list", "--provider", spelled]) == 0
    assert sample.question[:40] in capsys.readouterr().out


@pytest.mark.parametrize("provider", PROVIDERS)
def test_errors_name_the_variable_not_a_python_argument(
    provider: str,
    server: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    entry = next(e for e in ENTRIES if e.name == provider)
    url = server.base_url(provider, fault="status", status=401)
    assert main(["ask", "q", "--provider", provider, "--base-url", url]) == 1
    refused = capsys.readouterr().err
    monkeypatch.delenv(entry.api_key_env)
    assert main(["ask", "q", "--provider", provider]) == 2
    missing = capsys.readouterr().err
    for err in (refused, missing):
        assert entry.api_key_env in err and "api_key=" not in err, err
    assert f"No API key for {entry.display_name}: set {entry.api_key_env}" in missing


def test_an_unwritable_html_path_is_one_line_before_asking(
    server: ProviderServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine", "utf-8")
    folder = tmp_path / "page.html"
    folder.mkdir()
    url = server.base_url("magisterium")
    before = len(server.requests)
    for target in (notes / "out.html", notes / "deeper" / "out.html", folder):
        assert main(["ask", "What is grace?", "--base-url", url, "--html", str(target)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"citekit: error: --html {target}: cannot write it (")
        assert captured.err.count("\n") == 1 and ".part" not in captured.err
    assert len(server.requests) == before  # nothing was asked
    assert notes.read_text("utf-8") == "mine"
    # No log either: no call was made.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "page.html"]


def test_a_write_that_fails_names_the_file_never_the_temporary_one(tmp_path: Path) -> None:
    from citekit.core.files import write_text

    notes = tmp_path / "notes.txt"
    notes.write_text("mine", "utf-8")
    for target in (notes / "out.html", tmp_path / "folder"):
        if target.name == "folder":
            target.mkdir()
        with pytest.raises(OSError) as caught:
            write_text(target, "<p>x</p>")
        assert ".part" not in str(caught.value) and str(target) in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "notes.txt"]


_WORDS = st.sampled_from(
    ["ask", "log", "list", "show", "export", "path", "demo", "-", "--provider", "--json",
     "--limit", "--model", "--stream", "--no-stream", "--color", "--html", "--help", "-h",
     "--version", "Magisterium", "gptbots", "x.bib", "12", "-1", "--", "=", "--provider=mg"]
)  # fmt: skip


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(argv=st.lists(st.one_of(_WORDS, st.text(max_size=12)), max_size=6))
def test_any_command_line_is_a_usage_error_or_a_run_never_a_traceback(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if "demo" in argv or "vacuum" in argv:  # they write pages and files: tested on their own
        argv = [a for a in argv if a not in ("demo", "vacuum")]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    # No provider answers at this address: an ask that gets that far fails as a provider would.
    for entry in ENTRIES:
        monkeypatch.setenv(entry.base_url_env, "http://127.0.0.1:9/api")
    code = main(argv)
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err
