"""GPTBots knowledge search and conversation history bodies, as providers.md documents them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.gptbots import parse_messages, parse_vector_match, search_request
from citekit.wire.gptbots.history import millis
from tests.budget import examples

# providers.md, "Knowledge retrieval": the documented response.
VECTOR_MATCH = {
    "total": 2,
    "list": [
        {
            "content": "测试数据",
            "data_id": "aS1CNvPK4XCckDKQNj7azC9a",
            "document_name": "demo.md",
            "score": 0.75,
        }
    ],
}

# providers.md, "Messages of a conversation": the documented shape, without the example's
# trailing commas (not valid JSON), ``total`` as the string the table types it as.
MESSAGES = {
    "total": "4",
    "conversation_content": [
        {
            "message_id": "q1",
            "parent_message_id": None,
            "create_time": 1694572950000,
            "role": "user",
            "content": [{"branch_content": [{"type": "text", "text": "2+3=?"}]}],
        },
        {
            "message_id": "a1",
            "parent_message_id": "q1",
            "create_time": 1694572952383,
            "role": "assistant",
            "feedback": "POSITIVE",
            "content": [
                {"from_component_branch": "1", "branch_content": [{"type": "text", "text": "5"}]}
            ],
        },
        {
            "message_id": "q2",
            "parent_message_id": "a1",
            "create_time": 1694572960000,
            "role": "user",
            "content": [{"branch_content": [{"type": "text", "text": "Say it"}]}],
        },
        {
            "message_id": "a2",
            "parent_message_id": "q2",
            "create_time": 1694572961000,
            "role": "assistant",
            "content": [
                {
                    "branch_content": [
                        {
                            "type": "audio",
                            "audio": {"url": "https://x.test/5.mp3", "transcript": "Five"},
                        }
                    ]
                }
            ],
        },
    ],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=16,
)


def test_the_documented_vector_match_body() -> None:
    found = parse_vector_match(VECTOR_MATCH, query="测试")
    (hit,) = found
    assert (hit.rank, hit.title, hit.text, hit.score) == (1, "demo.md", "测试数据", 0.75)
    assert hit.raw["data_id"] == "aS1CNvPK4XCckDKQNj7azC9a" and found.provider == "gptbots"
    frame = found.frame()
    assert frame["document_title"].to_list() == ["demo.md"]
    assert frame["cited_text"].to_list() == ["测试数据"]
    assert "demo.md" in found._repr_mimebundle_()["text/html"]


def test_the_documented_messages_body() -> None:
    first, second = parse_messages(MESSAGES["conversation_content"], conversation_id="c1")
    assert (first.question, first.text, first.id, first.conversation_id) == (
        "2+3=?",
        "5",
        "a1",
        "c1",
    )
    assert first.outputs == (ck.ComponentOutput(name=None, branch="1", content="5"),)
    assert first.created == datetime(2023, 9, 13, 2, 42, 32, 383000, tzinfo=UTC)
    assert (second.question, second.text) == ("Say it", "Five")
    assert second.outputs[0].audio == (ck.AudioClip("https://x.test/5.mp3", "Five"),)
    for answer in (first, second):  # shaped like a blocking reply: it rebuilds
        again = ck.parse_response(answer.raw, provider="gptbots", question=answer.question)
        assert again == answer


def test_the_legacy_messages_shape() -> None:
    legacy = [
        {"message_id": "1", "message_type": "QUESTION", "text": "Hi?", "create_time": 1},
        {"message_id": "2", "parent_message_id": "1", "message_type": "ANSWER", "text": "Hello"},
    ]
    (answer,) = parse_messages(legacy)
    assert (answer.question, answer.text) == ("Hi?", "Hello")


@settings(max_examples=examples(200), deadline=None)
@given(body=json_values, items=st.lists(json_values, max_size=4))
def test_any_json_in_the_history_bodies_never_crashes(body: Any, items: list[Any]) -> None:
    for data in (body, {"list": items}, {"total": body, "list": [{"content": body}]}):
        found = parse_vector_match(data, query="q")
        assert [r.rank for r in found] == list(range(1, len(found) + 1))
    for messages in (
        items,
        [{"role": "assistant", "content": body}],
        [{"role": "user", **{"content": items}}],
    ):
        try:
            answers = parse_messages(messages)
        except ck.ResponseFormatError:
            continue
        assert all(isinstance(a.text, str) for a in answers)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"top_k": 0}, ValueError),
        ({"top_k": 51}, ValueError),
        ({"top_k": True}, ValueError),
        ({"rerank": "best"}, ValueError),
        ({"embedding_rate": 1.5}, ValueError),
        ({"min_score": 0.05}, ValueError),
        ({"data_ids": "abc"}, TypeError),
        ({"group_ids": [""]}, ValueError),
    ],
)
def test_search_inputs_are_checked(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        search_request("q", **kwargs)


def test_search_request_body() -> None:
    spec = search_request(
        "q", top_k=5, rerank="BGE-Rerank", embedding_rate=0.4, data_ids=[], min_score=0.5
    )
    assert spec.json == {
        "prompt": "q",
        "top_k": 5,
        "embedding_rate": 0.4,
        "data_ids": [],
        "rerank_version": "BGE-Rerank",
        "doc_correlation": 0.5,
    }


def test_times_are_sent_as_milliseconds() -> None:
    # The documented example's start_time, 1691942400000, is 2023-08-13 16:00 UTC.
    assert millis(datetime(2023, 8, 13, 16, tzinfo=UTC), "since") == 1691942400000
    assert millis(datetime(2023, 8, 13, 16), "since") == 1691942400000  # naive: UTC
    assert millis("2023-08-14T00:00:00+08:00", "since") == 1691942400000
    assert millis(date(2023, 8, 13), "since") == 1691884800000
    later = datetime(2023, 8, 13, 18, tzinfo=timezone(timedelta(hours=2)))
    assert millis(later, "since") == 1691942400000
    with pytest.raises(ValueError, match="ISO"):
        millis("last tuesday", "since")
