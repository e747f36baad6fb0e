"""Nothing a provider sends runs anywhere citekit writes it.

Markdown (the ``.md`` export and the bundle's ``text/markdown``) is rendered by three real
renderers, each as permissive as a front end may be: markdown-it with raw HTML on, mistune
as nbconvert uses it (raw HTML passed through), python-markdown with ``attr_list`` (and the
extensions the output needs: footnotes, tables, fenced code). The HTML they make is parsed,
and only harmless elements and attributes may come out. CSV cells cannot start a formula,
the terminal never receives a control character, and BibTeX parses (pybtex) to the title
that was sent, minus the braces that had to go.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import markdown
import mistune
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from citekit import (
    Answer,
    Citation,
    GeneratedFile,
    Reference,
    References,
    export_citations,
    sources_frame,
)
from citekit.cli.main import main
from citekit.data.io.bibliography import balanced_braces, bibtex, latex_escape
from citekit.data.io.exports import csv_safe, csv_safe_text
from citekit.data.io.exports import markdown_document as export_markdown
from citekit.model import SearchResult, SearchResults
from citekit.render import answer_bundle, answer_markdown, references_markdown
from citekit.render.live import TerminalLiveAnswer
from citekit.render.search import search_markdown
from citekit.render.text import TerminalText, terminal_safe
from citekit.testing import ProviderServer
from tests.budget import examples

# -- the renderers ------------------------------------------------------------------------------
_MDIT = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_MISTUNE = mistune.create_markdown(
    escape=False, plugins=["strikethrough", "footnotes", "table", "url"]
)


def _python_markdown(text: str) -> str:
    return markdown.markdown(text, extensions=["attr_list", "footnotes", "tables", "fenced_code"])


RENDERERS: dict[str, Callable[[str], str]] = {
    "markdown-it (html on)": _MDIT.render,
    "mistune (escape off)": lambda text: str(_MISTUNE(text)),
    "python-markdown + attr_list": _python_markdown,
}

ALLOWED_ELEMENTS = frozenset(
    [
        "p",
        "a",
        "em",
        "strong",
        "code",
        "pre",
        "ol",
        "ul",
        "li",
        "sup",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "hr",
        "br",
        "del",
        "s",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "div",
        "section",
    ]
)
# What the renderers themselves put on their elements (footnote ids and links, table
# alignment, list starts, the code block's language class).
ALLOWED_ATTRIBUTES = frozenset(["href", "title", "id", "class", "start", "align", "role", "rev"])
ALLOWED_SCHEMES = frozenset({"http", "https", "mailto", ""})


class _Audit(HTMLParser):
    """Every element and attribute of an HTML fragment; what is not harmless is a finding."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.findings: list[str] = []
        self.code: list[str] = []
        self.text: list[str] = []
        self._in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_ELEMENTS:
            self.findings.append(f"element <{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name not in ALLOWED_ATTRIBUTES:
                self.findings.append(f"attribute {name}={value!r} on <{tag}>")
            if name in ("href", "src") and value is not None:
                target = value.strip()
                if not target.startswith("#"):
                    scheme = urlsplit(target).scheme.lower() if ":" in target else ""
                    if scheme not in ALLOWED_SCHEMES or any(ord(c) < 0x21 for c in target):
                        self.findings.append(f"{name}={value!r} on <{tag}>")
        if tag == "code":
            self._in_code += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "code":
            self._in_code -= 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._in_code:
            self._in_code -= 1

    def handle_comment(self, data: str) -> None:
        self.findings.append(f"comment <!--{data}-->")

    def handle_pi(self, data: str) -> None:
        self.findings.append(f"processing instruction <?{data}>")

    def handle_decl(self, decl: str) -> None:
        self.findings.append(f"declaration <!{decl}>")

    def unknown_decl(self, data: str) -> None:
        self.findings.append(f"declaration <![{data}]>")

    def handle_data(self, data: str) -> None:
        (self.code if self._in_code else self.text).append(data)


def audit(html: str) -> _Audit:
    parser = _Audit()
    parser.feed(html)
    parser.close()
    return parser


def assert_harmless(md: str) -> None:
    for name, render in RENDERERS.items():
        html = render(md)
        findings = audit(html).findings
        assert not findings, f"{name} made {findings} of\n{md}\n---\n{html}"


# -- hostile values -----------------------------------------------------------------------------
FRAGMENTS = [
    "<img src=x onerror=alert(1)>",
    "\\<img src=x onerror=alert(1)>",
    "\\\\<b onclick=alert(1)>",
    "<script>alert(1)</script>",
    "</p><iframe src=javascript:alert(1)>",
    "<!-- x -->",
    "<?php x ?>",
    "<![CDATA[x]]>",
    "<a href='javascript:alert(1)'>a</a>",
    "{: onclick=alert(1)}",
    '{onclick="alert(1)"}',
    "{: #id .cls style=color:red}",
    "*em*{: onmouseover=x}",
    "[x](javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "](+(x [y](javascript:alert(1))",
    "![i](https://e.org/i.png)",
    "[r]: javascript:alert(1)\n",
    "[r]\n",
    "<https://e.org/a>",
    "<javascript:alert(1)>",
    "<x@e.org>",
    "&lt;img src=x onerror=y&gt;",
    "&#60;b&#62;",
    "&#",
    "`a&#<b onclick=x>`",
    "`<b onclick=x>`",
    "``a`<i onclick=x>``",
    "\n```\n<img src=x onerror=a>\n```\n",
    "\n```html {: onclick=x}\n<b>\n```\n",
    "\n~~~\n<img src=x onerror=a>\n~~~\n",
    "\n````\n<b>\n```\n",
    "\n    <img src=x onerror=a>\n",
    "\n- item\n\n      <b onclick=x>\n",
    "\n> quote <b onclick=x>\n",
    "\n1. ",
    "\n- ",
    "\n> ",
    "\n# ",
    "\n| a | b |\n|---|---|\n| `x|<b>` | <i> |\n",
    "[^1]",
    "[1]",
    "$[1]$",
    "\n[^2]: def <b onclick=x>\n",
    "\n\n",
    "\t",
    "    ",
]
ALPHABET = "<>&\\`{}:=\"'#*_[]()!|~-+. \nabcio/?"
HOSTILE = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=ALPHABET, max_size=6)), max_size=12
).map("".join)
URLS = st.one_of(
    HOSTILE,
    st.sampled_from(
        [
            "javascript:alert(1)",
            "https://e.org/<img src=x onerror=y>",
            "https://e.org/a b",
            "data:text/html,<b>",
            "https://e.org/x{: onclick=y}",
            "https://e.org/ok",
        ]
    ),
)


