"""Bad input gets a citekit error, never a raw Python one (issue 11, parsers).

Every parser entry point is fed (a) arbitrary JSON values and (b) real samples with one subtree
replaced by an arbitrary JSON value. Each either returns what it promises, whose every consumer
works (HTML, Markdown, text, frames, the answer log written and read back), or raises
``ResponseFormatError`` (``StreamInterrupted`` carrying a usable ``.answer`` for streams).
Nothing else.
"""

from __future__ import annotations

import http.server
import json
import math
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.data.io.exports import export_answer
from citekit.model import References
from citekit.store import Log, LogWarning
from citekit.wire.errors import error_message
from citekit.wire.flow import interrupted
from citekit.wire.gptbots import (
    GPTBotsAccumulator,
    check_body,
    classify,
    parse_message,
    parse_messages,
    parse_vector_match,
)
from citekit.wire.maritaca_responses import ResponsesAccumulator, parse_responses
from citekit.wire.openai_compat import ChatAccumulator, parse_chat_completion
from citekit.wire.search import parse_search
from tests.conftest import SAMPLES, sample_records

# -- arbitrary JSON -------------------------------------------------------------------------
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 10**30, 1.5, -0.0, "0", "1", "zero", "", "3"]),
    st.text(max_size=20),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.text(max_size=8),
                st.sampled_from(
                    ["index", "content", "text", "model", "id", "data", "code", "choices"]
                ),
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


# -- the samples, and one subtree of them replaced ------------------------------------------
def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    out = list(value)
    out[head] = _replaced(value[head], rest, new)
    return out


#: Field names the parsers read: added where a sample lacks them, with arbitrary values.
KNOWN_KEYS = [
    "id", "model", "created", "index", "finish_reason", "role", "content", "tool_calls",
    "function", "arguments", "name", "type", "annotations", "url_citation", "start_index",
    "end_index", "usage", "tool_execution_details", "citations", "document_index",
    "document_year", "related_questions", "generated_files", "content_base64", "filename",
    "message_id", "conversation_id", "create_time", "output", "data", "code", "message",
    "citation", "attachment", "url", "score", "correlate_dataset", "error", "thoughts",
    "next_question", "audio", "transcript", "delta", "choices", "results", "title", "year",
]  # fmt: skip


def _inserted(value: Any, path: tuple[Any, ...], key: str, new: Any) -> Any:
    target = value
    for step in path:
        target = target[step]
    if not isinstance(target, dict):
        return _replaced(value, path, new)
    return _replaced(value, path, {**target, key: new})


def mutated(body: Any) -> st.SearchStrategy[Any]:
    """``body`` with one subtree (any depth, the root included) replaced by arbitrary JSON,
    or a field the parsers read added to one of its objects."""
    paths = list(_paths(body))
    replace = st.tuples(st.sampled_from(paths), JSON).map(lambda pn: _replaced(body, *pn))
    insert = st.tuples(st.sampled_from(paths), st.sampled_from(KNOWN_KEYS), JSON).map(
        lambda pkn: _inserted(body, *pkn)
    )
    return st.one_of(replace, insert)


def _sse_events(raw: bytes) -> list[Any]:
    """The JSON events of a recorded SSE stream (the samples' own simple shape)."""
    events, lines = [], []
    for line in raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            data = "\n".join(lines)
            lines = []
            if data != "[DONE]":
                events.append(json.loads(data))
    return events


CHAT = {
    provider: [(stem, rec["response"]) for stem, rec in sample_records(provider)]
    for provider in ("magisterium", "maritaca")
}
CHAT_STREAMS = {
    provider: [
        (path.stem, _sse_events(path.read_bytes()))
        for path in sorted((SAMPLES / provider).glob("[0-9]*.sse"))
    ]
    for provider in ("magisterium", "maritaca")
}
GB = sample_records("gptbots")
GB_STREAMS = [
    (path.stem, [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()])
    for path in sorted((SAMPLES / "gptbots").glob("[0-9]*.jsonl"))
]
SEARCHES = [
    json.loads(p.read_text("utf-8"))["search_response"]
    for p in sorted((SAMPLES / "magisterium").glob("search_*.json"))
]


