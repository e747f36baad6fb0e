"""GPTBots stream events as documented: FlowOutput lists, citations, tools, thoughts, audio."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.gptbots import GPTBotsAccumulator

INFO = {"code": 11, "message": "MessageInfo", "data": {"message_id": "m1", "conversation_id": "c"}}
END = {"code": 0, "message": "End", "data": None}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def text(data: str) -> dict[str, Any]:
    return {"code": 3, "message": "Text", "data": data}


def streamed(*events: dict[str, Any]) -> ck.Answer:
    return ck.Answer.from_chunks([INFO, *events, END], provider="gptbots", question="q")


def rebuilt(answer: ck.Answer) -> ck.Answer:
    return ck.Answer.from_response(answer.raw, provider="gptbots", question="q")


def test_flow_output_list_rebuilds_the_same_text() -> None:
    flow = {
        "code": 10,
        "message": "FlowOutput",
        "data": [{"content": "Hello world", "branch": "1", "from_component_name": "LLM"}],
        "componentId": "c0ffee",
    }
    answer = streamed(text("Hello "), text("world"), flow)
    assert answer.text == "Hello world" and answer.outputs == ("Hello world",)
    again = rebuilt(answer)
    assert (again.text, again.outputs, again.id) == (answer.text, answer.outputs, answer.id)
    assert answer.raw["output"][0]["component_id"] == "c0ffee"
    assert answer.raw["output"][0]["from_component_name"] == "LLM"


def test_flow_output_old_dict_is_still_read() -> None:
    flow = {"code": 10, "message": "FlowOutput", "data": {"content": {"text": "Hi"}}}
    answer = streamed(text("Hi"), flow)
    assert answer.outputs == ("Hi",) and rebuilt(answer).text == "Hi"


def test_several_flow_output_components() -> None:
    flows = [
        {
            "code": 10,
            "message": "FlowOutput",
            "data": [{"content": t, "branch": b, "from_component_name": "n"}],
            "componentId": b,
        }
        for t, b in (("One", "1"), ("Two", "2"))
    ]
    answer = streamed(text("One"), flows[0], text("\n\nTwo"), flows[1])
    assert answer.outputs == ("One", "Two") and rebuilt(answer).outputs == ("One", "Two")


@settings(max_examples=200, deadline=None)
@given(code=st.sampled_from([10, 20, 83, 5, 6, 39, 41, 4, 11]), data=json_values, extra=json_values)
def test_any_json_in_a_known_event_never_crashes(code: int, data: Any, extra: Any) -> None:
    acc = GPTBotsAccumulator(question="q")
    acc.feed(INFO)
    acc.feed({"code": code, "message": "x", "data": data, "componentId": extra})
    acc.feed(text("ok"))
    acc.feed(END)
    answer = acc.answer()
    assert isinstance(answer.text, str)
    rebuilt(answer)  # the raw reply it keeps is readable again
