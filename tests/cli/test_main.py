"""``citekit.cli.main``: what the command says, read from the provider registry and printed
through the renderer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit import Answer, log
from citekit.cli.main import main
from citekit.core.names import ENTRIES
from citekit.render.text import source_lines
from citekit.testing import ProviderServer
from citekit.wire.parsers import parse_response
from tests.budget import examples

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-cli-main-0123456789"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:
        monkeypatch.setenv(entry.api_key_env, KEY)


def test_help_names_the_providers_from_their_entries(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "Sourced answers from Magisterium AI, Maritaca AI, GPTBots." in capsys.readouterr().out
    assert main(["ask", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "{magisterium,maritaca,gptbots}" in shown
    assert "who answers (default magisterium," in shown
    assert "model name (Magisterium, Maritaca)" in shown


def test_model_is_refused_for_a_provider_without_a_choice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ask", "Why?", "--provider", "gptbots", "--model", "gpt-4o"]) == 2
    assert capsys.readouterr().err == (
        "citekit: error: --model does not apply to GPTBots (the agent picks its model)\n"
    )


@pytest.mark.parametrize("provider", [e.name for e in ENTRIES])
def test_ask_prints_the_sources_the_renderer_lists(
    provider: str, server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url(provider)
    listed = 0
    for sample in server.samples(provider):
        assert main(["ask", sample.question, "--provider", provider, "--base-url", url,
                     "--no-stream"]) == 0  # fmt: skip
        printed = capsys.readouterr().out
        lines = source_lines(log.where(limit=1).answers()[0])
        if lines:
            listing = printed.split("\nSources:\n", 1)[1]
            assert listing.startswith("".join(f"  {line}\n" for line in lines))
            listed += 1
        else:
            assert "Sources:" not in printed
    assert listed, f"no sample of {provider} has sources"


def test_log_sizes_are_binary_kilobytes(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = server.samples("magisterium")[0]
    url = server.base_url("magisterium")
    assert main(["ask", sample.question, "--base-url", url, "--no-stream"]) == 0
    capsys.readouterr()
    size = log.size()
    assert main(["log", "path"]) == 0
    err = capsys.readouterr().err
    assert size >= 1024 and err.startswith(f"{size / 1024:.1f} KB, 1 calls logged")
    assert main(["log", "vacuum"]) == 0
    assert re.search(r" KB before, [0-9.]+ KB after\n$", capsys.readouterr().out)


_NUMBERS = st.one_of(
    st.integers().map(str),
    st.integers(min_value=2**63 - 3, max_value=2**64).map(str),
    st.sampled_from(["99999999999999999999999", "-1", "0", "1e3", "1_0", " 7 ", "9" * 5000]),
    st.text(max_size=30),
)


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_NUMBERS)
def test_numbers_on_the_command_line_are_checked_with_the_other_arguments(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``log show ID`` and ``log list --limit N`` with any text: a number SQLite can hold runs,
    anything else is a usage error (exit 2, one error line), never a traceback or a word about
    the log being unreadable."""
    newest = log.record(Answer(provider="magisterium", text="Grace.", question="q"))
    log.close()
    assert newest is not None  # rows 1 to newest are logged answers
    capsys.readouterr()
    try:
        number: int | None = int(text)
    except ValueError:
        number = None
    for argv, low in ((["log", "show", "--", text], 1), (["log", "list", f"--limit={text}"], 0)):
        code = main(argv)
        err = capsys.readouterr().err
        assert "Traceback" not in err and "cannot read the answer log" not in err
        if number is not None and low <= number <= 2**63 - 1:
            assert code == (0 if argv[1] == "list" or number <= newest else 2), (argv, err)
        else:
            assert code == 2, (argv, err)
            assert len([line for line in err.splitlines() if "error" in line]) == 1, err


def test_a_row_id_or_limit_past_sqlite_is_refused_by_the_library_too() -> None:
    """``log.get`` of an id no row can have is a ``KeyError``; ``where(limit=)`` past SQLite's
    integers a ``ValueError`` that says the range, not SQLite's "datatype mismatch"."""
    log.record(Answer(provider="magisterium", text="Grace.", question="q"))
    with pytest.raises(KeyError):
        log.get(10**30)
    with pytest.raises(ValueError, match=r"0 or more \(up to 9223372036854775807"):
        log.where(limit=10**30).rows()
    assert len(log.where(limit=2**63 - 1).rows()) == 1


# -- --json on every command that prints data -----------------------------------------------------
#: The commands that print no data (a message, a file written, a page): no --json.
NO_DATA = {("demo",), ("keys", "set"), ("keys", "remove"), ("log", "export")}


