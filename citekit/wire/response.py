"""Reading one provider's responses, without I/O: error replies, JSON bodies, in-band errors,
and the events of a stream.

A response is seen through ``Head`` (its status and headers: an ``httpx.Response`` is one) and
bytes the transport has read. Every message that could quote the request has the API key
scrubbed out before it is kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from ..core.errors import ProviderError, ResponseFormatError, redact
from ..core.models import StreamEvent
from .errors import error_message, generic_error, parse_retry_after, request_id
from .retry import RetryPolicy
from .sse import SSEDecoder

__all__ = [
    "BodyCheck",
    "Decoder",
    "ErrorClassifier",
    "EventReader",
    "Head",
    "Wire",
    "is_event_stream",
]

#: Turns a decoded error body into a provider error; returns None to use the generic mapping.
ErrorClassifier = Callable[[int | None, Any, str, str | None], ProviderError | None]
#: Checks a 2xx JSON body for an in-band error (GPTBots puts ``{code, message}`` in a 200).
BodyCheck = Callable[[Any, str | None], ProviderError | None]


class Decoder(Protocol):
    """Cuts a stream's bytes into event payloads (``SSEDecoder`` is one)."""

    def feed(self, chunk: bytes) -> list[bytes]: ...
    def flush(self) -> list[bytes]: ...


class Head(Protocol):
    """What is read of a response before its body: ``httpx.Response`` is one."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


def is_event_stream(head: Head) -> bool:
    ctype = head.headers.get("content-type", "")
    # A server that omits the type still gets the benefit of the doubt; JSON or HTML does not.
    return not ctype or "event-stream" in ctype or ("json" not in ctype and "html" not in ctype)


@dataclass(frozen=True)
class Wire:
    """How one client reads its provider's replies and retries its requests.

    The secrets (the API key) are kept out of ``repr`` and out of every message made here.
    """

    provider: str
    secrets: tuple[str, ...] = field(default=(), repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    classify: ErrorClassifier | None = field(default=None, repr=False, compare=False)
    check_body: BodyCheck | None = field(default=None, repr=False, compare=False)

    def error_for(self, head: Head, body: bytes) -> ProviderError:
        """The typed error for a non-2xx reply, with the server's ``Retry-After``."""
        rid = request_id(head.headers)
        parsed, message = error_message(body, head.headers.get("content-type", ""))
        message = redact(message, self.secrets)
        retry_after = parse_retry_after(head.headers.get("retry-after"))
        if self.classify is not None:
            err = self.classify(head.status_code, parsed, message, rid)
            if err is not None:
                if err.retry_after is None:
                    err.retry_after = retry_after
                return err
        return generic_error(self.provider, head.status_code, message, rid, retry_after=retry_after)

    def decode_json(self, head: Head, body: bytes) -> Any:
        try:
            return json.loads(body)
        except ValueError as exc:
            snippet = body[:200].decode("utf-8", "replace")
            raise ResponseFormatError(
                f"{self.provider} sent a body that is not JSON (HTTP {head.status_code}, "
                f"{len(body)} bytes, starts {snippet!r})"
            ) from exc
        except RecursionError:  # raised inside the C decoder: no cause worth chaining
            raise _too_deep(self.provider, "body") from None

    def checked(self, head: Head, data: Any) -> Any:
        """``data``, unless it is an in-band error envelope: then that error is raised."""
        if self.check_body is not None:
            err = self.check_body(data, request_id(head.headers))
            if err is not None:
                raise self.scrubbed(err)
        return data

    def not_a_stream(self, head: Head, body: bytes) -> NoReturn:
        """A 2xx reply to a stream request that is JSON or HTML: raise what it says."""
        self.checked(head, self.decode_json(head, body))  # an error envelope raises its error
        raise ResponseFormatError(
            f"{self.provider} answered a streaming request with "
            f"{head.headers.get('content-type', 'no content type')}, not an event stream"
        )

    def scrubbed(self, err: ProviderError) -> ProviderError:
        """``err`` again without the key, should the provider have echoed it in its message."""
        if not any(s and s in err.message for s in self.secrets):
            return err
        return type(err)(
            redact(err.message, self.secrets),
            provider=err.provider,
            status=err.status,
            code=err.code,
            request_id=err.request_id,
            hint=err.hint,
            retry_after=err.retry_after,
        )

    def events(
        self,
        head: Head,
        feed: Callable[[Any], list[StreamEvent]],
        decoder: Callable[[], Decoder] | None = None,
    ) -> EventReader:
        """A reader of the event stream ``head`` opens, handing each event to ``feed``.

        ``decoder`` makes what cuts the bytes into events (default: an ``SSEDecoder``).
        """
        return EventReader(self, head, feed, decoder)


