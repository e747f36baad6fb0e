"""GPTBots stream events as documented: FlowOutput lists, citations, tools, thoughts, audio."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.gptbots import GPTBotsAccumulator
from tests.budget import examples
from tests.conftest import SAMPLES, SECRET, sample_records

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
    return ck.parse_chunks([INFO, *events, END], provider="gptbots", question="q")


def rebuilt(answer: ck.Answer) -> ck.Answer:
    return ck.parse_response(answer.raw, provider="gptbots", question="q")


# providers.md, "FlowOutput (code 10)": the documented text stream's FlowOutput item.
DOC_FLOW = {
    "code": 10,
    "message": "FlowOutput",
    "data": [{"content": "Hello", "branch": None, "from_component_name": "User Input"}],
    "componentId": 3,
}


def test_the_documented_flow_output_is_a_component_output_not_the_answer() -> None:
    answer = streamed(DOC_FLOW, text("Hi! "), text("How can I help?"))
    assert answer.text == "Hi! How can I help?"
    assert answer.outputs == (ck.ComponentOutput(name="User Input", branch=None, content="Hello"),)
    assert rebuilt(answer) == answer
    assert answer.raw["output"][0]["component_id"] == 3


def test_flow_output_alone_is_no_answer_text() -> None:
    answer = streamed(DOC_FLOW)
    assert answer.text == "" and answer.outputs[0].content == "Hello"
    assert rebuilt(answer) == answer


def test_flow_output_old_dict_is_still_read() -> None:
    flow = {"code": 10, "message": "FlowOutput", "data": {"content": {"text": "Hi"}}}
    answer = streamed(text("Hi"), flow)
    assert answer.outputs == (ck.ComponentOutput(name=None, branch=None, content="Hi"),)
    assert rebuilt(answer) == answer


def test_several_flow_output_components() -> None:
    flows = [
        {
            "code": 10,
            "message": "FlowOutput",
            "data": [{"content": t, "branch": b, "from_component_name": "n"}],
            "componentId": b,
        }
        for t, b in (("One", "1"), ("Two", 2))
    ]
    answer = streamed(text("Answer"), flows[0], flows[1])
    assert [(o.content, o.branch) for o in answer.outputs] == [("One", "1"), ("Two", "2")]
    assert answer.text == "Answer" and rebuilt(answer) == answer


def test_blocking_output_items_are_the_text_and_the_outputs() -> None:
    reply = {
        "message_id": "m1",
        "output": [
            {"from_component_branch": "1", "from_component_name": "A", "content": {"text": "One"}},
            {"from_component_branch": "2", "from_component_name": "B", "content": {"text": "Two"}},
        ],
    }
    answer = ck.parse_response(reply, provider="gptbots")
    assert answer.text == "One\n\nTwo"
    assert [(o.name, o.branch, o.content) for o in answer.outputs] == [
        ("A", "1", "One"),
        ("B", "2", "Two"),
    ]
    assert rebuilt(answer).outputs == answer.outputs


@settings(max_examples=examples(200), deadline=None)
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


# -- samples: a thought with a tool call, and a voice answer -----------------------------------
def sample_with(code: int) -> tuple[str, dict[str, Any]]:
    for stem, rec in sample_records("gptbots"):
        lines = (SAMPLES / "gptbots" / f"{stem}.jsonl").read_text(encoding="utf-8").splitlines()
        if any(json.loads(line)["code"] == code for line in lines):
            return stem, rec
    raise AssertionError(f"no GPTBots sample streams code {code}")


@pytest.fixture()
def gb(server: ProviderServer) -> ck.GPTBots:
    return ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))


def test_thoughts_stay_apart_from_the_text(gb: ck.GPTBots) -> None:
    _, rec = sample_with(41)
    streamed = gb.ask(rec["question"], stream=True, display=False, references=False)
    blocking = gb.ask(rec["question"], references=False)
    assert len(streamed.thoughts) == 1 and streamed.thoughts[0].startswith("The customer")
    assert streamed.thoughts[0] not in streamed.text
    assert streamed.text == blocking.text == rec["message"]["output"][0]["content"]["text"]
    assert blocking.thoughts == ()  # GPTBots documents thoughts in streams only
    assert rebuilt(streamed).thoughts == streamed.thoughts


def test_consecutive_thought_events_are_one_thought() -> None:
    think = [{"code": 41, "message": "Thought", "data": d} for d in ("Let me ", "check.")]
    answer = streamed(*think, text("Done."), {"code": 41, "message": "Thought", "data": "Again"})
    assert answer.thoughts == ("Let me check.", "Again") and answer.text == "Done."


def test_tool_call_events_are_kept_in_raw(gb: ck.GPTBots) -> None:
    _, rec = sample_with(5)
    answer = gb.ask(rec["question"], stream=True, display=False, references=False)
    tools = answer.raw["tool_events"]
    assert [e["code"] for e in tools] == [5, 6]
    assert tools[0]["data"]["name"] == "get_order_status"
    assert answer.tool_calls == () and "get_order_status" not in answer.text
    assert "unknown_events" not in answer.raw


def test_a_voice_answer_is_its_transcript(gb: ck.GPTBots) -> None:
    _, rec = sample_with(39)
    clips = rec["message"]["output"][0]["content"]["audio"]
    transcript = "".join(c["transcript"] for c in clips)
    with gb.stream(rec["question"], references=False) as s:
        live = "".join(s.text_deltas())
    streamed = s.answer
    blocking = gb.ask(rec["question"], references=False)
    assert streamed is not None and live == transcript
    assert streamed.text == blocking.text == transcript
    # The clips: the blocking reply's {audio, transcript}, FlowOutput's audioDatas
    # {transcript, url, seconds} (providers.md, "Audio events").
    assert [(a.url, a.transcript) for a in blocking.outputs[0].audio] == [
        (c["audio"], c["transcript"]) for c in clips
    ]
    assert [(a.url, a.transcript) for a in streamed.outputs[0].audio] == [
        (c["audio"], c["transcript"]) for c in clips
    ]
    assert all(a.seconds and a.seconds > 0 for a in streamed.outputs[0].audio)
    # Transcript deltas come with audioAnswer "", then audio chunks with transcript "".
    events = streamed.raw["audio"]
    spoken = [e["transcript"] for e in events if e["audioAnswer"] == ""]
    assert "".join(spoken) == transcript
    assert all(e["transcript"] == "" for e in events[len(spoken) :])
    assert rebuilt(streamed).text == transcript


# providers.md, "Audio events": the documented voice stream's shapes.
DOC_AUDIO = [
    {"code": 39, "message": "Audio", "data": {"audioAnswer": "", "transcript": "Hello! How can"}},
    {"code": 39, "message": "Audio", "data": {"audioAnswer": "", "transcript": ", please"}},
    {"code": 39, "message": "Audio", "data": {"audioAnswer": "EQAUAA0...IA3bi", "transcript": ""}},
    {
        "code": 10,
        "message": "FlowOutput",
        "data": [
            {
                "content": " Audio:https://example.com/example.wav,Transcript:(Hello! How can"
                ", please)",
                "branch": None,
                "from_component_name": "AI Model-1",
                "audioDatas": [
                    {
                        "transcript": "Hello! How can, please",
                        "url": "https://example.com/example.wav",
                        "seconds": 2.5,
                    }
                ],
            }
        ],
        "componentId": 12,
    },
]


def test_the_documented_voice_stream() -> None:
    answer = streamed(*DOC_AUDIO)
    assert answer.text == "Hello! How can, please"
    (output,) = answer.outputs
    assert output.name == "AI Model-1" and output.content.startswith(" Audio:https://")
    clip = ck.AudioClip("https://example.com/example.wav", "Hello! How can, please", 2.5)
    assert output.audio == (clip,)
    assert rebuilt(answer) == answer


def test_text_wins_over_transcripts_when_both_come() -> None:
    audio = {"code": 39, "message": "Audio", "data": {"audioAnswer": "u", "transcript": "Hi"}}
    assert streamed(text("Hello"), audio).text == "Hello"
    assert streamed(audio).text == "Hi"


@settings(max_examples=examples(200), deadline=None)
@given(content=json_values, thoughts=json_values, next_question=json_values, output=json_values)
def test_any_json_in_a_blocking_reply_never_crashes(
    content: Any, thoughts: Any, next_question: Any, output: Any
) -> None:
    for items in ([{"content": content}], [{"content": {"text": "", "audio": content}}], output):
        reply = {
            "message_id": "m1",
            "output": items,
            "thoughts": thoughts,
            "next_question": next_question,
        }
        try:
            answer = ck.parse_response(reply, provider="gptbots")
        except ck.ResponseFormatError:
            continue
        assert isinstance(answer.text, str)
        assert all(isinstance(t, str) for t in (*answer.thoughts, *answer.related_questions))


@settings(max_examples=examples(100), deadline=None)
@given(junk=json_values)
def test_an_event_without_a_code_is_kept_and_skipped(junk: Any) -> None:
    # A keep-alive ({"event": "ping"}) or any JSON value without an integer code among the
    # events never costs the answer; a code written as a digit string is still read.
    if isinstance(junk, dict) and "code" in junk:
        junk = {k: v for k, v in junk.items() if k != "code"}
    answer = streamed(text("Hello"), junk, {"code": "3", "data": " world"})
    assert answer.text == "Hello world"
    assert rebuilt(answer).text == "Hello world"


def test_nan_custom_variable_is_refused_before_any_request(
    server: ProviderServer, gb: ck.GPTBots
) -> None:
    before = len(server.requests)
    with pytest.raises(ValueError, match="custom_variables"):
        gb.ask("Why was the Great Wall built?", custom_variables={"a": float("nan")})
    assert len(server.requests) == before


# -- <think> blocks in Text deltas (providers.md, "<think> tags": observed in a client) --------
_think_piece = st.sampled_from(
    ["<think>", "</think>", "<", "<th", "</thi", "nk>", "Why", " so", "$[1]$", "\n\n", "."]
)


@settings(max_examples=examples(200), deadline=None)
@given(pieces=st.lists(_think_piece, max_size=24), cuts=st.lists(st.integers(0, 300), max_size=10))
def test_think_blocks_cut_into_any_deltas_give_the_blocking_answer(
    pieces: list[str], cuts: list[int]
) -> None:
    whole = "".join(pieces)
    points = sorted({c % (len(whole) + 1) for c in cuts})
    chunks = [whole[a:b] for a, b in zip([0, *points], [*points, len(whole)], strict=True)]
    acc = GPTBotsAccumulator(question="q")
    live = [d.text for e in [INFO, *(text(c) for c in chunks if c), END] for d in acc.feed(e)]
    answer = acc.answer()
    blocking = ck.parse_response(
        {"message_id": "m1", "output": [{"content": {"text": whole}}]}, provider="gptbots"
    )
    assert (answer.text, answer.thoughts) == (blocking.text, blocking.thoughts)
    assert "".join(live) == answer.text  # the live deltas never show a thought
    assert rebuilt(answer) == answer


def test_markers_inside_a_think_block_are_not_citations() -> None:
    citation = {"index": "1", "name": "policy.pdf", "type": "doc", "content": "Travel rules."}
    reply = {
        "message_id": "m1",
        "output": [{"content": {"text": "<think>Maybe $[2]$?</think>Book economy.$[1]$"}}],
        "citations": [citation],
    }
    answer = ck.parse_response(reply, provider="gptbots")
    assert answer.thoughts == ("Maybe $[2]$?",)
    assert "think" not in answer.text and "$[2]$" not in answer.text
    assert answer.cited_markers == {1}
    assert "think" not in answer.to_html()
