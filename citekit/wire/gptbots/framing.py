"""GPTBots stream framing: bare JSON lines or server-sent events, decided per stream."""

from __future__ import annotations

from ..sse import SSEDecoder

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
    """

    __slots__ = ("_buffer", "_head", "_lines", "_sse")

    def __init__(self) -> None:
        self._head = b""  # what came before the framing was known
        self._buffer = b""
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
            self._head = head
            return []
        self._head = b""
        if first in (b"{", b"["):
            self._lines = True
            return self._split(body)
        self._sse = SSEDecoder()
        return self._sse.feed(head)

    def flush(self) -> list[bytes]:
        """End of stream: a last line without its line break still counts."""
        if self._sse is not None:
            return self._sse.flush()
        tail, self._buffer = self._buffer, b""
        return [tail] if tail.strip(_BLANK) else []

    def _split(self, chunk: bytes) -> list[bytes]:
        buffer = self._buffer + chunk if self._buffer else chunk
        end = max(buffer.rfind(b"\n"), buffer.rfind(b"\r"))
        if end < 0:
            self._buffer = buffer
            return []
        self._buffer = buffer[end + 1 :]
        lines = buffer[:end]
        if b"\r" in lines:
            lines = lines.replace(b"\r", b"\n")
        return [line for line in lines.split(b"\n") if line.strip(_BLANK)]
