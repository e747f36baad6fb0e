"""citekit.text.reader: the one reader of an answer's text (markers, code, links, definitions)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit.text import reader
from citekit.text.parser import (
    MARKER_TOKEN,
    NO_MARKERS,
    Marker,
    link_allowed,
    make_parser,
    marker_plugin,
)
from citekit.text.reader import read
from citekit.text.source_map import normalise
from tests.budget import examples

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def numbers(text: str) -> list[int]:
    return [m.number for m in read(text).markers]


def sources(text: str) -> list[str]:
    return [text[m.start : m.end] for m in read(text).markers]


def rendered_markers(text: str) -> list[tuple[int, str]]:
    """The markers a markdown-it render of ``text`` shows: what the HTML links."""
    md = make_parser()
    return [
        (child.meta["number"], child.content)
        for token in md.parse(text, {})
        for child in token.children or ()
        if child.type == MARKER_TOKEN
    ]


# -- markers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Work has dignity.[^1]", [1]),
        ("Adjacent[^1][^3] and plain [2].", [1, 3, 2]),
        ("Plain adjacent [1][2].", [1, 2]),
        ("Mixed [1][^2]$[3]$.", [1, 2, 3]),
        ("A link [1](https://example.org) is not a marker.", []),
        ("A link [text](https://example.org)[^2] then a marker.", [2]),
        ("A reference link [1][ref] is not a marker.", []),
        ("Collapsed [1][] is not a marker.", []),
        ("Escaped \\[1] stays text.", []),
        ("An escaped backslash \\\\[1] leaves a marker.", [1]),
        ("Zero [0], huge [12345], padded [01] are not footnotes.", []),
        ("Largest [9999] and [^9999].", [9999, 9999]),
        ("A colon after: see [2]: this.", [2]),
        ("A parenthesis after a space [1] (CCC 1730).", [1]),
        ("Inside emphasis *[1]* and **[^2]** and ~~[3]~~.", [1, 2, 3]),
        ("An image ![1] is a marker after a bang.", [1]),
        ("Entities &#91;1] are text.", []),
        ("# Heading [2]\n\nSetext [3]\n===", [2, 3]),
        ("> Quoted [1]\n> more [2]", [1, 2]),
        ("- item [1]\n- item [^2]\n\n1. one [3]", [1, 2, 3]),
        ("| a | b |\n|---|---|\n| [1] | x \\| [2] |", [1, 2]),
    ],
)
def test_markers(text: str, expected: list[int]) -> None:
    assert numbers(text) == expected
    assert read(text).numbers == frozenset(expected)


def test_marker_spans_styles_and_document_index() -> None:
    text = "Grace[^2] and [3] and $[4]$."
    first, second, third = read(text).markers
    assert (text[first.start : first.end], first.style, first.caret) == ("[^2]", "caret", True)
    assert first.document_index == 1
    assert (text[second.start : second.end], second.style, second.caret) == (
        "[3]",
        "bracket",
        False,
    )
    assert (text[third.start : third.end], third.style, third.number) == ("$[4]$", "corner", 4)
    assert Marker(0, 3, 1).style == "bracket"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Corner $[1]$ citations$[2]$$[3]$.", ["$[1]$", "$[2]$", "$[3]$"]),
        ("Repeated $[1]$ and $[1]$.", ["$[1]$", "$[1]$"]),
        ("Doubled $$[1]$$.", ["$[1]$"]),
        ("Escaped dollar \\$[1]$ leaves the bracket.", ["[1]"]),
        ("Half $[1] is a bracket.", ["[1]"]),
        ("Not a number $[x]$ nor $[0]$.", []),
        ("US$[1]$ price.", ["$[1]$"]),
        ("`$[1]$` is code.", []),
        ("$[1]$: a corner is never a definition", ["$[1]$"]),
    ],
)
def test_gptbots_corner_citations(text: str, expected: list[str]) -> None:
    assert sources(text) == expected


# -- code -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Intro.\n\n    code [1]\n\nText [2].", [2]),
        ("Intro.\n\n\tcode [1]\n\nText [2].", [2]),
        ("Para\n    continuation [1]", [1]),  # an indented line cannot interrupt a paragraph
        ("- item\n\n      code [1]\n\n  text [2]", [2]),
        (">     code [1]\n\n[2]", [2]),
        ("Code `[1]` and [2].", [2]),
        ("Double ``a ` [1]`` and [2].", [2]),
        ("Unmatched ` backtick [1].", [1]),
        ("```\n[1]\n```\n[2]", [2]),
        ("~~~py\n[1]\n~~~\n[2]", [2]),
        ("```\nunclosed [1]\n\n[2]", []),
        ("- ```\n  [1]\n  ```\n- [2]", [2]),
        ("A span `over\n[1] two` lines [2]", [2]),
    ],
)
def test_markers_in_code_are_literal(text: str, expected: list[int]) -> None:
    assert numbers(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "> " * 3 + "[1]",
        ">" * 25 + " [1]",  # past markdown-it's nesting limit the text is dropped unread
        "- " * 3 + "[1]",
        "- " * 12 + "[1]",
        "> - 1. > [1]\n> - 2. [2]",
        "- a\n  - b\n   - c [1]",
    ],
)
def test_nested_blocks_read_as_markdown_it_reads_them(text: str) -> None:
    assert [(m.number, text[m.start : m.end]) for m in read(text).markers] == rendered_markers(text)


def test_code_spans_are_where_markdown_it_sees_code() -> None:
    text = "Intro `x` here.\n\n    code [1]\n\n```\nfenced\n```\nText [2]."
    reading = read(text)
    spans = [text[a:b] for a, b in reading.code_spans]
    assert spans == ["`x`", "    code [1]\n", "```\nfenced\n```\n"]
    assert [text[a:b] for a, b in reading.code_blocks] == spans[1:]
    assert reading.in_code(text.index("[1]")) and not reading.in_code(text.index("[2]"))
    assert read("```\nopen\n\n\n").code_blocks == ((0, len("```\nopen\n\n\n")),)
    assert read("No code [1].").code_spans == ()
    assert read("No markers, `code`.").code_spans == ((12, 18),)


# -- links ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[see [1]](https://e.org) then [2]", [2]),
        ("[see [^1] and $[2]$](https://e.org) then [3]", [3]),
        ("[see [1]][ref] and [2]\n\n[ref]: https://e.org", [2]),
        ("<https://e.org/[1]> and [2]", [2]),
        ("[x](https://e.org/[1]) and [2]", [2]),
        ('[x](https://e.org "title [1]") and [2]', [2]),
        # a link markdown-it refuses (not http/https) is text: its markers are markers
        ("[see [1]](javascript:alert(1)) and [2]", [1, 2]),
        ("[see [1]](relative/path) and [2]", [1, 2]),
        ("<ftp://e.org/[1]> and [2]", [1, 2]),
        ("[1]: https://e.org\n\n[1] stays a marker, [a][1] is a link", [1]),
    ],
)
def test_markers_in_links_are_literal(text: str, expected: list[int]) -> None:
    assert numbers(text) == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://e.org",
        " http://e.org/x?y=1 ",
        "HTTPS://E.ORG",
        "https://",
        "javascript:alert(1)",
        "java\tscript:x",
        "//e.org",
        "e.org",
        "",
        "https://e.org/a b",
        'https://e.org/"',
        "https://e.org/\\",
        "ftp://e.org",
        "https://[::1",
    ],
)
def test_link_allowed_is_safe_url(url: str) -> None:
    from citekit.text.escape import safe_url

    assert link_allowed(url) == (safe_url(url) is not None)


@given(st.text(max_size=40) | st.builds(lambda s: "https://" + s, st.text(max_size=20)))
def test_link_allowed_is_safe_url_on_any_text(url: str) -> None:
    from citekit.text.escape import safe_url

    assert link_allowed(url) == (safe_url(url) is not None)


# -- definitions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Body [^1]\n[^1]: the definition line\n[^2]: another", [1]),
        ("List item [^4], end.\n\n[^4]: Laborem exercens, 6", [4]),
        ("Intro.\n\n> [^1]: a quote", []),
        ("- [2]: an item", []),
        ("1. [2]: an item", []),
        ("## [^3]: a head", []),
        ("   [^3]: indented three", []),
        ("Para\n[1]: a continuation line", []),
        ("| [1]: cell |\n|---|\n| [2]: cell |", []),
        ("Not at the start: [1]: marker", [1]),
        ("*[1]: emphasised*", [1]),
        ("[^1]: see also [2] (a marker in a definition is not cited inline)", []),
    ],
)
def test_definition_heads_are_not_markers(text: str, expected: list[int]) -> None:
    assert numbers(text) == expected


def test_definitions_and_body() -> None:
    reading = read("Text [^1].\n\n[^1]: Catechism, 1934\n[^2]: Gaudium et spes\n[^1]: again")
    assert dict(reading.definitions) == {1: "Catechism, 1934", 2: "Gaudium et spes"}
    assert reading.body == "Text [^1]."
    with pytest.raises(TypeError):
        reading.definitions[3] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "body", "definitions"),
    [
        ("```\n[^1]: in code\n```\n[^2]: out", "```\n[^1]: in code\n```", {2: "out"}),
        ("- ```\n  [^1]: in code\n  ```", "- ```\n  [^1]: in code\n  ```", {}),
        ("`a\n[^1]: in a code span` b", "`a\n[^1]: in a code span` b", {}),
        ("    [^1]: indented code", "    [^1]: indented code", {}),
        ("> [^1]: in a quote stays in the body", "> [^1]: in a quote stays in the body", {}),
        ("A\n[^1]:\n", "A\n", {1: ""}),
        ("[^1]: only", "", {1: "only"}),
        ("Text\n\n\n", "Text\n", {}),
    ],
)
def test_definition_lines_in_code_are_code(
    text: str, body: str, definitions: dict[int, str]
) -> None:
    reading = read(text)
    assert reading.body == body
    assert dict(reading.definitions) == definitions


def test_the_body_reads_as_itself() -> None:
    text = "Para [1]\n[^1]: def [2]\n    more [3]\n\n[^2]: x\n\n"
    reading = read(text)
    body = read(reading.body)
    assert body.body == reading.body and not body.definitions
    # The body is what renders: removing the definition line makes "    more [3]" code.
    assert reading.body == "Para [1]\n\n    more [3]\n"
    assert [m.number for m in body.markers] == [m.number for m in reading.markers] == [1]
    assert [text[m.start : m.end] for m in reading.markers] == ["[1]"]


# -- line ends ----------------------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_ends_keep_positions_in_the_original_text(newline: str) -> None:
    lf = "Intro [1].\n\n    code [2]\n\nText [^3] and\n`[4]` $[5]$\n\n[^3]: Def\n"
    text = lf.replace("\n", newline)
    reading = read(text)
    assert [m.number for m in reading.markers] == [1, 3, 5]
    assert [text[m.start : m.end] for m in reading.markers] == ["[1]", "[^3]", "$[5]$"]
    assert dict(reading.definitions) == {3: "Def"}
    assert reading.body == read(lf).body.replace("\n", newline)
    assert [text[a:b].replace(newline, "\n") for a, b in reading.code_spans] == [
        lf[a:b] for a, b in read(lf).code_spans
    ]


def test_lone_cr_starts_a_line_for_definitions() -> None:
    reading = read("A [1]\r[^1]: def")
    assert dict(reading.definitions) == {1: "def"} and reading.body == "A [1]"


# -- segments and the plugin --------------------------------------------------------------------


def test_segments() -> None:
    text = "a[1]`[2]`[^3]$[4]$z"
    parts = list(read(text).segments())
    assert [p if isinstance(p, str) else text[p.start : p.end] for p in parts] == [
        "a",
        "[1]",
        "`[2]`",
        "[^3]",
        "$[4]$",
        "z",
    ]
    assert "".join(p if isinstance(p, str) else text[p.start : p.end] for p in parts) == text


def test_plugin_env_keeps_markers_literal() -> None:
    md = make_parser()
    tokens = md.parse("A [1] b", {NO_MARKERS: True})
    assert all(c.type != MARKER_TOKEN for t in tokens for c in t.children or ())
    assert [c.meta["number"] for t in md.parse("A [1] b") for c in t.children or () if c.meta]


def test_plugin_installs_on_any_parser() -> None:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    marker_plugin(md)
    children = md.parse("x [^2] [see [1]](https://e.org)")[1].children or []
    assert [(c.content, c.meta["style"]) for c in children if c.type == MARKER_TOKEN] == [
        ("[^2]", "caret")
    ]


def test_read_is_cached() -> None:
    text = "Cached [1] " + "x" * 50
    assert read(text) is read(text)


# -- against the old readings -----------------------------------------------------------------


def _sample_texts() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for provider in ("magisterium", "maritaca"):
        for path in sorted((SAMPLES / provider).glob("[0-9]*.json")):
            record = json.loads(path.read_text(encoding="utf-8"))
            for choice in record["response"].get("choices", []):
                content = (choice.get("message") or {}).get("content")
                if content:
                    out.append((f"{provider}/{path.stem}", content))
    for path in sorted((SAMPLES / "gptbots").glob("[0-9]*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        for output in record["message"]["output"]:
            content = output["content"].get("text")
            if content:
                out.append((f"gptbots/{path.stem}", content))
    return out


def test_samples_read_as_the_html_shows_them() -> None:
    samples = _sample_texts()
    assert len(samples) >= 30
    cited = 0
    for name, text in samples:
        reading = read(text)
        shown = rendered_markers(reading.body)
        assert [(m.number, text[m.start : m.end]) for m in reading.markers] == shown, name
        cited += bool(reading.numbers)
    assert cited >= 10


# -- properties ---------------------------------------------------------------------------------

_PIECES = [
    "[1]", "[^2]", "$[3]$", "[12]", "[0]", "\\", "(", ":", " ", "   ", "    ", "\t", "\n",
    "\n\n", "\r\n", "\r", "[", "]", "a", "^", "$", "[x]", "[^1]:", "[2]:", "[^1]: d\n",
    "](u)", "](https://e.org)", "`", "``", "```\n", "~~~\n", "> ", ">", "- ", "1. ", "2) ",
    "* ", "# ", "#", "|", "\\|", "| a | b |\n|---|---|\n", "<https://e.org/", "<", "*", "~~",
    "&#91;", "\u00a0", "\x0c", "\x00", "===\n", "---\n", "[ref]: https://e.org\n",
    "[a][ref]", "[see ", "!", "\n- a\n  ",
]  # fmt: skip
_texts = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=20).map(
    "".join
)
_settings = settings(
    max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
_SHAPE = {"caret": r"\[\^([0-9]+)\]", "bracket": r"\[([0-9]+)\]", "corner": r"\$\[([0-9]+)\]\$"}


def _parse_markers(text: str, *, scan: bool = False) -> list[tuple[int, int, int, str]]:
    """Markers from markdown-it's parse (``scan``: blocks without code or links scanned)."""
    norm, shift = normalise(text)
    markers, _ = reader._parsed(norm, shift, scan=scan)
    return [(m.start, m.end, m.number, m.style) for m in markers]