_DONE = b"[DONE]"
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class EventReader:
    """Bytes of an event stream in; each event decoded, checked and handed to ``feed`` (an
    accumulator's) at once; what ``feed`` returns out. Stops at ``data: [DONE]``.

    ``read`` takes whole reads, so the stream's hot path costs one call per read rather than
    one per event; each decoded event is dropped as soon as it is fed (a batch of them held
    at once would cost the garbage collector more than the calls saved).
    """

    __slots__ = ("_check", "_decoder", "_error", "_feed", "_rid", "_wire", "done", "received")

    def __init__(
        self,
        wire: Wire,
        head: Head,
        feed: Callable[[Any], list[StreamEvent]],
        decoder: Callable[[], Decoder] | None = None,
    ) -> None:
        self._wire = wire
        self._feed = feed
        self._check = wire.check_body
        self._rid = request_id(head.headers) if wire.check_body is not None else None
        self._decoder: Decoder = SSEDecoder() if decoder is None else decoder()
        self._error: Exception | None = None
        #: True once the stream has ended (``[DONE]``, the end of the body, or an error).
        self.done = False
        #: True once an event has been handed to ``feed``.
        self.received = False

    def read(self, chunk: bytes | None) -> list[StreamEvent]:
        """What ``feed`` makes of the events ``chunk`` completes; None is the end of the body.

        An event that is not JSON, an in-band error or a ``feed`` error raises; when events
        came before it in the same read, what they made is returned first and the error
        waits for ``finish``.
        """
        if chunk is None:
            self.done = True
            datas = self._decoder.flush()
        else:
            datas = self._decoder.feed(chunk)
        if not datas:
            return []
        if _DONE in datas:
            datas = datas[: datas.index(_DONE)]
            self.done = True
        out: list[StreamEvent] = []
        feed, check = self._feed, self._check
        fed = 0
        try:
            for data in datas:
                # ``scan_once`` is the C scanner under ``json.loads`` without its encoding
                # sniffing and whitespace handling; what it does not take whole goes slowly.
                text = data.decode("utf-8", "replace")
                try:
                    value, end = _scan(text, 0)
                except (StopIteration, ValueError, RecursionError):
                    end = -1
                if end != len(text):
                    value = self._loads(data)
                if check is not None:
                    error = check(value, self._rid)
                    if error is not None:
                        raise self._wire.scrubbed(error)
                self.received = True
                fed += 1
                out += feed(value)
        except (ProviderError, ResponseFormatError) as exc:
            if not fed:
                raise
            self._error = exc
            self.done = True
        return out

    def finish(self) -> None:
        """Raise the error that came after the last events returned, if one did."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _loads(self, data: bytes) -> Any:
        try:
            return json.loads(data.decode("utf-8", "replace"))
        except ValueError as exc:
            snippet = data[:120].decode("utf-8", "replace")
            raise ResponseFormatError(
                f"{self._wire.provider} sent a stream event that is not JSON: {snippet!r}"
            ) from exc
        except RecursionError:
            raise _too_deep(self._wire.provider, "stream event") from None


def _too_deep(provider: str, what: str) -> ResponseFormatError:
    # ``json.loads`` raises RecursionError for arrays/objects nested past Python's recursion
    # limit (about 1000 deep): no provider's reply nests like that.
    return ResponseFormatError(
        f"{provider} sent a {what} nested too deep to read (JSON arrays or objects nested "
        "about 1000 levels or more): citekit cannot read this response. Retry the call; if it "
        "happens again, report it with this message."
    )
