"""A recorded answer served for another question carries the notice on top in every output."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.model import Answer
from citekit.render._sources import unmatched_notice
from citekit.render.html import answer_html
from citekit.render.markdown import answer_markdown
from citekit.render.text import answer_text
from tests.budget import examples

QUESTIONS = st.text(
    st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60
).filter(lambda q: bool(q.strip()))


def _served(asked: str, recorded: str) -> Answer:
    raw = {
        "citekit_sample": "magisterium/02_subsidiarity",
        "citekit_sample_question": recorded,
        "citekit_sample_matched": False,
    }
    return Answer("magisterium", "The answer.", question=asked, raw=raw)


@settings(max_examples=examples(60))
@given(asked=QUESTIONS, recorded=QUESTIONS)
def test_the_notice_comes_first_in_html_markdown_and_text(asked: str, recorded: str) -> None:
    answer = _served(asked, recorded)
    assert answer.sample_question == recorded
    notice = unmatched_notice(recorded)
    assert notice.startswith("No recorded answer for this question; showing the recorded")
    text = answer_text(answer)
    assert text.startswith(f"[{notice}]")
    markdown = answer_markdown(answer)
    assert markdown.splitlines()[0].startswith("> **No recorded answer for this question")
    html = answer_html(answer)
    assert "No recorded answer for this question" in html
    assert html.index("No recorded answer") < html.index("citekit-question")


def test_a_matched_or_live_answer_has_no_notice() -> None:
    live = Answer("magisterium", "The answer.", question="Why?")
    matched = Answer("magisterium", "x", raw={"citekit_sample": "magisterium/02_subsidiarity"})
    for answer in (live, matched):
        assert answer.sample_question is None
        assert "No recorded answer" not in answer_text(answer) + answer_html(answer)
