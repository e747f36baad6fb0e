"""Calls as generators, in the shape of httpx's ``Auth.auth_flow``: written once, run by a
sync or an async driver (``citekit.transport.driver``).

A flow yields what it needs done and gets the outcome back from the ``yield``:

========================  ====================================================
yield                     sent back
========================  ====================================================
``Send(spec)``            the response's ``Head`` (status, headers); body unread
``READ``                  the next bytes of the body, None once it has ended
``CLOSE``                 None; the response is closed (left before its end)
``Sleep(seconds)``        None, that much later
``Wait(done, thread)``    None, once ``done`` (another call in flight) has finished
a list of events          None, once whoever iterates the call has had them
========================  ====================================================

and returns its result. A failure to send or read is raised at the ``yield`` (a
``TransportError``), so the flow handles it where it stands: retries it, wraps it with the
partial answer, or shrugs it off. Retrying lives here, once: ``fetch_json`` and
``stream_answer`` ask the client's ``RetryPolicy`` and yield a ``Sleep``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from ..core.errors import (
    APITimeoutError,
    ProviderError,
    ResponseFormatError,
    StreamInterrupted,
    StreamTimeout,
    TransportError,
)
from ..core.names import display_name
from ..core.secrets import scrub, scrub_value
from ..model import Answer, StreamEvent
from .response import Decoder, Head, Wire, is_event_stream

if TYPE_CHECKING:  # the parsers import the flows of each provider
    from .parsers import Accumulator

__all__ = [
    "CLOSE",
    "READ",
    "Flow",
    "Op",
    "RequestSpec",
    "Send",
    "Sleep",
    "Wait",
    "fetch_bytes",
    "fetch_json",
    "interrupted",
    "read_body",
    "stream_answer",
]

T = TypeVar("T")
log = logging.getLogger("citekit.transport")


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """A request described as data: built by pure provider code, sent by a driver."""

    method: str
    path: str
    json: Any = None
    params: Mapping[str, str] | None = None
    stream: bool = False
    #: The read timeout this request needs at least (seconds), when the client's default one
    #: is too short for it (Maritaca's flex tier queues); a timeout the user set is kept.
    read_timeout: float | None = None
    #: A multipart upload (Maritaca's ``POST /files``): ``{field: (filename, bytes, type)}``,
    #: with the form's other fields in ``data``; sent in place of ``json``.
    files: Mapping[str, tuple[str, bytes, str]] | None = None
    data: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Send:
    """Open a request; the driver sends back its ``Head``, keeping the body to ``READ``."""

    spec: RequestSpec


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait ``seconds`` before the next step."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Wait:
    """Wait until ``done`` has a result: an identical call in flight, whose answer this one
    takes (``citekit.store.call.Flights``). ``done`` is completed by the call running on thread
    ``thread``: a driver that would block that very thread (a sync call on the thread of the
    event loop running it) does not wait, and the call goes on by itself. ``places``: the
    places in flight that call's requests take theirs among (``citekit.transport.inflight``),
    if any."""

    done: concurrent.futures.Future[Any]
    thread: int
    places: Any = None


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: Read the next bytes of the current response's body (None at its end).
READ = _Signal("READ")
#: Close the current response.
CLOSE = _Signal("CLOSE")

Op: TypeAlias = Send | Sleep | Wait | _Signal | list[StreamEvent]
#: A call as a generator: yields ``Op``s, is sent their outcomes, returns ``T``.
Flow: TypeAlias = Generator[Op, Any, T]


def read_body(wire: Wire) -> Flow[bytes]:
    """The rest of the current response's body; past ``wire.max_body_bytes`` of it (decoded
    bytes: a gzip "bomb" is counted as it inflates), ``ResponseTooLargeError`` and no more
    reading."""
    parts = []
    size = 0
    limit = wire.max_body_bytes
    while (chunk := (yield READ)) is not None:
        size += len(chunk)
        if size > limit:
            raise wire.too_large("a response body", limit, "max_body_bytes")
        parts.append(chunk)
    return b"".join(parts)


def fetch_json(wire: Wire, spec: RequestSpec, parse: Callable[[Any], T] = lambda d: d) -> Flow[T]:
    """Send ``spec`` and return ``parse`` of its decoded JSON body.

    HTTP errors and in-band errors (a GPTBots envelope in a 200) share one budget of retries.
    """
    data = yield from _fetch(
        wire, spec, lambda head, body: wire.checked(head, wire.decode_json(head, body))
    )
    return parse(data)


def fetch_bytes(wire: Wire, spec: RequestSpec) -> Flow[bytes]:
    """Send ``spec`` and return its raw body (a file's content), retried as ``fetch_json``."""
    return (yield from _fetch(wire, spec, lambda head, body: body))


def _fetch(wire: Wire, spec: RequestSpec, read: Callable[[Head, bytes], T]) -> Flow[T]:
    attempt = 0
    while True:
        try:
            head: Head = yield Send(spec)
            body = yield from read_body(wire)
            if not 200 <= head.status_code < 300:
                raise wire.error_for(head, body)
            data = read(head, body)
        except (ProviderError, TransportError) as err:
            if not wire.retry.should_retry(err, attempt, received=False):
                wire.retry.explain_wait(err)
                raise
            yield _pause(wire, spec, err, attempt)
            attempt += 1
            continue
        return data


def stream_answer(
    wire: Wire,
    spec: RequestSpec,
    acc: Accumulator,
    *,
    unfinished: str,
    decoder: Callable[[int], Decoder] | None = None,
) -> Flow[Answer]:
    """Stream ``spec`` into ``acc``, yielding its events as they arrive; return the answer.

    Failures before the first event are retried like any request (a retryable in-band error
    as the first event too). Once events have arrived, a failure raises ``StreamInterrupted``
    holding the partial answer (``StreamTimeout``, also an ``APITimeoutError``, for a timeout or
    the deadline), as does a stream that ends without its last event (``unfinished`` says which
    one that is). Ctrl-C or a cancellation after the first event leaves with the partial answer
    attached as its ``.answer``. ``decoder`` cuts the body into events (default:
    server-sent events); with one, a JSON-typed body is read as events too.
    """
    attempt = 0
    while True:
        reader = None
        try:
            head: Head = yield Send(spec)
            if not 200 <= head.status_code < 300:
                raise wire.error_for(head, (yield from read_body(wire)))
            # A provider that brings its own ``decoder`` reads a JSON-typed body with it too:
            # GPTBots' bare JSON lines may come labelled as JSON.
            json_lines = decoder is not None and "json" in head.headers.get("content-type", "")
            if not is_event_stream(head) and not json_lines:
                wire.not_a_stream(head, (yield from read_body(wire)))
            reader = wire.events(
                head,
                acc.feed,
                decoder,
                getattr(acc, "feed_json", None),
                getattr(acc, "feed_plain", None),
            )
            while not reader.done:
                out = reader.read((yield READ))
                if out:
                    yield out
            reader.finish()
            if not reader.received and "event-stream" not in head.headers.get("content-type", ""):
                # A text/plain page (a proxy's, a maintenance notice) read as events held none:
                # say what it was rather than that the stream ended early.
                raise wire.no_events(head, reader.start, reader.size)
        except (ProviderError, TransportError, ResponseFormatError) as err:
            received = reader is not None and reader.received
            if wire.retry.should_retry(err, attempt, received=received):
                yield CLOSE
                yield _pause(wire, spec, err, attempt)
                attempt += 1
                continue
            if received:
                raise interrupted(wire.provider, acc, err, wire.secrets) from err
            wire.retry.explain_wait(err)
            raise
        except GeneratorExit:  # closed by its owner: nothing to keep
            raise
        except BaseException as stop:  # Ctrl-C (thrown in by the driver) or cancellation
            keep(stop, acc, reader is not None and reader.received, wire.secrets)
            raise
        break
    yield CLOSE  # a stream ended by ``[DONE]`` may still be open
    if not acc.finished:
        raise interrupted(wire.provider, acc, ResponseFormatError(unfinished), wire.secrets)
    return acc.answer()


def interrupted(
    provider: str, acc: Accumulator, exc: Exception, secrets: tuple[str, ...] = ()
) -> StreamInterrupted:
    """The error for a stream that broke: ``.answer`` is what arrived, marked partial.

    Scrubbed here already (the guard does it again): the characters the message counts
    are those of the answer the caller gets, and tell nothing of an echoed key's length.
    """
    partial = scrub_value(acc.answer(partial=True), secrets)
    if isinstance(exc, APITimeoutError):
        return StreamTimeout(
            f"{exc}. The partial answer ({len(partial.text)} characters) is in .answer",
            answer=partial,
        )
    return StreamInterrupted(
        f"The {display_name(provider)} stream broke after {len(partial.text)} characters "
        f"({exc}). The partial answer is in .answer",
        answer=partial,
    )


def keep(
    stop: BaseException, acc: Accumulator, received: bool, secrets: tuple[str, ...] = ()
) -> None:
    """Attach what a stream received (scrubbed) to the Ctrl-C or cancellation ``stop`` that
    ends it."""
    if received and getattr(stop, "answer", None) is None:
        with contextlib.suppress(Exception):  # nothing must hide the interrupt itself
            stop.answer = scrub_value(acc.answer(partial=True), secrets)  # type: ignore[attr-defined]


def _pause(wire: Wire, spec: RequestSpec, err: BaseException, attempt: int) -> Sleep:
    delay = wire.retry.delay(attempt, getattr(err, "retry_after", None))
    if log.isEnabledFor(logging.INFO):
        log.info(
            "Retrying %s %s in %.2f s (attempt %d of %d): %s",
            spec.method,
            spec.path,
            delay,
            attempt + 2,
            wire.retry.max_retries + 1,
            scrub(_reason(err), wire.secrets),
        )
    return Sleep(delay)


def _reason(err: BaseException) -> str:
    if isinstance(err, ProviderError):
        if err.status is not None and err.status != 200:
            return f"HTTP {err.status}"
        return f"in-band error, code {err.code}"
    return str(err)
