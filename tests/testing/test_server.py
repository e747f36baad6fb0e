"""The loopback provider server, exercised with plain httpx over real sockets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from citekit.testing import GPTBOTS_MESSAGES, ProviderServer, serve
from citekit.testing._samples import choose_sample, default_data_dir
from citekit.testing._sse import split_segments

AUTH = {"Authorization": "Bearer test-key"}
CONV = "a1" * 12
MSG = "b2" * 12

# -- tiny fixtures in the sample_data layout ---------------------------------------------------

MAG_RESPONSE: dict[str, Any] = {
    "id": "chatcmpl-grace",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "magisterium-1",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Grace is a free gift [^1]."},
            "finish_reason": "stop",
        }
    ],
    "citations": [{"cited_text": "Grace is favor", "document_index": 0, "source_url": "u"}],
    "related_questions": ["What is sin?"],
    "citekit_sample": "magisterium/01_grace",
}
MAG_HEAD = '"id":"chatcmpl-grace","object":"chat.completion.chunk","created":1700000000'
MAG_SSE = (
    f'data: {{{MAG_HEAD},"choices":[{{"index":0,"delta":{{"role":"assistant","content":"Grace "}},'
    '"finish_reason":null}]}\r\n\r\n'
    ": keep-alive\r\n\r\n"
    f"data: {{{MAG_HEAD},\r\n"
    'data: "choices":[{"index":0,"delta":{"content":"is a free "},"finish_reason":null}]}\r\n\r\n'
    "\r\n"
    f'data: {{{MAG_HEAD},"choices":[{{"index":0,"delta":{{"content":"gift [^1]."}},'
    '"finish_reason":null}]}\r\n\r\n'
    f'data: {{{MAG_HEAD},"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}],'
    '"citations":[{"cited_text":"Grace is favor","document_index":0,"source_url":"u"}],'
    '"related_questions":["What is sin?"],"citekit_sample":"magisterium/01_grace"}\r\n\r\n'
    "data: [DONE]\r\n\r\n"
).encode()

MAG_SECOND: dict[str, Any] = {
    "id": "chatcmpl-mass",
    "object": "chat.completion",
    "created": 1700000001,
    "model": "magisterium-1",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "The Mass is the source and summit [^1]."},
            "finish_reason": "stop",
        }
    ],
    "citations": [{"cited_text": "source and summit", "document_index": 0}],
    "citekit_sample": "magisterium/02_mass",
}

MAR_RESPONSE: dict[str, Any] = {
    "id": "chatcmpl-capital",
    "object": "chat.completion",
    "created": 1700000100,
    "model": "sabia-4",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "A capital é Brasília."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15},
    "citekit_sample": "maritaca/01_capital",
}
MAR_HEAD = '"id":"chatcmpl-capital","object":"chat.completion.chunk","created":1700000100'
MAR_SSE = (
    f'data: {{{MAR_HEAD},"model":"sabia-4","choices":[{{"index":0,"delta":{{"role":"assistant",'
    '"content":"A capital "},"finish_reason":null}]}\n\n'
    f'data: {{{MAR_HEAD},"model":"sabia-4","choices":[{{"index":0,"delta":{{"content":'
    '"é Brasília."},"finish_reason":null}]}\n\n'
    f'data: {{{MAR_HEAD},"model":"sabia-4","choices":[{{"index":0,"delta":{{}},'
    '"finish_reason":"stop"}]}\n\n'
    f'data: {{{MAR_HEAD},"model":"sabia-4","choices":[],"usage":{{"prompt_tokens":9,'
    '"completion_tokens":6,"total_tokens":15},"citekit_sample":"maritaca/01_capital"}\n\n'
    "data: [DONE]\n\n"
).encode()
MODELS = {"object": "list", "data": [{"id": "sabia-4", "object": "model", "owned_by": "maritaca"}]}

GPT_MESSAGE: dict[str, Any] = {
    "create_time": 1700000200000,
    "conversation_id": CONV,
    "message_id": MSG,
    "output": [
        {
            "from_component_branch": "1",
            "from_component_name": "LLM",
            "content": {"text": "Refunds take five days."},
        }
    ],
    "usage": {"tokens": {"total_tokens": 20}, "credits": {"total_credits": 1}},
    "citekit_sample": "gptbots/01_refund",
}
GPT_CORRELATE: dict[str, Any] = {
    "conversation_id": CONV,
    "question_id": "c3" * 12,
    "answer_id": MSG,
    "correlate_dataset": [
        {
            "content": "Refunds are processed within five days.",
            "data_id": "d1",
            "data_name": "refunds.pdf",
            "source_url": "https://example.com/refunds",
            "score": 0.91,
        }
    ],
}
GPT_SSE = (
    f'data: {{"code":11,"message":"MessageInfo","data":{{"message_id":"{MSG}",'
    f'"conversation_id":"{CONV}"}}}}\n\n'
    'data: {"code":3,"message":"Text","data":"Refunds take "}\n\n'
    'data: {"code":3,"message":"Text","data":"five days."}\n\n'
    'data: {"code":0,"message":"End","data":null}\n\n'
).encode()


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data if isinstance(data, bytes) else json.dumps(data, ensure_ascii=False).encode()
    path.write_bytes(raw)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sample_data")
    request = {
        "model": "magisterium-1",
        "messages": [{"role": "user", "content": "What is grace?"}],
    }
    _write(
        root / "magisterium/01_grace.json",
        {
            "question": "What is grace?",
            "language": "en",
            "request": request,
            "response": MAG_RESPONSE,
        },
    )
    _write(root / "magisterium/01_grace.sse", MAG_SSE)
    question = "Why is the Mass the source and summit?"
    _write(
        root / "magisterium/02_mass.json",
        {"question": question, "language": "en", "request": request, "response": MAG_SECOND},
    )
    question = "Qual é a capital do Brasil?"
    _write(
        root / "maritaca/01_capital.json",
        {"question": question, "language": "pt", "request": request, "response": MAR_RESPONSE},
    )
    _write(root / "maritaca/01_capital.sse", MAR_SSE)
    _write(root / "maritaca/models.json", MODELS)
    _write(
        root / "gptbots/01_refund.json",
        {
            "question": "How do I get a refund?",
            "language": "en",
            "user_id": "user-1",
            "conversation_id": CONV,
            "message": GPT_MESSAGE,
            "correlate": GPT_CORRELATE,
        },
    )
    _write(root / "gptbots/01_refund.sse", GPT_SSE)
    return root


@pytest.fixture
def srv(data_dir: Path) -> Iterator[ProviderServer]:
    with ProviderServer(data_dir=data_dir) as server:
        yield server


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(headers=AUTH, timeout=10) as c:
        yield c


@pytest.fixture(scope="module")
def anon() -> Iterator[httpx.Client]:
    """A client that sends no key unless a test passes one."""
    with httpx.Client(timeout=10) as c:
        yield c


def chat(question: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": question}], **extra}


def events(body: bytes) -> list[Any]:
    """The JSON (or ``[DONE]``) of every event of an SSE body; a small independent decoder."""
    found: list[Any] = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [ln[5:].lstrip(b" ") for ln in block.split(b"\n") if ln.startswith(b"data:")]
        if lines:
            data = b"\n".join(lines).decode()
            found.append(data if data == "[DONE]" else json.loads(data))
    return found


def chunk_text(chunks: list[Any]) -> str:
    return "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in chunks
        if isinstance(c, dict) and c.get("choices")
    )


# -- addresses, records, routing ---------------------------------------------------------------


def test_base_urls_and_scenario_urls(srv: ProviderServer) -> None:
    assert srv.url.startswith("http://127.0.0.1:")
    assert srv.base_url("magisterium") == f"{srv.url}/magisterium/api/v1"
    assert srv.base_url("maritaca") == f"{srv.url}/maritaca/api"
    assert srv.base_url("gptbots") == f"{srv.url}/gptbots"
    url = srv.base_url("magisterium", fault="status", status=429)
    assert url.startswith(f"{srv.url}/s/") and url.endswith("/magisterium/api/v1")
    assert srv.scenario(url).status == 429
    with pytest.raises(ValueError, match="unknown fault"):
        srv.base_url("magisterium", fault="boom")  # type: ignore[typeddict-item]


def test_requests_are_recorded(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("magisterium", latency=0.01)
    r = client.post(f"{url}/chat/completions?x=1", json=chat("What is grace?"))
    assert r.status_code == 200
    [rec] = srv.requests
    assert (rec.method, rec.provider, rec.endpoint) == ("POST", "magisterium", "chat")
    assert rec.path.endswith("/magisterium/api/v1/chat/completions") and rec.query == {"x": "1"}
    assert rec.headers["authorization"] == "Bearer test-key"
    assert rec.json == chat("What is grace?") and rec.scenario == srv.scenario(url).id
    assert rec.status == 200 and rec.end is not None and rec.end >= rec.start + 0.01
    assert r.headers["x-request-id"] == rec.request_id


def test_sequential_requests_are_never_concurrent(
    srv: ProviderServer, client: httpx.Client
) -> None:
    url = srv.base_url("magisterium") + "/chat/completions"
    for n in range(30):
        client.post(url, json=chat("grace", stream=bool(n % 2)))
        assert srv.requests[-1].end is not None
    assert srv.max_concurrent == 1


def test_request_ids_are_fresh(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("maritaca") + "/models"
    ids = {client.get(url).headers["x-request-id"] for _ in range(3)}
    bad = client.get(srv.url + "/nowhere")
    assert len(ids) == 3 and bad.status_code == 404 and bad.headers["x-request-id"]


def test_unknown_routes_methods_and_scenarios(srv: ProviderServer, client: httpx.Client) -> None:
    assert client.get(srv.url + "/magisterium/api/v1/nope").status_code == 404
    wrong = client.get(srv.base_url("magisterium") + "/chat/completions")
    assert wrong.status_code == 405 and "error" in wrong.json()
    assert client.post(srv.url + "/s/zzz/maritaca/api/chat/completions").status_code == 404


# -- normal service ------------------------------------------------------------------------------


def test_magisterium_json_strips_related_questions(
    srv: ProviderServer, client: httpx.Client
) -> None:
    url = srv.base_url("magisterium") + "/chat/completions"
    plain = client.post(url, json=chat("What is grace?")).json()
    expected = {k: v for k, v in MAG_RESPONSE.items() if k != "related_questions"}
    assert plain == expected
    full = client.post(url, json=chat("What is grace?", return_related_questions=True)).json()
    assert full == MAG_RESPONSE


def test_stream_replay_is_byte_exact(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("magisterium") + "/chat/completions"
    r = client.post(url, json=chat("What is grace?", stream=True, return_related_questions=True))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["transfer-encoding"] == "chunked"
    assert r.content == MAG_SSE


def test_stream_strips_related_questions_from_last_chunk_only(
    srv: ProviderServer, client: httpx.Client
) -> None:
    url = srv.base_url("magisterium") + "/chat/completions"
    body = client.post(url, json=chat("what is GRACE? ", stream=True)).content
    sent, recorded = split_segments(body), split_segments(MAG_SSE)
    assert len(sent) == len(recorded)
    changed = [i for i, (a, b) in enumerate(zip(sent, recorded, strict=True)) if a.raw != b.raw]
    assert changed == [len(recorded) - 2]
    last = sent[-2].payload()
    assert "related_questions" not in last and last["citations"] and sent[-2].raw.endswith(b"\r\n")
    assert last["citekit_sample"] == "magisterium/01_grace"


def test_sample_without_sse_is_streamed_from_its_json(
    srv: ProviderServer, client: httpx.Client
) -> None:
    url = srv.base_url("magisterium") + "/chat/completions"
    got = events(client.post(url, json=chat("source and summit of the Mass", stream=True)).content)
    assert got[-1] == "[DONE]" and chunk_text(got[:-1]) == "The Mass is the source and summit [^1]."
    assert got[-2]["choices"][0]["finish_reason"] == "stop"
    assert got[-2]["citations"] == MAG_SECOND["citations"]
    assert got[-2]["citekit_sample"] == "magisterium/02_mass"


def test_sample_matching(data_dir: Path, srv: ProviderServer, client: httpx.Client) -> None:
    samples = srv.samples("magisterium")
    assert [s.name for s in samples] == ["01_grace", "02_mass"]
    assert choose_sample(samples, "  WHAT is   grace? ") is samples[0]
    assert choose_sample(samples, "tell me about the Mass summit") is samples[1]
    assert choose_sample(samples, "zzz unrelated") is samples[0]  # tie: first file
    assert choose_sample((), "anything") is None
    url = srv.base_url("magisterium") + "/chat/completions"
    messages = [
        {"role": "user", "content": "What is grace?"},
        {"role": "assistant", "content": "..."},
        {"role": "user", "content": [{"type": "text", "text": "And the Mass summit?"}]},
    ]
    r = client.post(url, json={"model": "m", "messages": messages})
    assert r.json()["id"] == "chatcmpl-mass"


def test_maritaca_models_and_key_scheme(srv: ProviderServer, anon: httpx.Client) -> None:
    r = anon.get(srv.base_url("maritaca") + "/models", headers={"Authorization": "Key k"})
    assert r.status_code == 200 and r.json() == MODELS


def test_maritaca_stream_drops_usage_chunk_unless_asked(
    srv: ProviderServer, client: httpx.Client
) -> None:
    url = srv.base_url("maritaca") + "/chat/completions"
    usage = {"include_usage": True}
    full = client.post(
        url, json=chat("Qual é a capital do Brasil?", stream=True, stream_options=usage)
    )
    assert full.content == MAR_SSE
    short = events(client.post(url, json=chat("Qual é a capital do Brasil?", stream=True)).content)
    assert short[-1] == "[DONE]" and all(c["choices"] for c in short[:-1])
    assert short[-2]["choices"][0]["finish_reason"] == "stop"
    assert short[-2]["citekit_sample"] == "maritaca/01_capital"
    assert chunk_text(short[:-1]) == "A capital é Brasília."
    other = {"citekit_sample_question": "Qual é a capital do Brasil?"}
    other["citekit_sample_matched"] = False  # "capital?" is no sample's own question
    assert client.post(url, json=chat("capital?")).json() == {**MAR_RESPONSE, **other}


# -- authentication and validation ---------------------------------------------------------------

AUTH_BODIES = {
    "magisterium": lambda b: b["error"]["message"] == "Incorrect API key provided",
    "maritaca": lambda b: isinstance(b["detail"], str),
    "gptbots": lambda b: b["code"] == 40127 and b["message"] == GPTBOTS_MESSAGES[40127],
}
ENDPOINTS = {
    "magisterium": "/chat/completions",
    "maritaca": "/chat/completions",
    "gptbots": "/v1/conversation",
}


@pytest.mark.parametrize("provider", ["magisterium", "maritaca", "gptbots"])
@pytest.mark.parametrize("header", [None, "Bearer", "Basic abc", "Key abc"])
def test_auth_failures(
    srv: ProviderServer, anon: httpx.Client, provider: Any, header: str | None
) -> None:
    headers = {"Authorization": header} if header is not None else {}
    url = srv.base_url(provider) + ENDPOINTS[provider]
    r = anon.post(url, json=chat("What is grace?", user_id="u"), headers=headers)
    if provider == "maritaca" and header == "Key abc":
        assert r.status_code == 200  # Maritaca's raw-HTTP docs use this scheme
    else:
        assert r.status_code == 401 and AUTH_BODIES[provider](r.json())


def test_scenario_api_key(srv: ProviderServer, anon: httpx.Client) -> None:
    url = srv.base_url("magisterium", api_key="right") + "/chat/completions"
    wrong = anon.post(url, json=chat("grace"), headers={"Authorization": "Bearer wrong"})
    right = anon.post(url, json=chat("grace"), headers={"Authorization": "Bearer right"})
    assert (wrong.status_code, right.status_code) == (401, 200)


@pytest.mark.parametrize(
    "body",
    [b"{not json", b'{"model": "m"}', b'{"model": "m", "messages": []}', b'{"messages": [{}]}'],
)
def test_validation_errors(srv: ProviderServer, client: httpx.Client, body: bytes) -> None:
    mag = client.post(srv.base_url("magisterium") + "/chat/completions", content=body)
    mar = client.post(srv.base_url("maritaca") + "/chat/completions", content=body)
    assert mag.status_code == mar.status_code == 400
    assert mag.json()["error"]["type"] == "invalid_request_error"
    assert isinstance(mar.json()["detail"], str)


def test_maritaca_tools_need_non_stream(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("maritaca") + "/chat/completions"
    r = client.post(url, json=chat("capital", stream=True, web_search=True))
    assert r.status_code == 400 and "web_search" in r.json()["detail"]


# -- GPTBots -------------------------------------------------------------------------------------


def test_gptbots_full_flow(srv: ProviderServer, client: httpx.Client) -> None:
    base = srv.base_url("gptbots")
    conv = client.post(f"{base}/v1/conversation", json={"user_id": "user-1"}).json()
    cid = conv["conversation_id"]
    assert len(cid) == 24 and int(cid, 16) >= 0 and cid != CONV
    send = {"conversation_id": cid, "response_mode": "blocking", "messages": []}
    send["messages"] = [{"role": "user", "content": "How do I get a refund?"}]  # its own
    blocking = client.post(f"{base}/v2/conversation/message", json=send).json()
    assert blocking == {**GPT_MESSAGE, "conversation_id": cid}
    stream = client.post(
        f"{base}/v2/conversation/message", json={**send, "response_mode": "streaming"}
    )
    assert stream.headers["content-type"].startswith("text/event-stream")
    # Bare JSON lines by default (every official GPTBots example), SSE as a scenario option.
    recorded = events(GPT_SSE.replace(CONV.encode(), cid.encode()))
    assert [json.loads(line) for line in stream.content.splitlines()] == recorded
    sse_base = srv.base_url("gptbots", framing="sse")
    stream = client.post(
        f"{sse_base}/v2/conversation/message", json={**send, "response_mode": "streaming"}
    )
    assert stream.content == GPT_SSE.replace(CONV.encode(), cid.encode())
    got = events(stream.content)
    assert got[0]["code"] == 11 and got[-1]["code"] == 0
    assert "".join(e["data"] for e in got if e["code"] == 3) == "Refunds take five days."
    correlate = client.get(f"{base}/v1/correlate/dataset", params={"message_id": MSG}).json()
    assert correlate == GPT_CORRELATE  # as recorded, whatever conversation asked


def test_gptbots_parameter_errors(srv: ProviderServer, client: httpx.Client) -> None:
    base = srv.base_url("gptbots")
    for body in ({}, {"user_id": ""}, {"user_id": "x" * 33}):
        r = client.post(f"{base}/v1/conversation", json=body)
        assert r.json()["code"] == 40000
    send = {
        "conversation_id": "f" * 24,
        "response_mode": "blocking",
        "messages": [{"content": "q"}],
    }
    assert client.post(f"{base}/v2/conversation/message", json=send).json() == {
        "code": 40356,
        "message": "conversation does not exist",
    }
    cid = client.post(f"{base}/v1/conversation", json={"user_id": "x" * 32}).json()
    bad_mode = {**send, "conversation_id": cid["conversation_id"], "response_mode": "sync"}
    assert client.post(f"{base}/v2/conversation/message", json=bad_mode).json()["code"] == 40000
    r = client.get(f"{base}/v1/correlate/dataset", params={"message_id": "nope"})
    assert r.json()["code"] == 40000


def test_gptbots_correlate_empty(srv: ProviderServer, client: httpx.Client) -> None:
    base = srv.base_url("gptbots", correlate_empty=True)
    r = client.get(f"{base}/v1/correlate/dataset", params={"message_id": MSG})
    assert r.json()["correlate_dataset"] == [] and r.json()["answer_id"] == MSG


@pytest.mark.parametrize("code", sorted(GPTBOTS_MESSAGES))
def test_gptbots_code_fault_on_one_endpoint(
    srv: ProviderServer, client: httpx.Client, code: int
) -> None:
    base = srv.base_url("gptbots", fault="gptbots_code", code=code, endpoint="correlate")
    conv = client.post(f"{base}/v1/conversation", json={"user_id": "u"})
    assert conv.status_code == 200 and "conversation_id" in conv.json()
    r = client.get(f"{base}/v1/correlate/dataset", params={"message_id": MSG})
    assert r.status_code == 200 and r.json() == {"code": code, "message": GPTBOTS_MESSAGES[code]}


def test_gptbots_code_fault_in_a_stream(srv: ProviderServer, client: httpx.Client) -> None:
    base = srv.base_url("gptbots", fault="gptbots_code", code=20040, endpoint="message")
    cid = client.post(f"{base}/v1/conversation", json={"user_id": "u"}).json()["conversation_id"]
    send = {"conversation_id": cid, "messages": [{"role": "user", "content": "refund"}]}
    url = f"{base}/v2/conversation/message"
    blocking = client.post(url, json={**send, "response_mode": "blocking"})
    assert blocking.json() == {"code": 20040, "message": "question too long"}
    streaming = client.post(url, json={**send, "response_mode": "streaming"})
    assert streaming.headers["content-type"].startswith("text/event-stream")
    assert json.loads(streaming.content) == {"code": 20040, "message": "question too long"}


def test_gptbots_code_fault_status_and_message(srv: ProviderServer, client: httpx.Client) -> None:
    base = srv.base_url("gptbots", fault="gptbots_code", code=20040, status=400, message="long")
    r = client.post(f"{base}/v1/conversation", json={"user_id": "u"})
    assert r.status_code == 400 and r.json() == {"code": 20040, "message": "long"}


# -- faults --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "status", "check"),
    [
        ("magisterium", 429, lambda b: b["error"]["message"] == "Too many requests"),
        ("magisterium", 500, lambda b: b["error"]["message"] == "Internal server error"),
        ("magisterium", 400, lambda b: b["error"]["message"] == "Token limit exceeded"),
        ("maritaca", 429, lambda b: isinstance(b["detail"], str)),
        ("gptbots", 500, lambda b: b["code"] == 50000),
    ],
)
def test_status_fault(
    srv: ProviderServer, client: httpx.Client, provider: Any, status: int, check: Any
) -> None:
    url = srv.base_url(provider, fault="status", status=status, retry_after=1)
    r = client.post(url + ENDPOINTS[provider], json=chat("grace", user_id="u"))
    assert r.status_code == status and r.headers["retry-after"] == "1" and check(r.json())


@pytest.mark.parametrize(
    ("asked", "sent"), [(0, "0"), (0.3, "1"), (1, "1"), (1.01, "2"), (29.5, "30")]
)
def test_retry_after_is_sent_in_whole_seconds(
    srv: ProviderServer, client: httpx.Client, asked: float, sent: str
) -> None:
    """RFC 9110 10.2.3 allows delay-seconds (``1*DIGIT``) only: a fraction is rounded up."""
    url = srv.base_url("maritaca", fault="status", status=429, retry_after=asked)
    r = client.post(url + ENDPOINTS["maritaca"], json=chat("grace"))
    assert r.headers["retry-after"] == sent and int(r.headers["retry-after"]) >= asked


def test_retry_after_ms_and_x_should_retry(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url(
        "maritaca", fault="status", status=400, retry_after_ms=250, should_retry=True
    )
    r = client.post(url + ENDPOINTS["maritaca"], json=chat("grace"))
    assert r.headers["retry-after-ms"] == "250" and r.headers["x-should-retry"] == "true"
    assert "retry-after" not in r.headers


def test_status_fault_times_then_success(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("magisterium", fault="status", status=429, times=2, message="slow down")
    codes = [client.post(url + "/chat/completions", json=chat("grace")) for _ in range(3)]
    assert [r.status_code for r in codes] == [429, 429, 200]
    assert (
        codes[0].json()["error"]["message"] == "slow down" and "retry-after" not in codes[0].headers
    )
    assert srv.scenario(url).faults_served == 2 and srv.scenario(url).request_count == 3


def test_reset_mid_stream(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("magisterium", fault="reset", after=2) + "/chat/completions"
    lines: list[str] = []
    with (
        pytest.raises(httpx.TransportError),
        client.stream("POST", url, json=chat("grace", stream=True)) as r,
    ):
        assert r.status_code == 200
        lines.extend(r.iter_lines())
    assert sum(line.startswith("data: {") for line in lines) == 2


def test_reset_non_stream(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("maritaca", fault="reset", times=1) + "/chat/completions"
    with pytest.raises(httpx.TransportError):
        client.post(url, json=chat("capital"))
    assert client.post(url, json=chat("capital")).status_code == 200


def test_malformed(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("magisterium", fault="malformed") + "/chat/completions"
    r = client.post(url, json=chat("grace"))
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        r.json()
    asked = chat("What is grace?", stream=True, return_related_questions=True)
    body = client.post(url, json=asked).content
    segments = split_segments(body)
    bad = [i for i, s in enumerate(segments) if s.data is not None and s.payload() is None]
    assert bad[0] == 5 and segments[bad[0]].data != "[DONE]"  # after 3 events (and 2 keep-alives)
    assert body.replace(segments[5].raw, b"") == MAG_SSE


def test_maritaca_chunks_with_usage(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("maritaca", chunks=50) + "/chat/completions"
    usage = {"include_usage": True}
    got = events(client.post(url, json=chat("capital", stream=True, stream_options=usage)).content)
    assert got[-1] == "[DONE]" and got[-2]["choices"] == [] and got[-2]["usage"]["total_tokens"]
    assert got[-2]["citekit_sample"] == "maritaca/01_capital"
    assert (
        sum(bool(c["choices"] and c["choices"][0]["delta"].get("content")) for c in got[:-1]) == 50
    )


def test_html_fault(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("maritaca", fault="html") + "/chat/completions"
    r = client.post(url, json=chat("capital", stream=True))
    assert r.status_code == 502 and r.headers["content-type"].startswith("text/html")
    assert "<html>" in r.text


def test_stall_stream_times_out_and_shutdown_is_fast(data_dir: Path) -> None:
    srv = ProviderServer(data_dir=data_dir).start()
    try:
        url = srv.base_url("magisterium", fault="stall", after=1) + "/chat/completions"
        lines: list[str] = []
        started = time.monotonic()
        with (
            httpx.Client(headers=AUTH, timeout=httpx.Timeout(5, read=0.3)) as c,
            pytest.raises(httpx.ReadTimeout),
            c.stream("POST", url, json=chat("grace", stream=True)) as r,
        ):
            lines.extend(r.iter_lines())
        assert time.monotonic() - started < 2
        assert sum(line.startswith("data: {") for line in lines) == 1
    finally:
        started = time.monotonic()
        srv.stop()
        assert time.monotonic() - started < 1.5


def test_stall_before_headers_does_not_block_shutdown(data_dir: Path) -> None:
    srv = ProviderServer(data_dir=data_dir).start()
    url = srv.base_url("gptbots", fault="stall", stall=60) + "/v1/conversation"
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url, json={"user_id": "u"}, headers=AUTH, timeout=0.3)
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            httpx.post(url, json={"user_id": "u"}, headers=AUTH, timeout=30)
        except httpx.HTTPError as exc:
            errors.append(exc)

    waiter = threading.Thread(target=hold)
    waiter.start()
    while len(srv.requests) < 2:
        time.sleep(0.01)
    started = time.monotonic()
    srv.stop()
    assert time.monotonic() - started < 1.5
    waiter.join(5)
    assert not waiter.is_alive() and errors


def test_delay_paces_events(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("maritaca", delay=0.05) + "/chat/completions"
    started = time.monotonic()
    arrivals: list[float] = []
    with client.stream("POST", url, json=chat("capital", stream=True)) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                arrivals.append(time.monotonic() - started)
    assert len(arrivals) == 4 and arrivals[-1] - arrivals[0] >= 0.14


def test_chunks_synthesize_long_streams_quickly(srv: ProviderServer, client: httpx.Client) -> None:
    url = srv.base_url("magisterium", chunks=20000) + "/chat/completions"
    started = time.monotonic()
    asked = chat("What is grace?", stream=True, return_related_questions=True)
    body = client.post(url, json=asked).content
    got = events(body)
    assert time.monotonic() - started < 15  # generous: a guard against pathologically slow writes
    assert got[-1] == "[DONE]"
    content = [c for c in got[:-1] if c["choices"][0]["delta"].get("content")]
    assert len(content) == 20000
    last = got[-2]
    assert last["choices"][0]["finish_reason"] == "stop" and last["citations"]
    assert last["related_questions"] == ["What is sin?"]
    assert last["citekit_sample"] == "magisterium/01_grace"
    whole = client.post(url, json=chat("grace")).json()
    assert whole["choices"][0]["message"]["content"] == chunk_text(got[:-1])


def test_concurrent_requests_overlap(srv: ProviderServer) -> None:
    url = srv.base_url("maritaca", latency=0.2)
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    started = time.monotonic()
    with httpx.Client(headers=AUTH, limits=limits, timeout=10) as c, ThreadPoolExecutor(32) as pool:
        codes = list(
            pool.map(lambda _: c.post(url + "/chat/completions", json=chat("q")), range(32))
        )
    elapsed = time.monotonic() - started
    assert [r.status_code for r in codes] == [200] * 32
    assert elapsed < 32 * 0.2, elapsed  # not one after the other
    assert srv.max_concurrent >= 16 and srv.scenario(url).max_concurrent >= 16


def test_latency_is_the_whole_answer_time(srv: ProviderServer, client: httpx.Client) -> None:
    """A reply leaves ``latency`` seconds after its request arrived (made meanwhile), never
    earlier, whatever it is: an answer, a stream, an authentication failure."""
    url = srv.base_url("magisterium", latency=0.3)
    for headers, stream in ((AUTH, False), (AUTH, True), ({"Authorization": "Bearer x"}, False)):
        started = time.monotonic()
        reply = client.post(
            url + "/chat/completions", json=chat("grace", stream=stream), headers=headers
        )
        elapsed = time.monotonic() - started
        assert reply.status_code in (200, 401)
        assert 0.3 <= elapsed < 1.5, elapsed


def test_a_server_stopped_during_the_latency_sends_nothing(data_dir: Path) -> None:
    with serve(data_dir) as srv:
        url = srv.base_url("magisterium", latency=5.0)
        threading.Timer(0.2, srv.stop).start()
        started = time.monotonic()
        with pytest.raises(httpx.TransportError), httpx.Client(headers=AUTH, timeout=10) as c:
            c.post(url + "/chat/completions", json=chat("grace"))
        assert time.monotonic() - started < 2.5


def test_openai_sdk_reads_both_shapes(srv: ProviderServer) -> None:
    openai = pytest.importorskip("openai")
    sdk = openai.OpenAI(api_key="k", base_url=srv.base_url("maritaca"), max_retries=0)
    whole = sdk.chat.completions.create(
        model="sabia-4", messages=[{"role": "user", "content": "capital"}]
    )
    assert whole.choices[0].message.content == "A capital é Brasília."
    stream = sdk.chat.completions.create(
        model="sabia-4",
        messages=[{"role": "user", "content": "capital"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "A capital é Brasília."
    )
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 15


def test_serve_alias_and_missing_dir(data_dir: Path, tmp_path: Path, client: httpx.Client) -> None:
    with serve(data_dir, latency=0.0) as srv:
        assert client.get(srv.base_url("maritaca") + "/models").status_code == 200
    with pytest.raises(FileNotFoundError):
        ProviderServer(data_dir=tmp_path / "absent")


def test_default_data_dir_follows_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("CITEKIT_SAMPLE_DATA", str(data_dir))
    assert default_data_dir() == data_dir
    monkeypatch.delenv("CITEKIT_SAMPLE_DATA")
    assert default_data_dir().name in ("sample_data", "_sample_data")


def test_command_line_serves_until_interrupted(data_dir: Path) -> None:
    env = {**os.environ, "CITEKIT_SAMPLE_DATA": str(data_dir), "PYTHONUNBUFFERED": "1"}
    cwd = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "citekit.testing", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        url = next(w for w in lines[2].split() if w.startswith("http"))
        assert url.endswith("/maritaca/api")
        assert httpx.get(url + "/models", headers=AUTH).json() == MODELS
        proc.send_signal(signal.SIGINT)
        assert proc.wait(5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- the project's own samples ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> Iterator[ProviderServer]:
    with ProviderServer() as server:
        yield server


@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
def test_real_chat_samples_replay_exactly(real: ProviderServer, provider: Any) -> None:
    samples = real.samples(provider)
    if not samples:
        pytest.skip(f"no {provider} samples in sample_data yet")
    url = real.base_url(provider) + "/chat/completions"
    with httpx.Client(headers=AUTH, timeout=10) as c:
        for sample in samples:
            body = {
                **(sample.request or {"model": "m"}),
                "messages": [{"role": "user", "content": sample.question}],
                "return_related_questions": True,
            }
            assert c.post(url, json=body).json() == sample.response, sample.name
            if sample.sse is None:
                continue
            streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
            assert c.post(url, json=streamed).content == sample.sse, sample.name


def test_real_gptbots_samples(real: ProviderServer) -> None:
    samples = real.samples("gptbots")
    if not samples:
        pytest.skip("no gptbots samples in sample_data yet")
    base = real.base_url("gptbots")
    sse_base = real.base_url("gptbots", framing="sse")
    with httpx.Client(headers=AUTH, timeout=10) as c:
        for sample in samples:
            cid = c.post(f"{base}/v1/conversation", json={"user_id": "u"}).json()["conversation_id"]
            send = {
                "conversation_id": cid,
                "response_mode": "blocking",
                "messages": [{"role": "user", "content": sample.question}],
            }
            if "citations" in sample.response:  # recorded with corner citations
                send["conversation_config"] = {"corner_citation": True}
            reply = c.post(f"{base}/v2/conversation/message", json=send).json()
            assert reply == {**sample.response, "conversation_id": cid}, sample.name
            send["response_mode"] = "streaming"
            for url, recorded in ((base, sample.lines), (sse_base, sample.sse)):
                assert recorded is not None, sample.name
                got = c.post(f"{url}/v2/conversation/message", json=send).content
                if sample.conversation_id:
                    recorded = recorded.replace(sample.conversation_id.encode(), cid.encode())
                assert got == recorded, sample.name
            if sample.correlate is not None and sample.message_id:
                params = {"message_id": sample.message_id}
                found = c.get(f"{base}/v1/correlate/dataset", params=params).json()
                assert found["correlate_dataset"] == sample.correlate["correlate_dataset"]


def test_real_streams_without_optional_parts(real: ProviderServer) -> None:
    """Without ``return_related_questions`` / ``include_usage`` the streams lose those parts and
    keep the sample label on their last chunk."""
    checked = 0
    with httpx.Client(headers=AUTH, timeout=10) as c:
        for provider in ("magisterium", "maritaca"):
            url = real.base_url(provider) + "/chat/completions"
            for sample in real.samples(provider):  # type: ignore[arg-type]
                request = sample.request or {}
                if any(request.get(t) for t in ("web_search", "data_ocean", "code_execution")):
                    continue  # Maritaca's built-in tools need stream: false: no stream to check
                body = {"model": "m", "messages": [{"role": "user", "content": sample.question}]}
                got = events(c.post(url, json={**body, "stream": True}).content)
                chunks = [e for e in got if isinstance(e, dict)]
                assert got[-1] == "[DONE]" and chunks, sample.name
                assert all("related_questions" not in e for e in chunks), sample.name
                assert all(e["choices"] for e in chunks), sample.name
                assert chunks[-1]["citekit_sample"] == sample.label, sample.name
                checked += 1
    if not checked:
        pytest.skip("no chat samples in sample_data yet")


# -- Maritaca's Responses API ------------------------------------------------------------------
_DOCUMENTED_ORDER = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


@pytest.mark.parametrize("path", ["/api/v1/responses", "/api/responses"])
def test_responses_are_answered_blocking_and_streamed(server: ProviderServer, path: str) -> None:
    url = server.url + "/maritaca" + path
    auth = {"Authorization": "Bearer k"}
    body = {"model": "sabia-4", "input": "O que é o Pix?"}
    reply = httpx.post(url, json=body, headers=auth).json()
    assert reply["object"] == "response" and reply["status"] == "completed"
    assert reply["output"][0]["type"] == "message" and reply["usage"]["input_tokens"] > 0
    streamed = httpx.post(url, json={**body, "stream": True}, headers=auth)
    frames = [f for f in streamed.text.split("\n\n") if f.strip()]
    assert "[DONE]" not in streamed.text
    events = []
    for frame in frames:
        event_line, data_line = frame.split("\n")
        event = json.loads(data_line.removeprefix("data: "))
        assert event_line == f"event: {event['type']}"
        events.append(event)
    assert [e["sequence_number"] for e in events] == list(range(1, len(events) + 1))
    kinds = [e["type"] for e in events]
    collapsed = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert collapsed == _DOCUMENTED_ORDER
    assert events[-1]["response"]["output"] == reply["output"]


def test_an_artifact_comes_before_the_message(server: ProviderServer) -> None:
    url = server.url + "/maritaca/api/v1/responses"
    question = "Execute código: faça um gráfico de barras da população das regiões do Brasil."
    body = {"model": "sabia-4", "input": question, "tools": [{"type": "code_interpreter"}]}
    reply = httpx.post(url, json=body, headers={"Authorization": "Bearer k"}).json()
    kinds = [item["type"] for item in reply["output"]]
    assert kinds[0] == "code_execution_artifact" and kinds[-1] == "message"
    assert reply["usage"]["tool_execution_details"]
    refused = httpx.post(url, json={**body, "stream": True}, headers={"Authorization": "Bearer k"})
    assert refused.status_code == 400 and "stream" in refused.text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"input": "oi"}, "'model' is required"),
        ({"model": "sabia-4", "input": []}, "'input'"),
        ({"model": "sabia-4", "input": "oi", "metadata": {str(i): "v" for i in range(17)}}, "16"),
        ({"model": "sabia-4", "input": "oi", "text": {"format": {"type": "json_schema"}}}, "name"),
    ],
)
def test_a_bad_responses_request_is_a_400(
    server: ProviderServer, body: dict[str, Any], why: str
) -> None:
    url = server.url + "/maritaca/api/v1/responses"
    reply = httpx.post(url, json=body, headers={"Authorization": "Bearer k"})
    assert reply.status_code == 400 and why in reply.json()["detail"]
