"""The ``citekit`` command line against the loopback server."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit import Answer, log
from citekit.cli.main import main
from citekit.testing import ProviderServer
from citekit.wire.parsers import parse_response
from tests.budget import examples

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-cli-0123456789"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for name in ("MAGISTERIUM_API_KEY", "MARITACA_API_KEY", "GPTBOTS_API_KEY"):
        monkeypatch.setenv(name, KEY)


def test_ask_streams_and_writes_html(
    server: ProviderServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = server.samples("magisterium")[0]
    out = tmp_path / "out.html"
    url = server.base_url("magisterium")
    code = main(["ask", sample.question, "--provider", "magisterium", "--base-url", url,
                 "--html", str(out)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = sample.response["choices"][0]["message"]["content"]
    assert captured.out.startswith(text[:40])
    assert "Sources:\n  [1] " in captured.out
    assert "recorded sample" in captured.out
    assert out.read_text("utf-8").startswith("<!DOCTYPE html>")
    assert f"Wrote {out}" in captured.err
    assert server.requests[-1].json.get("stream") is True


def test_ask_json(server: ProviderServer, capsys: pytest.CaptureFixture[str]) -> None:
    sample = server.samples("maritaca")[0]
    url = server.base_url("maritaca")
    assert main(["ask", sample.question, "--provider", "maritaca", "--base-url", url,
                 "--json"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["provider"] == "maritaca" and data["question"] == sample.question
    assert data["response"]["choices"][0]["message"]["content"]
    assert server.requests[-1].json.get("stream") is None


def test_ask_gptbots_without_stream(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = server.samples("gptbots")[0]
    url = server.base_url("gptbots")
    assert main(["ask", sample.question, "--provider", "gptbots", "--base-url", url,
                 "--no-stream"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "Sources:" in out and "score" in out


def test_missing_key_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MAGISTERIUM_API_KEY")
    assert main(["ask", "q", "--provider", "magisterium"]) == 2
    err = capsys.readouterr().err
    assert "MAGISTERIUM_API_KEY" in err and "Traceback" not in err
    assert "citekit demo" in err  # where to go without a key


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["ask"],
        ["ask", "q", "--provider", "openai"],
        ["ask", "q", "--provider", "gptbots", "--model", "x"],
        ["ask", "q", "--base-url", "ftp://nope"],
        ["log", "show", "999"],
        ["log", "export", "x.docx"],
        ["demo", "--out", "page.txt"],
    ],
)
def test_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # `citekit ask < /dev/null`
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_provider_error_exit_code(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url("magisterium", fault="status", status=401)
    assert main(["ask", "q", "--base-url", url]) == 1
    err = capsys.readouterr().err
    assert "AuthenticationError" in err and "MAGISTERIUM_API_KEY" in err
    assert "Traceback" not in err and KEY not in err


def test_demo_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo.html"
    assert main(["demo", "--out", str(out)]) == 0
    page = out.read_text("utf-8")
    printed = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and "recorded sample" in page
    # A short summary: the page's path and --open come first, before any work is done.
    lines = printed.splitlines()
    assert len(lines) <= 8, printed
    assert "every answer is a RECORDED SAMPLE" in lines[0]
    assert lines[1] == f"Writing {out.resolve()} (add --open to open it in a browser)."
    assert "citekit demo --open" in lines[-1]
    with ProviderServer() as srv:
        for provider in ("magisterium", "maritaca", "gptbots"):
            n = len(srv.samples(provider))
            assert any(line.startswith("  ") and f": {n} answers, " in line for line in lines)
            for sample in srv.samples(provider):
                assert sample.label in page  # every recorded answer is on the page
    for anchor in ("answers", "counts", "charts", "compare", "corpus", "more"):
        assert f'<section class="demo-section" id="{anchor}">' in page
        assert f'href="#{anchor}"' in page  # the contents' targets
    # authors, works, years, citations per answer, scores and the co-citation heatmap, each
    # drawn for three column widths
    assert page.count('<figure class="demo-figure"') == 6 and page.count("<svg") == 18
    assert "skipped" not in page and "could not be made" not in page
    assert "One question, three providers" in page and "Shared works" in page
    assert "Citation health" in page
    assert str(out.resolve()) in printed
    assert log.count() == 0  # demo answers stay out of the user's log
    # GPTBots' corner citations are footnotes on the page.
    assert "$[1]$" not in page
    # The question shows once per answer (in the answer's own header, not also as a heading).
    question = "What does the travel policy say about booking flights?"
    assert f"<h3>{question}</h3>" not in page
    section = page.split(f"Question: {question}")[1]
    assert 'class="citekit-marker"' in section.split('<div class="citekit-answer"')[0]


def test_log_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = {
        "id": "c1",
        "model": "magisterium-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Yes [^1]."}}],
        "citations": [{"cited_text": "P", "document_index": 0, "document_title": "Doc",
                       "document_author": "Au", "document_year": "2001"}],
    }  # fmt: skip
    for q in ("first question", "second question"):
        row = log.record(parse_response(body, provider="magisterium", question=q),
                         request={"q": q}, elapsed=1.25)  # fmt: skip
    assert row is not None
    assert main(["log", "list"]) == 0
    listed = capsys.readouterr().out
    assert "first question" in listed and "second question" in listed and "1.2s" in listed
    assert main(["log", "show", str(row)]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("# second question\n") and "[^1]: Doc — Au · 2001" in shown
    assert main(["log", "show", str(row), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["question"] == "second question"
    assert main(["log", "export", str(tmp_path / "refs.bib")]) == 0
    assert (tmp_path / "refs.bib").read_text("utf-8").count("@misc{") == 1
    assert main(["log", "export", str(tmp_path / "rows.csv"), "--rows"]) == 0
    assert (tmp_path / "rows.csv").read_text("utf-8").count("\n") == 3
    assert main(["log", "list", "--provider", "maritaca"]) == 0
    assert "No calls" in capsys.readouterr().out
    assert main(["log", "path"]) == 0
    shown = capsys.readouterr()
    assert shown.out.strip() == str(log.path)
    # sizes as every output gives them (render._sources.format_size: binary KB)
    assert re.match(r"[0-9.]+ (bytes|KB|MB), 2 calls logged", shown.err), shown.err
    assert main(["log", "vacuum"]) == 0
    vacuumed = capsys.readouterr().out
    assert re.search(r": [0-9.]+ (bytes|KB|MB) before, [0-9.]+ (bytes|KB|MB) after", vacuumed)
    assert " kB" not in shown.err + vacuumed and log.count() == 2


def test_python_dash_m(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["CITEKIT_HOME"] = str(tmp_path)
    ok = subprocess.run([sys.executable, "-m", "citekit", "--help"], capture_output=True,
                        text=True, env=env, timeout=60)  # fmt: skip
    assert ok.returncode == 0 and "demo" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "citekit", "ask", "q"], capture_output=True,
                         text=True, env=env, timeout=60)  # fmt: skip
    assert bad.returncode == 2
    assert "No API key for Magisterium" in bad.stderr and "Traceback" not in bad.stderr


def test_bad_html_suffix_is_refused_before_asking(
    server: ProviderServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = len(server.requests)
    url = server.base_url("magisterium")
    code = main(["ask", "What is grace?", "--base-url", url, "--html", str(tmp_path / "a.txt")])
    assert code == 2
    assert "must end in one of .md" in capsys.readouterr().err
    assert len(server.requests) == before


def test_corrupt_log_is_reported_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "log.sqlite3").write_bytes(b"this is not a database" * 100)
    log.close()
    assert main(["log", "list"]) == 1
    err = capsys.readouterr().err
    assert "cannot read the answer log" in err and "Traceback" not in err


def test_version_and_help_for_every_argument(capsys: pytest.CaptureFixture[str]) -> None:
    from citekit import __version__
    from citekit.cli.main import build_parser

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"citekit {__version__}"
    parsers = [build_parser()]
    seen = 0
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            if action.choices and isinstance(action.choices, dict):  # sub-commands
                parsers.extend(action.choices.values())
                continue
            seen += 1
            assert action.help, f"{parser.prog}: {action.dest} has no help"
    assert seen > 20


def test_exporting_an_empty_log_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["log", "export", str(tmp_path / "x.bib")],
                 ["log", "export", str(tmp_path / "x.csv"), "--rows"]):  # fmt: skip
        assert main(argv) == 1
        assert "No calls logged" in capsys.readouterr().out
    assert not list(tmp_path.glob("x.*"))


def test_warnings_are_one_line_notes(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A content-filtered answer prints its note under the answer, not a Python warning line."""
    sample = next(s for s in server.samples("magisterium") if "off_topic" in s.name)
    url = server.base_url("magisterium")
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("default")
        assert main(["ask", sample.question, "--base-url", url, "--no-stream"]) == 0
    captured = capsys.readouterr()
    assert "Warning:" not in captured.err and ".py:" not in captured.err
    assert "Note:" in captured.out


