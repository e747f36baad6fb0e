"""How support reads words (``citekit.data.corpus.lexicon``): cognates spelled alike, the
calendar as one word in every language, and the marks of shared words in a passage; hostile
text never breaks them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.data.corpus.evidence import evidence
from citekit.data.corpus.lexicon import COGNATE, cognate, key, marks, stemmer, words
from tests.budget import examples


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("philosophy", "filosofia"),
        ("theology", "teologia"),
        ("doctrine", "dottrina"),
        ("dignity", "dignita"),
        ("symbol", "simbolo"),
        ("community", "comunita"),
    ],
)
def test_cognates_spelled_apart_share_a_key(one: str, other: str) -> None:
    assert cognate(one) and cognate(one) == cognate(other)


@pytest.mark.parametrize(
    ("one", "other"), [("work", "worm"), ("church", "chart"), ("plan", "plane")]
)
def test_short_or_different_words_are_no_cognates(one: str, other: str) -> None:
    assert not cognate(one) or cognate(one) != cognate(other)


@pytest.mark.parametrize(
    ("word", "code"),
    [("semanas", "pt"), ("settimane", "it"), ("wochen", "de"), ("weeks", "en"), ("semaines", "fr")],
)
def test_a_unit_of_time_is_one_key_in_every_language(word: str, code: str) -> None:
    assert key(word, stemmer(code)) == "week"


def test_marks_find_the_shared_words_of_another_language_in_the_passage() -> None:
    passage = "A dignidade da pessoa humana vem de Deus, todos os dias."
    found = evidence("Human dignity comes from God every day.", passage)
    spans = marks(passage, found.shared_words)
    marked = {passage[a:b] for a, b in spans}
    assert {"dignidade", "dias"} <= marked  # a cognate and a word of the calendar
    assert "pessoa" not in marked


ANY = st.text(max_size=120)
WORDY = st.lists(
    st.sampled_from(
        ["ph", "th", "qu", "ct", "xx", "zz", "é", "ß", "İ", "ﬁ", "&amp;", "Ω", " ", "-"]
    ),
    max_size=20,
).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.one_of(ANY, WORDY), shared=st.lists(st.one_of(ANY, WORDY), max_size=5))
def test_any_text_marks_ordered_spans_inside_it_and_never_raises(
    text: str, shared: list[str]
) -> None:
    spans = marks(text, shared)
    at = 0
    for start, end in spans:
        assert at <= start < end <= len(text)
        at = end
    for word in words(text):
        got = cognate(word)
        assert got == "" or len(got) == COGNATE
        assert isinstance(key(word, stemmer(None)), str)
