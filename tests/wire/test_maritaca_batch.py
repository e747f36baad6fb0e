"""Maritaca's Batch objects and result files read without I/O: every documented body
(providers.md, "Maritaca AI: Batch API and Files API", quoted), and arbitrary output files
giving answers in input order or named errors, never a raw exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.core.errors import ResponseFormatError
from citekit.wire.maritaca_batch import (
    BatchRequest,
    input_jsonl,
    parse_batch,
    parse_file_id,
    parse_input,
    read_results,
)
from tests.budget import examples

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1736532802,
    "model": "sabia-4",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Não há vulcões ativos no Brasil."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
}

# The guide's Batch object: `errors: null`, timestamps not yet reached `null`.
GUIDE = {
    "id": "batch_1",
    "object": "batch",
    "endpoint": "/v1/chat/completions",
    "errors": None,
    "input_file_id": "file-1",
    "completion_window": "24h",
    "status": "in_progress",
    "output_file_id": None,
    "error_file_id": None,
    "created_at": 1714508499,
    "in_progress_at": 1714508500,
    "finalizing_at": None,
    "completed_at": None,
    "failed_at": None,
    "expires_at": 1714594899,
    "cancelling_at": None,
    "cancelled_at": None,
    "expired_at": None,
    "request_counts": {"total": 2, "completed": 1, "failed": 0},
    "metadata": None,
}
# The reference's: `errors: []`, timestamps `0`, its own statuses.
REFERENCE = {
    **GUIDE,
    "errors": [],
    "status": "succeeded",
    "output_file_id": "file-2",
    "finalizing_at": 0,
    "failed_at": 0,
    "cancelling_at": 0,
    "cancelled_at": 0,
    "expired_at": 0,
    "completed_at": 1714508600,
}
GUIDE_STATUSES = (
    "validating",
    "failed",
    "in_progress",
    "finalizing",
    "completed",
    "expired",
    "cancelling",
    "cancelled",
)
REFERENCE_STATUSES = (
    "queued",
    "running",
    "finalizing",
    "succeeded",
    "failed",
    "cancelling",
    "cancelled",
    "expired",
)
TERMINAL = {"completed", "succeeded", "failed", "expired", "cancelled"}


def test_both_documented_batch_objects_are_read() -> None:
    guide, reference = parse_batch(GUIDE), parse_batch(REFERENCE)
    assert (guide.status, guide.finished, guide.output_file_id) == ("in_progress", False, None)
    assert (guide.total, guide.completed, guide.failed) == (2, 1, 0)
    assert (reference.status, reference.finished, reference.output_file_id) == (
        "succeeded",
        True,
        "file-2",
    )


@pytest.mark.parametrize("status", sorted({*GUIDE_STATUSES, *REFERENCE_STATUSES}))
def test_every_documented_status_is_read_and_the_terminal_ones_end_it(status: str) -> None:
    info = parse_batch({**GUIDE, "status": status})
    assert info.status == status
    assert info.finished == (status in TERMINAL)


def test_a_batch_without_id_or_status_is_named() -> None:
    with pytest.raises(ResponseFormatError, match="without an 'id' and a 'status'"):
        parse_batch({"object": "batch"})


def test_the_documented_file_object_and_delete_reply() -> None:
    # {id, bytes, created_at, expires_at|null, filename, object:"file", purpose, status, ...}
    file = {
        "id": "file-1",
        "bytes": 120,
        "created_at": 1714508499,
        "expires_at": None,
        "filename": "batch.jsonl",
        "object": "file",
        "purpose": "batch_input",
        "status": "uploaded",
        "status_details": None,
    }
    assert parse_file_id(file) == "file-1"
    with pytest.raises(ResponseFormatError, match="without an 'id'"):
        parse_file_id({"object": "file", "deleted": True, "id": ""})


def test_the_documented_input_line_round_trips() -> None:
    # {"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions", "body":
    # {"model": "sabia-4", "messages": [{"role": "user", "content": "O Brasil tem vulcão?"}],
    # "max_tokens": 200}}
    body = {
        "model": "sabia-4",
        "messages": [{"role": "user", "content": "O Brasil tem vulcão?"}],
        "max_tokens": 200,
    }
    content = input_jsonl([BatchRequest("request-1", body, "O Brasil tem vulcão?")])
    assert json.loads(content) == {
        "custom_id": "request-1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": body,
    }
    assert parse_input(content) == [BatchRequest("request-1", body, "O Brasil tem vulcão?")]


def test_one_model_per_file() -> None:
    a = BatchRequest("request-1", {"model": "sabia-4", "messages": []})
    b = BatchRequest("request-2", {"model": "sabiazinho-4", "messages": []})
    with pytest.raises(ValueError, match="one model per file"):
        input_jsonl([a, b])


REQUESTS = [
    BatchRequest("request-1", {"model": "sabia-4"}, "O Brasil tem vulcão?"),
    BatchRequest("request-2", {"model": "sabia-4"}, "Qual é a capital do Brasil?"),
]


def _lines(*items: Any) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in items).encode()


def test_the_documented_output_and_error_lines_give_answers_in_input_order() -> None:
    # {"id":"batch_req_1","custom_id":"request1","response":{"status_code":200,
    # "request_id":"req_1","body":{chat.completion}},"error":null}
    ok = {
        "id": "batch_req_2",
        "custom_id": "request-2",
        "response": {"status_code": 200, "request_id": "req_1", "body": COMPLETION},
        "error": None,
    }
    # {"id":"batch_req_1","custom_id":"request-1","response":null,"error":{"code":
    # "batch_expired","message":"This request could not be executed before the completion
    # window expired."}}
    expired = {
        "id": "batch_req_1",
        "custom_id": "request-1",
        "response": None,
        "error": {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        },
    }
    answers, errors = read_results(REQUESTS, _lines(ok), _lines(expired), batch_id="batch_1")
    assert answers[0] is None
    assert answers[1] is not None
    assert answers[1].text == "Não há vulcões ativos no Brasil."
    assert (answers[1].question, answers[1].batch_id) == ("Qual é a capital do Brasil?", "batch_1")
    assert [(e.index, e.custom_id, e.code) for e in errors] == [(0, "request-1", "batch_expired")]


def test_a_batch_answer_equals_the_same_answer_without_batch_id() -> None:
    ok = {"custom_id": "request-1", "response": {"status_code": 200, "body": COMPLETION}}
    answers, _ = read_results(REQUESTS[:1], _lines(ok), b"", batch_id="batch_1")
    from citekit.wire.openai_compat import parse_chat_completion

    plain = parse_chat_completion(COMPLETION, provider="maritaca", question="O Brasil tem vulcão?")
    assert answers[0] == plain and plain.batch_id is None


# -- arbitrary output files ----------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _line(n: int) -> st.SearchStrategy[str]:
    cid = st.sampled_from([f"request-{i + 1}" for i in range(n)]) | st.text(max_size=10) | st.none()
    good = cid.map(
        lambda c: json.dumps(
            {"custom_id": c, "response": {"status_code": 200, "body": COMPLETION}, "error": None}
        )
    )
    failed = st.tuples(cid, json_values).map(
        lambda t: json.dumps({"custom_id": t[0], "response": None, "error": t[1]})
    )
    odd = st.tuples(cid, json_values, json_values).map(
        lambda t: json.dumps({"custom_id": t[0], "response": {"status_code": t[1], "body": t[2]}})
    )
    garbage = st.text(max_size=30).filter(lambda s: "\n" not in s and "\r" not in s)
    return good | failed | odd | garbage | json_values.map(json.dumps)


@st.composite
def batches(draw: st.DrawFn) -> tuple[int, list[str], list[str]]:
    n = draw(st.integers(1, 6))
    out = draw(st.lists(_line(n), max_size=12))
    err = draw(st.lists(_line(n), max_size=6))
    return n, out, err


@settings(max_examples=examples(300))
@given(batches())
def test_arbitrary_result_files_give_answers_in_order_or_named_errors(
    case: tuple[int, list[str], list[str]],
) -> None:
    n, out, err = case
    requests = [BatchRequest(f"request-{i + 1}", {}, f"q{i}") for i in range(n)]
    output = "\n".join(out).encode()
    errors_file = "\n".join(err).encode()
    answers, errors = read_results(requests, output, errors_file, batch_id="b")
    assert len(answers) == n
    failed = {e.index for e in errors if e.index is not None}
    for index, answer in enumerate(answers):
        # Every request has an answer (its own question, the batch id) or a named error.
        if answer is None:
            assert index in failed
        else:
            assert index not in failed
            assert (answer.question, answer.batch_id) == (f"q{index}", "b")
    assert all(isinstance(e.error, str) and e.error for e in errors)
    assert [e.index for e in errors if e.index is not None] == sorted(failed)