def test_a_tool_call_answer_prints_its_calls(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = next(s for s in server.samples("maritaca") if "tool_calls" in s.name)
    url = server.base_url("maritaca")
    assert main(["ask", sample.question, "--provider", "maritaca", "--base-url", url,
                 "--no-stream"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "Tool call: " in out and "(" in out


def test_log_show_and_list_every_call(capsys: pytest.CaptureFixture[str]) -> None:
    """Every id `log list` shows opens with `log show`, a failed call too; a GPTBots answer's
    knowledge chunks count as its sources."""
    from citekit import Reference, References
    from citekit.core.errors import RateLimitError

    busy = RateLimitError("slow down", provider="magisterium")
    failed = log.record(
        None, provider="magisterium", request={"q": "busy?"}, error=busy, elapsed=0.5
    )
    refs = References(
        items=(
            Reference(content="a", rank=1, data_name="x.pdf", score=0.9),
            Reference(content="b", rank=2, data_name="y.pdf", score=0.5),
        )
    )
    kb = Answer(provider="gptbots", text="Hi.", question="kb?", references=refs)
    chunked = log.record(kb, request={"q": "kb?"}, elapsed=1.0)
    assert failed is not None and chunked is not None
    assert main(["log", "list"]) == 0
    listed = capsys.readouterr().out
    for row_id in (failed, chunked):
        assert main(["log", "show", str(row_id)]) == 0
    shown = capsys.readouterr().out
    assert "RateLimitError" in shown and "slow down" in shown
    line = next(x for x in listed.splitlines() if "kb?" in x)
    assert line.split()[4] == "2"  # the sources column


# -- answers on a colour terminal ----------------------------------------------------------------
SGR = re.compile(r"\x1b\[[0-9;]*m")
#: What no output may hold once rich's own styling is taken out: escapes, C0 but newline, DEL,
#: C1, bidirectional overrides.
FORBIDDEN = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
MARKDOWN_ANSWER = (
    "## Why it matters\n\nWork has **dignity** [^1], says *Laborem exercens*.\n\n"
    "- first point [^2]\n- second point\n\n[^1]: note one\n"
)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _logged(text: str = MARKDOWN_ANSWER, title: str = "Laborem exercens") -> int:
    body = {
        "id": "c1",
        "model": "magisterium-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "citations": [
            {"cited_text": "P", "document_index": 0, "document_title": title,
             "document_author": "John Paul II", "document_year": "1981",
             "source_url": "https://www.vatican.va/le.html"},
            {"cited_text": "Q", "document_index": 1, "document_title": "Catechism"},
        ],
    }  # fmt: skip
    answer = parse_response(body, provider="magisterium", question="Why work?")
    row = log.record(answer, request={"q": "Why work?"}, elapsed=1.0)
    assert row is not None
    return row


def test_log_show_on_a_terminal_is_rendered_markdown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = _logged()
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", screen)
    assert main(["log", "show", str(row)]) == 0
    out = screen.getvalue()
    assert SGR.search(out)  # styled
    shown = SGR.sub("", out)
    assert "Why it matters" in shown and "## " not in shown and "**" not in shown
    assert "dignity [1]" in shown and "• first point [2]" in shown
    assert "[1] Laborem exercens — John Paul II (1981)" in shown
    assert "https://www.vatican.va/le.html" in shown and "[2] Catechism" in shown
    assert not FORBIDDEN.search(shown)


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        ([], {"NO_COLOR": "1"}),
        ([], {"TERM": "dumb"}),
        (["--color", "never"], {}),
    ],
)
def test_plain_text_without_colour(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str]
) -> None:
    row = _logged()
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", screen)
    assert main([*argv, "log", "show", str(row)]) == 0
    out = screen.getvalue()
    assert "\x1b" not in out
    # Markdown, as a pipe gets it: footnotes and their definitions.
    assert (
        "## Why it matters" in out
        and "[^1]: [Laborem exercens](<https://www.vatican.va/le.html>)" in out
    )