def _commands(parser: object, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    import argparse

    found: dict[tuple[str, ...], object] = {}
    for action in getattr(parser, "_actions", []):
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _commands(sub, (*path, name))
                found |= inner or {(*path, name): sub}
    return found


def test_every_command_that_prints_data_takes_json() -> None:
    from citekit.cli.main import build_parser

    commands = _commands(build_parser())
    assert {("ask",), ("chat",), ("models",), ("keys", "list"), ("log", "search")} <= set(commands)
    lacking = [
        " ".join(path)
        for path, sub in commands.items()
        if path not in NO_DATA
        and path != ("chat",)  # a dialogue; its answers are in the log
        and "--json" not in {o for a in sub._actions for o in a.option_strings}  # type: ignore[attr-defined]
    ]
    assert lacking == []


def test_the_json_of_every_command_parses(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import citekit as ck

    url = server.base_url("magisterium")
    question = server.samples("magisterium")[0].question
    failing = server.base_url("magisterium", fault="status", status=500, times=100)
    with pytest.raises(ck.CitekitError):
        ck.Magisterium(base_url=failing, max_retries=0).ask("A question the server fails")
    maritaca = server.base_url("maritaca")
    runs = {
        "ask": ["ask", question, "--base-url", url, "--json"],
        "log list": ["log", "list", "--json"],
        "log show": ["log", "show", "2", "--json"],
        "log show (failed)": ["log", "show", "1", "--json"],
        "log search": ["log", "search", "dignity", "--json"],
        "log path": ["log", "path", "--json"],
        "log vacuum": ["log", "vacuum", "--json"],
        "models": ["models", "--provider", "maritaca", "--base-url", maritaca, "--json"],
        "keys list": ["keys", "list", "--json"],
    }
    printed = {}
    for name, argv in runs.items():
        assert main(argv) == 0, (name, capsys.readouterr().err)
        printed[name] = json.loads(capsys.readouterr().out)
    assert printed["ask"]["question"] == question
    assert [r["id"] for r in printed["log list"]] == [1, 2]
    assert printed["log show"]["question"] == question
    assert printed["log show (failed)"]["error_type"] == "ServerError"
    assert [h["id"] for h in printed["log search"]] == [2]
    assert printed["log path"]["calls"] == 2
    assert printed["log vacuum"]["bytes_after"] <= printed["log vacuum"]["bytes_before"]
    assert any(row["default"] for row in printed["models"])
    assert {row["provider"] for row in printed["keys list"]} == {e.name for e in ENTRIES}


# -- log search and log export --------------------------------------------------------------------
def test_log_search_prints_hits_best_first_with_the_words_found(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url("magisterium")
    for sample in server.samples("magisterium")[:3]:
        assert main(["ask", sample.question, "--base-url", url, "--no-stream"]) == 0
    capsys.readouterr()
    assert main(["log", "search", "dignity", "of", "work"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "1" and "dignity of human work" in lines[0]
    assert "**dignity**" in lines[1]
    assert main(["log", "search", "no-such-word-anywhere"]) == 1
    assert "No logged answer" in capsys.readouterr().out
    assert main(["log", "search", '"', "*"]) == 2  # no word: said, never an SQLite error
    assert "has no word to search for" in capsys.readouterr().err


def test_log_export_leaves_recorded_samples_out_and_says_how_many(
    server: ProviderServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url("magisterium")
    assert main(["ask", "What is the best pizza topping?", "--base-url", url, "--no-stream"]) == 3
    live = parse_response(
        {"id": "x", "model": "m", "choices": [{"index": 0, "message": {"content": "Yes [1]."}}],
         "citations": [{"cited_text": "A live passage.", "document_index": 0,
                        "document_title": "Rerum Novarum"}]},
        provider="magisterium", question="A live question",
    )  # fmt: skip
    log.record(live, request={"model": "m", "messages": [{"role": "user", "content": "q"}]})
    capsys.readouterr()
    assert main(["log", "export", str(tmp_path / "refs.bib")]) == 0
    captured = capsys.readouterr()
    assert "Wrote the sources of 1 answers" in captured.out
    assert "left out 1 recorded sample" in captured.err and "--include-samples" in captured.err
    assert "Rerum Novarum" in (tmp_path / "refs.bib").read_text("utf-8")
    assert main(["log", "export", str(tmp_path / "all.csv"), "--include-samples"]) == 0
    assert "Wrote the sources of 2 answers" in capsys.readouterr().out
    assert main(["log", "export", str(tmp_path / "rows.csv"), "--rows"]) == 0
    assert "Wrote 1 log rows" in capsys.readouterr().out


def test_a_failed_call_says_what_to_do(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    down = server.base_url("magisterium", fault="status", status=500, times=100)
    assert main(["ask", "What is grace?", "--base-url", down, "--no-stream"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("citekit: ServerError: Magisterium returned HTTP 500")
    assert err[1] == (
        "citekit: what to do: the provider failed on its side (citekit already retried): "
        "ask again later"
    )
    assert main(["ask", "What is grace?", "--base-url", "http://127.0.0.1:9"]) == 1
    assert "work offline (citekit --offline ...)" in capsys.readouterr().err
