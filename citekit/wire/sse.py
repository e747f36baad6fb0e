"""Server-sent events decoding, incremental and fast.

Follows the WHATWG event-stream rules that matter for these providers: lines end in LF, CRLF
or CR; ``data:`` lines of one event are joined with ``\\n``; a line starting with ``:`` is a
comment (keep-alive); a blank line ends an event; ``event:``, ``id:`` and ``retry:`` are read
and the rest ignored. Splitting is done on whole buffers with ``bytes`` methods (C speed), not
line by line in Python.
"""

from __future__ import annotations

__all__ = ["SSEDecoder"]

_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Feed bytes, get the ``data`` payloads of complete events (as ``bytes``)."""

    __slots__ = ("_buffer", "_data", "_head", "_pending_cr", "event", "last_event_id")

    def __init__(self) -> None:
        self._head: bytes | None = b""  # bytes seen before the BOM check; None once done
        self._buffer = b""
        self._pending_cr = False
        self._data: list[bytes] = []
        self.event: str | None = None
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> list[bytes]:
        """Decode ``chunk``; return the data of every event it completes, in order."""
        if self._head is not None:
            # One UTF-8 byte order mark at the very start is dropped, even split across reads.
            head = self._head + chunk
            if len(head) < 3 and _BOM.startswith(head):
                self._head = head
                return []
            self._head = None
            chunk = head[3:] if head.startswith(_BOM) else head
        if self._pending_cr:
            chunk = b"\r" + chunk
            self._pending_cr = False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                # A CR at the end may be the first half of a CRLF split across reads.
                chunk = chunk[:-1]
                self._pending_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer + chunk if self._buffer else chunk
        end = buffer.rfind(b"\n")
        if end < 0:
            self._buffer = buffer
            return []
        self._buffer = buffer[end + 1 :]
        return self._lines(buffer[:end].split(b"\n"))

    def flush(self) -> list[bytes]:
        """End of stream: a trailing event without its blank line still counts."""
        tail = self._buffer
        self._buffer = b""
        out = self._lines(tail.split(b"\n")) if tail else []
        if self._data:
            data = b"\n".join(self._data)
            self._data = []
            if data:
                out.append(data)
        return out

    def _lines(self, lines: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    joined = data[0] if len(data) == 1 else b"\n".join(data)
                    if joined:  # an event with empty data is not dispatched
                        out.append(joined)
                    data = self._data = []
                continue
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            elif line.startswith(b":"):
                continue
            else:
                self._field(line)
        return out

    def _field(self, line: bytes) -> None:
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"event":
            self.event = value.decode("utf-8", "replace")
        elif name == b"id":
            self.last_event_id = value.decode("utf-8", "replace")
        # "retry" and unknown fields: nothing to do for a one-shot request.
