"""Every output reads an answer's markers the same way: the one text reader pins them all.

An answer's ``[1]`` is cited or not; the HTML (final and while streaming), the Markdown, the
plain text, ``Answer.cited_markers``, the frames' ``cited_inline`` and the exported files must
never disagree on which.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.data.io.exports import export_answer
from citekit.render.live import streaming_html
from citekit.text.reader import read
from tests.budget import examples

N = 6  # citations 1..N exist; markers above N are cited nowhere


def answer_with(text: str) -> ck.Answer:
    citations = tuple(
        ck.Citation(cited_text=f"Passage {i + 1}.", document_index=i, document_title=f"Doc {i + 1}")
        for i in range(N)
    )
    return ck.Answer(provider="magisterium", text=text, citations=citations, question="Q?")


def html_markers(html: str) -> set[int]:
    """Numbers of the footnote links in the answer's own text (not in the source list)."""
    text_part = html.split('<div class="citekit-text">', 1)[1].split('class="citekit-sources"')[0]
    return {int(n) for n in re.findall(r'class="citekit-marker"[^>]*>\[?(\d+)\]?<', text_part)}


def markdown_footnotes(markdown: str) -> set[int]:
    """The footnotes the Markdown defines (a ``[^n]: `` line in a code block defines none)."""
    return set(read(markdown).definitions)


def text_uncited(plain: str) -> set[int]:
    return {int(n) for n in re.findall(r"^  \[(\d+)\] .*\(not cited inline\)$", plain, re.M)}


def streaming_markers(text: str) -> list[int]:
    html = streaming_html("magisterium", None, text, status="streaming")
    return [int(n) for n in re.findall(r"<sup[^>]*>\[(\d+)\]</sup>", html)]


def check_every_consumer(text: str) -> set[int]:
    answer = answer_with(text)
    reading = read(text)
    expected = set(reading.numbers) & set(range(1, N + 1))

    assert answer.cited_markers == set(reading.numbers)
    frame = ck.citations_frame([answer])
    assert set(frame.filter("cited_inline")["marker"].to_list()) == expected
    assert html_markers(answer.to_html()) == expected
    assert html_markers(answer.to_html(strict=True)) == expected
    assert markdown_footnotes(answer.to_markdown()) == expected
    plain = answer._repr_mimebundle_()["text/plain"]
    assert text_uncited(plain) == set(range(1, N + 1)) - expected
    assert streaming_markers(reading.body) == [m.number for m in read(reading.body).markers]
    return expected


INDENTED_CODE = "Intro.\n\n    code [1]\n\nText [2]."


def test_the_indented_code_case_agrees_everywhere(tmp_path: Path) -> None:
    assert check_every_consumer(INDENTED_CODE) == {2}
    answer = answer_with(INDENTED_CODE)
    # The exported files carry the same reading.
    assert markdown_footnotes(
        export_answer(answer, tmp_path / "a.md").read_text(encoding="utf-8")
    ) == {2}
    assert html_markers(export_answer(answer, tmp_path / "a.html").read_text(encoding="utf-8")) == {
        2
    }


@pytest.mark.parametrize(
    ("text", "cited"),
    [
        ("Fenced:\n\n```\nx[1]\n```\n\nThen [2].", {2}),
        ("Span `a[1]` and [^3].", {3}),
        ("Link [see [1]](https://e.org) and [4].", {4}),
        ("Autolink <https://e.org/[1]> and [5].", {5}),
        ("Corner $[1]$ and caret [^2].", {1, 2}),
        ("Escaped \\[1] and [6].", {6}),
        ("Body [^1].\n\n[^1]: a definition [2]", {1}),
        ("> Quote [3]\n>\n>     code [4]", {3}),
        ("- item [1]\n\n      code [2]\n", {1}),
        ("| a | b |\n|---|---|\n| [1] | `[2]` |", {1}),
        ("```\n[^1]: in an open fence", set()),
        ("[2]\n\n~~~$[3]$[4]\n\t", {2}),  # an open fence with blank lines after it
        ("Beyond the list [9] and [1].", {1}),
    ],
)
def test_each_class_agrees_everywhere(text: str, cited: set[int]) -> None:
    assert check_every_consumer(text) == cited


_PIECES = [
    "[1]", "[^2]", "$[3]$", "[4]", "[9]", "\\", "(", ")", ":", " ", "    ", "\t", "\n", "\n\n",
    "`", "```", "~~~", ">", "- ", "1. ", "|", "---", "[", "]", "](https://e.org)", "<https://e.org/",
    ">", "[^1]: ", "[x]: https://e.org", "a", "*",
]  # fmt: skip


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=18).map("".join))
def test_every_consumer_agrees_on_any_text(text: str) -> None:
    check_every_consumer(text)
