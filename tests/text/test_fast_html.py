"""The fast Markdown paths of the text package are markdown-it's.

* :func:`citekit.text.fast_html.fast_markdown`, which writes the HTML of plain answers without
  parsing, gives markdown-it's HTML whenever it answers, on text built from the pieces of its
  subset and the characters just outside it.
* Every recorded sample text renders as markdown-it renders it, whole and block by block
  (:class:`citekit.text.incremental.IncrementalMarkdown`).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.text import fast_html
from citekit.text.fast_html import fast_markdown
from citekit.text.incremental import IncrementalMarkdown, fill_markers
from citekit.text.markdown_html import _PARSER, _Renderer, render_markdown
from citekit.wire.parsers import parse_response
from tests.budget import examples
from tests.conftest import sample_records

GB = sample_records("gptbots")


# -- the fast path against markdown-it --------------------------------------------------------
_INLINE = [
    "word",
    "Work",
    "labour ",
    "the common good",
    " is ",
    "of",
    " ",
    " ",
    "  ",
    "*",
    "**",
    "***",
    "*a*",
    "**b c**",
    "*grace*",
    "**the person**",
    " *faith* ",
    "word ",
    "Grace, ",
    "[^1]",
    "[2]",
    "$[3]$",
    "[^12]",
    "(",
    ")",
    ".",
    ",",
    ":",
    "!",
    '"',
    "'",
    "-",
    "#",
    "1.",
    "2)",
    "—",
    "«",
    "\u00a0",
    "\u2003",
    "é",
]
_LINE_STARTS = ["", "", "", "- ", "- ", "## ", "# ", "###### "]


# Pieces outside the subset: the fast path must refuse what holds them (or agree anyway).
_OUTSIDE = [
    "[10000]",
    "_",
    "`",
    "&",
    "<",
    "|",
    "\\",
    "~",
    "\t",
    "[x]",
    "[",
    "]",
    "$",
    "[0]",
    "[1](x)",
]
_OUTSIDE_STARTS = ["####### ", "-", "* ", "1. ", " ", "    ", "+ ", "> ", "```", "[1]: "]


@st.composite
def _markdown_texts(draw: st.DrawFn) -> str:
    """Lines of headings, items and paragraph text from the subset's pieces; in half the
    texts, also pieces and line starts just outside it."""
    outside = draw(st.booleans())
    inline = _INLINE + _OUTSIDE if outside else _INLINE
    starts = _LINE_STARTS + _OUTSIDE_STARTS if outside else _LINE_STARTS
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 3)) == 0:
            blanks = ["", "", " ", "  ", "---", "===", "***"] if outside else ["", "", " "]
            lines.append(draw(st.sampled_from(blanks)))
            continue
        start = draw(st.sampled_from(starts))
        body = "".join(draw(st.lists(st.sampled_from(inline), min_size=1, max_size=10)))
        lines.append(start + body)
    return "\n".join(lines)


def _slow(text: str, *, strict: bool, markers: Any, top_heading: int) -> str:
    env: dict[str, Any] = {} if markers is not None else {"citekit_no_markers": True}
    renderer = _Renderer(strict=strict, markers=markers, top_heading=top_heading)
    return renderer.block(_PARSER.parse(text, env))


def _mark(number: int, source: str) -> str:
    return f"<M{number}|{source}>"


@settings(max_examples=examples(1500), deadline=None)
@given(
    text=_markdown_texts(),
    strict=st.booleans(),
    marked=st.booleans(),
    top_heading=st.sampled_from([3, 5]),
)
def test_fast_path_gives_markdown_its_html(
    text: str, strict: bool, marked: bool, top_heading: int
) -> None:
    markers = _mark if marked else None
    from citekit.text.markdown_html import _pending_marker

    fast = fast_markdown(
        text, strict=strict, markers=markers or _pending_marker, top_heading=top_heading
    )
    if fast is not None:
        assert fast == _slow(text, strict=strict, markers=markers, top_heading=top_heading)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(max_size=60))
def test_fast_path_on_any_characters(text: str) -> None:
    fast = fast_markdown(text, strict=False, markers=_mark, top_heading=3)
    if fast is not None:
        assert fast == _slow(text, strict=False, markers=_mark, top_heading=3)


# Pieces around "*" runs and markers: letters, digits, ASCII and Unicode punctuation and
# symbols, Unicode spaces, quotes (escaped into entities), line ends.
_AROUND = [
    "*", "**", "***", "*", "**", " ", " ", "\n", "a", "word", "é", "1", ".", ",", "!", ":",
    '"', "'", "(", ")", "—", "«", "»", "¿", "€", "+", "=", "\u00a0", "\u2003", "\u3000",
    "[^1]", "[2]", "[^3]", "[12]", "[1][2]", "- ", "## ", "[x]", "$[1]$", "[1]:", "[1](",
]  # fmt: skip


@st.composite
def _emphasis_texts(draw: st.DrawFn) -> str:
    """Text made mostly of ``*`` runs, markers and what may stand beside them; sometimes
    arbitrary characters among them."""
    pieces = st.sampled_from(_AROUND)
    if draw(st.booleans()):
        pieces = st.one_of(pieces, st.text(max_size=3))
    return "".join(draw(st.lists(pieces, max_size=40)))


def _piece_by_piece(text: str, **options: Any) -> str | None:
    """``fast_markdown`` reading every block's inline text piece by piece (``_inline``), as
    it does when the text holds a bracket that opens no plain marker."""
    return fast_markdown(text, plain_route=False, **options)


@settings(max_examples=examples(3000), deadline=None)
@given(text=st.one_of(_emphasis_texts(), _markdown_texts()), strict=st.booleans())
def test_plain_route_is_the_piece_by_piece_route(text: str, strict: bool) -> None:
    """Where every bracket opens a plain marker, the blocks' ``*`` runs are paired by one
    substitution and the markers drawn by one split of the HTML: the same HTML as reading
    each block piece by piece, the same markers drawn in the same order, and markdown-it's."""
    seen: list[tuple[int, str]] = []
    seen_before: list[tuple[int, str]] = []

    def count(into: list[tuple[int, str]]) -> Any:
        def draw(number: int, source: str) -> str:
            into.append((number, source))
            return f"<M{number}|{source}|{len(into)}>"

        return draw

    options: dict[str, Any] = {"strict": strict, "top_heading": 3}
    fast = fast_markdown(text, markers=count(seen), **options)
    before = _piece_by_piece(text, markers=count(seen_before), **options)
    assert fast == before
    assert seen == seen_before
    if fast is not None:
        assert fast == _slow(text, markers=count([]), **options)


