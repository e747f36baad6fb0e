"""The one boundary with the network: sending, retries, timeouts, error translation.

Everything that touches httpx lives here. Providers describe a request as a ``RequestSpec``
(pure data) and receive decoded JSON; this module sends it with ``httpx.Client`` or
``httpx.AsyncClient`` (two sibling classes, same behaviour), retries what is worth retrying,
decodes SSE streams and turns every failure into a ``citekit`` error (``raise ... from exc``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..core.errors import (
    APITimeoutError,
    ProviderError,
    ResponseFormatError,
    TransportError,
    redact,
)
from ..wire.errors import error_message, generic_error, parse_retry_after, request_id
from ..wire.retry import RetryPolicy
from ..wire.sse import SSEDecoder

__all__ = [
    "AsyncSender",
    "HttpConfig",
    "RequestSpec",
    "SyncSender",
    "make_timeout",
]

_USER_AGENT = "citekit/0.1 (+httpx)"

#: Turns a decoded error body into a provider error; returns None to use the generic mapping.
ErrorClassifier = Callable[[int | None, Any, str, str | None], ProviderError | None]
#: Checks a 2xx JSON body for an in-band error (GPTBots puts ``{code, message}`` in a 200).
BodyCheck = Callable[[Any, str | None], ProviderError | None]


def make_timeout(timeout: float | httpx.Timeout | None, *, read: float = 120.0) -> httpx.Timeout:
    """A timeout with a generous read limit: answers commonly take 25-40 s."""
    if isinstance(timeout, httpx.Timeout):
        return timeout
    if timeout is None:
        return httpx.Timeout(connect=10.0, read=read, write=30.0, pool=30.0)
    return httpx.Timeout(float(timeout))


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """A request described as data: built by pure provider code, sent by a sender."""

    method: str
    path: str
    json: Any = None
    params: Mapping[str, str] | None = None
    stream: bool = False


@dataclass(frozen=True)
class HttpConfig:
    """What every request of one client shares. The key is kept out of ``repr``."""

    provider: str
    base_url: str
    api_key: str = field(repr=False)
    timeout: httpx.Timeout | None = field(default_factory=lambda: make_timeout(None))
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    auth_scheme: str = "Bearer"
    headers: Mapping[str, str] = field(default_factory=dict)
    classify: ErrorClassifier | None = field(default=None, repr=False, compare=False)
    check_body: BodyCheck | None = field(default=None, repr=False, compare=False)

    def request_headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "Authorization": f"{self.auth_scheme} {self.api_key}",
            "Accept": "text/event-stream" if stream else "application/json",
            "User-Agent": _USER_AGENT,
        }
        headers.update(self.headers)
        return headers

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")

    def build(self, client: httpx.Client | httpx.AsyncClient, spec: RequestSpec) -> httpx.Request:
        return client.build_request(
            spec.method,
            self.url(spec.path),
            json=spec.json,
            params=spec.params,
            headers=self.request_headers(stream=spec.stream),
            # None: the caller's own http_client keeps the timeout it was configured with.
            timeout=self.timeout if self.timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )

    # -- errors ------------------------------------------------------------------------
    def error_for(self, response: httpx.Response, body: bytes) -> ProviderError:
        rid = request_id(response.headers)
        parsed, message = error_message(body, response.headers.get("content-type", ""))
        message = redact(message, (self.api_key,))
        if self.classify is not None:
            err = self.classify(response.status_code, parsed, message, rid)
            if err is not None:
                return err
        return generic_error(
            self.provider,
            response.status_code,
            message,
            rid,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
        )

    def transport_error(self, exc: httpx.HTTPError) -> TransportError:
        """The citekit error for ``exc``, the key scrubbed out; ``connect`` when nothing left."""
        text = redact(f"{type(exc).__name__}: {exc}".rstrip(": "), (self.api_key,))
        where = f"{self.provider} at {self.base_url}"
        if isinstance(exc, httpx.PoolTimeout):
            return APITimeoutError(
                f"Every connection to {where} stayed busy past the pool timeout ({text}): "
                "lower the concurrency, or close streams you stopped reading"
            )
        if isinstance(exc, httpx.ConnectTimeout):
            return APITimeoutError(
                f"Could not connect to {where} within the timeout ({text})", connect=True
            )
        if isinstance(exc, httpx.TimeoutException):
            return APITimeoutError(
                f"No answer from {where} within the timeout ({text}). "
                "Answers can take 25-40 s: raise timeout= if this repeats."
            )
        connect = isinstance(exc, httpx.ConnectError)
        return TransportError(f"Could not reach {where}: {text}", connect=connect)

    def decode_json(self, response: httpx.Response, body: bytes) -> Any:
        try:
            return json.loads(body)
        except ValueError as exc:
            snippet = body[:200].decode("utf-8", "replace")
            raise ResponseFormatError(
                f"{self.provider} sent a body that is not JSON (HTTP {response.status_code}, "
                f"{len(body)} bytes, starts {snippet!r})"
            ) from exc

    def _scrubbed(self, err: ProviderError) -> ProviderError:
        """``err`` again without the key, should the provider have echoed it in its message."""
        if not self.api_key or self.api_key not in err.message:
            return err
        return type(err)(
            redact(err.message, (self.api_key,)),
            provider=err.provider,
            status=err.status,
            code=err.code,
            request_id=err.request_id,
            hint=err.hint,
            retry_after=err.retry_after,
        )

    def not_a_stream(self, response: httpx.Response, body: bytes) -> None:
        """A 2xx reply to a stream request that is JSON or HTML: raise what it says."""
        data = self.decode_json(response, body)
        self.checked(response, data)  # an in-band error envelope raises its typed error
        raise ResponseFormatError(
            f"{self.provider} answered a streaming request with "
            f"{response.headers.get('content-type', 'no content type')}, not an event stream"
        )

    def checked(self, response: httpx.Response, data: Any) -> Any:
        if self.check_body is not None:
            err = self.check_body(data, request_id(response.headers))
            if err is not None:
                raise self._scrubbed(err)
        return data


class SyncSender:
    """Sends ``RequestSpec``s with an ``httpx.Client``, with retries."""

    def __init__(
        self,
        config: HttpConfig,
        *,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = config
        self._owned = http_client is None
        self._client = http_client or httpx.Client(
            transport=transport, timeout=config.timeout or make_timeout(None)
        )

    def close(self) -> None:
        if self._owned:
            self._client.close()

    def _open(self, spec: RequestSpec, attempt: int = 0) -> tuple[httpx.Response, int]:
        """A 2xx response (body not read yet) and the attempt number it took."""
        cfg = self.config
        while True:
            request = cfg.build(self._client, spec)
            try:
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                failure = cfg.transport_error(exc)
                if cfg.retry.should_retry(failure, attempt, received=False):
                    time.sleep(cfg.retry.delay(attempt))
                    attempt += 1
                    continue
                raise failure from exc
            if response.is_success:
                return response, attempt
            try:
                body = response.read()
            except httpx.HTTPError as exc:
                raise cfg.transport_error(exc) from exc
            finally:
                response.close()
            err = cfg.error_for(response, body)
            if cfg.retry.should_retry(err, attempt, received=False):
                time.sleep(cfg.retry.delay(attempt, err.retry_after))
                attempt += 1
                continue
            raise err

    def request_json(self, spec: RequestSpec) -> Any:
        """Send and return the decoded JSON body, retrying in-band retryable errors too.

        One attempt counter covers both kinds of retry: at most ``max_retries + 1`` requests.
        """
        cfg = self.config
        attempt = 0
        while True:
            response, attempt = self._open(spec, attempt)
            try:
                body = response.read()
            except httpx.HTTPError as exc:
                raise cfg.transport_error(exc) from exc
            finally:
                response.close()
            try:
                return cfg.checked(response, cfg.decode_json(response, body))
            except ProviderError as err:
                if cfg.retry.should_retry(err, attempt, received=False):
                    time.sleep(cfg.retry.delay(attempt, err.retry_after))
                    attempt += 1
                    continue
                raise

    def stream_json(self, spec: RequestSpec) -> Iterator[Any]:
        """Open a stream (retrying failures before the first event) and yield decoded events.

        Stops at ``data: [DONE]``. A retryable in-band error as the first event (GPTBots
        ``50000``) is retried like an HTTP 500. A failure after the stream began is raised as
        ``TransportError`` / ``ResponseFormatError`` / ``ProviderError`` for the caller to
        wrap with the partial answer.
        """
        cfg = self.config
        attempt = 0
        while True:
            response, attempt = self._open(spec, attempt)
            decoder = SSEDecoder()
            received = False
            try:
                if not _is_event_stream(response):
                    cfg.not_a_stream(response, response.read())
                for chunk in response.iter_bytes():
                    for data in decoder.feed(chunk):
                        if data == b"[DONE]":
                            return
                        yield cfg.checked(response, _loads_event(cfg, data))
                        received = True
                for data in decoder.flush():
                    if data == b"[DONE]":
                        return
                    yield cfg.checked(response, _loads_event(cfg, data))
                return
            except ProviderError as err:
                if not cfg.retry.should_retry(err, attempt, received=received):
                    raise
                delay = cfg.retry.delay(attempt, err.retry_after)
            except httpx.HTTPError as exc:
                raise cfg.transport_error(exc) from exc
            finally:
                response.close()
            time.sleep(delay)
            attempt += 1


class AsyncSender:
    """Sends ``RequestSpec``s with an ``httpx.AsyncClient``, with retries.

    An ``AsyncClient`` belongs to the event loop it was created on; the owning client makes
    one sender per loop.
    """

    def __init__(
        self,
        config: HttpConfig,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = config
        self._owned = http_client is None
        self._client = http_client or httpx.AsyncClient(
            transport=transport, timeout=config.timeout or make_timeout(None)
        )

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()

    async def _open(self, spec: RequestSpec, attempt: int = 0) -> tuple[httpx.Response, int]:
        cfg = self.config
        while True:
            request = cfg.build(self._client, spec)
            try:
                response = await self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                failure = cfg.transport_error(exc)
                if cfg.retry.should_retry(failure, attempt, received=False):
                    await asyncio.sleep(cfg.retry.delay(attempt))
                    attempt += 1
                    continue
                raise failure from exc
            if response.is_success:
                return response, attempt
            try:
                body = await response.aread()
            except httpx.HTTPError as exc:
                raise cfg.transport_error(exc) from exc
            finally:
                await response.aclose()
            err = cfg.error_for(response, body)
            if cfg.retry.should_retry(err, attempt, received=False):
                await asyncio.sleep(cfg.retry.delay(attempt, err.retry_after))
                attempt += 1
                continue
            raise err

    async def request_json(self, spec: RequestSpec) -> Any:
        cfg = self.config
        attempt = 0
        while True:
            response, attempt = await self._open(spec, attempt)
            try:
                body = await response.aread()
            except httpx.HTTPError as exc:
                raise cfg.transport_error(exc) from exc
            finally:
                await response.aclose()
            try:
                return cfg.checked(response, cfg.decode_json(response, body))
            except ProviderError as err:
                if cfg.retry.should_retry(err, attempt, received=False):
                    await asyncio.sleep(cfg.retry.delay(attempt, err.retry_after))
                    attempt += 1
                    continue
                raise

    async def stream_json(self, spec: RequestSpec) -> AsyncIterator[Any]:
        cfg = self.config
        attempt = 0
        while True:
            response, attempt = await self._open(spec, attempt)
            decoder = SSEDecoder()
            received = False
            try:
                if not _is_event_stream(response):
                    cfg.not_a_stream(response, await response.aread())
                async for chunk in response.aiter_bytes():
                    for data in decoder.feed(chunk):
                        if data == b"[DONE]":
                            return
                        yield cfg.checked(response, _loads_event(cfg, data))
                        received = True
                for data in decoder.flush():
                    if data == b"[DONE]":
                        return
                    yield cfg.checked(response, _loads_event(cfg, data))
                return
            except ProviderError as err:
                if not cfg.retry.should_retry(err, attempt, received=received):
                    raise
                delay = cfg.retry.delay(attempt, err.retry_after)
            except httpx.HTTPError as exc:
                raise cfg.transport_error(exc) from exc
            finally:
                await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1


def _is_event_stream(response: httpx.Response) -> bool:
    ctype = response.headers.get("content-type", "")
    # A server that omits the type still gets the benefit of the doubt; JSON or HTML does not.
    return not ctype or "event-stream" in ctype or ("json" not in ctype and "html" not in ctype)


_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads_event(cfg: HttpConfig, data: bytes) -> Any:
    # ``scan_once`` is the C scanner under ``json.loads`` without its encoding sniffing and
    # whitespace handling: it matters at one call per streamed chunk. Anything unusual
    # (surrounding whitespace, trailing garbage) goes through ``json.loads`` for its verdict.
    text = data.decode("utf-8", "replace")
    try:
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError):
        pass
    try:
        return json.loads(text)
    except ValueError as exc:
        snippet = data[:120].decode("utf-8", "replace")
        raise ResponseFormatError(
            f"{cfg.provider} sent a stream event that is not JSON: {snippet!r}"
        ) from exc