@st.composite
def hostile_answers(draw: st.DrawFn) -> Answer:
    title, quote, url, name = draw(HOSTILE), draw(HOSTILE), draw(URLS), draw(HOSTILE)
    citation = Citation(
        cited_text=quote,
        document_index=0,
        cited_text_heading=draw(HOSTILE),
        document_title=title,
        document_author=draw(HOSTILE),
        document_year=draw(HOSTILE),
        document_reference=draw(HOSTILE),
        source_url=url,
    )
    other = dataclasses.replace(citation, document_index=1, cited_text=draw(HOSTILE))
    refs = References(items=(Reference(draw(HOSTILE), 1, data_name=title, source_url=url),))
    return Answer(
        provider="magisterium",
        text=draw(HOSTILE) + "[^1]" + draw(HOSTILE),
        question=draw(HOSTILE),
        citations=(citation, other),
        related_questions=(draw(HOSTILE),),
        files=(GeneratedFile(name=name, mime_type="text/plain", note=draw(HOSTILE)),),
        references=refs,
        notes=(draw(HOSTILE),),
    )


# -- Markdown -----------------------------------------------------------------------------------
@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=hostile_answers())
def test_markdown_of_hostile_answers_renders_harmless(answer: Answer) -> None:
    assert_harmless(export_markdown(answer))
    assert_harmless(answer_bundle(answer, include={"text/markdown"})["text/markdown"])
    assert answer.references is not None
    assert_harmless(references_markdown(answer.references))


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_each_hostile_fragment_is_harmless_everywhere(fragment: str) -> None:
    answer = Answer(
        provider="magisterium",
        text=f"Before {fragment} after[^1].",
        question=fragment,
        citations=(Citation(fragment, 0, document_title=fragment, source_url=fragment),),
    )
    assert_harmless(export_markdown(answer))


def test_the_issue_examples() -> None:
    text = (
        "\\<img src=x onerror=alert(1)> is shown as text.\n\n"
        "A paragraph {: onclick=alert(1)}\n\n# Heading {: onmouseover=alert(2)}\n"
    )
    answer = Answer(provider="maritaca", text=text, question="<img src=x onerror=alert(3)>")
    md = export_markdown(answer)
    assert md.startswith("# &lt;img src=x onerror=alert(3)\\>\n")
    assert "&lt;img src=x onerror=alert(1)>" in md and "\\<img" not in md
    assert "\\{: onclick=alert(1)}" in md
    for name, render in RENDERERS.items():
        seen = audit(render(md))
        assert not seen.findings, name
        shown = "".join(seen.text)
        assert "<img src=x onerror=alert(1)> is shown as text." in shown, name
        assert "<img src=x onerror=alert(3)>" in shown, name


