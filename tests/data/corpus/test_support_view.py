"""``ck.show_support``: an answer's sentences with the verdict of their best source, its
citations with their best passage and where the shared words stand, and the recorded sample
that shows every case a reader meets (asked through the real client from the loopback server)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.data.corpus.support import VERDICTS
from citekit.data.corpus.support_view import (
    passage_marks,
    sentence_verdict,
    support_section_html,
)
from citekit.testing import ProviderServer
from tests.budget import examples

SUNDAY = "What does the Church teach about Sunday rest?"


@pytest.fixture(scope="module")
def sunday() -> ck.SupportView:
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key="sk-test-0123456789", base_url=srv.base_url("magisterium"))
        answer = mg.ask(SUNDAY)
    assert answer.sample == "magisterium/18_sunday_rest"
    return ck.show_support(answer)


def test_a_sentence_takes_the_best_verdict_of_its_sources() -> None:
    assert sentence_verdict(["unsupported", "partial"]) == "partial"
    assert sentence_verdict(["unverifiable", "unsupported"]) == "unsupported"
    assert sentence_verdict(["unverifiable"]) == "unverifiable"
    assert sentence_verdict([]) == "uncited"


def test_the_recorded_sample_shows_every_case_a_reader_meets(sunday: ck.SupportView) -> None:
    s = sunday.sentences
    assert [x.verdict for x in s] == [
        "uncited",
        "supported",  # the passage says it word for word
        "unsupported",  # the passage says the opposite
        "partial",  # cites [2], which shares a few words; [1]'s passage says it
        "supported",
        "supported",  # a quote found in the passage
        "uncited",
        "uncited",
    ]
    assert s[1].sources[0].support == 1.0
    leo = s[2].sources[0]
    assert leo.marker == 3 and leo.title == "Rerum novarum" and leo.support <= 0.2
    (wrong,) = s[3].sources
    assert wrong.marker == 2 and wrong.misattributed and wrong.best_source == 1
    assert s[5].sources[0].quote_found is True
    assert sunday.summary() == "3 of 8 sentences supported; 1 citation fits another source better"
    assert sunday.unused_chunks is None  # no knowledge chunks: a Magisterium answer


def test_the_best_passage_marks_only_words_the_sentence_has(sunday: ck.SupportView) -> None:
    source = sunday.sentences[1].sources[0]
    assert source.passage is not None
    marked = [source.passage[a:b] for a, b in source.marks]
    assert {"faithful", "refrain", "worship", "God"} <= set(marked)
    assert "mercy" not in marked and "Sundays" in marked  # stem "sunday" is shared
    assert source.reference == "2185" and source.passages == 1


def test_marks_follow_the_stems_and_skip_entities() -> None:
    passage = "Workers&apos; rights: the worker works &amp; rests."
    marks = passage_marks(passage, ["worker", "work", "apos", "amp", "rest"])
    assert [passage[a:b] for a, b in marks] == ["Workers", "worker", "works", "rests"]
    assert passage_marks("anything", []) == ()


@settings(max_examples=examples(200), deadline=None)
@given(passage=st.text(max_size=80), shared=st.lists(st.text(max_size=8), max_size=4))
def test_marks_are_ordered_word_spans_inside_the_passage(passage: str, shared: list[str]) -> None:
    marks = passage_marks(passage, shared)
    at = 0
    for start, end in marks:
        assert at <= start < end <= len(passage)
        assert re.fullmatch(r"[^\W_]+", passage[start:end])
        at = end


def test_counts_cover_every_verdict(sunday: ck.SupportView) -> None:
    counts = sunday.counts()
    assert list(counts) == list(VERDICTS) and sum(counts.values()) == len(sunday.sentences)
    assert repr(sunday) == f"<SupportView: {sunday.summary()}>"


def test_the_demo_section_holds_each_answers_view(sunday: ck.SupportView) -> None:
    page = support_section_html([sunday.answer, sunday.answer])
    assert page.startswith('<section class="citekit-support-section">')
    assert "<h2>Does the source say so?</h2>" in page
    assert page.count('class="citekit-support citekit-answer"') == 2
    ids = re.findall(r'class="citekit-support citekit-answer" id="(ck[0-9a-f]+)"', page)
    assert len(set(ids)) == 2  # two renders, two tokens


def test_a_gptbots_answer_names_the_chunks_it_never_cites() -> None:
    with ProviderServer() as srv:
        gb = ck.GPTBots(api_key="sk-test-0123456789", base_url=srv.base_url("gptbots"))
        answer = gb.ask("What is the principle of subsidiarity?", citations=True)
    view = ck.show_support(answer)
    assert answer.sample == "gptbots/14_subsidiarity_knowledge_base"
    assert view.unused_chunks == (4, 5, 6)
    assert "Evidence left unused: 3 retrieved chunks never cited (ranks 4, 5, 6)" in str(view)


def test_two_views_of_one_answer_are_equal(sunday: ck.SupportView) -> None:
    assert ck.show_support(sunday.answer) == sunday  # the frame is not compared
