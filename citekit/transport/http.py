"""What every request of one client shares on the wire: address, key, timeouts, headers; and
the one translation of httpx's exceptions into citekit's errors.

The drivers (``citekit.transport.driver``) send with it; what to send, what a reply means and
when to retry are the flows' business (``citekit.wire``).
"""

from __future__ import annotations

import contextlib
import contextvars
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import httpx

from ..core.errors import APITimeoutError, ResponseFormatError, TransportError
from ..core.secrets import scrub
from ..wire.flow import RequestSpec

__all__ = [
    "DEFAULT_CONNECTIONS",
    "DEFAULT_DEADLINE",
    "HttpConfig",
    "connections",
    "make_timeout",
    "pool_limits",
    "wanted_connections",
]

#: Seconds a call may take in all (retries and their waits included) unless ``deadline=`` says
#: otherwise: 10 minutes, above Maritaca's flex queue (up to 5 minutes) plus an answer.
DEFAULT_DEADLINE = 600.0

_USER_AGENT = "citekit/0.1 (+httpx)"

#: Connections a client's pool holds unless more requests are asked to run at once
#: (``connections``): httpx's own default.
DEFAULT_CONNECTIONS = 100

_WANTED: contextvars.ContextVar[int] = contextvars.ContextVar("citekit_connections", default=0)


@contextlib.contextmanager
def connections(count: int) -> Iterator[None]:
    """Within the block (and the tasks started in it), up to ``count`` requests run at once:
    a pool citekit owns grows to hold them, so none waits for a connection (and times out
    there) because the pool is smaller than the concurrency asked for."""
    token = _WANTED.set(max(_WANTED.get(), count))
    try:
        yield
    finally:
        _WANTED.reset(token)


def wanted_connections() -> int:
    """The pool size for a request sent here: the default, or more if ``connections`` asks."""
    return max(DEFAULT_CONNECTIONS, _WANTED.get())


def pool_limits(size: int) -> httpx.Limits:
    """A pool of ``size`` connections, all kept alive between requests (a batch's workers
    reuse theirs)."""
    return httpx.Limits(max_connections=size, max_keepalive_connections=size)


def make_timeout(timeout: float | httpx.Timeout | None, *, read: float = 120.0) -> httpx.Timeout:
    """A timeout with a generous read limit: answers commonly take 25-40 s."""
    if isinstance(timeout, httpx.Timeout):
        return timeout
    if timeout is None:
        return httpx.Timeout(connect=10.0, read=read, write=30.0, pool=30.0)
    return httpx.Timeout(float(timeout))


