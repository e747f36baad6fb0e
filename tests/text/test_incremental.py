"""``fill_markers``: every placeholder drawn once, in order, whatever else the HTML holds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.text.incremental import fill_markers, placeholder
from tests.budget import examples

_RULE = re.compile("\x00([0-9]+):([^\x00]*)\x00")


def _by_the_rule(html: str, render: object) -> str:
    """The placeholder rule as a regular expression: the reading ``fill_markers`` must give."""
    assert callable(render)
    return _RULE.sub(lambda m: render(int(m.group(1)), m.group(2)), html)


_SOURCES = st.sampled_from(["[1]", "[^12]", "$[3]$", "", "[x:y]", "é"])
_HTML = st.sampled_from(["<p>", "text", "</div>\n", ":", "12", "é", "&amp;", "\x00", "\x001:"])


@st.composite
def _html(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            parts.append(placeholder(draw(st.integers(0, 9999)), draw(_SOURCES)))
        else:
            parts.append(draw(_HTML))
    return "".join(parts)


@settings(max_examples=examples(500))
@given(html=_html())
def test_placeholders_are_drawn_as_the_rule_reads_them(html: str) -> None:
    calls: list[tuple[int, str]] = []

    def render(number: int, source: str) -> str:
        calls.append((number, source))
        return f"<sup>{number}|{source}|{len(calls)}</sup>"

    expected_calls: list[tuple[int, str]] = []

    def expected_render(number: int, source: str) -> str:
        expected_calls.append((number, source))
        return f"<sup>{number}|{source}|{len(expected_calls)}</sup>"

    assert fill_markers(html, render) == _by_the_rule(html, expected_render)
    assert calls == expected_calls


@settings(max_examples=examples(200))
@given(text=st.text(max_size=40))
def test_any_text_holds_no_placeholder_unless_it_has_nul(text: str) -> None:
    drawn = fill_markers(text, lambda n, s: "MARK")
    assert drawn == (text if "\x00" not in text else _by_the_rule(text, lambda n, s: "MARK"))