def _check_fast_path(text: str) -> None:
    norm, shift = normalise(text)
    if reader._needs_parse(norm):
        return
    fast = [(shift(m.start), shift(m.end), m.number, m.style) for m in reader._scan(norm)]
    assert fast == _parse_markers(text)


@_settings
@given(_texts)
def test_fast_path_agrees_with_markdown_it(text: str) -> None:
    _check_fast_path(text)


@_settings
@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join))
def test_fast_path_agrees_with_markdown_it_on_markdown(text: str) -> None:
    _check_fast_path(text)


@_settings
@given(_texts)
def test_blocks_scanned_agree_with_blocks_parsed(text: str) -> None:
    # A slow-path text is parsed into blocks; a block's text without code or links is scanned.
    assert _parse_markers(text, scan=True) == _parse_markers(text)


@_settings
@given(_texts)
def test_markers_are_marker_shaped_and_outside_code(text: str) -> None:
    reading = read(text)
    for m in reading.markers:
        shape = re.fullmatch(_SHAPE[m.style], text[m.start : m.end])
        assert shape is not None and int(shape[1]) == m.number and 1 <= m.number <= 9999
        assert not reading.in_code(m.start)
    assert list(reading.markers) == sorted(reading.markers, key=lambda m: m.start)
    for a, b in reading.code_spans:
        assert 0 <= a < b <= len(text)