def test_code_keeps_its_angle_brackets_readable() -> None:
    text = (
        "Use `List<String>` and `{key}` here.\n\n"
        "```java\nMap<K, V> m = new HashMap<>(); // {: onclick=x}\n```\n\n"
        "~~~\n<b>tilde</b>\n~~~\n\nand <b>bold</b> as text."
    )
    md = answer_markdown(Answer(provider="maritaca", text=text))
    assert "`List<String>`" in md and "`{key}`" in md
    assert "Map<K, V> m = new HashMap<>(); // {: onclick=x}" in md
    assert "\n<b>tilde</b>\n" in md and "and &lt;b>bold&lt;/b> as text." in md
    for name, render in RENDERERS.items():
        seen = audit(render(md))
        assert not seen.findings, name
        code = "".join(seen.code)
        assert "List<String>" in code and "{key}" in code, name
        assert "Map<K, V> m = new HashMap<>();" in code and "<b>tilde</b>" in code, name
        assert "&lt;" not in code, name
        assert "<b>bold</b> as text." in "".join(seen.text), name


def test_code_some_renderer_reads_otherwise_is_escaped() -> None:
    # Indented code in a list item is code for CommonMark, a paragraph for python-markdown.
    text = "- item\n\n      <b onclick=x>\n\n```\nopen to the end <i>"
    md = answer_markdown(Answer(provider="maritaca", text=text))
    assert "&lt;b onclick=x>" in md and "open to the end <i>\n```" in md
    assert_harmless(md)


# -- CSV ----------------------------------------------------------------------------------------
FORMULA_STARTS = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
CELLS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            '=HYPERLINK("https://evil.example","x")',
            "+1+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(A1:A2)",
            "\t=1",
            "\r=1",
            "\uff1d1+1",
            "'=already quoted",
        ]
    ),
)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _expected_cell(value: str) -> str:
    return "'" + value if value[:1] and value[0] in FORMULA_STARTS else value


@settings(max_examples=examples(60), deadline=None)
@given(title=CELLS, author=CELLS, quote=CELLS, question=CELLS)
def test_csv_cells_never_start_a_formula(
    title: str, author: str, quote: str, question: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    answer = Answer(
        provider="magisterium",
        text="x[^1]",
        question=question,
        citations=(Citation(quote, 0, document_title=title, document_author=author),),
    )
    path = export_citations(
        answer, tmp_path_factory.mktemp("csv") / "refs.csv", include_samples=True
    )
    (row,) = _read_csv(path)
    for column, value in [
        ("document_title", title),
        ("document_author", author),
        ("cited_text", quote),
        ("question", question),
    ]:
        assert not row[column][:1] or row[column][0] not in FORMULA_STARTS
        assert row[column] == _expected_cell(value) or (value == "" and row[column] == "")
    assert row["marker"] == "1" and row["document_index"] == "0"  # numbers stay numbers


def test_csv_safe_leaves_numbers_and_quotes_text() -> None:
    import polars as pl

    frame = pl.DataFrame({"n": [-1, 2], "s": ["-1", "=cmd"], "t": ["ok", None]})
    safe = csv_safe(frame)
    assert safe["n"].to_list() == [-1, 2]
    assert safe["s"].to_list() == ["'-1", "'=cmd"] and safe["t"].to_list() == ["ok", None]
    assert csv_safe_text("@x") == "'@x" and csv_safe_text("") == ""


# -- the terminal -------------------------------------------------------------------------------
#: Controls, and the bidirectional embeddings, overrides and isolates that reorder shown text.
BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
FORBIDDEN = frozenset(chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), *BIDI]) - {
    "\n",
    "\t",
}
ESCAPES = [
    "\x1b]52;c;aGVsbG8=\x07",  # write the clipboard
    "\x1b]0;owned\x07",  # set the window title
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",  # a hidden hyperlink
    "\x1b[8mhidden\x1b[0m",  # concealed text
    "\x1b[2J\x1b[H",  # clear the screen
    "\x9b31m",  # 8-bit CSI
    "\x9d0;title\x9c",  # 8-bit OSC
    "\x1bP+q\x1b\\",  # DCS
    "\r\x1b[Kover",
    "\x00\x07\x08\x7f",
    "access = \u202e\u2066 admin\u2069\u2066",  # reads one way, is another
]
TERMINAL_TEXT = st.lists(st.one_of(st.sampled_from(ESCAPES), st.text(max_size=8)), max_size=10).map(
    "".join
)


