"""Maritaca's Responses API: every documented body of providers.md's "Maritaca AI: Responses
API" through the public API to the right Answer, and the request mapping from chat options."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.maritaca_responses import parse_responses, responses_body
from citekit.wire.schema import check_schema, schema_of, validate
from tests.budget import examples

# providers.md, "usage": the function-call example (abridged), quoted as documented.
FUNCTION_CALL = json.loads(
    '{"id":"resp-xyz789","object":"response","status":"completed",'
    '"output":[{"id":"fc-abc123","type":"function_call","name":"get_weather",'
    '"arguments":"{\\"city\\": \\"São Paulo\\"}","call_id":"call_abc123","status":"completed"}],'
    '"usage":{"input_tokens":25,"output_tokens":15,"total_tokens":40}}'
)
# providers.md, "output[] item types": the artifact BEFORE the message, and that message with
# no id, no status and no annotations; usage with tool_execution_details.
ARTIFACT = {
    "id": "resp-art1",
    "object": "response",
    "created_at": 1767225600,
    "status": "completed",
    "model": "sabia-4-thinking",
    "output": [
        {
            "type": "code_execution_artifact",
            "id": "cea_1",
            "status": "completed",
            "filename": "grafico.png",
            "mime_type": "image/png",
            "size_bytes": 4,
            "content_base64": "iVBORw==",
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Pronto."}],
        },
    ],
    "usage": {
        "input_tokens": 30,
        "output_tokens": 12,
        "total_tokens": 42,
        "input_tokens_details": {"cached_tokens": 10},
        "output_tokens_details": {"reasoning_tokens": 5},
        "tool_execution_details": {"code_execution_minutes": 0.1},
    },
    "error": None,
    "incomplete_details": None,
}
# providers.md, "Top-level fields": a message with annotations [] and incomplete_details.
CUT = {
    "id": "resp-cut",
    "object": "response",
    "status": "completed",
    "model": "sabia-4",
    "output": [
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "O samba nasceu", "annotations": []}],
        }
    ],
    "usage": {"input_tokens": 8, "output_tokens": 4, "total_tokens": 12},
    "incomplete_details": {"reason": "max_output_tokens"},
}
# providers.md, "Streaming and errors": error is {code, message} when status is "failed".
FAILED = {
    "id": "resp-f",
    "object": "response",
    "status": "failed",
    "output": [],
    "error": {"code": "server_error", "message": "internal error"},
}
# Annotations are "(usually empty)"; a url_citation where one appears is read as a source.
ANNOTATED = {
    "id": "resp-a",
    "object": "response",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "O Pix Automático começou em 2025.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url": "https://www.bcb.gov.br/pix",
                            "title": "Banco Central",
                            "start_index": 2,
                            "end_index": 16,
                        }
                    ],
                }
            ],
        }
    ],
}
DOCUMENTED = [FUNCTION_CALL, ARTIFACT, CUT, FAILED, ANNOTATED]


def _stream(text_pieces: list[str]) -> list[dict[str, Any]]:
    """The documented event order, numbered from 1 (providers.md, "Streaming and errors")."""
    item = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    done = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": "".join(text_pieces), "annotations": []}],
    }
    ids = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {"id": "resp-s", "status": "in_progress", "output": []},
        },
        {"type": "response.in_progress", "response": {"id": "resp-s", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **ids, "part": {"type": "output_text", "text": ""}},
        *({"type": "response.output_text.delta", **ids, "delta": p} for p in text_pieces),
        {"type": "response.output_text.done", **ids, "text": "".join(text_pieces)},
        {"type": "response.content_part.done", **ids, "part": done["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {
                "id": "resp-s",
                "object": "response",
                "status": "completed",
                "model": "sabia-4",
                "output": [done],
                "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
            },
        },
    ]
    return [{**e, "sequence_number": n} for n, e in enumerate(events, 1)]


def test_a_function_call_is_a_tool_call_whose_id_is_the_call_id() -> None:
    ans = ck.parse_response(FUNCTION_CALL, provider="maritaca")
    (call,) = ans.tool_calls
    assert (call.id, call.name, call.parsed_arguments()) == (
        "call_abc123",
        "get_weather",
        {"city": "São Paulo"},
    )
    assert ans.finish_reason == "tool_calls" and ans.text == ""
    assert (ans.usage.prompt_tokens, ans.usage.completion_tokens, ans.usage.total_tokens) == (
        25,
        15,
        40,
    )


def test_an_artifact_before_the_message_is_a_file_and_the_message_is_the_text() -> None:
    ans = ck.parse_response(ARTIFACT, provider="maritaca")
    assert ans.text == "Pronto." and ans.finish_reason == "stop"
    assert [(f.name, f.mime_type, f.data) for f in ans.files] == [
        ("grafico.png", "image/png", b"\x89PNG")
    ]
    assert ans.usage.cached_tokens == 10 and ans.usage.tools == {"code_execution_minutes": 0.1}
    assert ans.created is not None and ans.created.year == 2026


def test_incomplete_details_is_a_cut_answer() -> None:
    ans = ck.parse_response(CUT, provider="maritaca")
    assert ans.finish_reason == "length" and ans.text == "O samba nasceu"
    assert any("max_output_tokens" in note for note in ans.notes)


def test_a_failed_response_keeps_its_error_as_a_note() -> None:
    ans = ck.parse_response(FAILED, provider="maritaca")
    assert ans.finish_reason == "error"
    assert any("server_error" in n and "internal error" in n for n in ans.notes)


def test_annotations_are_the_sources() -> None:
    ans = ck.parse_response(ANNOTATED, provider="maritaca")
    (c,) = ans.citations
    assert (c.source_url, c.document_title, c.cited_text) == (
        "https://www.bcb.gov.br/pix",
        "Banco Central",
        "Pix Automático",
    )


def test_the_documented_stream_gives_the_blocking_answer() -> None:
    events = _stream(["O Pix ", "é ", "instantâneo."])
    ans = ck.parse_chunks(events, provider="maritaca")
    assert ans.text == "O Pix é instantâneo." and ans.finish_reason == "stop"
    assert ans.usage.total_tokens == 5
    assert ck.parse_response(dict(ans.raw), provider="maritaca") == ans


def test_a_stream_cut_before_completed_is_partial_with_its_text() -> None:
    from citekit.wire.maritaca_responses import ResponsesAccumulator

    acc = ResponsesAccumulator()
    for event in _stream(["um ", "dois"])[:6]:
        acc.feed(event)
    assert not acc.finished
    partial = acc.answer(partial=True)
    assert partial.partial and partial.text == "um dois"


# -- the request ---------------------------------------------------------------------------
def test_chat_options_map_to_the_responses_body() -> None:
    chat = {
        "model": "sabia-4",
        "messages": [
            {"role": "system", "content": "Seja breve."},
            {"role": "user", "content": "What's the weather forecast in Rio de Janeiro?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_abc123",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"latitude": -22.9068, "longitude": -43.1729}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_abc123",
                "content": '{"temperature": 25.6, "unit": "°C"}',
            },
        ],
        "max_tokens": 100,
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "code_execution": True,
    }
    body = responses_body(chat)
    # providers.md, "Input items": the documented body of a function result sent back.
    documented = json.loads(
        '[{"role":"user","content":"What\'s the weather forecast in Rio de Janeiro?"},'
        '{"type":"function_call","call_id":"call_abc123","name":"get_weather","arguments":'
        '"{\\"latitude\\": -22.9068, \\"longitude\\": -43.1729}"},'
        '{"type":"function_call_output","call_id":"call_abc123","output":'
        '"{\\"temperature\\": 25.6, \\"unit\\": \\"°C\\"}"}]'
    )
    assert body["input"] == documented
    assert body["instructions"] == "Seja breve." and body["max_output_tokens"] == 100
    assert body["tools"] == [
        {"type": "function", "name": "get_weather", "parameters": {}},
        {"type": "code_interpreter"},
    ]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert "messages" not in body and "max_tokens" not in body


def test_chat_only_parameters_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match=r"does not take n, frequency_penalty.*api='chat'"):
        responses_body({"model": "m", "messages": [], "n": 2, "frequency_penalty": 0.1})


# -- schemas --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "string", "minLength": 2}, "minLength"),
        (
            {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(101)}},
            "101 properties",
        ),
        ({"type": "string", "enum": [str(i) for i in range(501)]}, "501 values"),
        ({"type": "string", "enum": ["x" * 30 for _ in range(251)]}, "7,500"),
    ],
)
def test_a_schema_over_the_documented_limits_is_refused(schema: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_schema(schema)


def test_six_nesting_levels_are_refused() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(6):
        schema = {"type": "object", "properties": {"x": schema}}
    with pytest.raises(ValueError, match="6 levels"):
        check_schema(schema)
    check_schema(schema["properties"]["x"])


SIMPLE = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "pop": {"type": "integer"},
        "kind": {"enum": ["capital", "other"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "pop"],
    "additionalProperties": False,
}


@pytest.mark.slow  # importing jsonschema takes seconds
@settings(max_examples=examples(200), deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda i: (
            st.lists(i, max_size=3)
            | st.dictionaries(st.sampled_from(["city", "pop", "kind", "tags", "x"]), i, max_size=4)
        ),
        max_leaves=8,
    )
)
def test_the_validator_agrees_with_jsonschema(value: Any) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    ours = validate(value, SIMPLE) is None
    theirs = jsonschema.Draft202012Validator(SIMPLE).is_valid(value)
    assert ours == theirs


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"city": "Brasília", "pop": 3, "tags": ["df"]}, None),
        ({"city": "Brasília"}, "has no 'pop'"),
        ({"city": "Brasília", "pop": "3"}, "pop is str, not integer"),
        ({"city": "Brasília", "pop": 3, "kind": "vila"}, "kind is 'vila', not one of"),
        ({"city": "Brasília", "pop": 3, "x": 1}, "'x', which the schema does not allow"),
        ({"city": "Brasília", "pop": 3, "tags": [1]}, "tags[0] is int, not string"),
    ],
)
def test_the_validator_says_what_is_wrong(value: Any, problem: str | None) -> None:
    said = validate(value, SIMPLE)
    assert said is None if problem is None else (said is not None and problem in said)


def test_a_pydantic_model_is_a_schema() -> None:
    pydantic = pytest.importorskip("pydantic")

    class City(pydantic.BaseModel):
        city: str
        pop: int

    schema = schema_of(City)
    assert schema.name == "City" and schema.response_format()["json_schema"]["schema"][
        "required"
    ] == ["city", "pop"]


def test_parse_responses_names_the_field() -> None:
    with pytest.raises(ck.ResponseFormatError, match=r"output\[0\]\.content\[0\]\.text"):
        parse_responses(
            {"output": [{"type": "message", "content": [{"type": "output_text", "text": 3}]}]}
        )
    with pytest.raises(ck.ResponseFormatError, match="'output' list"):
        parse_responses({"object": "response"})


def test_service_tier_is_chat_only() -> None:
    with pytest.raises(ValueError, match="does not take service_tier"):
        responses_body({"model": "m", "messages": [], "service_tier": "flex"})
