"""The HTTP side: routing, authentication, latency, faults, and writing replies to the socket.

Streams go out with chunked transfer encoding so a client sees a clean end. With no delay the
whole body is written in large blocks; with a delay every event is written on its own.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import socket
import struct
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from ._batches import BatchStore
from ._errors import HTML_ERROR_PAGE, error_body, gptbots_body
from ._replies import Reply, Responder, gptbots_event, json_reply
from ._samples import ProviderName
from ._scenario import Endpoint, Fault, RecordedRequest, Scenario
from ._sse import Segment

__all__ = ["LoopbackHTTPServer", "ServerState"]

_BLOCK = 64 * 1024
_ROUTES: dict[tuple[str, str], tuple[ProviderName, Endpoint, str]] = {
    ("magisterium", "/api/v1/chat/completions"): ("magisterium", "chat", "POST"),
    # Magisterium documents POST /search on the same base URL and key as chat.
    ("magisterium", "/api/v1/search"): ("magisterium", "search", "POST"),
    ("maritaca", "/api/chat/completions"): ("maritaca", "chat", "POST"),
    ("maritaca", "/api/models"): ("maritaca", "models", "GET"),
    # The Responses API's documented path is /api/v1/responses; the openai SDK, given the
    # documented base_url ".../api", posts to /api/responses (providers.md, Responses API).
    ("maritaca", "/api/v1/responses"): ("maritaca", "responses", "POST"),
    ("maritaca", "/api/responses"): ("maritaca", "responses", "POST"),
    ("gptbots", "/v1/conversation"): ("gptbots", "conversation", "POST"),
    ("gptbots", "/v2/conversation/message"): ("gptbots", "message", "POST"),
    ("gptbots", "/v1/correlate/dataset"): ("gptbots", "correlate", "GET"),
    ("gptbots", "/v1/next/question"): ("gptbots", "next_question", "GET"),
    # providers.md, "GPTBots: more endpoints": knowledge retrieval and conversation history.
    ("gptbots", "/v1/vector/match"): ("gptbots", "vector_match", "POST"),
    ("gptbots", "/v1/bot/conversation/page"): ("gptbots", "conversations", "GET"),
    ("gptbots", "/v2/messages"): ("gptbots", "messages", "GET"),
}
_PATH = re.compile(r"^(?:/s/(?P<scenario>[^/]+))?/(?P<provider>[a-z]+)(?P<rest>/.*)?$")
_MALFORMED_EVENT = b'data: {"id": "chatcmpl-malformed", "choices": [{"delta": {"content": "\n\n'


@dataclass(frozen=True)
class Route:
    scenario: str | None
    provider: ProviderName | None
    endpoint: Endpoint | None
    method: str | None
    rest: str = ""


def parse_route(path: str) -> Route:
    """Which scenario, provider and endpoint ``path`` names (None parts for unknown paths)."""
    match = _PATH.match(path)
    if not match:
        return Route(None, None, None, None)
    rest = (match["rest"] or "/").rstrip("/")
    if match["provider"] == "maritaca":
        # Files and Batches take ids in their paths and several methods (_batches.py).
        for name in ("files", "batches"):
            if rest == f"/api/{name}" or rest.startswith(f"/api/{name}/"):
                endpoint: Endpoint = "files" if name == "files" else "batches"
                return Route(match["scenario"], "maritaca", endpoint, None, rest)
    found = _ROUTES.get((match["provider"], rest))
    if found is None:
        known = match["provider"] in ("magisterium", "maritaca", "gptbots")
        provider: Any = match["provider"] if known else None
        return Route(match["scenario"], provider, None, None)
    return Route(match["scenario"], found[0], found[1], found[2])


class ServerState:
    """Everything the handler threads share: samples, scenarios, records and the stop signal."""

    def __init__(self, responder: Responder, default: Scenario) -> None:
        self.responder = responder
        self.default = default
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.scenarios: dict[str, Scenario] = {}
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_concurrent = 0
        self.connections: set[socket.socket] = set()
        self.threads: set[threading.Thread] = set()
        self.batches = BatchStore()

    def begin(self, record: RecordedRequest, scenario: Scenario) -> None:
        with self.lock:
            self.requests.append(record)
            self.in_flight += 1
            self.max_concurrent = max(self.max_concurrent, self.in_flight)
        scenario.enter()

    def end(self, record: RecordedRequest, scenario: Scenario) -> None:
        scenario.leave()
        with self.lock:
            self.in_flight -= 1
            record.end = time.monotonic()


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that knows its shared state and stays quiet about lost clients."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], state: ServerState) -> None:
        self.state = state
        super().__init__(address, ProviderHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _authorized(provider: ProviderName, header: str, api_key: str | None) -> bool:
    scheme, _, key = header.strip().partition(" ")
    schemes = ("bearer", "key") if provider == "maritaca" else ("bearer",)
    key = key.strip()
    return scheme.lower() in schemes and bool(key) and (api_key is None or key == api_key)


def _unauthorized(provider: ProviderName) -> Reply:
    if provider == "gptbots":
        return json_reply(401, gptbots_body(40127))
    return json_reply(401, error_body(provider, 401))


def _cut_after(segments: Sequence[Segment], after: int) -> int:
    """How many segments to send so that ``after`` data events have gone out."""
    seen = 0
    for index, segment in enumerate(segments):
        if seen >= after:
            return index
        if segment.data is not None:
            seen += 1
    return len(segments)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


class ProviderHandler(BaseHTTPRequestHandler):
    """One connection; each request is routed, recorded and answered as its scenario says."""

    protocol_version = "HTTP/1.1"
    server_version = "citekit-testing"
    server: LoopbackHTTPServer

    # connection bookkeeping ----------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        state = self.server.state
        with state.lock:
            state.connections.add(self.connection)
            state.threads.add(threading.current_thread())
        if state.stopping.is_set():  # accepted just before the server stopped
            with suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        state = self.server.state
        with state.lock:
            state.connections.discard(self.connection)
            state.threads.discard(threading.current_thread())
        with suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    do_PUT = do_DELETE = do_PATCH = do_POST

    # one request ---------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        state = self.server.state
        start = time.monotonic()
        raw = self._read_body()
        path, _, query_string = self.path.partition("?")
        query = {k: v[-1] for k, v in parse_qs(query_string, keep_blank_values=True).items()}
        body: Any
        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            body = exc
        route = parse_route(path)
        with state.lock:
            found = state.scenarios.get(route.scenario) if route.scenario else state.default
        scenario = found or state.default
        self._record = RecordedRequest(
            method=self.command,
            path=path,
            query=query,
            headers={k.lower(): v for k, v in self.headers.items()},
            json=None if isinstance(body, ValueError) else body,
            body=raw,
            request_id=f"req_{uuid.uuid4().hex}",
            start=start,
            scenario=route.scenario,
            provider=route.provider,
            endpoint=route.endpoint,
        )
        self._scenario = scenario
        self._completed = False
        self._due: float | None = None  # when the reply may leave (the scenario's latency)
        state.begin(self._record, scenario)
        try:
            if found is None:
                self._send(json_reply(404, {"detail": f"Unknown scenario {route.scenario!r}"}))
            else:
                self._respond(route, scenario, body, query)
        except OSError:
            self.close_connection = True
        except Exception:
            traceback.print_exc()
            self.close_connection = True
            if self._record.status is None:
                what = "citekit.testing server error"
                provider = self._record.provider
                body = error_body(provider, 500, what) if provider else {"detail": what}
                with suppress(OSError):
                    self._send(json_reply(500, body))
        finally:
            self._complete()

    def _respond(self, route: Route, scenario: Scenario, body: Any, query: dict[str, str]) -> None:
        provider, endpoint = route.provider, route.endpoint
        if provider is None:
            self._send(json_reply(404, {"detail": "Not Found"}))
            return
        if endpoint is None:
            self._send(json_reply(404, error_body(provider, 404, f"No route {self.path}")))
            return
        if route.method is not None and route.method != self.command:
            self._send(json_reply(405, error_body(provider, 405, "Method Not Allowed")))
            return
        if scenario.latency:
            # The reply leaves ``latency`` seconds after the request arrived, however long it
            # took to make: the latency is the server's whole answer time, as a client sees it.
            self._due = self._record.start + scenario.latency
        if not _authorized(provider, self.headers.get("Authorization", ""), scenario.api_key):
            self._send(_unauthorized(provider))
            return
        fault = scenario.take_fault(endpoint)
        self._record.fault = fault
        if fault == "status":
            status = scenario.status or 500
            reply = json_reply(status, error_body(provider, status, scenario.message))
            reply.headers.update(_retry_headers(scenario))
            self._send(reply)
        elif fault == "html":
            self._send(Reply(scenario.status or 502, HTML_ERROR_PAGE, "text/html; charset=utf-8"))
        elif fault == "gptbots_code":
            code = scenario.code if scenario.code is not None else 50000
            reply = json_reply(scenario.status or 200, gptbots_body(code, scenario.message))
            streaming = isinstance(body, dict) and body.get("response_mode") == "streaming"
            if streaming and reply.status == 200:
                # A streaming reply carries the envelope as its one event.
                envelope = gptbots_body(code, scenario.message)
                reply = Reply(200, stream=[gptbots_event(envelope, scenario.framing)])
            self._send(reply)
        elif endpoint in ("files", "batches"):
            responder = self.server.state.responder

            def chat(request: dict[str, Any]) -> Reply:
                request = {**request, "stream": False}
                return responder.reply("maritaca", "chat", request, {}, scenario)

            headers = {k.lower(): v for k, v in self.headers.items()}
            raw = self._record.body
            store = self.server.state.batches
            self._send(store.handle(self.command, route.rest, raw, headers, scenario, chat))
        else:
            responder = self.server.state.responder
            reply = responder.reply(provider, endpoint, body, query, scenario, fault == "failed")
            self._send(reply, fault, scenario)

    # writing -------------------------------------------------------------------------------

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        self._record.status = status
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "Unknown"
        lines = [f"HTTP/1.1 {status} {phrase}", f"Date: {formatdate(usegmt=True)}"]
        lines.append(f"Server: {self.server_version}")
        lines.append(f"x-request-id: {self._record.request_id}")
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if self.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send(
        self, reply: Reply, fault: Fault | None = None, scenario: Scenario | None = None
    ) -> None:
        scenario = scenario or self.server.state.default
        if not self._wait_due():
            return
        if reply.stream is not None:
            self._send_stream(reply, fault, scenario)
            return
        body = reply.body
        if fault == "malformed":
            body = body[: max(1, len(body) // 2)]
        if fault in ("reset", "malformed", "stall", "drip", "keepalive"):
            self.close_connection = True
        headers = {"Content-Type": reply.content_type, "Content-Length": str(len(body))}
        head = self._head(reply.status, {**headers, **reply.headers})
        if fault == "reset":
            self._complete()
            self._reset()
        elif fault == "stall":
            if scenario.after is not None:
                self.wfile.write(head)
            self.server.state.stopping.wait(scenario.stall)
        elif fault in ("drip", "keepalive"):
            # A slow or hostile server: the head, then the body one byte per interval, so every
            # read returns before a read timeout (a JSON body has no keep-alive of its own).
            self.wfile.write(head)
            self._drip([body[i : i + 1] for i in range(len(body))], scenario)
        else:
            self._complete()
            self.wfile.write(head + body)

    def _send_stream(self, reply: Reply, fault: Fault | None, scenario: Scenario) -> None:
        segments = reply.stream or []
        cut = _cut_after(segments, 3 if scenario.after is None else scenario.after)
        if fault == "malformed":
            segments = [*segments[:cut], Segment(_MALFORMED_EVENT, "{"), *segments[cut:]]
        elif fault in ("reset", "stall", "drip", "keepalive"):
            segments = segments[:cut]
            self.close_connection = True
        headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
        }
        self.wfile.write(self._head(reply.status, {**headers, **reply.headers}))
        if not self._write_segments(segments, scenario.delay):
            self.close_connection = True
            return
        if fault == "reset":
            self._complete()
            self._reset()
        elif fault == "stall":
            self.server.state.stopping.wait(scenario.stall)
        elif fault == "drip":
            # One space per interval: a byte that never completes an SSE event or a JSON line.
            self._drip(itertools.repeat(_chunk(b" ")), scenario)
        elif fault == "keepalive":
            # providers.md: Magisterium and Maritaca stream SSE, whose comment lines (": ...")
            # carry no event and are what servers send as keep-alives; GPTBots streams bare JSON
            # lines, where the equivalent is a blank line (SSE comments when framed as SSE).
            bare = self._record.provider == "gptbots" and scenario.framing == "lines"
            beat = b"\n" if bare else b": keep-alive\n\n"
            self._drip(itertools.repeat(_chunk(beat)), scenario)
        else:
            self._complete()
            self.wfile.write(b"0\r\n\r\n")

    def _wait_due(self) -> bool:
        """Wait until the reply is due; False (the connection closed, nothing sent) when the
        server stopped in between."""
        if self._due is not None:
            due, self._due = self._due, None
            wait = due - time.monotonic()
            if wait > 0 and self.server.state.stopping.wait(wait):
                self.close_connection = True
                return False
        return True

    def _complete(self) -> None:
        """Close the record and leave the in-flight count before the reply's last bytes go out.

        A client that holds the whole reply then always finds its record finished, and
        back-to-back requests never look concurrent.
        """
        if not self._completed:
            self._completed = True
            self.server.state.end(self._record, self._scenario)

    def _write_segments(self, segments: Sequence[Segment], delay: float) -> bool:
        """Write the segments as HTTP chunks; False when the server stopped in between."""
        if delay <= 0:
            body = b"".join(segment.raw for segment in segments)
            for offset in range(0, len(body), _BLOCK):
                self.wfile.write(_chunk(body[offset : offset + _BLOCK]))
            return True
        stopping = self.server.state.stopping
        for index, segment in enumerate(segments):
            if index and stopping.wait(delay):
                return False
            self.wfile.write(_chunk(segment.raw))
        return True

    def _drip(self, pieces: Iterable[bytes], scenario: Scenario) -> None:
        """Write one piece per ``scenario.interval`` for at most ``scenario.stall`` seconds
        (or until the server stops, the client leaves, or the pieces run out)."""
        stopping = self.server.state.stopping
        ends = time.monotonic() + scenario.stall
        for piece in pieces:
            if time.monotonic() >= ends or stopping.wait(scenario.interval):
                return
            self.wfile.write(piece)
            self.wfile.flush()

    def _reset(self) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0, then close)."""
        self.close_connection = True
        sock = self.connection
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        finally:
            self.rfile.close()  # the socket's file descriptor closes with its last user
            sock.close()


def _retry_headers(scenario: Scenario) -> dict[str, str]:
    """A ``"status"`` fault's retry headers. None of the three providers documents a
    ``Retry-After`` (providers.md, "Across providers"); when a scenario asks for one it is sent
    as RFC 9110 10.2.3 allows, delay-seconds (``1*DIGIT``) or an HTTP date, never ``0.3``
    (langchain-maritaca calls ``int()`` on it): a fraction is rounded up to whole seconds.
    ``retry-after-ms`` and ``x-should-retry`` are the openai SDK's headers."""
    headers: dict[str, str] = {}
    wait = scenario.retry_after
    if isinstance(wait, str):
        headers["Retry-After"] = wait
    elif wait is not None:
        headers["Retry-After"] = str(math.ceil(wait)) if math.isfinite(wait) else str(wait)
    if scenario.retry_after_ms is not None:
        headers["retry-after-ms"] = f"{scenario.retry_after_ms:g}"
    if scenario.should_retry is not None:
        headers["x-should-retry"] = "true" if scenario.should_retry else "false"
    return headers