def one_of_samples(bodies: list[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(bodies).flatmap(mutated)


def mutated_stream(events: list[Any]) -> st.SearchStrategy[list[Any]]:
    """A recorded stream with one subtree of one event replaced (the whole event included)."""
    return st.integers(0, len(events) - 1).flatmap(
        lambda i: mutated(events[i]).map(lambda e: [*events[:i], e, *events[i + 1 :]])
    )


# -- what must hold of every answer that comes out ------------------------------------------
_LOG_DIR: list[Path] = []


def _log() -> Log:
    if not _LOG_DIR:
        import tempfile

        _LOG_DIR.append(Path(tempfile.mkdtemp(prefix="citekit-hostile-")))
    return Log(_LOG_DIR[0] / "log.sqlite3")


def usable(answer: ck.Answer) -> None:
    """Every consumer of an answer works on it, and the log gives it back."""
    assert isinstance(answer, ck.Answer)
    for value in (answer.model, answer.id, answer.finish_reason, answer.conversation_id):
        assert value is None or isinstance(value, str)
    assert isinstance(answer.text, str)
    answer.to_html()
    answer.to_html(strict=True)
    answer.to_markdown()
    str(answer)
    answer._repr_mimebundle_()
    ck.citations_frame([answer])
    ck.answers_frame([answer])
    if answer.references is not None:
        ck.references_frame([answer])
    folder = _log().path.parent
    for suffix in (".md", ".html", ".json"):
        export_answer(answer, folder / f"answer{suffix}")
    for suffix in (".csv", ".bib", ".json"):
        ck.export_citations(answer, folder / f"citations{suffix}", include_samples=True)
    log = _log()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LogWarning)
        row = log.record(answer, request={"messages": [{"role": "user", "content": "q"}]})
        assert row is not None
        back = log.get(row)
    assert back.text == answer.text
    assert back.citations == answer.citations


def blocking(parse: Callable[[], ck.Answer]) -> None:
    try:
        answer = parse()
    except ck.ResponseFormatError as exc:
        assert str(exc)
        return
    usable(answer)


def streamed(acc: Any, events: list[Any], provider: str) -> None:
    """Feed ``events`` as a stream does: an error keeps the partial answer."""
    try:
        for event in events:
            acc.feed(event)
    except ck.ResponseFormatError as exc:
        error = interrupted(provider, acc, exc)
        assert isinstance(error, ck.StreamInterrupted)
        assert error.answer.partial
        usable(error.answer)
        return
    try:
        answer = acc.answer(partial=not acc.finished)
    except ck.ResponseFormatError:
        return
    usable(answer)
    if answer.partial:
        return
    again = ck.parse_response(dict(answer.raw), provider=provider)
    assert again.text == answer.text


FAST = settings(
    max_examples=int(os.environ.get("CITEKIT_HOSTILE_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# -- blocking responses ---------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
@FAST
@given(data=st.data())
def test_chat_completion_any_json(provider: str, data: st.DataObject) -> None:
    body = data.draw(st.one_of(JSON, one_of_samples([b for _, b in CHAT[provider]])))
    blocking(lambda: parse_chat_completion(body, provider=provider))
    blocking(lambda: ck.parse_response(body, provider=provider))


def _responses_bodies() -> list[Any]:
    """The documented Responses bodies, and each Maritaca sample as the loopback server's
    Responses endpoint sends it."""
    from citekit.testing._responses import as_response
    from tests.wire.test_maritaca_responses import DOCUMENTED

    served = [
        as_response(body, {"model": "sabia-4"}, stem, text=_text(body))
        for stem, body in CHAT["maritaca"]
    ]
    return [*DOCUMENTED, *served]


def _text(body: dict[str, Any]) -> str:
    content = body["choices"][0]["message"].get("content")
    return content if isinstance(content, str) else ""


def _responses_streams() -> list[list[Any]]:
    from citekit.testing._responses import responses_stream
    from tests.wire.test_maritaca_responses import _stream

    served = [
        [s.payload() for s in responses_stream(body) if s.data is not None]
        for body in _responses_bodies()
        if body.get("object") == "response" and "citekit_sample" in body
    ]
    return [_stream(["O Pix ", "é ", "instantâneo."]), *served]


@pytest.mark.slow
@FAST
@given(body=st.one_of(JSON, one_of_samples(_responses_bodies())))
def test_maritaca_responses_any_json(body: Any) -> None:
    blocking(lambda: parse_responses(body))
    blocking(lambda: ck.parse_response(body, provider="maritaca"))


@pytest.mark.slow
@FAST
@given(
    events=st.one_of(
        st.lists(JSON, max_size=4),
        st.sampled_from(_responses_streams()).flatmap(mutated_stream),
    )
)
def test_maritaca_responses_stream_any_json(events: list[Any]) -> None:
    streamed(ResponsesAccumulator(), events, "maritaca")
    acc = ResponsesAccumulator()
    try:
        for event in events:
            acc.feed(event)
    except ck.ResponseFormatError:
        return
    if not acc.finished:  # a stream that ends early: the flow raises with the partial answer
        error = interrupted("maritaca", acc, ck.ResponseFormatError("ended early"))
        usable(error.answer)


@pytest.mark.slow
@FAST
@given(body=st.one_of(JSON, one_of_samples([rec["message"] for _, rec in GB])))
def test_gptbots_message_any_json(body: Any) -> None:
    blocking(lambda: parse_message(body))
    blocking(lambda: ck.parse_response(body, provider="gptbots"))


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_gptbots_references_any_json(data: st.DataObject) -> None:
    _, rec = data.draw(st.sampled_from(GB))
    correlate = data.draw(st.one_of(JSON, mutated(rec["correlate"])))
    try:
        refs = References.from_response(correlate, message_id="m1")
    except ck.ResponseFormatError:
        return
    answer = parse_message(rec["message"])
    from dataclasses import replace

    usable(replace(answer, references=refs))
    refs.to_html()
    refs.to_markdown()


# -- streams --------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
@FAST
@given(data=st.data())
def test_chat_stream_any_json(provider: str, data: st.DataObject) -> None:
    streams = [events for _, events in CHAT_STREAMS[provider]]
    events = data.draw(
        st.one_of(
            st.lists(JSON, max_size=4),
            st.sampled_from(streams).flatmap(mutated_stream),
        )
    )
    streamed(ChatAccumulator(provider=provider), events, provider)


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_gptbots_stream_any_json(data: st.DataObject) -> None:
    streams = [events for _, events in GB_STREAMS]
    events = data.draw(
        st.one_of(
            st.lists(JSON, max_size=4),
            st.sampled_from(streams).flatmap(mutated_stream),
        )
    )
    streamed(GPTBotsAccumulator(), events, "gptbots")


# -- search and error bodies ----------------------------------------------------------------
@FAST
@given(body=st.one_of(JSON, one_of_samples(SEARCHES)))
def test_search_any_json(body: Any) -> None:
    try:
        found = parse_search(body, query="q")
    except ck.ResponseFormatError:
        return
    found._repr_mimebundle_()
    found.frame()
    str(found)
    for item in found:
        assert item.score is None or math.isfinite(item.score)


# GPTBots' knowledge search and history (providers.md, "GPTBots: more endpoints").
VECTOR_MATCH = {
    "total": 1,
    "list": [{"content": "c", "data_id": "d", "document_name": "n", "score": 0.7}],
}
MESSAGES = [
    {
        "message_id": "q",
        "role": "user",
        "content": [{"branch_content": [{"type": "text", "text": "Q"}]}],
    },
    {
        "message_id": "a",
        "parent_message_id": "q",
        "create_time": 1694572952383,
        "role": "assistant",
        "content": [
            {"from_component_branch": "1", "branch_content": [{"type": "text", "text": "A"}]}
        ],
    },
]


@FAST
@given(body=st.one_of(JSON, mutated(VECTOR_MATCH)))
def test_gptbots_vector_match_any_json(body: Any) -> None:
    found = parse_vector_match(body, query="q")
    found._repr_mimebundle_()
    found.frame()
    assert all(i.score is None or math.isfinite(i.score) for i in found)


@FAST
@given(messages=st.one_of(st.lists(JSON, max_size=4), mutated(MESSAGES)))
def test_gptbots_history_any_json(messages: Any) -> None:
    try:
        answers = parse_messages(messages, conversation_id="c")
    except ck.ResponseFormatError:
        return
    for answer in answers:
        usable(answer)


@FAST
@given(body=JSON, status=st.sampled_from([200, 400, 401, 404, 429, 500, 503]))
def test_error_bodies_any_json(body: Any, status: int) -> None:
    raw = json.dumps(body).encode()
    parsed, message = error_message(raw, "application/json")
    assert isinstance(message, str)
    for err in (classify(status, parsed, message, None), check_body(body, None)):
        assert err is None or isinstance(err, ck.ProviderError)
        if err is not None:
            str(err)


# -- the cases, through the real clients ---------------------------------------------
class _Canned(http.server.BaseHTTPRequestHandler):
    """Answers every request with the server's one canned reply (status, type, body)."""

    server: _CannedServer

    def _reply(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        status, ctype, body = self.server.reply
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _CannedServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    reply: tuple[int, str, bytes] = (200, "application/json", b"{}")


@pytest.fixture(scope="module")
def canned() -> Iterator[_CannedServer]:
    srv = _CannedServer(("127.0.0.1", 0), _Canned)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _client(provider: str, srv: _CannedServer) -> Any:
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    return ck.client(provider, api_key="sk-test", base_url=url, max_retries=0)


def _ask(client: Any, *, stream: bool) -> ck.Answer:
    kwargs: dict[str, Any] = {"stream": stream, "display": False}
    if client.name == "gptbots":
        kwargs.update(conversation_id="c1", references=False)
    answer: ck.Answer = client.ask("q", **kwargs)
    return answer


async def _aask(client: Any, *, stream: bool) -> ck.Answer:
    kwargs: dict[str, Any] = {"stream": stream, "display": False}
    if client.name == "gptbots":
        kwargs.update(conversation_id="c1", references=False)
    answer: ck.Answer = await client.aask("q", **kwargs)
    return answer


DEEP = b"[" * 100_000 + b"]" * 100_000


def _sse(*events: Any) -> bytes:
    out = b""
    for event in events:
        data = event if isinstance(event, bytes) else json.dumps(event).encode()
        out += b"data: " + data + b"\n\n"
    return out + b"data: [DONE]\n\n"


def _chunk(**fields: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}
    choice.update(fields.pop("choice", {}))
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [choice],
        **fields,
    }


def _completion(index: Any = 0, **fields: Any) -> bytes:
    body = {
        "id": "c1",
        "model": "m",
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": "Hi"},
                "finish_reason": "stop",
            }
        ],
        **fields,
    }
    return json.dumps(body).encode()


BLOCKING_CASES = {
    # name: (provider, body, words the error must say)
    "nested 100k deep": ("magisterium", DEEP, "nested too deep"),
    "Infinity as an index": (
        "maritaca",
        _completion().replace(b'"index": 0', b'"index": Infinity'),
        "choices[0].index",
    ),
    "1e400 as an index": (
        "maritaca",
        _completion().replace(b'"index": 0', b'"index": 1e400'),
        "choices[0].index",
    ),
    "NaN as an index": (
        "magisterium",
        _completion().replace(b'"index": 0', b'"index": NaN'),
        "choices[0].index",
    ),
    "'zero' as an index": ("magisterium", _completion("zero"), "choices[0].index"),
    "model as an object": ("maritaca", _completion(model={"name": "m"}), "sent model as an object"),
    "id as an object": ("magisterium", _completion(id={"a": 1}), "sent id as an object"),
    "finish_reason as an object": (
        "maritaca",
        _completion().replace(b'"finish_reason": "stop"', b'"finish_reason": {"a": 1}'),
        "choices[0].finish_reason",
    ),
    "tool arguments as an object": (
        "maritaca",
        _completion().replace(
            b'"content": "Hi"',
            b'"content": null, "tool_calls": [{"id": "t", "type": "function",'
            b' "function": {"name": "f", "arguments": {"city": "x"}}}]',
        ),
        "function.arguments",
    ),
    "gptbots output: 5": (
        "gptbots",
        json.dumps({"message_id": "m1", "output": 5}).encode(),
        "output",
    ),
    "gptbots conversation_id as an array": (
        "gptbots",
        json.dumps({"message_id": "m1", "conversation_id": [], "output": []}).encode(),
        "conversation_id",
    ),
    "gptbots nested 100k deep": ("gptbots", DEEP, "nested too deep"),
}


@pytest.mark.parametrize("case", sorted(BLOCKING_CASES))
def test_a_bad_blocking_body_is_a_response_format_error(canned: _CannedServer, case: str) -> None:
    provider, body, words = BLOCKING_CASES[case]
    canned.reply = (200, "application/json", body)
    with pytest.raises(ck.ResponseFormatError) as caught:
        _ask(_client(provider, canned), stream=False)
    assert words in str(caught.value)
    assert "report it" in str(caught.value) or "Retry" in str(caught.value)


GOOD = _chunk()
STREAM_CASES = {
    "an event nested 100k deep": ("magisterium", _sse(GOOD, DEEP), "nested too deep"),
    "a list as a stream choice index": (
        "maritaca",
        _sse(GOOD, _chunk(choice={"index": [0]})),
        "choices[0].index",
    ),
    "Infinity as a stream choice index": (
        "magisterium",
        _sse(GOOD, json.dumps(_chunk(choice={"index": 7})).replace("7", "Infinity").encode()),
        "choices[0].index",
    ),
    "tool arguments as an object": (
        "maritaca",
        _sse(
            GOOD,
            _chunk(
                choice={
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "t",
                                "function": {"name": "f", "arguments": {"a": 1}},
                            }
                        ]
                    }
                }
            ),
        ),
        "function.arguments",
    ),
    "model as an object": ("magisterium", _sse(GOOD, _chunk(model={"a": 1})), "model"),
    "finish_reason as an object": (
        "maritaca",
        _sse(GOOD, _chunk(choice={"finish_reason": ["stop"]})),
        "finish_reason",
    ),
    "gptbots message info ids as objects": (
        "gptbots",
        b'{"code": 3, "message": "Text", "data": "Hello"}\n'
        b'{"code": 11, "message": "MessageInfo", "data": {"message_id": {"a": 1}}}\n',
        "message_id",
    ),
}