@_settings
@given(_texts)
def test_reader_agrees_with_a_markdown_it_render(text: str) -> None:
    reading = read(text)
    shown = rendered_markers(reading.body)
    assert [(m.number, text[m.start : m.end]) for m in reading.markers] == shown
    again = read(reading.body)
    assert again.body == reading.body and not again.definitions


@_settings
@given(_texts)
def test_crlf_reads_as_lf(text: str) -> None:
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    crlf = lf.replace("\n", "\r\n")
    assert [(m.number, m.style) for m in read(crlf).markers] == [
        (m.number, m.style) for m in read(lf).markers
    ]
    assert [crlf[m.start : m.end] for m in read(crlf).markers] == [
        lf[m.start : m.end] for m in read(lf).markers
    ]
    assert read(crlf).definitions == read(lf).definitions


# -- links against markdown-it's link tokens ------------------------------------------------------

_LINK_PIECES = [
    "[Pix](https://www.bcb.gov.br/pix)", "[a *b* `c`](http://e.org/x)", "<https://f.org/a>",
    "[r]", "[r][ref]", "\n[ref]: https://g.org/r\n", "\n[r]: http://h.org \"T\"\n",
    "[bad](javascript:alert(1))", "(https://e.org)", "https://bare.org", "[see [1]](https://e.org)",
    "](https://e.org)", "[x](<https://e.org/a b>)", "[é](https://e.org/é)",
]  # fmt: skip
_link_texts = st.lists(
    st.one_of(st.sampled_from(_LINK_PIECES), st.sampled_from(_PIECES), st.text(max_size=3)),
    max_size=16,
).map("".join)


