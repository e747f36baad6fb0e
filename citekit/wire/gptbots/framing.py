"""GPTBots stream framing: bare JSON lines or server-sent events, decided per stream."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..sse import MAX_LINE_BYTES, LineBuffer, SSEDecoder

__all__ = ["StreamDecoder", "split_values"]

_BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r\n"
# Where one JSON object or array may end and the next begin: a line without this holds at most
# one event, so only a line with it is decoded here (a Text delta "}{" costs one decode).
_JOINED = re.compile(rb"[}\]][ \t]*[{\[]")
_DECODER = json.JSONDecoder()


def split_values(payload: bytes) -> list[bytes]:
    """The JSON values ``payload`` holds one after another, each as its own text.

    GPTBots' zh_CN voice example prints two events on one line
    (``..."componentId":12}{"code":4,"message":"Cost",...}``); ``json.JSONDecoder.raw_decode``
    in a loop reads both, as providers.md ("Two events on one line") suggests. A payload that
    is one value, or that is not JSON where a value should start, comes back as it is (the
    caller's decode then says what is wrong with it).
    """
    if _JOINED.search(payload) is None:
        return [payload]
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return [payload]
    values: list[bytes] = []
    start, end = 0, len(text)
    while True:
        while start < end and text[start] in " \t\r\n":
            start += 1
        if start == end:
            break
        try:
            _, stop = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            values.append(text[start:].encode("utf-8"))  # not JSON: the caller's error to raise
            break
        values.append(text[start:stop].encode("utf-8"))
        start = stop
    return values if len(values) > 1 else [payload]


class StreamDecoder:
    """GPTBots stream bytes in, the JSON text of each event out, in either framing.

    The documentation calls the stream SSE, but every official example (and clients written
    against the real service) shows bare JSON lines, ``{"code":3,"message":"Text","data":"I"}``
    one per line with no ``data: `` prefix. The framing is decided once per stream from its
    first non-blank bytes: ``{`` or ``[`` means JSON lines, anything else (``data:``, a
    ``:`` comment, ``event:``) server-sent events. Blank lines between JSON lines are skipped.
    A line over ``max_line`` bytes raises ``ResponseTooLargeError``; each byte is scanned
    once, however the stream is cut into reads. Several JSON values on one line (or in one
    SSE ``data``) are handed out one by one (``split_values``).
    """

    __slots__ = ("_buffer", "_head", "_lines", "_max_line", "_sse")

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._head = b""  # what came before the framing was known
        self._max_line = max_line
        self._buffer = LineBuffer(max_line)
        self._lines = False
        self._sse: SSEDecoder | None = None

    @property
    def framing(self) -> str | None:
        """``"lines"`` or ``"sse"`` once decided, else None."""
        return "lines" if self._lines else "sse" if self._sse is not None else None

    def feed(self, chunk: bytes) -> list[bytes]:
        """The payloads of the events ``chunk`` completes, in order."""
        if self._lines:
            return self._split(chunk)
        if self._sse is not None:
            return _each(self._sse.feed(chunk))
        head = self._head + chunk
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head  # may still be a byte order mark
            return []
        body = head[len(_BOM) :] if head.startswith(_BOM) else head
        first = body.lstrip(_BLANK)[:1]
        if not first:
            # Only blanks so far: whole blank lines mean nothing in either framing, and the
            # blanks that start the current line only that it starts with one (a whitespace
            # line is no event, and ``  data:`` is no SSE field). Keeping one byte for them
            # keeps this step linear however many reads of blanks come.
            cut = max(body.rfind(b"\n"), body.rfind(b"\r")) + 1
            self._head = b" " if cut < len(body) else b"\n"
            return []
        self._head = b""
        if first in (b"{", b"["):
            self._lines = True
            return self._split(body)
        self._sse = SSEDecoder(self._max_line)
        return _each(self._sse.feed(head))

    def flush(self) -> list[bytes]:
        """End of stream: a last line without its line break still counts."""
        if self._sse is not None:
            return _each(self._sse.flush())
        tail = self._buffer.take()
        return split_values(tail) if tail.strip(_BLANK) else []

    def _split(self, chunk: bytes) -> list[bytes]:
        if b"\r" in chunk:  # CR, LF and CRLF all end a line; the blank lines they make are skipped
            chunk = chunk.replace(b"\r", b"\n")
        end = chunk.rfind(b"\n")  # the new bytes only: what is buffered has no line break
        lines = self._buffer.complete(chunk, end)
        if end < 0:
            return []
        return _each(line for line in lines.split(b"\n") if line.strip(_BLANK))


def _each(payloads: Iterable[bytes]) -> list[bytes]:
    return [value for payload in payloads for value in split_values(payload)]
