"""A stream replayed from a separate process, for benchmarks that time the client alone.

``recorded(chunks)`` takes one Magisterium stream of ``chunks`` chunks from the loopback server
(``citekit.testing``) once; ``Replay(body)`` serves those bytes from a child process that only
writes them (HTTP/1.1, chunked in 64 KiB blocks, keep-alive), so the process that times a
client holds nothing of a server: its CPU time is the client's.

    with Replay(body) as base:   # base: "http://127.0.0.1:PORT/v1"
        ck.Magisterium(api_key=KEY, base_url=base).stream(question)

The child is this file run as a script: ``python bench/_replay.py FILE``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

KEY = "bench-key"
_BLOCK = 64 * 1024


def recorded(chunks: int) -> tuple[bytes, str]:
    """The bytes of the loopback server's ``chunks``-chunk Magisterium stream, and its
    question."""
    import httpx

    from citekit.testing import ProviderServer

    with ProviderServer() as srv:
        base = srv.base_url("magisterium", chunks=chunks)
        question = srv.samples("magisterium")[0].question
        body = {
            "model": "magisterium-1",
            "messages": [{"role": "user", "content": question}],
            "stream": True,
        }
        with httpx.Client(timeout=120) as client:
            reply = client.post(
                base + "/chat/completions", json=body, headers={"Authorization": f"Bearer {KEY}"}
            )
            reply.raise_for_status()
            return reply.content, question


def _reply_of(body: bytes) -> bytes:
    """``body`` as one HTTP/1.1 event-stream reply, chunked in 64 KiB blocks."""
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    blocks = [
        b"%x\r\n%s\r\n" % (len(body[i : i + _BLOCK]), body[i : i + _BLOCK])
        for i in range(0, len(body), _BLOCK)
    ]
    return head + b"".join(blocks) + b"0\r\n\r\n"


def _serve_connection(conn: socket.socket, reply: bytes) -> None:
    """Answer every request on ``conn`` (keep-alive) with ``reply``."""
    buffered = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in buffered:
                data = conn.recv(65536)
                if not data:
                    return
                buffered += data
            head, _, buffered = buffered.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buffered) < length:
                data = conn.recv(65536)
                if not data:
                    return
                buffered += data
            buffered = buffered[length:]
            conn.sendall(reply)


def serve(path: str) -> None:
    """The server process: print the port, then answer each request with the file's reply."""
    reply = _reply_of(Path(path).read_bytes())
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve_connection, args=(conn, reply), daemon=True).start()


class Replay:
    """A child process serving ``body`` to every request; ``with`` gives its base URL."""

    def __init__(self, body: bytes) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="citekit-replay-")
        self._file = Path(self._dir.name) / "stream.sse"
        self._file.write_bytes(body)
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(self._file)], stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        return f"http://127.0.0.1:{int(self._process.stdout.readline())}/v1"

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)
        self._dir.cleanup()


if __name__ == "__main__":
    serve(sys.argv[1])