def _markdown_it_links(text: str) -> list[tuple[str, str]]:
    """``(href, text)`` of every link markdown-it renders for ``text`` (citekit's parser)."""
    out: list[tuple[str, str]] = []
    for token in make_parser().parse(text):
        children = token.children or []
        for i, child in enumerate(children):
            if child.type != "link_open":
                continue
            label = []
            for inner in children[i + 1 :]:
                if inner.type == "link_close":
                    break
                if inner.type in ("text", "code_inline", "citekit_marker"):
                    label.append(inner.content)
                elif inner.type in ("softbreak", "hardbreak"):
                    label.append(" ")
            out.append((str(child.attrs["href"]), "".join(label).strip()))
    return out


@_settings
@given(_link_texts)
def test_links_are_markdown_it_links(text: str) -> None:
    reading = read(text)
    assert [(link.url, link.label) for link in reading.links] == _markdown_it_links(text)
    starts = 0
    for link in reading.links:
        # In order; an autolink may sit inside a link's text ("[<https://a>](https://b)"),
        # as markdown-it reads it: both are links.
        assert starts <= link.start < link.end <= len(text)
        assert text[link.start] in "[<" and text[link.end - 1] in ")]>"
        assert not reading.in_code(link.start)
        assert link_allowed(link.url)
        starts = link.start