@dataclass(frozen=True)
class HttpConfig:
    """What every request of one client shares. The key is kept out of ``repr``."""

    provider: str
    base_url: str
    api_key: str = field(repr=False)
    timeout: httpx.Timeout | None = field(default_factory=lambda: make_timeout(None))
    auth_scheme: str = "Bearer"
    headers: Mapping[str, str] = field(default_factory=dict)

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

    def timeout_for(
        self, client: httpx.Client | httpx.AsyncClient, spec: RequestSpec
    ) -> httpx.Timeout:
        """The timeouts ``spec`` is sent with (the caller's own http_client keeps its own)."""
        timeout = self.timeout if self.timeout is not None else client.timeout
        if spec.read_timeout is not None and self.timeout is not None:
            read = timeout.read
            if read is not None and read < spec.read_timeout:
                timeout = httpx.Timeout(
                    connect=timeout.connect,
                    read=spec.read_timeout,
                    write=timeout.write,
                    pool=timeout.pool,
                )
        return timeout

    def build(
        self,
        client: httpx.Client | httpx.AsyncClient,
        spec: RequestSpec,
        *,
        timeout: httpx.Timeout | None = None,
        within: float | None = None,
        owned: bool = False,
    ) -> httpx.Request:
        """The request for ``spec``; ``within`` (seconds left of the call's deadline) caps
        each of its timeouts, so no single connect or read outlasts the deadline.

        ``owned``: citekit made ``client`` (no headers, parameters, auth or hooks of a
        caller's): a JSON request is then made from its URL and headers as prepared the first
        time (``_Prepared``), not merged with the client's anew for each request, unless the
        client holds cookies a server set (merged as httpx merges them).
        """
        timeout = timeout or self.timeout_for(client, spec)
        if within is not None:
            timeout = httpx.Timeout(
                connect=_capped(timeout.connect, within),
                read=_capped(timeout.read, within),
                write=_capped(timeout.write, within),
                pool=_capped(timeout.pool, within),
            )
        if (
            owned
            and spec.files is None
            and spec.data is None
            and spec.params is None
            and not client.cookies
        ):
            url, headers, _ = _PREPARED.get(self, client, spec)
            return httpx.Request(
                spec.method,
                url,
                json=spec.json,
                headers=headers,
                extensions={"timeout": timeout.as_dict()},
            )
        return client.build_request(
            spec.method,
            self.url(spec.path),
            json=spec.json if spec.files is None else None,
            files=spec.files,
            data=spec.data,
            params=spec.params,
            headers=self.request_headers(stream=spec.stream),
            timeout=timeout,
        )

    def transport_error(
        self, exc: httpx.HTTPError | httpx.InvalidURL
    ) -> TransportError | ResponseFormatError:
        """The citekit error for ``exc``, the key scrubbed out; ``connect`` when nothing left."""
        text = scrub(f"{type(exc).__name__}: {exc}".rstrip(": "), (self.api_key,))
        where = f"{self.provider} at {self.base_url}"
        if isinstance(exc, httpx.DecodingError):
            # The server was reached and answered; its body is broken (bad gzip, say).
            return ResponseFormatError(
                f"{where} sent a body that does not decode as its Content-Encoding says ({text})"
            )
        if isinstance(exc, httpx.PoolTimeout):
            # Waiting for a free connection: the request was never sent, so it is safe to
            # send again (``connect``), as a connect error is.
            return APITimeoutError(
                f"Every connection to {where} stayed busy past the pool timeout ({text}): "
                "lower the concurrency, or close streams you stopped reading",
                connect=True,
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
        if isinstance(exc, httpx.InvalidURL) or (
            isinstance(exc, httpx.RemoteProtocolError) and "location header" in str(exc)
        ):
            # httpx reads a redirect's Location even when not following it: one it cannot
            # parse is the server's reply (reached, answered), not a failure to reach it.
            return ResponseFormatError(
                f"{where} answered with a redirect whose Location is not a valid URL ({text}); "
                "citekit does not follow redirects. If the API has moved, pass its new "
                "address as base_url="
            )
        connect = isinstance(exc, httpx.ConnectError)
        return TransportError(f"Could not reach {where}: {text}", connect=connect)


class _Prepared:
    """The URL and headers of each (config, path, stream) as a client citekit owns merges
    them (``client.build_request``), made once per client: the client's own headers never
    change, so merging them for every request would only repeat the same work."""

    def __init__(self) -> None:
        self._made: weakref.WeakKeyDictionary[
            httpx.Client | httpx.AsyncClient, dict[tuple[int, str, bool], _Parts]
        ] = weakref.WeakKeyDictionary()

    def get(
        self, config: HttpConfig, client: httpx.Client | httpx.AsyncClient, spec: RequestSpec
    ) -> _Parts:
        made = self._made.get(client)
        if made is None:
            made = self._made.setdefault(client, {})
        key = (id(config), spec.path, spec.stream)
        parts = made.get(key)
        if parts is None or parts[2] is not config:
            # As ``build_request`` merges them: the client's headers, then the request's.
            headers = httpx.Headers(client.headers)
            headers.update(config.request_headers(stream=spec.stream))
            parts = made[key] = (httpx.URL(config.url(spec.path)), headers, config)
        return parts


_Parts = tuple[httpx.URL, httpx.Headers, HttpConfig]
_PREPARED = _Prepared()


def _capped(limit: float | None, within: float) -> float:
    return within if limit is None else min(limit, within)