def test_piped_output_is_plain(capsys: pytest.CaptureFixture[str]) -> None:
    row = _logged()
    assert main(["log", "show", str(row)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "**dignity** [^1]" in out


def test_ask_streams_onto_a_terminal_and_ends_rendered(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = server.samples("magisterium")[0]
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", screen)
    url = server.base_url("magisterium")
    assert main(["--color", "always", "ask", sample.question, "--base-url", url]) == 0
    out = screen.getvalue()
    assert server.requests[-1].json.get("stream") is True
    # The live view draws and erases with rich's cursor moves; what stays is the last draw.
    final = SGR.sub("", out.rsplit("\x1b[2K", 1)[-1])
    text = sample.response["choices"][0]["message"]["content"]
    heading = next(line for line in text.splitlines() if line.startswith("#"))
    assert heading.lstrip("# ") in final and heading not in final
    assert "Sources:" in final and "[1] " in final and "recorded sample" in final


_HOSTILE = [
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "\x1b]0;title\x07",
    "\x9b31m",
    "\x9d0;t\x9c",
    "[bold red]loud[/]",
    "[link=https://evil.example]x[/link]",
    ":smile:",
    "a\rb\x08c\x07",
    "\u202eevil\u202c",
    "\x00\x7f\x85",
    "# heading\n\n**b** `c`\n\n```\n\x1b[2J\n```",
    "[x](https://e.example/\x1b[31m)",
]
_ANY = st.one_of(
    st.text(max_size=60),
    st.sampled_from(_HOSTILE),
    st.lists(st.one_of(st.sampled_from(_HOSTILE), st.text(max_size=10)), max_size=4).map("".join),
)
_MARKUP = st.from_regex(
    r"\[(bold|red|link=https://e\.example|/)\][A-Za-z]{1,8}\[/\]", fullmatch=True
)


def _terminal_output(answer: Answer, color_system: str | None) -> str:
    from citekit.render.text import StyledTerminal, TerminalLines, body_text, print_sources

    screen = io.StringIO()
    styled = StyledTerminal(screen, width=200, color_system=color_system)
    TerminalLines(screen, styled).markdown(body_text(answer)[0])
    print_sources(answer, screen, styled)
    return screen.getvalue()


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_ANY, title=st.one_of(_ANY, _MARKUP), url=_ANY, author=_ANY, note=_ANY)
def test_hostile_text_reaches_the_terminal_only_as_text(
    text: str, title: str, url: str, author: str, note: str
) -> None:
    """With colour on, the only escape sequences are rich's styling (taking them out leaves
    exactly the uncoloured rendering), and nothing else of C0, DEL, C1 or the bidirectional
    overrides gets through; rich markup in a title prints as written."""
    from citekit import Citation

    answer = Answer(
        provider="magisterium",
        text=text + " [^1]",
        question=note,
        notes=(note,),
        citations=(
            Citation(cited_text="p", document_index=0, document_title=title,
                     document_author=author, source_url=url),
        ),
    )  # fmt: skip
    coloured = _terminal_output(answer, "truecolor")
    plain = _terminal_output(answer, None)
    assert SGR.sub("", coloured) == plain
    assert not FORBIDDEN.search(plain), repr(FORBIDDEN.search(plain))
    if re.fullmatch(r"\[[^\]]+\][A-Za-z]+\[/\]", title):
        assert title in plain


def test_rich_is_imported_only_to_style_an_answer() -> None:
    """``import citekit`` (and the command line's modules) work with rich unimportable."""
    code = (
        "import sys; sys.modules['rich'] = None\n"
        "import citekit, citekit.cli.main, citekit.render.text\n"
        "from citekit.cli.main import main\n"
        "sys.exit(main(['--color', 'never', 'log', 'path']))\n"
    )
    env = {**os.environ, "CITEKIT_HOME": os.environ["CITEKIT_HOME"]}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_ctrl_c_while_streaming_onto_a_terminal_keeps_what_arrived(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from citekit.render import text as text_module

    shown: list[str] = []

    def update(self: object, text: str) -> None:
        shown.append(text)
        if len(shown) == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(text_module._Tail, "update", update)
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", screen)
    sample = server.samples("magisterium")[0]
    url = server.base_url("magisterium", chunks=40)
    assert main(["--color", "always", "ask", sample.question, "--base-url", url]) == 130
    assert "citekit: interrupted" in capsys.readouterr().err
    last = screen.getvalue().rsplit("\x1b[2K", 1)[-1]
    final = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", last).split())
    assert final == " ".join(shown[-1].split())  # what arrived stays on the screen, rendered
    row = log.rows()[0]  # and the stream logged what it had read, as partial
    assert row["partial"] and row["text"].startswith(shown[-1])


def _no_bigger_than(limit: int) -> None:  # in the child, before it runs: a real file size limit
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec: EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.slow  # the command in a child process, 3 s each
@pytest.mark.parametrize("name", ["rows.jsonl", "rows.parquet"])
def test_log_export_rows_on_a_full_disk_says_so_and_keeps_the_file(
    tmp_path: Path, name: str
) -> None:
    import hashlib

    for i in range(3):  # rows no compression makes small: 3 x 130 KB
        noise = " ".join(hashlib.sha256(f"{i}-{j}".encode()).hexdigest() for j in range(2000))
        log.record(Answer(text="Yes.", provider="magisterium", question=noise))
    log.close()
    target = tmp_path / name
    target.write_bytes(b"the export of yesterday")
    run = subprocess.run(
        [sys.executable, "-m", "citekit", "log", "export", str(target), "--rows"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        preexec_fn=lambda: _no_bigger_than(200_000),
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr.startswith(f"citekit: DiskFullError: No room to write {target}")
    assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1
    assert target.read_bytes() == b"the export of yesterday"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", name]


def test_ask_support_prints_each_sentence_with_its_verdict_and_the_summary(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = next(s for s in server.samples("magisterium") if "subsidiarity" in s.name)
    url = server.base_url("magisterium")
    assert main(["ask", sample.question, "--base-url", url, "--no-stream", "--support"]) == 0
    out = capsys.readouterr().out
    head, _, support = out.partition("\nDoes the cited passage say so?\n")
    assert "Sources:" in head and support, out
    # What the support view of the same recorded answer says, line for line.
    from citekit import parse_response, show_support
    from citekit.render.support import support_text

    view = show_support(parse_response(sample.response, provider="magisterium"))
    assert support.rstrip("\n").splitlines() == support_text(view).splitlines()[1:]
    assert len(view.sentences) == 15 and view.counts()["uncited"] == 9
    assert "\x1b" not in out  # piped: plain text


def test_ask_support_on_a_terminal_colours_the_verdicts(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = next(s for s in server.samples("magisterium") if "subsidiarity" in s.name)
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", screen)
    url = server.base_url("magisterium")
    argv = ["--color", "always", "ask", sample.question, "--base-url", url, "--support"]
    assert main(argv) == 0
    out = screen.getvalue()
    assert "\x1b[1;32m✓ supported" in out  # bold green
    shown = SGR.sub("", out)
    assert "Does the cited passage say so?" in shown and " of 15 sentences supported" in shown