@pytest.mark.parametrize("case", sorted(STREAM_CASES))
def test_a_bad_stream_event_keeps_the_partial_answer(canned: _CannedServer, case: str) -> None:
    provider, body, words = STREAM_CASES[case]
    ctype = "application/x-ndjson" if provider == "gptbots" else "text/event-stream"
    canned.reply = (200, ctype, body)
    with pytest.raises(ck.StreamInterrupted) as caught:
        _ask(_client(provider, canned), stream=True)
    assert words in str(caught.value)
    partial = caught.value.answer
    assert partial.partial and partial.text == "Hello"
    usable(partial)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "case", ["a list as a stream choice index", "gptbots message info ids as objects"]
)
async def test_async_streams_keep_the_same_partial_answer(canned: _CannedServer, case: str) -> None:
    provider, body, words = STREAM_CASES[case]
    ctype = "application/x-ndjson" if provider == "gptbots" else "text/event-stream"
    canned.reply = (200, ctype, body)
    with pytest.raises(ck.StreamInterrupted) as caught:
        await _aask(_client(provider, canned), stream=True)
    assert words in str(caught.value)
    assert caught.value.answer.text == "Hello"


@pytest.mark.anyio
@pytest.mark.parametrize("case", ["'zero' as an index", "gptbots output: 5", "nested 100k deep"])
async def test_async_blocking_raises_the_same_error(canned: _CannedServer, case: str) -> None:
    provider, body, words = BLOCKING_CASES[case]
    canned.reply = (200, "application/json", body)
    with pytest.raises(ck.ResponseFormatError) as caught:
        await _aask(_client(provider, canned), stream=False)
    assert words in str(caught.value)


