"""GPTBots stream framing: bare JSON lines (every official example) and SSE ``data:`` lines."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.gptbots import GPTBotsAccumulator, StreamDecoder
from tests.budget import examples
from tests.conftest import SAMPLES, SECRET, sample_records, sample_stream

GB = sample_records("gptbots")


def sample_lines(stem: str) -> bytes:
    return (SAMPLES / "gptbots" / f"{stem}.jsonl").read_bytes()


def answer_of(chunks: list[bytes], question: str) -> ck.Answer:
    """What the client makes of a stream arriving in these reads."""
    decoder = StreamDecoder()
    acc = GPTBotsAccumulator(question=question)
    for chunk in chunks:
        for data in decoder.feed(chunk):
            acc.feed(json.loads(data))
    for data in decoder.flush():
        acc.feed(json.loads(data))
    assert acc.finished
    return acc.answer()


def cut(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


@pytest.mark.parametrize(("stem", "rec"), GB, ids=[s for s, _ in GB])
def test_both_framings_of_a_sample_give_one_answer(
    server: ProviderServer, stem: str, rec: dict[str, Any]
) -> None:
    question = rec["question"]
    lines = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
    sse = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots", framing="sse"))
    kwargs: dict[str, Any] = {"stream": True, "display": False, "references": False}
    kwargs["citations"] = "citations" in rec["message"]
    a, b = lines.ask(question, **kwargs), sse.ask(question, **kwargs)
    assert a.text and a.text == b.text
    assert (a.id, a.outputs, a.citations, a.thoughts, a.usage) == (
        b.id,
        b.outputs,
        b.citations,
        b.thoughts,
        b.usage,
    )
    assert answer_of([sample_lines(stem)], question) == answer_of(
        [sample_stream("gptbots", stem)], question
    )


def test_the_server_sends_bare_json_lines_by_default(server: ProviderServer) -> None:
    gb = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
    with gb.stream(GB[0][1]["question"], references=False) as s:
        text = "".join(s.text_deltas())
    assert s.answer is not None and s.answer.text == text and text
    assert not s.answer.partial


@settings(max_examples=examples(60), deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(GB) - 1),
    cuts=st.lists(st.integers(min_value=0, max_value=10**6), max_size=40),
)
def test_any_chunking_of_either_framing_gives_the_same_answer(index: int, cuts: list[int]) -> None:
    stem, rec = GB[index]
    question = rec["question"]
    lines, sse = sample_lines(stem), sample_stream("gptbots", stem)
    whole = answer_of([lines], question)
    assert answer_of(cut(lines, cuts), question) == whole
    assert answer_of(cut(sse, cuts), question) == whole
    # A byte order mark and CRLF line ends do not change the framing or the answer.
    crlf = b"\xef\xbb\xbf" + lines.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    assert answer_of(cut(crlf, cuts), question) == whole


@pytest.mark.parametrize(
    ("body", "framing"),
    [
        (b'\n\n{"code":0}\n', "lines"),
        (b"  [1]\n", "lines"),
        (b"data: {}\n\n", "sse"),
        (b": keep-alive\n\ndata: {}\n\n", "sse"),
        (b"event: message\ndata: {}\n\n", "sse"),
    ],
)
def test_framing_is_read_from_the_first_non_blank_bytes(body: bytes, framing: str) -> None:
    decoder = StreamDecoder()
    got = [d for b in body for d in decoder.feed(bytes([b]))] + decoder.flush()
    assert decoder.framing == framing
    assert [json.loads(d) for d in got]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=10))
def test_arbitrary_bytes_never_crash_the_decoder(chunks: list[bytes]) -> None:
    decoder = StreamDecoder()
    out = [d for c in chunks for d in decoder.feed(c)] + decoder.flush()
    assert all(isinstance(d, bytes) and d.strip() for d in out)


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json", ""])
def test_bare_json_lines_under_any_content_type(content_type: str) -> None:
    events = [
        {"code": 11, "message": "MessageInfo", "data": {"message_id": "m1"}},
        {"code": 3, "message": "Text", "data": "I"},
        {"code": 3, "message": "Text", "data": " can"},
        {"code": 0, "message": "End", "data": None},
    ]
    body = b"".join(json.dumps(e).encode() + b"\n" for e in events)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/v1/conversation"):
            return httpx.Response(200, json={"conversation_id": "c1"})
        return httpx.Response(200, content=body, headers={"content-type": content_type})

    gb = ck.GPTBots(api_key="k", base_url="http://gb.test", transport=httpx.MockTransport(handler))
    answer = gb.ask("Why?", stream=True, display=False, references=False)
    assert answer.text == "I can" and answer.id == "m1" and not answer.partial


# providers.md, "Two events on one line": the zh_CN voice example prints FlowOutput and Cost
# with no line break between them.
JOINED_LINE = (
    b'{"code":10,"message":"FlowOutput","data":[{"content":" Audio:https://example.com/example.wav,'
    b'Transcript:(Hello! How can I assist you today?)","branch":null,'
    b'"from_component_name":"AI Model-1"}],"componentId":12}'
    b'{"code":4,"message":"Cost","data":{"prompt_tokens":12,"completion_tokens":9}}\n'
    b'{"code":0,"message":"End","data":null}\n'
)


def test_the_documented_joined_line_is_two_events() -> None:
    decoder = StreamDecoder()
    codes = [json.loads(d)["code"] for d in decoder.feed(JOINED_LINE) + decoder.flush()]
    assert codes == [10, 4, 0]
    acc = GPTBotsAccumulator(question="Hello")
    for data in StreamDecoder().feed(b'{"code":11,"data":{"message_id":"m1"}}\n' + JOINED_LINE):
        acc.feed(json.loads(data))
    answer = acc.answer()
    assert acc.finished and answer.usage is not None and answer.usage.completion_tokens == 9


_text = st.text(st.sampled_from('ab}{[] "\\\n\t:,'), max_size=8)
_event = st.fixed_dictionaries(
    {"code": st.integers(0, 100), "message": _text},
    optional={"data": st.one_of(st.none(), _text, st.lists(st.dictionaries(_text, _text)))},
)


@settings(max_examples=examples(200), deadline=None)
@given(
    events=st.lists(_event, min_size=1, max_size=8),
    breaks=st.lists(st.sampled_from(["", " ", "\n", "\r\n", "\n\n", "\t"]), min_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=10**4), max_size=10),
    sse=st.booleans(),
)
def test_events_joined_on_lines_in_any_way_decode_to_the_same_events(
    events: list[dict[str, Any]], breaks: list[str], cuts: list[int], sse: bool
) -> None:
    # Events on one line or many, with or without blanks between them, in either framing.
    body = "".join(json.dumps(e, ensure_ascii=False) + breaks[i] for i, e in enumerate(events))
    if sse:
        body = "".join(f"data: {line}\n\n" for line in body.splitlines() if line.strip())
    decoder = StreamDecoder()
    out = [d for c in cut(body.encode(), cuts) for d in decoder.feed(c)] + decoder.flush()
    assert [json.loads(d) for d in out] == events


def test_the_joined_line_through_the_client_keeps_cost_and_end() -> None:
    info = b'{"code":11,"message":"MessageInfo","data":{"message_id":"m1"}}\n'
    audio = b'{"code":39,"message":"Audio","data":{"audioAnswer":"","transcript":"Hello!"}}\n'

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/v1/conversation"):
            return httpx.Response(200, json={"conversation_id": "c1"})
        return httpx.Response(200, content=info + audio + JOINED_LINE)

    gb = ck.GPTBots(api_key="k", base_url="http://gb.test", transport=httpx.MockTransport(handler))
    answer = gb.ask("Hello", stream=True, display=False, references=False)
    assert not answer.partial and answer.text == "Hello!"
    assert answer.usage is not None and answer.usage.prompt_tokens == 12
    assert answer.outputs[0].name == "AI Model-1"
