"""Scenarios (how the server misbehaves behind one URL prefix) and the requests it records."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from ._samples import ProviderName

__all__ = [
    "FAULTS",
    "FRAMINGS",
    "Endpoint",
    "Fault",
    "Framing",
    "RecordedRequest",
    "Scenario",
    "ScenarioOptions",
]

#: How a GPTBots stream is framed: bare JSON lines (every official example) or SSE ``data:``.
Framing = Literal["lines", "sse"]
FRAMINGS: tuple[Framing, ...] = ("lines", "sse")

Fault = Literal[
    "status", "reset", "malformed", "html", "stall", "gptbots_code", "drip", "keepalive", "failed"
]
FAULTS: tuple[Fault, ...] = (
    "status",
    "reset",
    "malformed",
    "html",
    "stall",
    "gptbots_code",
    "drip",
    "keepalive",
    "failed",
)

#: ``chat`` is Magisterium's and Maritaca's, ``models`` Maritaca's, ``search`` Magisterium's;
#: the others are GPTBots'.
Endpoint = Literal[
    "chat",
    "responses",
    "models",
    "search",
    "conversation",
    "message",
    "correlate",
    "next_question",
    "vector_match",
    "conversations",
    "messages",
    "files",
    "batches",
]
ENDPOINTS: tuple[Endpoint, ...] = (
    "chat",
    "responses",
    "models",
    "search",
    "conversation",
    "message",
    "correlate",
    "next_question",
    "vector_match",
    "conversations",
    "messages",
    "files",
    "batches",
)


class ScenarioOptions(TypedDict, total=False):
    """Keyword options of ``ProviderServer.base_url`` / ``ProviderServer.add_scenario``."""

    fault: Fault | None
    status: int | None
    message: str | None
    retry_after: float | str | None
    retry_after_ms: float | None
    should_retry: bool | None
    after: int | None
    stall: float
    interval: float
    code: int | None
    endpoint: Endpoint | None
    times: int | None
    delay: float
    latency: float
    chunks: int | None
    api_key: str | None
    correlate_empty: bool
    framing: Framing
    batch_seconds: float
    batch_statuses: BatchStatuses
    batch_expire: bool
    batch_purpose: str | None


#: Which of Maritaca's two documented Batch object shapes the server sends (``_batches.py``).
BatchStatuses = Literal["guide", "reference"]


@dataclass
class Scenario:
    """One registered behaviour, reached under ``/s/<id>/<provider>/...``.

    Attributes
    ----------
    fault
        What goes wrong; None for normal service.
    times
        The fault hits only the first ``times`` eligible requests (None: every request).
    endpoint
        Only requests to this endpoint are eligible for the fault (None: all of them).
    status, message, retry_after, code
        The error response of ``"status"`` (default 500) and ``"gptbots_code"`` (default HTTP
        200, code 50000) faults; ``retry_after`` is sent as ``Retry-After`` in whole seconds, a
        fraction rounded up (RFC 9110 10.2.3 allows only ``1*DIGIT`` or an HTTP date; a string
        is sent as it is); ``status`` also replaces the 502 of ``"html"``. A GPTBots
        ``response_mode: "streaming"`` request gets a ``"gptbots_code"`` envelope with HTTP 200
        as the one event of a ``text/event-stream``.
    retry_after_ms, should_retry
        A ``"status"`` fault's ``retry-after-ms`` (milliseconds) and ``x-should-retry``
        (``true`` / ``false``) headers, the headers the openai SDK reads. None of the three
        providers documents them (nor ``Retry-After``): they exercise the client's rules.
    after
        Events sent before a stream ``"reset"``, ``"malformed"``, ``"stall"``, ``"drip"`` or
        ``"keepalive"`` (default 3); for a non-stream ``"stall"``, None stalls before the
        headers and a number after them.
    stall
        Seconds a ``"stall"``, ``"drip"`` or ``"keepalive"`` lasts (the server stopping ends it
        early); then the connection closes.
        ``"failed"``: Maritaca's Responses API answers with ``status: "failed"`` (a stream
        ends with ``response.failed``) and half of the text.
    interval
        Seconds between the bytes of a ``"drip"`` (a stream: one space, which never completes
        an event; a JSON reply: its body one byte at a time) and between the comments of a
        ``"keepalive"`` (``: keep-alive`` in SSE, a blank line in bare JSON lines; a JSON reply
        drips instead). Either way no read ever times out.
    delay, latency, chunks
        Seconds between stream events, seconds from a request's arrival to its response (made
        meanwhile), a synthetic stream length.
    api_key
        The only key accepted, when set.
    correlate_empty
        GPTBots ``correlate/dataset`` answers with an empty ``correlate_dataset``.
    framing
        How GPTBots streams are framed: ``"lines"`` (default: bare JSON lines, one event per
        line, as every official GPTBots example shows) or ``"sse"`` (``data: {...}`` events).
    batch_seconds, batch_statuses, batch_expire, batch_purpose
        Maritaca's Batch API: a batch completes ``batch_seconds`` after it is created (default
        2); ``"guide"`` (default) or ``"reference"`` picks the documented shape of the Batch
        object (statuses, ``errors``, unset timestamps); ``batch_expire`` makes the batch
        expire at that time with half its requests done; ``batch_purpose`` is the only upload
        purpose accepted (default: both documented ones).
    """

    id: str
    delay: float = 0.0
    latency: float = 0.0
    fault: Fault | None = None
    status: int | None = None
    message: str | None = None
    retry_after: float | str | None = None
    retry_after_ms: float | None = None
    should_retry: bool | None = None
    after: int | None = None
    stall: float = 30.0
    interval: float = 0.25
    code: int | None = None
    endpoint: Endpoint | None = None
    times: int | None = None
    chunks: int | None = None
    api_key: str | None = None
    correlate_empty: bool = False
    framing: Framing = "lines"
    batch_seconds: float = 2.0
    batch_statuses: BatchStatuses = "guide"
    batch_expire: bool = False
    batch_purpose: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _faulted: int = field(default=0, repr=False)
    _in_flight: int = field(default=0, repr=False)
    _max_concurrent: int = field(default=0, repr=False)
    _served: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}; choose one of {', '.join(FAULTS)}")
        if self.endpoint is not None and self.endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {self.endpoint!r}; choose one of {ENDPOINTS}")
        if self.framing not in FRAMINGS:
            raise ValueError(f"unknown framing {self.framing!r}; choose one of {FRAMINGS}")
        if self.chunks is not None and self.chunks < 1:
            raise ValueError("chunks= must be at least 1")
        if self.delay < 0 or self.latency < 0:
            raise ValueError("delay= and latency= must not be negative")
        if not self.interval > 0:
            raise ValueError("interval= must be positive")

    @property
    def max_concurrent(self) -> int:
        """The most requests of this scenario in flight at once."""
        with self._lock:
            return self._max_concurrent

    @property
    def request_count(self) -> int:
        """How many requests reached this scenario."""
        with self._lock:
            return self._served

    @property
    def faults_served(self) -> int:
        """How many requests this scenario's fault hit."""
        with self._lock:
            return self._faulted

    def enter(self) -> None:
        with self._lock:
            self._served += 1
            self._in_flight += 1
            self._max_concurrent = max(self._max_concurrent, self._in_flight)

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def take_fault(self, endpoint: Endpoint) -> Fault | None:
        """The fault for this request, counting it against ``times``."""
        if self.fault is None or (self.endpoint is not None and self.endpoint != endpoint):
            return None
        with self._lock:
            if self.times is not None and self._faulted >= self.times:
                return None
            self._faulted += 1
            return self.fault


@dataclass
class RecordedRequest:
    """A request as the server saw it.

    ``status`` is set when the reply's head is written, ``end`` just before its last bytes are,
    so a client that has read a whole reply finds its record complete.

    ``headers`` keys are lower-case. ``path`` is the full request path without the query.
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    body: bytes
    request_id: str
    start: float
    scenario: str | None = None
    provider: ProviderName | None = None
    endpoint: Endpoint | None = None
    fault: Fault | None = None
    status: int | None = None
    end: float | None = None

    @property
    def duration(self) -> float | None:
        """Seconds from reading the request to finishing the reply."""
        return None if self.end is None else self.end - self.start