@settings(max_examples=examples(300), deadline=None)
@given(text=TERMINAL_TEXT)
def test_terminal_text_has_no_control_characters(text: str) -> None:
    assert not FORBIDDEN & set(terminal_safe(text))


@settings(max_examples=examples(200), deadline=None)
@given(text=TERMINAL_TEXT, cuts=st.lists(st.integers(0, 200), max_size=6))
def test_streamed_terminal_text_is_cleaned_as_a_whole(text: str, cuts: list[int]) -> None:
    pieces, last = [], 0
    for cut in sorted({min(c, len(text)) for c in cuts}):
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    cleaner = TerminalText()
    out = "".join(cleaner.feed(piece) for piece in pieces) + cleaner.flush()
    assert not FORBIDDEN & set(out)
    assert out == terminal_safe(text)


def test_terminal_safe_keeps_the_text_around_sequences() -> None:
    text = "Title\x1b]0;owned\x07 and \x1b]8;;https://e.org\x1b\\link\x1b]8;;\x1b\\\r\nnext\tcol"
    assert terminal_safe(text) == "Title and link\nnext\tcol"
    assert terminal_safe("São Paulo — 東京") == "São Paulo — 東京"


HOSTILE_TEXT = "Answer \x1b]52;c;aGVsbG8=\x07with \x1b[8mhidden\x1b[0m text\x9b2J.[^1]"
HOSTILE_TITLE = "Title\x1b]0;owned\x07"