def test_a_search_body_nested_100k_deep(canned: _CannedServer) -> None:
    canned.reply = (200, "application/json", DEEP)
    with pytest.raises(ck.ResponseFormatError, match="nested too deep"):
        _client("magisterium", canned).search("work")


@pytest.mark.parametrize("provider", ["magisterium", "maritaca", "gptbots"])
def test_an_error_body_nested_100k_deep_is_still_the_status_error(
    canned: _CannedServer, provider: str
) -> None:
    canned.reply = (500, "application/json", DEEP)
    with pytest.raises(ck.ServerError):
        _ask(_client(provider, canned), stream=False)


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": {"nested": "object"}}, "message": 5},
        {"detail": [{"loc": ["body", {"x": 1}], "msg": ["not", "a", "string"]}]},
        {"code": 40127, "message": {"a": 1}},
    ],
)
def test_error_bodies_with_odd_values_say_something_readable(
    canned: _CannedServer, body: Any
) -> None:
    canned.reply = (401, "application/json", json.dumps(body).encode())
    with pytest.raises(ck.AuthenticationError) as caught:
        _ask(_client("gptbots", canned), stream=False)
    assert "{'" not in str(caught.value)  # no Python repr of a wire object in the message


@pytest.mark.parametrize("depth", [500, 900, 980, 995, 1200])
@pytest.mark.parametrize("stream", [False, True])
def test_deep_json_near_the_limit_reads_or_is_refused(
    canned: _CannedServer, depth: int, stream: bool
) -> None:
    # Near Python's recursion limit a body either reads (and is logged, rendered, framed)
    # or is a ResponseFormatError: never a RecursionError, wherever the limit falls.
    deep = "[" * depth + "]" * depth
    if stream:
        event = json.dumps(_chunk(choice={"finish_reason": "stop"}))[:-1] + f', "x": {deep}}}'
        canned.reply = (200, "text/event-stream", _sse(event.encode()))
    else:
        canned.reply = (200, "application/json", _completion()[:-1] + f', "x": {deep}}}'.encode())
    try:
        answer = _ask(_client("magisterium", canned), stream=stream)
    except (ck.ResponseFormatError, ck.StreamInterrupted):
        return
    usable(answer)


