"""The answer model and inline marker parsing, on plain values."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.model import TextDelta, ToolCallDelta, first_text
from citekit.text.reader import read
from tests.budget import examples


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Work has dignity.[^1]", [1]),
        ("Adjacent[^1][^3] and plain [2].", [1, 3, 2]),
        ("Plain adjacent [1][2].", [1, 2]),
        ("A link [1](https://example.org) is not a marker.", []),
        ("A link [text](https://example.org)[^2] then a marker.", [2]),
        ("Escaped \\[1] stays text.", []),
        ("Zero [0] and huge [12345] are not footnotes.", []),
        ("Body [^1]\n[^1]: the definition line\n[^2]: another", [1]),
        ("List item [^4], end.\n\n[^4]: Laborem exercens, 6", [4]),
    ],
)
def test_markers(text: str, numbers: list[int]) -> None:
    assert [m.number for m in read(text).markers] == numbers


def test_marker_spans_and_document_index() -> None:
    text = "Grace[^2] and [3]."
    first, second = read(text).markers
    assert text[first.start : first.end] == "[^2]" and first.caret and first.document_index == 1
    assert text[second.start : second.end] == "[3]" and not second.caret
    assert read(text).numbers == {2, 3}


def test_split_definitions() -> None:
    reading = read("Text [^1].\n\n[^1]: Catechism, 1934\n[^2]: Gaudium et spes")
    body, defs = reading.body, reading.definitions
    assert defs == {1: "Catechism, 1934", 2: "Gaudium et spes"}
    assert "[^1]:" not in body and body.startswith("Text [^1].")


def test_citation_from_dict_decodes_entities_and_keeps_raw() -> None:
    raw = {
        "cited_text": "Man&apos;s work &amp; the &oelig;uvre",
        "document_title": "Laborem exercens &quot;On Work&quot;",
        "document_index": 2,
        "document_year": 1981,
        "extra_field": "kept",
    }
    citation = ck.Citation.from_dict(raw)
    assert citation.cited_text == "Man's work & the œuvre"
    assert citation.document_title == 'Laborem exercens "On Work"'
    assert citation.document_year == "1981"
    assert citation.marker == 3 and citation.document_index == 2
    assert citation.raw["extra_field"] == "kept"
    assert citation.source_url is None and citation.document_author is None


def test_citation_without_index_uses_its_position() -> None:
    assert ck.Citation.from_dict({"cited_text": "x"}, position=4).marker == 5
    assert ck.Citation.from_dict({"cited_text": "x", "document_index": "bad"}).document_index == 0


def test_references_is_a_sequence() -> None:
    refs = ck.References.from_response(
        {
            "conversation_id": "c",
            "question_id": "q",
            "answer_id": "a",
            "correlate_dataset": [
                {"content": "one", "data_name": "a.pdf", "score": 0.9, "source_url": ""},
                {"content": "two", "data_name": "b.pdf", "score": "0.25"},
                "junk",
            ],
        },
        message_id="a",
    )
    assert len(refs) == 2 and [r.rank for r in refs] == [1, 2]
    assert refs[0].source_url is None and refs[1].score == 0.25
    assert [r.content for r in refs[:1]] == ["one"]
    assert (refs.conversation_id, refs.question_id, refs.answer_id) == ("c", "q", "a")


def test_citation_groups_share_a_document() -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="A[^1] B[^2]",
        citations=(
            ck.Citation("p1", 0),
            ck.Citation("p2", 1),
            ck.Citation("p3", 0),
        ),
    )
    groups = answer.citation_groups()
    assert [c.cited_text for c in groups[1]] == ["p1", "p3"]
    assert [c.cited_text for c in groups[2]] == ["p2"]
    assert answer.cited_markers == {1, 2}


def test_errors_pickle_and_keep_their_fields() -> None:
    err = ck.RateLimitError(
        "Too many requests", provider="magisterium", status=429, retry_after=3, request_id="r1"
    )
    copy = pickle.loads(pickle.dumps(err))
    assert isinstance(copy, ck.RateLimitError)
    assert (copy.status, copy.request_id, copy.message) == (429, "r1", "Too many requests")
    interrupted = ck.StreamInterrupted("broke", answer=ck.Answer(provider="maritaca", text="par"))
    assert pickle.loads(pickle.dumps(interrupted)).answer.text == "par"


def test_error_tree() -> None:
    assert issubclass(ck.TokenLimitError, ck.BadRequestError)
    assert issubclass(ck.BadRequestError, ck.ProviderError)
    assert issubclass(ck.TimeoutError, ck.TransportError)
    assert issubclass(ck.ConfigurationError, ValueError)
    for cls in (ck.ProviderError, ck.TransportError, ck.ResponseFormatError, ck.StreamInterrupted):
        assert issubclass(cls, ck.CitekitError)


def test_answers_are_hashable_values() -> None:
    a = ck.Answer(provider="maritaca", text="x", raw={"big": [1, 2]})
    b = ck.Answer(provider="maritaca", text="x", raw={"other": 1})
    assert a == b and hash(a) == hash(b)


@pytest.mark.parametrize(
    "text", ["Intro.\n\n> [^1]: a quote", "- [2]: an item", "1. [2]: an item", "## [^3]: a head"]
)
def test_definition_after_a_block_prefix_is_not_a_marker(text: str) -> None:
    # What the HTML renderer sees too: the block's text starts with "[^N]:".
    assert read(text).markers == ()


def _is_delta(event: object) -> bool:
    return type(event) is TextDelta


_EVENTS = st.one_of(
    st.builds(TextDelta, st.text(max_size=5), st.sampled_from([0, 0, 0, 1, 2])),
    st.builds(ToolCallDelta, st.integers(0, 2), st.text(max_size=5)),
    st.builds(lambda text: ck.Answer(provider="magisterium", text=text), st.text(max_size=5)),
)


@settings(max_examples=examples(500), deadline=None)
@given(events=st.lists(_EVENTS, max_size=12) | st.lists(_EVENTS.filter(_is_delta), max_size=12))
def test_first_text_joins_the_first_choice_deltas_whatever_else_a_read_holds(
    events: list[ck.StreamEvent],
) -> None:
    expected = "".join(e.text for e in events if type(e) is TextDelta and e.choice == 0)
    assert first_text(events) == expected