def _hostile_samples(root: Path) -> Path:
    """A sample directory whose one Magisterium answer is full of terminal sequences."""
    response = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "magisterium-1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": HOSTILE_TEXT},
                "finish_reason": "stop",
            }
        ],
        "citations": [
            {
                "cited_text": "Passage \x1b[31mred\x1b[0m",
                "document_index": 0,
                "document_title": HOSTILE_TITLE,
                "document_author": "Author\x07",
                "source_url": "https://e.org/\x1b]8;;x\x07",
            }
        ],
        "related_questions": [],
        "citekit_sample": "magisterium/01_hostile",
    }
    question = "What is the terminal?"
    request = {"model": "magisterium-1", "messages": [{"role": "user", "content": question}]}
    folder = root / "magisterium"
    folder.mkdir(parents=True)
    record = {"question": question, "language": "en", "request": request, "response": response}
    (folder / "01_hostile.json").write_text(json.dumps(record), encoding="utf-8")
    # The stream cuts the text inside its escape sequences.
    chunks = [HOSTILE_TEXT[:9], HOSTILE_TEXT[9:30], HOSTILE_TEXT[30:]]
    events = []
    for chunk in chunks:
        body: dict[str, Any] = {
            "id": "chatcmpl-hostile",
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": "magisterium-1",
            "choices": [{"index": 0, "delta": {"content": chunk}, "finish_reason": None}],
        }
        events.append(body)
    last = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "magisterium-1",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "citations": response["citations"],
        "related_questions": [],
        "citekit_sample": "magisterium/01_hostile",
    }
    events.append(last)
    sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    (folder / "01_hostile.sse").write_text(sse, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProviderServer]:
    with ProviderServer(data_dir=_hostile_samples(tmp_path_factory.mktemp("hostile"))) as srv:
        yield srv


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MAGISTERIUM_API_KEY", "sk-test-hostile-0123456789")
    return tmp_path


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_cli_ask_and_log_print_no_control_characters(
    hostile_server: ProviderServer,
    cli_env: Path,
    stream: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = hostile_server.base_url("magisterium")
    question = "What is the terminal?\x1b]0;title\x07"
    # not the sample's own question (the escape sequence): its answer is another question's
    assert main(["ask", question, "--base-url", url, stream]) == 3
    out = capsys.readouterr().out
    assert not FORBIDDEN & set(out), repr(out)
    assert "No recorded answer for this question; showing the recorded answer to" in out
    assert "Answer with hidden text." in out and "[1] Title — Author" in out
    for argv in (["log", "list"], ["log", "show", "1"]):
        assert main(argv) == 0
        shown = capsys.readouterr().out
        assert not FORBIDDEN & set(shown), (argv, repr(shown))
    assert "Title" in shown and "Answer with hidden text" in shown


def test_cli_json_escapes_control_characters(
    hostile_server: ProviderServer, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = hostile_server.base_url("magisterium")
    assert main(["ask", "What is the terminal?", "--base-url", url, "--json"]) == 0
    out = capsys.readouterr().out
    assert not FORBIDDEN & set(out), repr(out)
    data = json.loads(out)  # JSON's own escapes keep every character
    assert data["response"]["choices"][0]["message"]["content"] == HOSTILE_TEXT


def test_cli_errors_print_no_control_characters(
    hostile_server: ProviderServer, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = hostile_server.base_url(
        "magisterium", fault="status", status=400, message="bad \x1b]52;c;eA==\x07request"
    )
    assert main(["ask", "q", "--base-url", url, "--no-stream"]) == 1
    err = capsys.readouterr().err
    assert "bad request" in err and not FORBIDDEN & set(err), repr(err)


def test_cli_log_export_rows_csv_is_formula_safe(
    hostile_server: ProviderServer, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = hostile_server.base_url("magisterium")
    # another question's recorded answer (exit 3), logged with the question asked
    assert main(["ask", '=HYPERLINK("https://evil.example")', "--base-url", url]) == 3
    path = cli_env / "rows.csv"
    assert main(["log", "export", str(path), "--rows", "--include-samples"]) == 0
    (row,) = _read_csv(path)
    assert row["question"] == '\'=HYPERLINK("https://evil.example")'
    capsys.readouterr()


def test_live_terminal_display_prints_no_control_characters() -> None:
    out = io.StringIO()
    live = TerminalLiveAnswer("magisterium", "q", stream=out, interval=0.0)
    for piece in (HOSTILE_TEXT[:9], HOSTILE_TEXT[9:30], HOSTILE_TEXT[30:]):
        live.add(piece)
    answer = Answer(
        provider="magisterium",
        text=HOSTILE_TEXT,
        citations=(Citation("Passage \x1b[31mred", 0, document_title=HOSTILE_TITLE),),
    )
    live.finish(answer)
    printed = out.getvalue()
    assert not FORBIDDEN & set(printed), repr(printed)
    assert "Answer with hidden text." in printed and "Title" in printed
    failed = io.StringIO()
    live = TerminalLiveAnswer("magisterium", "q", stream=failed, interval=0.0)
    live.add("partial \x1b]0;")
    live.fail(RuntimeError("reset \x1b[2J"))
    assert not FORBIDDEN & set(failed.getvalue()) and "partial" in failed.getvalue()


# -- BibTeX -------------------------------------------------------------------------------------
BIB_TEXT = st.text(alphabet=st.sampled_from([*"{}\\%#&$_~^ab c@,=\"'", "é", "\n"]), max_size=24)
_UNLATEX = {
    r"\textbackslash{}": "\\",
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\&": "&",
    r"\%": "%",
    r"\$": "$",
    r"\#": "#",
    r"\_": "_",
}


def _unlatex(text: str) -> str:
    pattern = "|".join(re.escape(k) for k in _UNLATEX)
    return re.sub(pattern, lambda m: _UNLATEX[m.group(0)], text)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _braceless(text: str) -> str:
    return " ".join(text.replace("{", "").replace("}", "").split())


@settings(max_examples=examples(150), deadline=None)
@given(title=BIB_TEXT, author=BIB_TEXT)
def test_bibtex_parses_with_pybtex_to_the_title_sent(title: str, author: str) -> None:
    from pybtex.database import parse_string

    answer = Answer(
        provider="magisterium",
        text="x[^1]",
        citations=(
            Citation("p", 0, document_title=title, document_author=author, document_year="1891"),
        ),
    )
    data = parse_string(bibtex([answer]), "bibtex")  # raises on unbalanced braces
    (entry,) = data.entries.values()
    # The entry is titled by its work's name (the title without a trailing place in the work,
    # "Rerum, n. 5" -> "Rerum"), the title as sent when there is no work (nothing to name).
    work = sources_frame([answer])["work"].item()
    sent = work if work is not None else title if title else "Untitled"
    got = " ".join(_unlatex(entry.fields["title"]).split())
    # Nothing but braces is lost, and a title whose braces pair comes back whole.
    assert _braceless(got) == _braceless(sent)
    if _balanced(sent):
        assert got == " ".join(sent.split())


def test_bibtex_brace_examples() -> None:
    assert latex_escape("a}b{c") == "abc"
    assert latex_escape("Rerum {Novarum} 100%") == r"Rerum {Novarum} 100\%"
    assert balanced_braces("}{a{b}") == "a{b}"


@settings(max_examples=examples(40), deadline=None)
@given(query=HOSTILE, title=HOSTILE, text=HOSTILE, author=HOSTILE, url=URLS)
def test_search_results_markdown_renders_harmless(
    query: str, title: str, text: str, author: str, url: str
) -> None:
    item = SearchResult(rank=1, title=title, url=url, text=text, author=author, year="1891")
    results = SearchResults(query=query, items=(item,))
    assert_harmless(search_markdown(results))