# -- the decoding points: bytes of a body or a stream ----------------------------------------
def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


EVENT_BYTES = st.one_of(
    st.binary(max_size=40),
    JSON.map(_json_bytes),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
    st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e400", b'{"index": 1e400}']),
)


@pytest.mark.slow
@FAST
@given(
    provider=st.sampled_from(["magisterium", "maritaca", "gptbots"]),
    events=st.lists(EVENT_BYTES, max_size=4),
    cuts=st.lists(st.integers(0, 10_000), max_size=4),
)
def test_stream_bytes_decode_to_events_or_a_citekit_error(
    provider: str, events: list[bytes], cuts: list[int]
) -> None:
    import httpx

    from citekit.wire.gptbots import StreamDecoder
    from citekit.wire.response import Wire

    if provider == "gptbots":
        wire = Wire(provider, check_body=check_body)
        acc: Any = GPTBotsAccumulator()
        body = b"".join(e.replace(b"\n", b" ") + b"\n" for e in events)
        decoder: Any = StreamDecoder
    else:
        wire, acc, decoder = Wire(provider), ChatAccumulator(provider=provider), None
        body = b"".join(b"data: " + e.replace(b"\n", b" ") + b"\n\n" for e in events)
    head = httpx.Response(200, headers={"content-type": "text/event-stream"})
    reader = wire.events(head, acc.feed, decoder)
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    try:
        for piece in [*pieces, None]:
            reader.read(piece)
            if reader.done:
                break
        reader.finish()
    except (ck.ResponseFormatError, ck.ProviderError):
        pass
    usable(acc.answer(partial=True))


