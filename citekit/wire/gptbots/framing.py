"""GPTBots stream framing: bare JSON lines or server-sent events, decided per stream."""

from __future__ import annotations

from ..sse import MAX_LINE_BYTES, LineBuffer, SSEDecoder

__all__ = ["StreamDecoder"]

_BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r\n"


class StreamDecoder:
    """GPTBots stream bytes in, the JSON text of each event out, in either framing.

    The documentation calls the stream SSE, but every official example (and clients written
    against the real service) shows bare JSON lines, ``{"code":3,"message":"Text","data":"I"}``
    one per line with no ``data: `` prefix. The framing is decided once per stream from its
    first non-blank bytes: ``{`` or ``[`` means JSON lines, anything else (``data:``, a
    ``:`` comment, ``event:``) server-sent events. Blank lines between JSON lines are skipped.
    A line over ``max_line`` bytes raises ``ResponseTooLargeError``; each byte is scanned
    once, however the stream is cut into reads.
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
            return self._sse.feed(chunk)
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
        return self._sse.feed(head)

    def flush(self) -> list[bytes]:
        """End of stream: a last line without its line break still counts."""
        if self._sse is not None:
            return self._sse.flush()
        tail = self._buffer.take()
        return [tail] if tail.strip(_BLANK) else []

    def _split(self, chunk: bytes) -> list[bytes]:
        if b"\r" in chunk:  # CR, LF and CRLF all end a line; the blank lines they make are skipped
            chunk = chunk.replace(b"\r", b"\n")
        end = chunk.rfind(b"\n")  # the new bytes only: what is buffered has no line break
        lines = self._buffer.complete(chunk, end)
        if end < 0:
            return []
        return [line for line in lines.split(b"\n") if line.strip(_BLANK)]
