"""Server-sent events decoding, incremental and fast.

Follows the WHATWG event-stream rules that matter for these providers: lines end in LF, CRLF
or CR; ``data:`` lines of one event are joined with ``\\n``; a line starting with ``:`` is a
comment (keep-alive); a blank line ends an event; ``event:``, ``id:`` and ``retry:`` are read
and the rest ignored. Splitting is done on whole buffers with ``bytes`` methods (C speed), not
line by line in Python, and each byte is scanned once however the stream is cut into reads
(``LineBuffer``): a long line costs time in proportion to its length, and no line or event
grows past the client's ``max_line_bytes``.
"""

from __future__ import annotations

from ..core.errors import ResponseTooLargeError

__all__ = ["MAX_LINE_BYTES", "LineBuffer", "SSEDecoder", "line_too_long"]

_BOM = b"\xef\xbb\xbf"

#: The default longest stream line (and SSE event) a client reads: 16 MiB, far past any real
#: event (a whole answer is a few hundred KB), short of what would take a notebook's memory.
MAX_LINE_BYTES = 16 * 1024 * 1024


def line_too_long(limit: int) -> ResponseTooLargeError:
    """The error for a stream line or event over ``limit`` bytes (the provider named later)."""
    return ResponseTooLargeError(
        f"A stream line or event ran past {limit:,} bytes, the client's limit: citekit stopped "
        "reading there. If the stream is genuine, raise max_line_bytes= on the client",
        limit=limit,
        option="max_line_bytes",
    )


class LineBuffer:
    """The unfinished last line of a stream, kept as the reads that brought it.

    Each byte is scanned for a line break once, when its read arrives, and copied once, when
    its line is complete: a line of N bytes in any number of reads costs O(N), where joining
    the buffer to every read and searching it again cost O(N**2 / read size).

    A line past ``limit`` is not kept: the complete lines before it in the same read are still
    handed out, and the next call raises ``ResponseTooLargeError`` (so events that arrived
    before a runaway line reach the partial answer).
    """

    __slots__ = ("_failed", "_parts", "_size", "limit")

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._failed = False

    def complete(self, chunk: bytes, end: int) -> bytes:
        """The complete lines ``chunk[:end]`` closes (``end``: the index of its last line
        break, or -1 for none), the kept start of the first one before them; keeps the rest."""
        if self._failed:
            raise line_too_long(self.limit)
        if end < 0:
            size = self._size + len(chunk)
            if size > self.limit:
                raise line_too_long(self.limit)
            if chunk:
                self._parts.append(chunk)
                self._size = size
            return b""
        if self._parts:
            self._parts.append(chunk[:end])
            lines = b"".join(self._parts)
            self._parts = []
            self._size = 0
        else:
            lines = chunk[:end]
        rest = chunk[end + 1 :]
        if rest:
            if len(rest) > self.limit:
                self.fail()
            else:
                self._parts.append(rest)
                self._size = len(rest)
        # Only a block longer than the limit can hold a line that is: one length test per read.
        if len(lines) > self.limit:
            split = lines.split(b"\n")
            long = next((i for i, line in enumerate(split) if len(line) > self.limit), None)
            if long is not None:
                self.fail()
                return b"\n".join(split[:long])
        return lines

    def fail(self) -> None:
        """Keep nothing more: the next call raises the too-large error."""
        self._failed = True
        self._parts = []
        self._size = 0

    def take(self) -> bytes:
        """The unfinished line, emptied (the end of the stream)."""
        if self._failed:
            raise line_too_long(self.limit)
        tail = b"".join(self._parts)
        self._parts = []
        self._size = 0
        return tail


class SSEDecoder:
    """Feed bytes, get the ``data`` payloads of complete events (as ``bytes``).

    A line, or an event's joined data, over ``max_line`` bytes raises ``ResponseTooLargeError``.
    """

    __slots__ = ("_data", "_head", "_lines", "_pending_cr", "_size", "event", "last_event_id")

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._head: bytes | None = b""  # bytes seen before the BOM check; None once done
        self._lines = LineBuffer(max_line)
        self._pending_cr = False
        self._data: list[bytes] = []
        self._size = 0  # bytes in ``_data``
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
        end = chunk.rfind(b"\n")  # the new bytes only: what is buffered has no line break
        lines = self._lines.complete(chunk, end)
        if end < 0:
            return []
        if not self._data and lines.startswith(b"data: ") and lines.endswith(b"\n"):
            # The usual read: whole events of one ``data: `` line each, cut in C. When the
            # cuts account for every line break, each event is one ``data: `` line (no
            # comment, other field or second data line): else the read goes line by line.
            datas = lines[6:-1].split(b"\n\ndata: ")
            if lines.count(b"\n") == 2 * len(datas) - 1:
                return [data for data in datas if data] if b"" in datas else datas
        return self._lines_of(lines.split(b"\n"))

    def flush(self) -> list[bytes]:
        """End of stream: a trailing event without its blank line still counts."""
        tail = self._lines.take()
        out = self._lines_of(tail.split(b"\n")) if tail else []
        self._lines.take()  # raises if that last event ran past the limit
        if self._data:
            data = b"\n".join(self._data)
            self._data = []
            self._size = 0
            if data:
                out.append(data)
        return out

    def _lines_of(self, lines: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    joined = data[0] if len(data) == 1 else b"\n".join(data)
                    if joined:  # an event with empty data is not dispatched
                        out.append(joined)
                    data = self._data = []
                    self._size = 0
                continue
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
                if len(data) > 1:  # one line is within the limit; many may add up past it
                    if len(data) == 2:
                        self._size = len(data[0])
                    self._size += len(data[-1])
                    if self._size > self._lines.limit:
                        self._lines.fail()  # the events before this one are handed out first
                        self._data = []
                        self._size = 0
                        return out
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
