"""Reading one provider's responses, without I/O: error replies, JSON bodies, in-band errors,
and the events of a stream.

A response is seen through ``Head`` (its status and headers: an ``httpx.Response`` is one) and
bytes the transport has read. Every message that could quote the request has the API key
scrubbed out before it is kept.

One rule for hostile bytes, blocking or streamed: invalid UTF-8 becomes U+FFFD (as a stream's
events always did) rather than refusing the whole reply; a body past ``max_body_bytes`` or a
stream line past ``max_line_bytes`` (decoded bytes, after gzip) stops the reading with
``ResponseTooLargeError``; what the server said is quoted only through ``body_start`` (control
characters out, 200 characters, the key scrubbed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from ..core.errors import ProviderError, ResponseFormatError, ResponseTooLargeError
from ..core.names import display_name
from ..core.secrets import scrub_error, scrubber
from ..model import StreamEvent
from .errors import error_message, generic_error, request_id, retry_wait, should_retry_header
from .retry import RetryPolicy
from .sse import MAX_LINE_BYTES, SSEDecoder
from .typed import decode_body

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_LINE_BYTES",
    "BodyCheck",
    "Decoder",
    "ErrorClassifier",
    "EventReader",
    "Head",
    "Wire",
    "body_start",
    "is_event_stream",
]

#: The default largest response body a client reads: 64 MiB of decoded bytes, hundreds of
#: times a real answer, well short of what a compressed "bomb" would inflate to.
MAX_BODY_BYTES = 64 * 1024 * 1024

#: Turns a decoded error body into a provider error; returns None to use the generic mapping.
ErrorClassifier = Callable[[int | None, Any, str, str | None], ProviderError | None]
#: Checks a 2xx JSON body for an in-band error (GPTBots puts ``{code, message}`` in a 200).
BodyCheck = Callable[[Any, str | None], ProviderError | None]


class Decoder(Protocol):
    """Cuts a stream's bytes into event payloads (``SSEDecoder`` is one); made with the
    longest line it may keep (``max_line_bytes``)."""

    def feed(self, chunk: bytes) -> list[bytes]: ...
    def flush(self) -> list[bytes]: ...


class Head(Protocol):
    """What is read of a response before its body: ``httpx.Response`` is one."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


# C0 and C1 controls, and the invisible format characters that can reorder or hide text
# (bidi overrides and isolates, zero-width characters, the BOM).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]+")


