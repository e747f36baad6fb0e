"""The key never appears, whatever the server sends back.

A hostile server (a real HTTP server on 127.0.0.1, below: the loopback provider server speaks
the protocols correctly, this one echoes the key wherever a reply can carry it) puts the
client's key, in one of the spellings an echo takes, into a non-JSON body, an error message,
the ``x-request-id`` header, an HTML error page, a stream event, an in-band error, a choice or
delta, the answer's text, a citation, a knowledge reference. Whatever the call ends with, the
key is in no ``str``/``repr``/traceback of the error, no field of the answer, no byte of the
answer log, no exported file, no log record, no warning and no output of ``citekit ask``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import html
import io
import itertools
import json
import logging
import os
import string
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.cli.main import main as cli_main
from citekit.core.secrets import (
    MASK,
    WHOLE_TOKEN_BELOW,
    TextScrub,
    check_key,
    echo_forms,
    scrub,
    scrub_error,
    scrub_value,
    scrubber,
)
from citekit.data.io.exports import answer_json
from citekit.model import first_text
from citekit.store import Log
from citekit.wire.guard import guarded
from tests.budget import examples
from tests.conftest import sample_records

SETTINGS = settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# -- keys and the spellings of an echo -------------------------------------------------------------
#: Characters real keys use, and a few that change under JSON, URL and HTML encoding.
KEY_CHARS = string.ascii_letters + string.digits + "-_.~+/=" + "\"\\<>&%'"
keys = st.text(KEY_CHARS, min_size=16, max_size=48).map(lambda k: "sk-" + k)


def _all_u(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


#: How a hostile server may spell the key it echoes.
ENCODINGS: dict[str, Callable[[str], str]] = {
    "raw": lambda k: k,
    "json": lambda k: json.dumps(k)[1:-1],
    "json-php": lambda k: json.dumps(k)[1:-1].replace("/", "\\/"),
    "json-every-char": _all_u,
    "url": lambda k: quote(k, safe=""),
    "url-plus": lambda k: quote_plus(k, safe=""),
    "url-lower-hex": lambda k: quote(k, safe="").lower(),
    "html": html.escape,
    "upper": str.upper,
    "lower": str.lower,
    "repr": lambda k: repr(k)[1:-1],
}
encodings = st.sampled_from(sorted(ENCODINGS))


def assert_no_key(key: str, *texts: str) -> None:
    """No spelling of ``key`` (any letter case) in any of ``texts``."""
    forms = {f.casefold() for f in echo_forms(key)} | {
        e(key).casefold() for e in ENCODINGS.values()
    }
    for text in texts:
        folded = text.casefold()
        for form in forms:
            assert form not in folded, f"the key ({form!r}) leaked into {text[:300]!r}"


# -- the scrubber itself ---------------------------------------------------------------------------
@SETTINGS
@given(key=keys, encoding=encodings, before=st.text(max_size=40), after=st.text(max_size=40))
def test_every_spelling_is_scrubbed(key: str, encoding: str, before: str, after: str) -> None:
    text = before + ENCODINGS[encoding](key) + after
    assert_no_key(key, scrub(text, [key]))


@SETTINGS
@given(
    key=st.one_of(keys, st.text(string.ascii_letters + "-_", min_size=1, max_size=7)),
    text=st.text(string.ascii_letters + " -_k\"'", max_size=60),
    cuts=st.lists(st.integers(0, 80), max_size=8),
)
def test_streamed_text_is_scrubbed_as_the_whole_text(key: str, text: str, cuts: list[int]) -> None:
    # Text cut anywhere (a key split over two or three deltas) comes out as the whole text
    # scrubbed at once: nothing held back is lost, nothing shown early is a piece of a key.
    text = f"{text[: len(text) // 2]}{key}{text[len(text) // 2 :]}"
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    stream = TextScrub(scrubber([key]))
    shown = [stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds)]
    shown.append(stream.flush().get(0, ""))
    assert "".join(shown) == scrub(text, [key])
    if len(key) >= WHOLE_TOKEN_BELOW:
        for piece in shown:
            assert_no_key(key, piece)


@settings(max_examples=examples(300), deadline=None)
@given(
    key=st.one_of(keys, st.text(string.ascii_letters + "-_", min_size=1, max_size=7)),
    text=st.text(string.ascii_letters + " -_k\"'", max_size=60),
    cuts=st.lists(st.integers(0, 80), max_size=12),
    reads=st.lists(st.integers(0, 12), max_size=4),
)
def test_a_guarded_stream_shows_the_whole_text_scrubbed(
    key: str, text: str, cuts: list[int], reads: list[int]
) -> None:
    """Through the guard every call leaves by: deltas cut anywhere, grouped into reads
    anyhow (a read's deltas are scrubbed as one piece), come out as the whole text scrubbed
    at once, and no delta shown holds the key; the text a read carries for the live display
    (``first_text``) is that of its deltas."""
    text = f"{text[: len(text) // 2]}{key}{text[len(text) // 2 :]}"
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    deltas = [ck.TextDelta(text[a:b], 0) for a, b in itertools.pairwise(bounds)]
    edges = sorted({min(r, len(deltas)) for r in reads} | {0, len(deltas)})
    batches = [deltas[a:b] for a, b in itertools.pairwise(edges)]

    def flow() -> Any:
        yield from batches
        return ck.Answer(provider="magisterium", text=text)

    guarded_flow = guarded(flow(), [key])
    shown: list[str] = []
    try:
        while True:
            read = next(guarded_flow)
            shown += [e.text for e in read]
            assert first_text(read) == "".join(e.text for e in read)
    except StopIteration as stop:
        final = stop.value
    assert "".join(shown) == scrub(text, [key]) == final.text
    if len(key) >= WHOLE_TOKEN_BELOW:
        for piece in shown:
            assert_no_key(key, piece)


def test_short_keys_are_scrubbed_as_whole_tokens_only() -> None:
    # A key of 1-7 characters cannot be told from text: it is replaced where it stands alone
    # (as a JSON value, a header value, after "Bearer"), never inside a word.
    assert scrub('{"key": "k", "text": "kilometre k-means"}', ["k"]) == (
        '{"key": "***", "text": "kilometre k-means"}'
    )
    assert scrub("Bearer abc was refused", ["abc"]) == "Bearer *** was refused"
    assert scrub("abcdef", ["abc"]) == "abcdef"


@SETTINGS
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    ),
    key=keys,
    encoding=encodings,
)
def test_json_values_are_scrubbed_keys_and_values(value: Any, key: str, encoding: str) -> None:
    echo = ENCODINGS[encoding](key)
    hostile = {"echo": echo, echo: [value, {"deep": f"x{echo}x"}], "value": value}
    assert_no_key(key, json.dumps(scrub_value(hostile, [key]), ensure_ascii=False))
    assert scrub_value(value, [key]) == value or value != value  # nan: not equal to itself


@pytest.mark.slow
@pytest.mark.parametrize("depth", [10, 5_000, 100_000])
def test_json_nested_deeper_than_recursion_goes_is_scrubbed(depth: int) -> None:
    """A body nested as deep as ``json.loads`` takes (its limit is not Python's recursion
    limit) is walked without recursion: the key at the bottom is found, nothing else moves,
    and a value holding no key comes back as the very same object."""
    key = "sk-deep-key-1234"
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["n"] = [{}]
        node = node["n"][0]
    node["echo"] = f"say {key}"
    clean = scrub_value(root, [key])
    bottom = clean
    for _ in range(depth):
        bottom = bottom["n"][0]
    assert bottom == {"echo": "say ***"}
    node["echo"] = "nothing secret"
    assert scrub_value(root, [key]) is root


#: What ``re``'s IGNORECASE takes for a letter besides its other case (str.casefold differs on
#: the i's: the dotted capital I folds to "i" and a combining dot, the dotless i to itself).
SAME_LETTER = {"i": "iI\u0130\u0131", "k": "kK\u212a", "s": "sS\u017f"}


@SETTINGS
@given(
    key=st.text("iksIKS" + string.digits, min_size=12, max_size=24).map(lambda k: "sk-" + k),
    encoding=encodings,
    data=st.data(),
    before=st.text(max_size=40),
    after=st.text(max_size=40),
)
def test_long_text_is_scrubbed_as_the_full_pattern_would(
    key: str, encoding: str, data: st.DataObject, before: str, after: str
) -> None:
    """Long texts are first searched for the forms by substring (fast); the result is the full
    pattern's whatever letters the echo is spelled with, re's other i's, k's and s's too."""
    echo = "".join(
        data.draw(st.sampled_from(SAME_LETTER.get(c.lower(), c + c.swapcase())))
        for c in ENCODINGS[encoding](key)
    )
    text = f"{before}{echo}{after}" + " " * 300  # long enough for the substring search
    clean = scrubber([key])
    assert clean._pattern is not None
    assert clean(text) == clean._pattern.sub(MASK, text)


def test_an_exception_chain_is_scrubbed_in_place() -> None:
    key = "sk-live-0123456789abcdef"
    try:
        try:
            raise ValueError(f"low level: {key}")
        except ValueError as exc:
            raise ck.ServerError(
                f"echo {key}", provider="maritaca", status=500, request_id=key, code=key
            ) from exc
    except ck.ServerError as exc:
        error = exc
    error.add_note(f"note {key}")
    assert scrub_error(error, [key]) is error
    assert_no_key(key, str(error), repr(error), "".join(traceback.format_exception(error)))
    assert error.request_id == "***" and error.status == 500


# -- a bad key or base URL is refused, without being repeated ------------------------------------
@SETTINGS
@given(
    good=st.text(string.ascii_letters + string.digits, min_size=8, max_size=30),
    bad=st.characters(blacklist_categories=("Cs",)).filter(lambda c: not " " <= c <= "~"),
    at=st.integers(1, 29),
    provider=st.sampled_from(["magisterium", "maritaca", "gptbots"]),
)
def test_a_key_with_a_character_no_header_can_carry_is_refused(
    good: str, bad: str, at: int, provider: str
) -> None:
    key = good[:at] + bad + good[at:]
    if not key.strip() or key.strip() == key.strip().strip(bad):
        key = good[:1] + bad + good[1:]
    with pytest.raises(ck.ConfigurationError) as info:
        ck.client(provider, api_key=key, base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    message = str(info.value)
    assert "position" in message and f"U+{ord(bad):04X}" in message
    assert key not in message and good not in message


def test_a_newline_in_a_key_is_named_not_sent() -> None:
    # httpx would raise h11's "Illegal header value" with the whole header in its message.
    with pytest.raises(ck.ConfigurationError, match=r"control character \(U\+000A\) at position 9"):
        ck.Maritaca(api_key="sk-first\nsecond-line")
    assert check_key("  sk-padded-key\n", provider="Maritaca", env="X") == "sk-padded-key"


@pytest.mark.parametrize("provider", ["magisterium", "maritaca", "gptbots"])
@pytest.mark.parametrize(
    "url",
    [
        "https://user:tok3n-s3cret@api.example.com/v1",
        "https://tok3n-s3cret@api.example.com/v1",
        "http://user:tok3n-s3cret@127.0.0.1:8000/api",
        "ftp://user:tok3n-s3cret@api.example.com/",
    ],
)
def test_credentials_in_the_base_url_are_refused_unrepeated(
    provider: str, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ck.ConfigurationError, match="user name or password") as info:
        ck.client(provider, api_key="sk-test-key-123", base_url=url)  # type: ignore[arg-type]
    assert "tok3n" not in str(info.value) and "tok3n" not in repr(info.value)
    monkeypatch.setenv(f"{provider.upper()}_BASE_URL", url)
    with pytest.raises(ck.ConfigurationError, match=f"{provider.upper()}_BASE_URL") as info:
        ck.client(provider, api_key="sk-test-key-123")  # type: ignore[arg-type]
    assert "tok3n" not in str(info.value)


# -- the hostile server ----------------------------------------------------------------------------
Reply = tuple[int, dict[str, str], bytes]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _reply(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        path = urlsplit(self.path).path
        routes: dict[str, Reply] = self.server.routes  # type: ignore[attr-defined]
        status, headers, body = next(
            (reply for suffix, reply in routes.items() if path.endswith(suffix)),
            (404, {"content-type": "application/json"}, b'{"error": {"message": "no route"}}'),
        )
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    do_GET = _reply
    do_POST = _reply


@pytest.fixture(scope="module")
def hostile() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.routes = {}  # type: ignore[attr-defined]
    # One connection pool for every example: making an httpx client (its TLS context) costs
    # more than the call it makes.
    server.http = httpx.Client()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.http.close()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


def _url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/h"


JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}


def _sse(events: list[Any]) -> bytes:
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        out.append(f"data: {data}\n\n")
    return "".join(out).encode()


def _chat_record(provider: str) -> dict[str, Any]:
    return copy.deepcopy(sample_records(provider)[0][1]["response"])


def _chunk(text: str, *, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-h",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
    }


def chat_routes(place: str, echo: str, pad: int) -> tuple[dict[str, Reply], bool]:
    """Routes for a chat provider that echo ``echo`` at ``place``; and whether to stream."""
    route = "/chat/completions"
    if place == "body-not-json":
        return {route: (200, JSON, ("x" * pad + echo + " <not json").encode())}, False
    if place == "error-message":
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {echo}"}})
        return {route: (401, JSON, body.encode())}, False
    if place == "error-text":
        return {route: (400, {"content-type": "text/plain"}, ("y" * pad + echo).encode())}, False
    if place == "request-id":
        headers = {**JSON, "x-request-id": echo, "retry-after": "0"}
        return {route: (429, headers, b'{"message": "Too many requests"}')}, False
    if place == "html-page":
        page = f"<html><head><title>Bad gateway {echo}</title></head><body>{echo}</body></html>"
        return {route: (502, {"content-type": "text/html"}, page.encode())}, False
    if place == "event-not-json":
        return {route: (200, SSE, _sse([_chunk("Hello "), "z" * pad + echo]))}, True
    if place == "in-band-error":
        error = {"error": {"message": f"stream failed for {echo}", "code": echo}}
        return {route: (200, SSE, _sse([_chunk("Hello "), error]))}, True
    if place == "bad-choice":
        return {route: (200, SSE, _sse([_chunk("Hello "), {"choices": [echo]}]))}, True
    if place == "bad-delta":
        event = {"choices": [{"index": 0, "delta": echo}]}
        return {route: (200, SSE, _sse([_chunk("Hello "), event]))}, True
    if place == "stream-text":
        third = max(1, len(echo) // 3)
        parts = [echo[:third], echo[third : 2 * third], echo[2 * third :]]
        events = [_chunk("Your key "), *(_chunk(p) for p in parts), _chunk(" ok", finish="stop")]
        return {route: (200, SSE, _sse([*events, "[DONE]"]))}, True
    response = _chat_record("magisterium")
    response["choices"][0]["message"]["content"] += f" Your key: {echo}."
    response["id"] = echo
    citation = response["citations"][0]
    citation.update(document_title=echo, cited_text=f"cited {echo}", document_author=echo)
    citation["source_url"] = f"https://example.com/{echo}"
    response["related_questions"] = [f"Is {echo} your key?"]
    return {route: (200, JSON, json.dumps(response).encode())}, False


CHAT_PLACES = [
    "body-not-json",
    "error-message",
    "error-text",
    "request-id",
    "html-page",
    "event-not-json",
    "in-band-error",
    "bad-choice",
    "bad-delta",
    "stream-text",
    "answer-fields",
]


def gptbots_routes(place: str, echo: str, pad: int) -> tuple[dict[str, Reply], bool]:
    record = copy.deepcopy(sample_records("gptbots")[0][1])
    conversation: Reply = (200, JSON, json.dumps({"conversation_id": "c1"}).encode())
    message: Reply = (200, JSON, json.dumps(record["message"]).encode())
    correlate: Reply = (200, JSON, json.dumps(record["correlate"]).encode())
    stream = False
    if place == "conversation-request-id":
        conversation = (401, {**JSON, "x-request-id": echo}, b'{"code": 40127, "message": "no"}')
    elif place == "in-band-error":
        message = (200, JSON, json.dumps({"code": 40000, "message": f"bad {echo}"}).encode())
    elif place == "message-not-json":
        message = (200, JSON, ("w" * pad + echo).encode())
    elif place == "message-text":
        record["message"]["output"][0]["content"]["text"] += f" {echo}"
        record["message"]["message_id"] = echo
        message = (200, JSON, json.dumps(record["message"]).encode())
    elif place == "references":
        for item in record["correlate"]["correlate_dataset"]:
            item["content"] = f"{item.get('content', '')} {echo}"
            item["dataName"] = echo
        correlate = (200, JSON, json.dumps(record["correlate"]).encode())
    elif place == "references-error":
        correlate = (500, JSON, json.dumps({"code": 50000, "message": echo}).encode())
    elif place == "stream-line-not-json":
        lines = Path(__file__).resolve().parents[2] / "sample_data/gptbots/01_great_wall_why.jsonl"
        first, *rest = lines.read_bytes().splitlines(keepends=True)
        body = first + ("v" * pad + echo + "\n").encode() + b"".join(rest)
        message = (200, {"content-type": "application/x-ndjson"}, body)
        stream = True
    elif place == "stream-error-line":
        lines = Path(__file__).resolve().parents[2] / "sample_data/gptbots/01_great_wall_why.jsonl"
        first, *rest = lines.read_bytes().splitlines(keepends=True)
        error = json.dumps({"code": 40000, "message": f"bad {echo}"}).encode() + b"\n"
        message = (200, {"content-type": "application/x-ndjson"}, first + error + b"".join(rest))
        stream = True
    routes = {
        "/v1/conversation": conversation,
        "/v2/conversation/message": message,
        "/v1/correlate/dataset": correlate,
    }
    return routes, stream


GPTBOTS_PLACES = [
    "conversation-request-id",
    "in-band-error",
    "message-not-json",
    "message-text",
    "references",
    "references-error",
    "stream-line-not-json",
    "stream-error-line",
]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(self.format(record))


@contextlib.contextmanager
def watching() -> Iterator[tuple[_Records, list[warnings.WarningMessage]]]:
    """The log records and warnings citekit gives meanwhile."""
    handler = _Records()
    logger = logging.getLogger("citekit")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield handler, caught
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def everything_shown(outcome: Any, folder: Path) -> list[str]:
    """Every text a user can see or find on disk after a call that ended with ``outcome``."""
    texts: list[str] = []
    answer = outcome
    if isinstance(outcome, BaseException):
        texts += ["".join(traceback.format_exception(outcome)), repr(outcome)]
        seen = outcome.__cause__ or outcome.__context__
        while seen is not None:
            texts += [repr(seen), str(seen)]
            seen = seen.__cause__ or seen.__context__
        answer = getattr(outcome, "answer", None)
    if isinstance(answer, ck.Answer):
        texts += [repr(answer), answer.text, json.dumps(answer_json(answer), default=str)]
        texts += [repr(c) for c in answer.citations] + [repr(answer.references)]
        texts += [answer.to_markdown(), answer.to_html()]
        for name in ("a.json", "a.md", "a.html"):
            texts.append(ck.export_answer(answer, folder / name).read_text(encoding="utf-8"))
        if answer.citations or answer.references:
            for name in ("c.csv", "c.bib", "c.json"):
                path = ck.export_citations(answer, folder / name, include_samples=True)
                texts.append(path.read_text(encoding="utf-8"))
    return texts


@contextlib.contextmanager
def fresh_home() -> Iterator[Path]:
    """A ``CITEKIT_HOME`` of its own (the answer log in it), for one example."""
    before = os.environ.get("CITEKIT_HOME")
    with tempfile.TemporaryDirectory() as home:
        os.environ["CITEKIT_HOME"] = home
        try:
            yield Path(home)
        finally:
            ck.log.close()
            if before is None:
                del os.environ["CITEKIT_HOME"]
            else:
                os.environ["CITEKIT_HOME"] = before


def log_bytes() -> str:
    """Every byte of the answer log's files (the database and its journal)."""
    path = Path(ck.log.path)
    ck.log.close()
    assert path.exists(), "the call was not logged"
    blob = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    return blob.decode("utf-8", "replace")


def run_call(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ck.CitekitError as exc:
        return exc


# -- every provider, every place, every spelling -------------------------------------------------
@SETTINGS
@given(
    key=keys,
    encoding=encodings,
    provider=st.sampled_from(["magisterium", "maritaca"]),
    place=st.sampled_from(CHAT_PLACES),
    pad=st.integers(0, 520),
    stream=st.booleans(),
)
def test_chat_providers_never_show_an_echoed_key(
    hostile: ThreadingHTTPServer,
    key: str,
    encoding: str,
    provider: str,
    place: str,
    pad: int,
    stream: bool,
) -> None:
    echo = ENCODINGS[encoding](key)
    routes, streams = chat_routes(place, echo, pad)
    hostile.routes = routes  # type: ignore[attr-defined]
    client = ck.client(
        provider,  # type: ignore[arg-type]
        api_key=key,
        base_url=_url(hostile),
        max_retries=1,
        http_client=hostile.http,  # type: ignore[attr-defined]
    )
    streaming = stream or streams
    with watching() as (records, caught), fresh_home() as folder:
        if streaming:
            deltas: list[str] = []

            def consume() -> Any:
                with client.stream(client_question()) as events:
                    for event in events:
                        if isinstance(event, ck.TextDelta):
                            deltas.append(event.text)
                return events.answer

            outcome = run_call(consume)
            texts = ["".join(deltas), *deltas]
        else:
            outcome = run_call(lambda: client.ask(client_question(), display=False))
            texts = []
        texts += [*everything_shown(outcome, folder), log_bytes()]
    texts += records.texts + [str(w.message) for w in caught] + [repr(client)]
    assert_no_key(key, *texts)


def client_question() -> str:
    return "What is the dignity of work?"


@SETTINGS
@given(
    key=keys,
    encoding=encodings,
    place=st.sampled_from(GPTBOTS_PLACES),
    pad=st.integers(0, 260),
    stream=st.booleans(),
    run_async=st.booleans(),
)
def test_gptbots_never_shows_an_echoed_key(
    hostile: ThreadingHTTPServer,
    key: str,
    encoding: str,
    place: str,
    pad: int,
    stream: bool,
    run_async: bool,
) -> None:
    echo = ENCODINGS[encoding](key)
    routes, streams = gptbots_routes(place, echo, pad)
    hostile.routes = routes  # type: ignore[attr-defined]
    question = "Why was the Great Wall built?"
    client = ck.GPTBots(
        api_key=key,
        base_url=_url(hostile),
        max_retries=0,
        http_client=hostile.http,  # type: ignore[attr-defined]
    )
    streaming = stream or streams

    async def ask_async() -> ck.Answer:
        async with httpx.AsyncClient(verify=False) as http:
            other = ck.GPTBots(api_key=key, base_url=_url(hostile), async_http_client=http)
            return await other.aask(question, stream=streaming, display=False)

    with watching() as (records, caught), fresh_home() as folder:
        if run_async:
            outcome = run_call(lambda: asyncio.run(ask_async()))
        else:
            outcome = run_call(lambda: client.ask(question, stream=streaming, display=False))
        texts = [*everything_shown(outcome, folder), log_bytes()]
    texts += records.texts + [str(w.message) for w in caught] + [repr(client)]
    assert_no_key(key, *texts)


# -- the command line ------------------------------------------------------------------------------
@pytest.mark.parametrize("place", ["answer-fields", "error-message", "request-id", "stream-text"])
@pytest.mark.parametrize("json_output", [True, False])
def test_citekit_ask_never_prints_an_echoed_key(
    hostile: ThreadingHTTPServer,
    place: str,
    json_output: bool,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    key = "sk-cli-ECHOED/key+0123456789"
    for encoding in ("raw", "json-every-char"):
        routes, _ = chat_routes(place, ENCODINGS[encoding](key), 0)
        hostile.routes = routes  # type: ignore[attr-defined]
        monkeypatch.setenv("MAGISTERIUM_API_KEY", key)
        argv = ["ask", "What is work?", "--provider", "magisterium", "--base-url", _url(hostile)]
        argv += ["--json"] if json_output else ["--html", str(tmp_path / "a.html")]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli_main(argv)
        files = [p.read_text(encoding="utf-8") for p in tmp_path.glob("*.html")]
        assert_no_key(key, out.getvalue(), err.getvalue(), *files)
        if place == "answer-fields" and json_output:
            assert json.loads(out.getvalue())["response"]["choices"]


# -- search results and the model list -----------------------------------------------------------
@pytest.mark.parametrize("encoding", ["raw", "json-every-char", "url", "html"])
def test_search_results_and_models_never_show_an_echoed_key(
    hostile: ThreadingHTTPServer, encoding: str
) -> None:
    key = "sk-search-ECHO/key+0123456789"
    echo = ENCODINGS[encoding](key)
    results = {"results": [{"title": echo, "url": f"https://x.example/{echo}", "text": echo}]}
    models = {"data": [{"id": echo, "owned_by": echo, "name": echo}]}
    hostile.routes = {  # type: ignore[attr-defined]
        "/search": (200, JSON, json.dumps(results).encode()),
        "/models": (200, JSON, json.dumps(models).encode()),
    }
    http = hostile.http  # type: ignore[attr-defined]
    found = ck.Magisterium(api_key=key, base_url=_url(hostile), http_client=http).search("q")
    listed = ck.Maritaca(api_key=key, base_url=_url(hostile), http_client=http).models()
    bundle = found._repr_mimebundle_()
    assert_no_key(key, repr(found), str(found.frame()), *map(str, bundle.values()), repr(listed))
    assert found[0].title == "***" and listed[0].id == "***"


# -- the log, given an answer directly -----------------------------------------------------------
@pytest.mark.parametrize("key", ["sk-log-ECHO/key+0123456789", "abc"])
def test_the_log_file_holds_no_key_in_any_table(key: str, tmp_path: Path) -> None:
    # Citations and knowledge references have tables of their own; a short key (whole
    # token) is taken out of them as a long one is (anywhere).
    record = copy.deepcopy(sample_records("gptbots")[0][1])
    for item in record["correlate"]["correlate_dataset"]:
        item["content"] = f"chunk {json.dumps(key)[1:-1]} end"
        item["dataName"] = key
    record["message"]["output"][0]["content"]["text"] += f" {key}"
    answer = ck.parse_response(record["message"], provider="gptbots")
    references = ck.References.from_response(record["correlate"])
    magisterium = _chat_record("magisterium")
    magisterium["citations"][0].update(document_title=key, source_url=f"https://x.example/{key}")
    store = Log(tmp_path / "log.sqlite3")
    store.record(dataclasses.replace(answer, references=references), secrets=[key])
    store.record(ck.parse_response(magisterium, provider="magisterium"), secrets=[key])
    store.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("log.sqlite3*")).decode(
        "utf-8", "replace"
    )
    if len(key) >= WHOLE_TOKEN_BELOW:
        assert_no_key(key, blob)
    else:
        assert f" {key}" not in blob and f'"{key}"' not in blob and f"/{key}" not in blob
    rows = store.rows()
    assert all(key not in str(row.get("text")).split() for row in rows)
