"""``%%ask`` in a real IPython shell, against the loopback server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from citekit import Answer, Magisterium
from citekit.notebook.magic import interpolate
from citekit.testing import ProviderServer
from tests.budget import examples

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-magic-0123456789"


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    for name in ("MAGISTERIUM_API_KEY", "MARITACA_API_KEY", "GPTBOTS_API_KEY"):
        monkeypatch.setenv(name, KEY)
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    ip = InteractiveShell.instance(config=config)
    result = ip.run_cell("%load_ext citekit.notebook.magic")
    assert result.success
    yield ip
    InteractiveShell.clear_instance()


def run(ip: InteractiveShell, source: str) -> Any:
    result = ip.run_cell(source)
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def test_ask_with_interpolation(shell: InteractiveShell, server: ProviderServer) -> None:
    sample = server.samples("magisterium")[0]
    head, _, tail = sample.question.partition(" ")
    shell.user_ns["word"] = tail
    url = server.base_url("magisterium")
    answer = run(shell, f"%%ask magisterium --base-url {url} --out ans\n{head} {{word}}\n")
    assert isinstance(answer, Answer)
    assert answer.question == sample.question
    assert shell.user_ns["ans"] is answer
    assert shell.user_ns["_"] is answer
    assert server.requests[-1].json["messages"][-1]["content"] == sample.question


def test_ask_a_client_variable_streaming(shell: InteractiveShell, server: ProviderServer) -> None:
    sample = server.samples("maritaca")[0]
    from citekit import Maritaca

    shell.user_ns["mt"] = Maritaca(api_key=KEY, base_url=server.base_url("maritaca"))
    assert run(shell, f"%%ask mt --stream\n{sample.question}") is None
    answer = shell.user_ns["_"]
    assert isinstance(answer, Answer) and answer.question == sample.question
    assert server.requests[-1].json.get("stream") is True


def test_gptbots(shell: InteractiveShell, server: ProviderServer) -> None:
    sample = server.samples("gptbots")[0]
    url = server.base_url("gptbots")
    answer = run(shell, f"%%ask gptbots --base-url {url}\n{sample.question}")
    assert answer.references is not None


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("%%ask\n{missing}", "names no variable"),
        ("%%ask\n   \n", "the cell is empty"),
        ("%%ask nosuch\nq", "neither a provider"),
        ("%%ask --bogus\nq", "unrecognized arguments"),
        ("%%ask gptbots --model m\nq", "--model does not apply"),
        ("%%ask magisterium --model 'sabia\nq", "cannot read the options"),
        ("%%ask magisterium --out 'not valid'\nq", "is not a valid variable name"),
    ],
)
def test_usage_errors(
    shell: InteractiveShell, source: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = shell.run_cell(source)
    assert not result.success
    captured = capsys.readouterr()
    assert message in captured.err + captured.out
    assert "Traceback" not in captured.err + captured.out


def test_provider_errors_fail_the_cell(shell: InteractiveShell, server: ProviderServer) -> None:
    from citekit import AuthenticationError

    shell.user_ns["mg"] = Magisterium(
        api_key=KEY, base_url=server.base_url("magisterium", fault="status", status=401)
    )
    with pytest.raises(AuthenticationError):
        run(shell, "%%ask mg\nWhat is subsidiarity?")


def test_interpolate() -> None:
    ns = {"n": 3, "doc": {"title": "CA"}, "xs": ["a"]}
    assert interpolate("{n:>3} {doc[title]} {xs[0]} {{literal}}", ns) == "  3 CA a {literal}"


def test_help_prints_every_option(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    for source in ("%%ask --help\n", "%ask --help", "%%ask -h\nignored"):
        assert run(shell, source) is None
        printed = capsys.readouterr().out
        for option in ("--stream", "--model", "--out", "--base-url", "provider"):
            assert option in printed, (source, option)


def test_a_line_ending_in_a_question_mark_is_a_question(
    shell: InteractiveShell, server: ProviderServer
) -> None:
    """IPython would read `%ask What is X?` as a help request; the magic asks it."""
    sample = next(s for s in server.samples("magisterium") if s.question.endswith("?"))
    shell.user_ns["mg"] = Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    answer = run(shell, f"%ask mg --out line_ans {sample.question}")
    assert isinstance(answer, Answer) and answer.question == sample.question
    assert shell.user_ns["line_ans"] is answer
    assert server.requests[-1].json["messages"][-1]["content"] == sample.question
    # An apostrophe and braces in the question: kept, and interpolated as in the cell magic.
    shell.user_ns["topic"] = "subsidiarity"
    answer = run(shell, "%ask mg What's the Church's teaching on {topic}?")
    assert answer.question == "What's the Church's teaching on subsidiarity?"


def test_a_line_without_a_question_says_so(shell: InteractiveShell) -> None:
    result = shell.run_cell("%ask mg")
    assert result.error_in_exec is not None or result.error_before_exec is not None


@settings(max_examples=examples(200), deadline=None)
@given(
    line=st.lists(
        st.sampled_from(
            ["mg", "--stream", "--model", "x", "--out", "What", "is", "it?", "'s", "{a}"]
        )
        | st.text(max_size=8),
        max_size=8,
    ).map(" ".join)
)
def test_a_line_splits_into_leading_options_and_the_question_as_written(line: str) -> None:
    from citekit.notebook.magic import split_line

    options, question = split_line(line, {"mg": Magisterium(api_key=KEY)})
    assert line.strip().endswith(question)
    assert " ".join([*options, question]).split() == line.split()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("mg --out ans What does Laborem exercens say?", "'mg' is neither a provider"),
        ("mg --out ans What does Laborem exercens say?", "define it first"),
        ("magisterum --stream What is grace?", "(did you mean magisterium?)"),
        ("--outt ans What is grace?", "unrecognized arguments: --outt (did you mean --out?)"),
        ("--stream --verbose What is grace?", "unrecognized arguments: --verbose"),
        ("-x What is grace?", "unrecognized arguments: -x"),
    ],
)
def test_a_line_with_an_unknown_option_or_client_is_refused_not_asked(
    shell: InteractiveShell,
    server: ProviderServer,
    line: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shell.user_ns.pop("ans", None)
    before = len(server.requests)
    result = shell.run_cell(f"%ask {line}")
    assert not result.success
    captured = capsys.readouterr()
    assert message in captured.err + captured.out
    assert "Traceback" not in captured.err + captured.out
    assert len(server.requests) == before and "ans" not in shell.user_ns


@settings(max_examples=examples(200), deadline=None)
@given(
    line=st.lists(
        st.sampled_from(
            ["mg", "nb", "--stream", "--strem", "-x", "--out", "ans", "What", "-", "-5"]
        )
        | st.text(max_size=8),
        max_size=8,
    ).map(" ".join)
)
def test_no_leading_option_word_reaches_the_question(line: str) -> None:
    """A word meant as an option (``-x``, ``--strem``) before the question is taken as one,
    for the parser to refuse: it is never sent as the start of the question."""
    from citekit.notebook.magic import split_line

    _, question = split_line(line, {"mg": Magisterium(api_key=KEY)})
    first = question.split(" ", 1)[0]
    assert not (
        first.startswith("-") and len(first) > 1 and (first[1].isalpha() or first[1] == "-")
    )


def test_ask_error_explains_the_last_failure(
    shell: InteractiveShell, server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from citekit import AuthenticationError
    from citekit.providers import failure

    failure._last = None  # a session where nothing failed yet
    assert run(shell, "%ask --error") is None
    assert "No call has failed in this session." in capsys.readouterr().out
    url = server.base_url("magisterium", api_key="the-right-key")
    shell.user_ns["mg"] = Magisterium(api_key=KEY, base_url=url, max_retries=0)
    with pytest.raises(AuthenticationError) as raised:
        run(shell, "%ask mg What is subsidiarity?")
    assert "%ask --error explains this failure" in "".join(raised.value.__notes__)
    explained = run(shell, "%ask --error")
    assert explained.error is raised.value
    bundle = explained._repr_mimebundle_()
    assert "AuthenticationError from Magisterium (HTTP 401)" in bundle["text/plain"]
    assert "MAGISTERIUM_API_KEY" in bundle["text/html"] and "What to do" in bundle["text/html"]
    assert KEY not in str(bundle)
    import citekit as ck

    assert ck.last_error is not None and ck.last_error.error is raised.value