def test_plain_route_is_taken_by_the_usual_answer() -> None:
    """The usual answer (markers, ``*``/``**`` emphasis beside words and punctuation) is
    read by the plain route: no block falls back to the piece-by-piece reading."""
    text = (
        "Work has *dignity*.[^1] The **person who does it**, not the task.[^1][^4]\n\n"
        '## Why\n\n- **Labour ranks above capital.** It is "first".[3]\n'
        '- *"Quoted"* words, *objective* side.[^2]'
    )
    assert fast_html._plain_brackets(text) == 5
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_html, "_inline", None)  # called only where a block falls back
        fast = fast_markdown(text, strict=False, markers=_mark, top_heading=3)
    assert fast == _slow(text, strict=False, markers=_mark, top_heading=3)


def test_fast_path_takes_the_answers_people_get() -> None:
    """The fast path is not a path nobody takes: it renders the usual answer shape, and the
    markers it draws are counted in order (the footnote backlinks rely on it)."""
    text = (
        "Work has *dignity*.[^1]\n\n## Why it matters\n\n"
        'The **person** comes first[^1][^2] ("subjective" work).\n\n'
        "- **Labour** ranks above capital.[3]\n- Rest is owed.$[2]$\n\n"
        "Last line, cut mid-sentence as a stream leaves it "
    )
    seen: list[int] = []

    def count(number: int, source: str) -> str:
        seen.append(number)
        return f"<M{number}>"

    fast = fast_markdown(text, strict=False, markers=count, top_heading=3)
    assert fast is not None
    assert seen == [1, 1, 2, 3, 2]
    assert fast == _slow(text, strict=False, markers=_mark_numbers, top_heading=3)
    for outside in ("x `code`", "x [link](https://e.org)", "    code", "- a\n\n- b", "a  \nb"):
        assert fast_markdown(outside, strict=False, markers=count, top_heading=3) is None
    assert seen == [1, 1, 2, 3, 2]  # refused texts draw no marker


def _mark_numbers(number: int, source: str) -> str:
    return f"<M{number}>"


def test_every_sample_text_renders_as_markdown_it_renders_it() -> None:
    texts = [
        parse_response(r["response"], provider=p).text
        for p in ("magisterium", "maritaca")
        for _, r in sample_records(p)
    ]
    texts += [parse_response(r["message"], provider="gptbots").text for _, r in GB]
    fast_ones = 0
    for text in texts:
        assert render_markdown(text, markers=_mark) == _slow(
            text, strict=False, markers=_mark, top_heading=3
        )
        fast_ones += fast_markdown(text, strict=False, markers=_mark, top_heading=3) is not None
        incremental = IncrementalMarkdown()
        for end in range(0, len(text), 37):
            # Drawn while growing (each settled block drawn once) as placeholders filled in.
            drawn = incremental.render(text[:end], markers=_mark_numbers)
            assert drawn == fill_markers(incremental.render(text[:end]), _mark_numbers)
        html = incremental.render(text, final=True)
        if incremental.exact:
            assert fill_markers(html, _mark) == render_markdown(text, markers=_mark)
    assert fast_ones >= len(texts) // 3
