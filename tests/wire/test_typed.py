"""Typed decoding (msgspec) against the general reader (``json`` + the dict checks): the same
events, the same answer and the same error for any bytes a stream or a body holds."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.gptbots import GPTBotsAccumulator, StreamDecoder, check_body
from citekit.wire.openai_compat import ChatAccumulator
from citekit.wire.parsers import get_spec
from citekit.wire.response import Wire
from citekit.wire.typed import decode_body, decode_chunk, decode_text_event
from tests.budget import examples
from tests.guarantees.test_hostile_parsers import (
    CHAT,
    CHAT_STREAMS,
    GB,
    GB_STREAMS,
    JSON,
    mutated,
    mutated_stream,
)

PROPERTY = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class _Head:
    status_code = 200
    headers = {"content-type": "text/event-stream"}  # noqa: RUF012


def _encoded(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


# -- bytes that msgspec and json may read differently ----------------------------------------
_NUMBER = re.compile(rb"(?<![\w.\"])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_ODD_NUMBERS = [
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"-0",
    b"-0.0",
    b"1" + b"0" * 30,
    b"1" + b"0" * 5000,
    b"1.5",
    b"2.0",
    b"true",
    b"null",
    b'"3"',
    b"01",
]
_ODD_TEXT = [b"\\ud800", b"\\udfff", b"\\u0000", b"\\u00e9", b"\xff", b"\xc3", b"\\n", b"\\\\"]


def _tweaks(data: bytes) -> st.SearchStrategy[bytes]:
    """``data`` with one piece changed where decoders may part ways."""
    numbers = [m.span() for m in _NUMBER.finditer(data)]
    quotes = [i for i, byte in enumerate(data) if byte == ord('"')]
    braces = [i for i, byte in enumerate(data) if byte == ord("{")]
    options: list[st.SearchStrategy[bytes]] = [
        st.sampled_from([b" ", b"\t", b" \t "]).map(lambda pad: pad + data + pad),
        st.just(data + b"x"),
        st.just(data[: len(data) // 2]),
    ]
    if numbers:
        options.append(
            st.tuples(st.sampled_from(numbers), st.sampled_from(_ODD_NUMBERS)).map(
                lambda sn: data[: sn[0][0]] + sn[1] + data[sn[0][1] :]
            )
        )
    if quotes:
        options.append(
            st.tuples(st.sampled_from(quotes), st.sampled_from(_ODD_TEXT)).map(
                lambda qt: data[: qt[0] + 1] + qt[1] + data[qt[0] + 1 :]
            )
        )
    if braces:
        # A key given twice: the last one counts, in json as in msgspec.
        options.append(
            st.tuples(
                st.sampled_from(braces),
                st.sampled_from(['"index":0,', '"id":5,', '"code":3,', '"model":null,', '"x":1,']),
            ).map(lambda bk: data[: bk[0] + 1] + bk[1].encode() + data[bk[0] + 1 :])
        )
        options.append(
            st.tuples(
                st.sampled_from([i for i, byte in enumerate(data) if byte == ord("}")]),
                st.sampled_from(
                    [',"index":"1"', ',"id":7', ',"code":11', ',"data":{}', ',"id":null']
                ),
            ).map(lambda bk: data[: bk[0]] + bk[1].encode() + data[bk[0] :])
        )
    return st.one_of(options)


def _payloads(streams: list[list[Any]]) -> st.SearchStrategy[list[bytes]]:
    """Event payloads: a recorded stream (one event changed, or one event's bytes tweaked),
    or arbitrary JSON values."""
    recorded = (
        st.sampled_from(streams).flatmap(mutated_stream).map(lambda es: [_encoded(e) for e in es])
    )

    def tweak_one(payloads: list[bytes]) -> st.SearchStrategy[list[bytes]]:
        return st.integers(0, len(payloads) - 1).flatmap(
            lambda i: _tweaks(payloads[i]).map(lambda p: [*payloads[:i], p, *payloads[i + 1 :]])
        )

    tweaked = st.sampled_from(streams).map(lambda es: [_encoded(e) for e in es]).flatmap(tweak_one)
    arbitrary = st.lists(JSON.map(_encoded), max_size=6)
    return st.one_of(recorded, tweaked, arbitrary).map(
        # An SSE ``data`` line holds no line break; a stream's ``[DONE]`` ends it.
        lambda ps: [p.replace(b"\r", b" ").replace(b"\n", b" ") for p in ps]
    )


# -- one stream, read both ways ---------------------------------------------------------------
def _outcome(value: Any) -> Any:
    """What a user can see of an answer (or an error), field by field and in order: NaN
    equal to itself, ``raw``'s keys in their order."""
    if isinstance(value, BaseException):
        return (type(value).__name__, str(value))
    return json.dumps(dataclasses.asdict(value), default=repr)


def _read(
    make: Callable[[], Any], payloads: list[bytes], *, typed: bool, gptbots: bool = False
) -> tuple[Any, ...]:
    """Feed ``payloads`` to a fresh accumulator through the stream reader, with its typed
    routes (event by event, and a read at once) or without: the events handed on, the error,
    and the answer (partial or not)."""
    acc = make()
    wire = Wire("gptbots" if gptbots else "magisterium", check_body=check_body if gptbots else None)
    reader = wire.events(
        _Head(),
        acc.feed,
        StreamDecoder if gptbots else None,
        acc.feed_json if typed else None,
        getattr(acc, "feed_plain", None) if typed else None,
    )
    events: list[Any] = []
    error: Any = None
    body = b"".join(b"data: " + p + b"\n\n" for p in payloads)
    try:
        for start in range(0, len(body), 997):  # several reads, cut anywhere
            if reader.done:
                break
            events += reader.read(body[start : start + 997])
        if not reader.done:
            events += reader.read(None)
        reader.finish()
    except ck.CitekitError as exc:
        error = exc
    answers = []
    for partial in (True, False):
        try:
            answers.append(_outcome(acc.answer(partial=partial)))
        except Exception as exc:  # whatever the general way raises, the typed way must too
            answers.append(_outcome(exc))
    return events, _outcome(error) if error is not None else None, acc.finished, answers


def _agree(make: Callable[[], Any], payloads: list[bytes], *, gptbots: bool = False) -> None:
    typed = _read(make, payloads, typed=True, gptbots=gptbots)
    general = _read(make, payloads, typed=False, gptbots=gptbots)
    assert typed == general


@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
@PROPERTY
@given(data=st.data())
def test_chat_streams_read_typed_as_in_general(provider: str, data: st.DataObject) -> None:
    payloads = data.draw(_payloads([events for _, events in CHAT_STREAMS[provider]]))
    _agree(lambda: ChatAccumulator(provider=provider), payloads)
    # Maritaca's accumulator picks chat chunks or Responses events by the first event.
    _agree(lambda: get_spec(provider).new_accumulator(question="q"), payloads)


@PROPERTY
@given(data=st.data())
def test_gptbots_streams_read_typed_as_in_general(data: st.DataObject) -> None:
    payloads = data.draw(_payloads([events for _, events in GB_STREAMS]))
    _agree(GPTBotsAccumulator, payloads, gptbots=True)


@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
def test_every_recorded_stream_reads_typed_as_in_general(provider: str) -> None:
    for _, events in CHAT_STREAMS[provider]:
        _agree(lambda: ChatAccumulator(provider=provider), [_encoded(e) for e in events])


def test_every_recorded_gptbots_stream_reads_typed_as_in_general() -> None:
    for _, events in GB_STREAMS:
        _agree(GPTBotsAccumulator, [_encoded(e) for e in events], gptbots=True)


def test_the_usual_chunks_take_the_typed_route() -> None:
    # The route must be taken, or it buys nothing: every chunk but the first (which sets the
    # order of raw's fields) and the last (citations, usage: fields kept in raw) goes typed.
    for provider in ("magisterium", "maritaca"):
        for stem, events in CHAT_STREAMS[provider]:
            acc = ChatAccumulator(provider=provider)
            typed = 0
            for event in events:
                if acc.feed_json(_encoded(event)) is None:
                    acc.feed(event)
                else:
                    typed += 1
            if not any("tool_calls" in json.dumps(e) for e in events):
                assert typed >= len(events) - 3, (stem, typed, len(events))
    for stem, events in GB_STREAMS:
        texts = [e for e in events if e.get("code") == 3]
        acc = GPTBotsAccumulator()
        taken = sum(acc.feed_json(_encoded(e)) is not None for e in texts)
        assert taken == len(texts), stem


def test_reads_of_plain_chunks_are_read_at_once() -> None:
    # The route of whole reads must be taken too: in reads of 4 KiB, the reads between the
    # first (whose first event sets raw's order) and the last (the finish reason, citations,
    # usage) are read at once, with the events and the answer of the general way.
    for provider in ("magisterium", "maritaca"):
        for stem, events in CHAT_STREAMS[provider]:
            payloads = [_encoded(e) for e in events]
            acc = ChatAccumulator(provider=provider)
            at_once: list[bytes] = []

            def plain(
                datas: list[bytes], acc: ChatAccumulator = acc, at_once: list[bytes] = at_once
            ) -> Any:
                out = acc.feed_plain(datas)
                if out is not None:
                    at_once.extend(datas)
                return out

            reader = Wire(provider).events(_Head(), acc.feed, None, acc.feed_json, plain)
            body = b"".join(b"data: " + p + b"\n\n" for p in payloads)
            got = []
            for start in range(0, len(body), 4096):
                got += reader.read(body[start : start + 4096])
            got += reader.read(None)
            if len(body) > 5 * 4096 and not any(b"tool_calls" in p for p in payloads):
                assert len(at_once) >= len(events) // 2, stem
            general = _read(lambda p=provider: ChatAccumulator(provider=p), payloads, typed=False)
            assert got == general[0]
            assert _outcome(acc.answer()) == general[3][1]


def test_a_refused_chunk_reads_nothing() -> None:
    acc = ChatAccumulator(provider="magisterium")
    first = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    acc.feed({**first, "choices": [{"index": 0, "delta": {"content": "A"}}]})
    before = acc.answer(partial=True)
    refused = [
        {**first, "citations": [], "choices": [{"index": 0, "delta": {"content": "B"}}]},
        {**first, "choices": [{"index": -1, "delta": {"content": "B"}}]},
        {**first, "choices": [{"index": 0, "delta": {"content": [{"text": "B"}]}}]},
        {**first, "choices": [{"index": 0, "delta": {"tool_calls": []}}]},
        {**first, "created": 1.5, "choices": []},
        {**first, "system_fingerprint": "fp", "choices": []},  # a field raw has not had yet
        {**first, "error": None},
    ]
    for chunk in refused:
        assert acc.feed_json(_encoded(chunk)) is None, chunk
    assert acc.feed_json(b'{"id": NaN}') is None
    assert acc.feed_json(b'{"model": "m\xff"}') is None
    for chunk in refused:  # nor are they read with plain chunks around them
        plain = {**first, "choices": [{"index": 0, "delta": {"content": "C"}}]}
        assert acc.feed_plain([_encoded(plain), _encoded(chunk), _encoded(plain)]) is None
    assert _outcome(acc.answer(partial=True)) == _outcome(before)
    assert acc.feed_json(_encoded({**first, "choices": [{"delta": {"content": "B"}}]})) == [
        ck.TextDelta("B", 0)
    ]
    assert acc.answer(partial=True).text == "AB"


def test_decoders_refuse_what_is_not_their_shape() -> None:
    assert decode_chunk(b'{"choices": [], "usage": {"total_tokens": 3}}') is None
    assert decode_chunk(b'{"choices": [{"index": true}]}') is None
    assert decode_chunk(b"[1]") is None
    assert decode_text_event(b'{"code": 3, "data": {"x": 1}}') is None
    assert decode_text_event(b'{"code": "3", "data": "x"}') is None
    event = decode_text_event(b'{"code": 3, "message": "Text", "data": "x"}')
    assert event is not None and (event.code, event.data) == (3, "x")


# -- bodies ---------------------------------------------------------------------------------
def _same_json(a: Any, b: Any) -> bool:
    # ``==`` takes 1 for 1.0, 0.0 for -0.0 and ignores key order; the JSON text does not.
    return json.dumps(a) == json.dumps(b)


def _body_agrees(body: bytes) -> None:
    value = decode_body(body)
    if value is None:
        return  # refused: the caller reads it with json, as before
    expected = json.loads(body.decode(json.detect_encoding(body), "replace"))
    assert _same_json(value, expected)


@PROPERTY
@given(data=st.data())
def test_bodies_decode_as_json_reads_them(data: st.DataObject) -> None:
    bodies = [b for _, b in CHAT["magisterium"] + CHAT["maritaca"]] + [r["message"] for _, r in GB]
    value = data.draw(st.one_of(JSON, st.sampled_from(bodies).flatmap(mutated)))
    body = _encoded(value)
    _body_agrees(body)
    _body_agrees(data.draw(_tweaks(body)))


def test_bodies_msgspec_refuses_fall_back_to_json() -> None:
    wire = Wire("magisterium")
    head = _Head()
    odd = wire.decode_json(head, b'{"a": NaN, "b": 1e400}')
    assert math.isnan(odd["a"]) and odd["b"] == math.inf
    assert wire.decode_json(head, b'{"a": "\\ud800"}') == {"a": "\ud800"}
    assert wire.decode_json(head, b'{"a": "\xff"}') == {"a": "\ufffd"}
    assert wire.decode_json(head, b"\xef\xbb\xbf{}") == {}
    assert wire.decode_json(head, '{"a": 1}'.encode("utf-16")) == {"a": 1}
    assert wire.decode_json(head, b"null") is None
    with pytest.raises(ck.ResponseFormatError, match="not JSON"):
        wire.decode_json(head, b"{")
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ck.ResponseFormatError, match="nested too deep"):
        wire.decode_json(head, deep)