@FAST
@given(
    body=st.one_of(EVENT_BYTES, JSON.map(_json_bytes)),
    status=st.sampled_from([400, 401, 402, 404, 422, 429, 500]),
    provider=st.sampled_from(["magisterium", "maritaca", "gptbots"]),
)
def test_error_replies_are_provider_errors_whatever_the_body(
    body: bytes, status: int, provider: str
) -> None:
    import httpx

    from citekit.wire.response import Wire

    wire = Wire(provider, classify=classify if provider == "gptbots" else None)
    head = httpx.Response(status, headers={"content-type": "application/json"})
    err = wire.error_for(head, body)
    assert isinstance(err, ck.ProviderError)
    assert str(err)


MODELS = json.loads((SAMPLES / "maritaca" / "models.json").read_text("utf-8"))


@FAST
@given(body=st.one_of(JSON, mutated(MODELS)))
def test_model_lists_any_json(body: Any) -> None:
    from citekit.providers.maritaca import parse_models

    try:
        models = parse_models(body)
    except ck.ResponseFormatError:
        return
    for model in models:
        assert isinstance(model.id, str)
        assert model.context_length is None or isinstance(model.context_length, int)


@pytest.mark.parametrize("cid", [{"id": "c"}, ["c"], 1.5, True])
def test_a_new_conversation_id_of_the_wrong_type(canned: _CannedServer, cid: Any) -> None:
    canned.reply = (200, "application/json", json.dumps({"conversation_id": cid}).encode())
    gb = _client("gptbots", canned)
    with pytest.raises(ck.ResponseFormatError, match="conversation_id"):
        gb.ask("q", display=False, references=False)
