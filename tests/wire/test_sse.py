"""The SSE decoder, on bytes: every chunking of a stream gives the same events."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.sse import SSEDecoder
from tests.budget import examples
from tests.conftest import SAMPLES


def decode(raw: bytes, cuts: list[int], max_line: int | None = None) -> list[bytes]:
    decoder = SSEDecoder() if max_line is None else SSEDecoder(max_line)
    out: list[bytes] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(raw[start:cut])
        start = cut
    out += decoder.feed(raw[start:])
    return out + decoder.flush()


RAW = (
    b": keep-alive\r\n\r\n"
    b'data: {"a":\r\n'
    b"data: 1}\r\n\r\n"
    b"\n\n"
    b"event: message\nid: 7\nretry: 100\n"
    b'data: {"b": 2}\n\n'
    b'data:{"c": 3}\r\r'
    b"data: [DONE]\n\n"
)
EXPECTED = [b'{"a":\n1}', b'{"b": 2}', b'{"c": 3}', b"[DONE]"]


def test_whole_buffer() -> None:
    assert decode(RAW, []) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(RAW)), max_size=30))
@settings(max_examples=examples(300))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert decode(RAW, cuts) == EXPECTED


#: The longest line of RAW: a cap of exactly this much reads it all, one less refuses it.
LONGEST = max(len(line) for line in RAW.replace(b"\r", b"\n").split(b"\n"))


@given(st.lists(st.integers(min_value=0, max_value=len(RAW)), max_size=30))
@settings(max_examples=examples(200))
def test_any_chunking_under_a_line_cap(cuts: list[int]) -> None:
    assert decode(RAW, cuts, max_line=LONGEST) == EXPECTED
    with pytest.raises(ck.ResponseTooLargeError, match="max_line_bytes="):
        decode(RAW, cuts, max_line=LONGEST - 1)


def test_event_and_id_fields_are_read() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"event: delta\nid: 42\ndata: x\n\n")
    assert (decoder.event, decoder.last_event_id) == ("delta", "42")


def test_last_event_without_blank_line_is_flushed() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: one\n\ndata: two") == [b"one"]
    assert decoder.flush() == [b"two"]


def test_comment_only_stream_has_no_events() -> None:
    assert decode(b": ping\n\n: ping\n\n", [3, 9]) == []


def test_crlf_split_between_reads_is_one_line_end() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\n\r\n", [8, 9, 10]) == [b"a", b"b"]


def test_recorded_streams_decode_to_json_events() -> None:
    import json

    files = sorted(SAMPLES.glob("*/*.sse"))
    for path in files:
        raw = path.read_bytes()
        events = decode(raw, list(range(0, len(raw), 97)))
        assert events, path
        for data in events:
            if data != b"[DONE]":
                json.loads(data)


#: Lines a stream is made of: one-line events (the fast path), and everything that is not.
_LINES = st.sampled_from(
    [
        b'data: {"a": 1}',
        b"data: [DONE]",
        b"data: x",
        b"data:  two spaces",
        b"data:",
        b"data: ",
        b"data:no space",
        b": keep-alive",
        b"event: message",
        b"id: 7",
        b"retry: 100",
        b"",
        b"",
        b"",
        b"dat",
        b" data: indented",
    ]
)


@given(
    lines=st.lists(_LINES, max_size=30),
    ends=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=8),
)
@settings(max_examples=examples(500))
def test_whole_reads_decode_as_byte_by_byte(
    lines: list[bytes], ends: bytes, cuts: list[int]
) -> None:
    # A read of whole one-line events is cut at its blank lines at once; a stream fed one byte
    # at a time is read line by line: the two agree on every stream, however it is cut.
    raw = ends.join(lines) + ends
    one_by_one = SSEDecoder()
    expected: list[bytes] = []
    for i in range(len(raw)):
        expected += one_by_one.feed(raw[i : i + 1])
    expected += one_by_one.flush()
    assert decode(raw, []) == expected
    assert decode(raw, [c for c in cuts if c <= len(raw)]) == expected
