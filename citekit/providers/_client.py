"""The shell every provider client shares: configuration, keys, drivers, lifetime.

A call is a flow (``citekit.wire.flow``) written once; ``_run`` / ``_arun`` drive it to its
answer, ``_stream`` / ``_astream`` hand it to a ``Stream`` / ``AsyncStream``, and ``_logged``
wraps it in the answer log's cache look-up and record. The answer a call ends with, whole or
partial (a broken stream, a deadline, Ctrl-C), is also ``citekit.last_answer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import sys
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar
from urllib.parse import urlsplit

import httpx

from ..core.errors import ConfigurationError
from ..core.kernel import in_kernel
from ..core.keys import stored_key
from ..core.names import ProviderEntry
from ..core.secrets import check_key, environment_keys, scrub_value, scrubber
from ..model import Answer, TextDelta, first_text
from ..transport.driver import AsyncDriver, SyncDriver
from ..transport.http import DEFAULT_DEADLINE, HttpConfig, make_timeout
from ..transport.ratelimit import OnQuota, RateLimit, RateLimiter
from ..transport.stream import AsyncStream, Stream
from ..wire.flow import Flow
from ..wire.guard import guarded
from ..wire.response import MAX_BODY_BYTES, MAX_LINE_BYTES, Wire
from ..wire.retry import RetryPolicy
from .failure import remember_error

if TYPE_CHECKING:
    from ..store import Log, LoggedCall

__all__ = ["ProviderClient", "last_answer"]

T = TypeVar("T")

_last: Answer | None = None


def last_answer() -> Answer | None:
    """The answer the most recent call of this process ended with (None before any).

    A partial one (``answer.partial``) after a stream broke, missed its deadline, or was
    stopped by Ctrl-C: ``citekit.last_answer`` reads it, where a notebook finds it after an
    interrupt.
    """
    return _last


def _remember(answer: Answer) -> None:
    global _last
    _last = answer


def check_deadline(deadline: float | None) -> float | None:
    """``deadline=`` checked: None, or seconds > 0 (``math.inf`` for no limit)."""
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, int | float) or not deadline > 0:
        raise ConfigurationError(
            f"deadline={deadline!r} must be a number of seconds > 0 (math.inf for no limit)"
        )
    return float(deadline)


def wants_display(display: bool | None) -> bool:
    """``display=None`` means: live output in a notebook or a terminal, silence in a pipe."""
    if display is not None:
        return display
    if in_kernel():
        return True
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


class ProviderClient:
    """Configuration and transport shared by every provider client.

    Parameters
    ----------
    api_key
        The key; by default read from the environment variable ``api_key_env``. Printable
        ASCII (a pasted invisible or control character is refused, naming its position). It
        never appears in what a call gives back, shows or saves, whatever the server echoes.
    base_url
        Where to send requests (e.g. a ``citekit.testing`` server's ``base_url(...)``); by
        default the environment variable ``base_url_env`` (``MAGISTERIUM_BASE_URL``, ...), else
        the provider's own address. A ``user:password@`` part is refused.
    timeout
        Seconds, or an ``httpx.Timeout``; by default 10 s to connect and 120 s to read. The
        read timeout also bounds the wait between two events of a stream: a stream that hands
        on nothing for that long (its server sending only keep-alive comments, or a byte now
        and then) ends with ``APITimeoutError``.
    deadline
        Seconds a whole call may take, retries and their waits included (waits for
        ``rate_limit=`` excluded), however the server drips; each call may pass its own.
        Default 600 (10 minutes); ``math.inf`` for no limit. A call past it raises
        ``APITimeoutError``; a stream that had begun raises ``StreamTimeout`` (an
        ``APITimeoutError`` and a ``StreamInterrupted``) with the partial answer in
        ``.answer``, logged as partial. A retry whose wait would pass it is not waited for.
    max_retries
        Retries after connect errors and HTTP 408, 429, 500, 502, 503, 504.
    http_client, async_http_client
        Your own ``httpx.Client`` / ``httpx.AsyncClient`` (you close them).
    transport
        An httpx transport for the clients citekit creates (``httpx.MockTransport`` works).
    rate_limit
        At most this many requests, evenly spaced: ``"5/s"``, ``"60/min"``, a number per
        minute, or a ``RateLimiter`` (one may be shared by several clients). Every HTTP request
        of this client counts (retries, and GPTBots' three requests per question), from sync
        and async calls, threads and ``ask_many`` alike. A window of an hour or more is a
        quota, counted rather than spaced: ``"100/day"`` (Magisterium's Preview plan),
        several limits at once as ``"5/min,100/day"``. None (default): no limit.
    on_quota
        Once a quota of ``rate_limit=`` is spent: ``"wait"`` (default) until it frees a
        request, or ``"raise"`` a ``QuotaExceededError`` saying when it will (a
        ``RateLimiter`` passed in keeps its own).
    max_body_bytes, max_line_bytes
        The most bytes read of one response (64 MiB by default; a stream's whole body too)
        and of one stream line or event (16 MiB), counted after gzip/deflate: past them the
        call raises ``ResponseTooLargeError`` (a stream that had begun, ``StreamInterrupted``
        with the partial answer) instead of filling the memory.
    """

    #: The provider's entry in ``citekit.core.names``: each client class declares its own, and
    #: the attributes below are read from it.
    entry: ClassVar[ProviderEntry]
    name: ClassVar[str]
    #: How messages name the provider.
    display_name: ClassVar[str]
    #: Environment variable read when ``base_url`` is not passed (``MARITACA_BASE_URL``, ...).
    base_url_env: ClassVar[str]
    default_base_url: ClassVar[str]
    api_key_env: ClassVar[str]
    default_model: ClassVar[str | None] = None
    model_env: ClassVar[str | None] = None
    auth_scheme: ClassVar[str] = "Bearer"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "entry" in cls.__dict__:
            entry = cls.entry
            cls.name = entry.name
            cls.display_name = entry.display_name
            cls.base_url_env = entry.base_url_env
            cls.default_base_url = entry.default_base_url
            cls.api_key_env = entry.api_key_env
            cls.default_model = entry.default_model
            cls.model_env = entry.model_env

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        model: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = 2,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        transport: Any = None,
        headers: dict[str, str] | None = None,
        rate_limit: RateLimit | None = None,
        on_quota: OnQuota = "wait",
        max_body_bytes: int = MAX_BODY_BYTES,
        max_line_bytes: int = MAX_LINE_BYTES,
        deadline: float | None = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(self.api_key_env)
        if api_key is None and not (key and key.strip()):  # after the environment
            key = stored_key(self.name)
        if not key or not key.strip():
            raise ConfigurationError(
                f"No API key for {self.display_name}: set {self.api_key_env} or pass api_key="
            )
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigurationError(f"max_retries={max_retries!r} must be a whole number >= 0")
        limits = {"max_body_bytes": max_body_bytes, "max_line_bytes": max_line_bytes}
        for option, value in limits.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{option}={value!r} must be a whole number of bytes >= 1")
        key = check_key(key, provider=self.display_name, env=self.api_key_env)
        from_env = os.environ.get(self.base_url_env)
        url = base_url or from_env or self.default_base_url
        # GPTBots hands its variable's value on as base_url: the message names where it came from.
        named = f"{self.base_url_env}=" if url == from_env else "base_url="
        url = _checked_url(url, named)
        env_model = os.environ.get(self.model_env) if self.model_env else None
        self.model: str | None = model or env_model or self.default_model
        self._config = HttpConfig(
            provider=self.name,
            base_url=url.rstrip("/"),
            api_key=key,
            # Your own http_client keeps its configured timeout unless you pass timeout=.
            timeout=None
            if timeout is None and (http_client or async_http_client)
            else make_timeout(timeout),
            auth_scheme=self.auth_scheme,
            headers=dict(headers or {}),
        )
        #: What never leaves a call: this client's key and any key in the environment.
        self._secrets = (key, *environment_keys())
        self._scrubber = scrubber(self._secrets)
        self._wire = Wire(
            provider=self.name,
            secrets=self._secrets,
            retry=RetryPolicy(max_retries=max_retries),
            classify=self._classify_error,
            check_body=self._check_body,
            max_body_bytes=max_body_bytes,
            max_line_bytes=max_line_bytes,
        )
        #: The client's ``RateLimiter`` (from ``rate_limit=``), or None.
        self.rate_limit: RateLimiter | None = None
        if rate_limit is not None:
            try:
                self.rate_limit = RateLimiter.parse(rate_limit, on_quota=on_quota)
            except ValueError as exc:
                raise ConfigurationError(str(exc)) from None
        given = check_deadline(deadline)
        #: Seconds a call may take in all (``deadline=``; infinite for no limit).
        self.deadline: float = DEFAULT_DEADLINE if given is None else given
        #: Whether the caller chose the timeout (with timeout= or an own http client).
        self._timeout_given = timeout is not None or bool(http_client or async_http_client)
        self._http_client = http_client
        self._async_http_client = async_http_client
        self._transport = transport
        self._sync: SyncDriver | None = None
        # An httpx.AsyncClient belongs to one event loop: one driver (and pool) per loop, dropped
        # with the loop (a notebook's kernel loop and citekit's background loop both stay).
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncDriver] = (
            weakref.WeakKeyDictionary()
        )

    # hooks for provider-specific error bodies ------------------------------------------
    _classify_error: Any = None
    _check_body: Any = None

    @property
    def base_url(self) -> str:
        return self._config.base_url

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            "api_key='***')"
        )

    # drivers ---------------------------------------------------------------------------
    @property
    def _driver(self) -> SyncDriver:
        if self._sync is None:
            transport = (
                self._transport if isinstance(self._transport, httpx.BaseTransport) else None
            )
            self._sync = SyncDriver(
                self._config,
                http_client=self._http_client,
                transport=transport,
                limiter=self.rate_limit,
            )
        return self._sync

    def _adriver(self) -> AsyncDriver:
        """The driver of the running loop (made on first use there)."""
        loop = asyncio.get_running_loop()
        driver = self._async.get(loop)
        if driver is None:
            transport = self._transport
            if not isinstance(transport, httpx.AsyncBaseTransport):
                transport = None
            driver = AsyncDriver(
                self._config,
                http_client=self._async_http_client,
                transport=transport,
                limiter=self.rate_limit,
            )
            self._async[loop] = driver
        return driver

    def _deadline(self, deadline: float | None) -> float | None:
        """A call's deadline: its own ``deadline=``, else the client's (None: no limit)."""
        seconds = self.deadline if deadline is None else check_deadline(deadline)
        return None if seconds is None or math.isinf(seconds) else seconds

    # Every call leaves through ``guarded``: the key is out of its events, result and errors;
    # ``last_answer`` keeps what left it, never what the server sent before the guard.
    def _guarded(self, flow: Flow[T]) -> Flow[T]:
        return _remembered(guarded(flow, self._scrubber))

    def _run(self, flow: Flow[T], deadline: float | None = None) -> T:
        return self._driver.run(self._guarded(flow), deadline=self._deadline(deadline))

    async def _arun(self, flow: Flow[T], deadline: float | None = None) -> T:
        return await self._adriver().run(self._guarded(flow), deadline=self._deadline(deadline))

    def _stream(self, flow: Flow[Answer], deadline: float | None = None) -> Stream:
        return Stream(self._driver, self._guarded(flow), deadline=self._deadline(deadline))

    def _astream(self, flow: Flow[Answer], deadline: float | None = None) -> AsyncStream:
        return AsyncStream(self._adriver, self._guarded(flow), deadline=self._deadline(deadline))

    # the answer log -----------------------------------------------------------------------
    def _log_call(
        self,
        request: Mapping[str, Any] | None,
        *,
        stream: bool = False,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> LoggedCall:
        """The answer log around one call: cache look-up, timing and recording."""
        return _answer_log().call(
            self.name,
            request,
            base_url=self.base_url,
            secrets=self._secrets,
            stream=stream,
            cache=cache,
            log=log,
        )

    def _held(self, request: Mapping[str, Any], cache: bool | None) -> Answer | None:
        """The answer to an identical request held in memory, caching being on, as a call
        answered from the cache returns it (scrubbed of this client's keys, which its mark
        usually spares, and kept as ``last_answer``); None: the call runs its flow
        (``_logged``), which looks in the file too.

        A call it answers needs no flow, driver or guard: a cached re-run of a batch costs
        the request's checks and a look-up in memory per question.
        """
        found = _answer_log().lookup(
            self.name, request, base_url=self.base_url, cache=cache, memory_only=True
        )
        if found is None:
            return None
        found = scrub_value(found, self._scrubber)
        _remember(found)
        return found

    def _logged(
        self,
        flow: Flow[Answer],
        request: Mapping[str, Any],
        *,
        stream: bool,
        cache: bool | None,
        log: bool | None,
        finish: Callable[[Answer], Answer] = lambda answer: answer,
        cacheable: Callable[[Answer], bool] = lambda answer: True,
    ) -> Flow[Answer]:
        """``flow`` answered from the log's cache when it may be, else run and recorded."""
        with self._log_call(request, stream=stream, cache=cache, log=log) as call:
            yield from call.wait_for_twin()  # an identical request in flight: its answer
            if call.cached is not None:
                if stream:
                    yield [TextDelta(call.cached.text, 0)]
                return call.cached
            try:
                answer = finish((yield from flow))
            except BaseException as exc:
                _kept(call, exc)
                raise
            return call.done(answer, cacheable=cacheable(answer))

    # live display of streams -------------------------------------------------------------
    def _live(self, display: bool | None) -> Any:
        if not wants_display(display):
            return None
        from ..render.live import LiveAnswer

        return LiveAnswer.start(provider=self.name)

    def _consume(self, stream: Stream, display: bool | None) -> Answer:
        live = self._live(display)
        with stream, _showing(live, stream):
            if live is None:
                for _ in stream.batches():
                    pass
            else:
                for batch in stream.batches():  # a read's events at once: no call per event
                    text = first_text(batch)
                    if text:
                        live.add(text)
        return _final(stream)

    async def _aconsume(self, stream: AsyncStream, display: bool | None) -> Answer:
        live = self._live(display)
        async with stream:
            with _showing(live, stream):
                async for event in stream:
                    if live is not None and type(event) is TextDelta and event.choice == 0:
                        live.add(event.text)
        return _final(stream)

    # lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connections citekit opened (your own http_client stays open)."""
        if self._sync is not None:
            self._sync.close()
            self._sync = None

    async def aclose(self) -> None:
        """Close the connections citekit opened, on every event loop it used."""
        current = asyncio.get_running_loop()
        senders = list(self._async.items())
        self._async.clear()
        for loop, sender in senders:
            if loop is current:
                await sender.aclose()
            elif loop.is_running():  # another thread's loop (e.g. citekit's background loop)
                asyncio.run_coroutine_threadsafe(sender.aclose(), loop)
            # a closed loop's connections cannot be closed any more; they go with it
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@functools.cache
def _answer_log() -> Log:
    """``citekit.store.log``, imported on the first call (not with ``citekit``: SQLite)."""
    from ..store import log

    return log


def _remembered(flow: Flow[T]) -> Flow[T]:
    """``flow`` (a guarded one), with the answer it ends with, whole or partial (a broken
    stream's, a deadline's, Ctrl-C's ``.answer``), kept as ``last_answer``, and the exception
    it failed with as ``last_error`` (``failure``)."""
    try:
        result = yield from flow
    except BaseException as exc:
        partial = getattr(exc, "answer", None)
        if isinstance(partial, Answer):
            _remember(partial)
        remember_error(exc)  # ``citekit.last_error`` explains it
        raise
    if isinstance(result, Answer):
        _remember(result)
    return result


def _kept(call: LoggedCall, exc: BaseException) -> None:
    """What a call that failed received (``exc.answer``): logged as partial when ``exc`` is
    Ctrl-C or a cancellation (the log records errors, not those)."""
    partial = getattr(exc, "answer", None)
    if not isinstance(partial, Answer):
        return
    if not isinstance(exc, Exception):
        # Shown under the traceback a notebook prints: where the text that arrived is.
        kept = (
            f"citekit kept the partial answer ({len(partial.text):,} characters): "
            "citekit.last_answer (and this exception's .answer)"
        )
        exc.add_note(kept)
        if isinstance(exc, KeyboardInterrupt):
            # IPython prints what _render_traceback_ gives in place of the traceback: after
            # Kernel > Interrupt, one line instead of pages through httpx and the flow.
            line = f"Interrupted: {kept}, logged as partial."
            exc._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]
        call.interrupted(partial, exc)


def _checked_url(url: str, source: str) -> str:
    """``url`` if it can be a base URL. The error never quotes a URL that carries a user name
    or password: that part is a secret (and httpx would send it as Basic auth, in place of
    the Bearer key)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is not None and "@" in parts.netloc:
        raise ConfigurationError(
            f"{source} has a user name or password before '@' (https://user:token@host): "
            "citekit does not send credentials in the URL. Give the address without them, "
            "and the key as api_key= or in the provider's *_API_KEY variable"
        )
    if not url.startswith(("http://", "https://")):
        shown = repr(url) if "@" not in url else "(not shown: it holds '@')"
        raise ConfigurationError(f"{source}{shown} must start with http:// or https://")
    return url


@contextlib.contextmanager
def _showing(live: Any, stream: Stream | AsyncStream) -> Iterator[None]:
    """The live display's end: the final answer, or what went wrong."""
    try:
        yield
    except BaseException as exc:
        if live is not None:
            live.fail(exc)
        raise
    if live is not None:
        live.finish(_final(stream))


def _final(stream: Stream | AsyncStream) -> Answer:
    answer = stream.answer
    assert answer is not None, "a stream that ended without raising has its answer"
    return answer