def test_links_of_an_answer() -> None:
    text = (
        "O [Pix](https://www.bcb.gov.br/estabilidadefinanceira/pix) é do Banco Central; "
        "veja `[código](https://e.org)` e <https://www.gov.br/>.\n\n"
        "```\n[x](https://no.org)\n```\n"
    )
    links = read(text).links
    assert [(text[a:b], url, label) for a, b, url, label in links] == [
        (
            "[Pix](https://www.bcb.gov.br/estabilidadefinanceira/pix)",
            "https://www.bcb.gov.br/estabilidadefinanceira/pix",
            "Pix",
        ),
        ("<https://www.gov.br/>", "https://www.gov.br/", "https://www.gov.br/"),
    ]
    assert read("no links here [1]").links == ()


def test_import_citekit_leaves_markdown_it_until_a_text_needs_a_parse() -> None:
    # markdown-it costs a fifth of ``import citekit``; a plain text is read by the scan, and
    # only a text that may hold code or a link loads it.
    code = (
        "import sys, citekit\n"
        "print('markdown_it' in sys.modules)\n"
        "from citekit.text.reader import read\n"
        "assert [m.number for m in read('Grace [1] and nature [^2].').markers] == [1, 2]\n"
        "print('markdown_it' in sys.modules)\n"
        "assert [m.number for m in read('A `[1]` and [3](https://e.org) [2]').markers] == [2]\n"
        "print('markdown_it' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "False", "True"]


_FIRST_PIECES = [
    *_PIECES,
    "[^1][^3]",
    "[2][",
    "x[3]y",
    "[9999]",
    "\\[4]",
    "$[5]",
    "$[6]$",
    "[7](",
    "[8]:",
    "\r\n",
    "\n\n",
    "`",
    "text ",
]


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(st.sampled_from(_FIRST_PIECES), st.text(max_size=3)), max_size=24).map(
        "".join
    )
)
def test_first_markers_is_the_full_reading(text: str) -> None:
    first: dict[int, tuple[int, int]] = {}
    for marker in read(text).markers:
        first.setdefault(marker.number, (marker.start, marker.end))
    assert reader.first_markers(text) == first
    assert list(reader.first_markers(text)) == list(first)  # in the order first cited