def body_start(body: bytes, secrets: tuple[str, ...] = (), *, chars: int = 200) -> str:
    """The start of a body a server sent, fit to quote in an error: decoded (U+FFFD for bad
    UTF-8), control characters out, whitespace runs made one space, ``chars`` characters at
    most (``...`` marks a cut), every secret scrubbed.

    >>> from citekit.wire.response import body_start
    >>> print(body_start(b"<html>\\r\\n<title>502 Bad\\x1b[31m Gateway</title>\\xff"))
    <html> <title>502 Bad [31m Gateway</title>\N{REPLACEMENT CHARACTER}
    >>> body_start(b"key sk-123456 " * 40, ("sk-123456",), chars=20)
    'key *** key *** key ...'
    """
    # A secret (ASCII, short) that starts within the quoted characters ends inside the window.
    clean = scrubber(secrets)
    window = chars * 4 + 256 + clean.longest
    text = body[:window].decode("utf-8", "replace")
    text = clean(" ".join(_CONTROLS.sub(" ", text).split()))
    if len(text) > chars or len(body) > window:
        return text[:chars] + "..."
    return text


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
    #: The most decoded bytes read of one response (a stream's too).
    max_body_bytes: int = MAX_BODY_BYTES
    #: The longest line or event of a stream.
    max_line_bytes: int = MAX_LINE_BYTES

    def too_large(self, what: str, limit: int, option: str) -> ResponseTooLargeError:
        """The error for ``what`` past ``limit``, naming the client option that raises it."""
        name = display_name(self.provider)
        return ResponseTooLargeError(
            f"{name} sent {what} over {limit:,} bytes, the client's limit: citekit stopped "
            f"reading there. If the reply is genuine, raise the limit: "
            f"ck.{name}({option}={2 * limit})",
            limit=limit,
            option=option,
        )

    def error_for(self, head: Head, body: bytes) -> ProviderError:
        """The typed error for a non-2xx reply, with the server's ``retry-after-ms`` /
        ``Retry-After`` and ``x-should-retry``."""
        rid = request_id(head.headers)
        if 300 <= head.status_code < 400:
            # Redirects are not followed (httpx's default): an API that moved is a base_url=
            # to change, not something to chase with the key in the Authorization header.
            location = head.headers.get("location")
            where = repr(body_start(location.encode(), self.secrets)) if location else "nowhere"
            return ProviderError(
                f"a redirect to {where}, which citekit does not follow",
                provider=self.provider,
                status=head.status_code,
                request_id=rid,
                hint="If the API has moved, pass its new address as base_url=",
            )
        parsed, message = error_message(
            body, head.headers.get("content-type", ""), secrets=self.secrets
        )
        retry_after = retry_wait(head.headers)
        err = None
        if self.classify is not None:
            err = self.classify(head.status_code, parsed, message, rid)
            if err is not None and err.retry_after is None:
                err.retry_after = retry_after
        if err is None:
            err = generic_error(
                self.provider, head.status_code, message, rid, retry_after=retry_after
            )
        err.should_retry = should_retry_header(head.headers)
        return err

    def decode_json(self, head: Head, body: bytes) -> Any:
        """The JSON value of ``body``; invalid UTF-8 in it reads as U+FFFD, as in a stream."""
        value = decode_body(body)  # msgspec, at C speed, where it reads it as json does
        if value is not None:
            return value
        try:
            # ``json.loads`` of bytes would refuse the whole reply over one bad byte.
            return json.loads(body.decode(json.detect_encoding(body), "replace"))
        except ValueError as exc:
            raise ResponseFormatError(
                f"{self.provider} sent a body that is not JSON (HTTP {head.status_code}, "
                f"{len(body)} bytes, starts {body_start(body, self.secrets)!r})"
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
        ctype = head.headers.get("content-type", "")
        if "json" in ctype:
            self.checked(head, self.decode_json(head, body))  # an error envelope raises its error
        raise ResponseFormatError(
            f"{display_name(self.provider)} answered a streaming request with HTTP "
            f"{head.status_code} {ctype or '(no content type)'}, not an event stream; "
            f"the body starts: {body_start(body, self.secrets)!r}"
        )

    def no_events(self, head: Head, start: bytes, size: int) -> ResponseFormatError:
        """A 2xx reply to a stream request that was read whole and held no event."""
        ctype = head.headers.get("content-type", "") or "(no content type)"
        what = f"its {size:,} bytes; the body starts: {body_start(start, self.secrets)!r}"
        return ResponseFormatError(
            f"{display_name(self.provider)} answered a streaming request with HTTP "
            f"{head.status_code} {ctype} and no events in {what if size else 'an empty body'}"
        )

    def scrubbed(self, err: ProviderError) -> ProviderError:
        """``err`` without the key, should the provider have echoed it (changed in place)."""
        scrub_error(err, self.secrets)
        return err

    def events(
        self,
        head: Head,
        feed: Callable[[Any], list[StreamEvent]],
        decoder: Callable[[int], Decoder] | None = None,
        typed: Callable[[bytes], list[StreamEvent] | None] | None = None,
        plain: Callable[[list[bytes]], list[StreamEvent] | None] | None = None,
    ) -> EventReader:
        """A reader of the event stream ``head`` opens, handing each event to ``feed``.

        ``decoder`` makes what cuts the bytes into events (default: an ``SSEDecoder``);
        ``typed`` (an accumulator's ``feed_json``) reads the events of the usual shape from
        their bytes, the others going to ``feed`` decoded; ``plain`` (its ``feed_plain``)
        reads a whole read's events at once when each is of the plainest shape.
        """
        return EventReader(self, head, feed, decoder, typed, plain)


_DONE = b"[DONE]"
_START = 1024  # bytes of a stream kept to quote, should it hold no event
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class EventReader:
    """Bytes of an event stream in; each event decoded, checked and handed to ``feed`` (an
    accumulator's) at once; what ``feed`` returns out. Stops at ``data: [DONE]``.

    ``read`` takes whole reads, so the stream's hot path costs one call per read rather than
    one per event; each decoded event is dropped as soon as it is fed (a batch of them held
    at once would cost the garbage collector more than the calls saved).
    """

    __slots__ = (
        "_check",
        "_decoder",
        "_error",
        "_feed",
        "_limit",
        "_plain",
        "_rid",
        "_typed",
        "_wire",
        "done",
        "received",
        "size",
        "start",
    )

    def __init__(
        self,
        wire: Wire,
        head: Head,
        feed: Callable[[Any], list[StreamEvent]],
        decoder: Callable[[int], Decoder] | None = None,
        typed: Callable[[bytes], list[StreamEvent] | None] | None = None,
        plain: Callable[[list[bytes]], list[StreamEvent] | None] | None = None,
    ) -> None:
        self._wire = wire
        self._feed = feed
        self._typed = typed
        self._plain = plain
        self._check = wire.check_body
        self._rid = request_id(head.headers) if wire.check_body is not None else None
        make = SSEDecoder if decoder is None else decoder
        self._decoder: Decoder = make(wire.max_line_bytes)
        self._limit = wire.max_body_bytes
        self._error: Exception | None = None
        #: Bytes read so far, and the first of them (to quote a body that held no event).
        self.size = 0
        self.start = b""
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
        try:
            if chunk is None:
                self.done = True
                datas = self._decoder.flush()
            else:
                size = self.size + len(chunk)
                if size > self._limit:
                    return self._over(chunk)
                self.size = size
                if len(self.start) < _START:
                    self.start += chunk[:_START]
                datas = self._decoder.feed(chunk)
        except ResponseTooLargeError as exc:
            if exc.option != "max_line_bytes":
                raise
            raise self._wire.too_large("a stream line or event", exc.limit, exc.option) from None
        if not datas:
            return []
        if _DONE in datas:
            datas = datas[: datas.index(_DONE)]
            self.done = True
            if not datas:
                return []
        if self._plain is not None:
            # A read of plain text chunks alone (nearly every read), read whole at once.
            plain = self._plain(datas)
            if plain is not None:
                self.received = True
                return plain
        out: list[StreamEvent] = []
        feed, check, typed = self._feed, self._check, self._typed
        fed = 0
        try:
            for data in datas:
                if typed is not None:
                    # The usual shape, decoded typed from the bytes (``citekit.wire.typed``):
                    # no error envelope is of it, so there is nothing for ``check`` to see.
                    events = typed(data)
                    if events is not None:
                        fed += 1
                        out += events
                        continue
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
        finally:
            if fed:
                self.received = True
        return out

    def _over(self, chunk: bytes) -> list[StreamEvent]:
        """The read that passes ``max_body_bytes``: its bytes within the limit are read (their
        events handed on), then the too-large error, raised now or, after events, by
        ``finish``. A stream that ended (``[DONE]``) within the limit is no error."""
        out = self.read(chunk[: self._limit - self.size])
        if self.done:
            return out
        self.done = True
        error = self._wire.too_large("a streamed body", self._limit, "max_body_bytes")
        if not out:
            raise error
        if self._error is None:
            self._error = error
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
            snippet = body_start(data, self._wire.secrets, chars=120)
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
