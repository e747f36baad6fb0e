"""GPTBots ask options: conversation_config, conversation reuse, fewer requests, suggested
questions."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire import gptbots
from citekit.wire.gptbots import conversation_config, next_questions_flow
from citekit.wire.response import Wire
from tests.budget import examples
from tests.conftest import SECRET, sample_records

GB = sample_records("gptbots")
WITH_NEXT = [(stem, rec) for stem, rec in GB if "next_question" in rec]
WITHOUT_NEXT = [(stem, rec) for stem, rec in GB if "next_question" not in rec]


@pytest.fixture()
def gb(server: ProviderServer) -> ck.GPTBots:
    return ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))


def last_message(server: ProviderServer) -> dict[str, Any]:
    return [r.json for r in server.requests if r.endpoint == "message"][-1]


@pytest.mark.parametrize(
    ("kwargs", "config"),
    [
        ({}, None),
        ({"citations": False}, None),
        ({"knowledge": {"data_ids": ["d1", "d2"]}}, {"knowledge": {"data_ids": ["d1", "d2"]}}),
        (
            {"knowledge": {"data_ids": [], "group_ids": ("g1",)}},
            {"knowledge": {"data_ids": [], "group_ids": ["g1"]}},
        ),
        (
            {"custom_variables": {"user_name": "Ada", "tier": 2}},
            {"custom_variables": {"user_name": "Ada", "tier": 2}},
        ),
        ({"long_term_memory": False}, {"long_term_memory": False}),
        (
            {"short_term_memory": True, "long_term_memory": True, "citations": True},
            {"corner_citation": True, "long_term_memory": True, "short_term_memory": True},
        ),
    ],
)
def test_conversation_config_is_sent_only_when_given(
    server: ProviderServer, gb: ck.GPTBots, kwargs: dict[str, Any], config: Any
) -> None:
    for stream in (False, True):
        answer = gb.ask(GB[0][1]["question"], stream=stream, display=False, **kwargs)
        assert answer.text
        assert last_message(server).get("conversation_config") == config


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"knowledge": ["d1"]}, TypeError, "knowledge= must be a dict"),
        ({"knowledge": {"data_id": ["d1"]}}, ValueError, "only data_ids and group_ids"),
        ({"knowledge": {"data_ids": "d1"}}, TypeError, "must be a list of ids"),
        ({"knowledge": {"group_ids": [1]}}, TypeError, "ids are strings"),
        ({"knowledge": {"group_ids": [" "]}}, ValueError, "an empty id"),
        ({"custom_variables": "x"}, TypeError, "custom_variables= must be a dict"),
        ({"custom_variables": {1: "x"}}, TypeError, "names are non-empty strings"),
        ({"custom_variables": {"a": [1]}}, TypeError, "values are strings, numbers or booleans"),
        ({"long_term_memory": "yes"}, TypeError, "long_term_memory= must be True or False"),
        ({"short_term_memory": 1}, TypeError, "short_term_memory= must be True or False"),
        ({"citations": "yes"}, TypeError, "citations= must be True or False"),
        ({"references": None}, TypeError, "references= must be True or False"),
        ({"related_questions": "yes"}, TypeError, "related_questions= must be True or False"),
        ({"conversation_id": ""}, ValueError, "omit it to start a new one"),
    ],
)
def test_bad_options_fail_before_anything_is_sent(
    server: ProviderServer, gb: ck.GPTBots, kwargs: dict[str, Any], error: type, message: str
) -> None:
    before = len(server.requests)
    for call in (
        lambda: gb.ask("q", **kwargs),
        lambda: gb.stream("q", **kwargs),
        lambda: asyncio.run(gb.aask("q", **kwargs)),
        lambda: gb.astream("q", **kwargs),
    ):
        with pytest.raises(error, match=message):
            call()
    assert len(server.requests) == before


def test_conversation_reuse_and_references_false_send_fewer_requests(
    server: ProviderServer, gb: ck.GPTBots
) -> None:
    question = GB[0][1]["question"]

    def endpoints(**kwargs: Any) -> list[str | None]:
        server.clear_requests()
        gb.ask(question, **kwargs)
        return [r.endpoint for r in server.requests]

    assert endpoints() == ["conversation", "message", "correlate"]
    cid = gb.new_conversation()
    assert endpoints(conversation_id=cid) == ["message", "correlate"]
    assert endpoints(conversation_id=cid, references=False) == ["message"]
    assert endpoints(references=False, related_questions=True) == [
        "conversation",
        "message",
        "next_question",
    ]


@pytest.mark.parametrize(("stem", "rec"), WITH_NEXT, ids=[s for s, _ in WITH_NEXT])
def test_related_questions_come_from_next_question(
    server: ProviderServer, gb: ck.GPTBots, stem: str, rec: dict[str, Any]
) -> None:
    expected = tuple(rec["next_question"]["questions"])
    question = rec["question"]
    blocking = gb.ask(question, related_questions=True)
    asked = [r for r in server.requests if r.endpoint == "next_question"][-1]
    assert asked.method == "GET" and asked.query == {"answer_id": blocking.id}
    streamed = gb.ask(question, related_questions=True, stream=True, display=False)
    asynced = asyncio.run(gb.aask(question, related_questions=True))
    assert blocking.related_questions == streamed.related_questions == expected
    assert asynced.related_questions == expected
    rebuilt = ck.parse_response(streamed.raw, provider="gptbots", question=question)
    assert rebuilt.related_questions == expected
    assert gb.ask(question).related_questions == ()  # only when asked for


def test_a_sample_without_suggestions_gives_none(gb: ck.GPTBots) -> None:
    answer = gb.ask(WITHOUT_NEXT[0][1]["question"], related_questions=True, references=False)
    assert answer.related_questions == () and answer.text


def test_failed_suggestions_keep_the_answer(server: ProviderServer) -> None:
    url = server.base_url("gptbots", fault="gptbots_code", code=40000, endpoint="next_question")
    gb = ck.GPTBots(api_key=SECRET, base_url=url)
    with pytest.warns(ck.CitekitWarning, match="Suggested questions could not be fetched"):
        answer = gb.ask(WITH_NEXT[0][1]["question"], related_questions=True)
    assert answer.text and answer.related_questions == () and answer.references is not None


def test_config_builder_sends_only_what_is_given() -> None:
    assert conversation_config() == {}
    assert conversation_config(citations=True, custom_variables={}) == {
        "corner_citation": True,
        "custom_variables": {},
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=examples(200), deadline=None)
@given(body=json_values)
def test_any_next_question_body_never_crashes(body: Any) -> None:
    wire = Wire(provider="gptbots", classify=gptbots.classify, check_body=gptbots.check_body)
    flow = next_questions_flow(wire, "a1")
    flow.send(None)  # Send
    flow.send(Head())
    flow.send(json.dumps(body).encode())
    try:
        flow.send(None)
    except StopIteration as stop:
        assert all(isinstance(q, str) for q in stop.value)
    except ck.ProviderError:
        pass  # an error envelope ({code >= 10000, ...})


class Head:
    status_code = 200
    headers: dict[str, str] = {"content-type": "application/json"}  # noqa: RUF012
