"""The two drivers: run any flow (``citekit.wire.flow``) with ``httpx.Client`` or
``httpx.AsyncClient``.

A driver does what a flow yields (send, read, close, sleep, hand events on) and sends the
outcome back; a failure goes back into the flow as the citekit error it means, so the flow
decides what follows. Retries, parsing and partial answers are the flow's: written once.

A driver given a ``RateLimiter`` waits on it before every request it sends (retries too), and
on every limiter ``ratelimit.limiting`` put in scope (``ask_many(rate_limit=)``), so a rate
limit counts HTTP requests wherever they come from.

Every call ends. A run has a deadline (seconds for the whole call, waits for retries included,
waits for the rate limit not): it is checked before each send, sleep and read (a server that
drips bytes or keep-alives never lets a read time out), and each request's timeouts are capped
at the time left when it is sent (httpx fixes a response's read timeout then), so a read
blocked on a silent server ends too, at worst that much past the deadline. A
stream must also hand on events: one whose server sends only keep-alive comments or stray bytes
for as long as its read timeout is stalled. Either way the driver raises ``APITimeoutError`` at
the flow's ``yield``, and the flow keeps the partial answer (``StreamTimeout``).

A driver that owns its httpx client sizes the pool from the concurrency asked for
(``http.connections``, which ``ask_many`` sets): when more requests may run at once than the pool
holds, the next request goes through a larger pool (the old one closes with the driver), so no
request waits for a connection because the pool is smaller than the concurrency.

Ctrl-C and task cancellation are thrown into the flow too (then re-raised as they are), so a
stream can attach what it received to them (``.answer``) before they go on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import threading
import time
from collections.abc import AsyncGenerator, Generator
from types import TracebackType
from typing import Any, Generic, TypeVar, cast

import httpx

from ..core.errors import APITimeoutError, StreamInterrupted
from ..core.names import display_name
from ..model import Answer, StreamEvent
from ..wire.flow import CLOSE, READ, Flow, Op, Send, Sleep, Wait
from .http import HttpConfig, make_timeout, pool_limits, wanted_connections
from .inflight import InFlight, Sent, in_flight_places, went_out
from .ratelimit import RateLimiter, in_scope, wait_all, wait_all_sync

__all__ = ["AsyncDriver", "Run", "SyncDriver"]

T = TypeVar("T")


class Run(Generic[T]):
    """One flow being driven: its open response, what to send it next, its result, its clock.

    Used as ``with run:`` around each step a driver takes, it turns what the step raised into
    what the flow is sent next (httpx's errors translated, ``raise ... from`` kept; Ctrl-C and
    cancellation too, which the flow re-raises once it has attached its partial answer).

    ``deadline`` is the seconds the whole call may take (None or infinite: no limit).
    """

    __slots__ = (
        "_config",
        "_flow",
        "chunks",
        "deadline",
        "ends",
        "error",
        "partial",
        "place",
        "quiet",
        "response",
        "result",
        "stall",
        "value",
    )

    def __init__(self, flow: Flow[T], config: HttpConfig, *, deadline: float | None = None) -> None:
        self._flow = flow
        self._config = config
        self.value: Any = None
        self.error: BaseException | None = None
        self.response: httpx.Response | None = None
        self.chunks: Any = None  # the body's byte iterator, sync or async
        self.result: T | None = None
        #: The partial answer of a stream that broke (``StreamInterrupted``, or Ctrl-C), if any.
        self.partial: Answer | None = None
        self.deadline = deadline if deadline is not None and math.isfinite(deadline) else None
        #: When the call must have ended (``time.monotonic``), once it started.
        self.ends: float | None = None
        #: Seconds a stream may go without handing on an event (its read timeout), or None.
        self.stall: float | None = None
        #: When the open stream last handed on events (or opened).
        self.quiet = 0.0
        #: The places in flight (``inflight.in_flight``) the open request holds one of.
        self.place: InFlight | None = None

    def start(self) -> None:
        if self.deadline is not None and self.ends is None:
            self.ends = time.monotonic() + self.deadline

    def next_op(self) -> Op | None:
        """Send the flow its last outcome; its next op, or None once it has returned."""
        try:
            if self.error is None:
                op = self._flow.send(self.value)
            else:
                error, self.error = self.error, None
                op = self._flow.throw(error)
        except StopIteration as stop:
            self.result = stop.value
            return None
        except StreamInterrupted as exc:
            self.partial = exc.answer
            raise
        except BaseException as exc:  # Ctrl-C or cancellation, with the flow's partial answer
            kept = getattr(exc, "answer", None)
            if isinstance(kept, Answer):
                self.partial = kept
            raise
        self.value = None
        return op

    def opened(self, response: httpx.Response, chunks: Any, stall: float | None) -> None:
        self.value = self.response = response
        self.chunks = chunks
        self.stall = stall
        self.quiet = time.monotonic()

    def progressed(self) -> None:
        """The flow handed on events: the stream is not stalled."""
        if self.stall is not None:
            self.quiet = time.monotonic()

    def left(self) -> float | None:
        """Seconds left before the deadline (None: no deadline)."""
        return None if self.ends is None else self.ends - time.monotonic()

    def check(self) -> None:
        """Raise ``APITimeoutError`` if the deadline has passed or the stream has stalled."""
        now = time.monotonic()
        if self.ends is not None and now >= self.ends:
            raise self.past_deadline()
        if self.stall is not None and now - self.quiet >= self.stall:
            raise self.stalled()

    def past_deadline(self, detail: str = "") -> APITimeoutError:
        return APITimeoutError(
            f"{display_name(self._config.provider)} did not finish within the call's deadline "
            f"of {self.deadline:g} s{detail}. Pass deadline= (seconds for the whole call, to "
            "the client or to the call; math.inf for none) to allow longer"
        )

    def stalled(self) -> APITimeoutError:
        return APITimeoutError(
            f"{display_name(self._config.provider)}'s stream handed on nothing for "
            f"{self.stall:g} s (only keep-alives or stray bytes came). Raise timeout= (the "
            "read timeout, which also bounds the wait between two events) to wait longer"
        )

    def close_flow(self) -> None:
        self._flow.close()

    @property
    def outcome(self) -> T:
        return cast(T, self.result)

    def __enter__(self) -> Run[T]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if exc is None or isinstance(exc, GeneratorExit):
            return False
        if isinstance(exc, httpx.TimeoutException):
            # A timeout the deadline (or the stall rule) capped is reported as that.
            try:
                self.check()
            except APITimeoutError as capped:
                capped.__cause__ = exc
                self.error = capped
                return True
        # InvalidURL is not an HTTPError: httpx raises it while reading a redirect's Location
        # it cannot join to the request's URL ("A:0"), even when not following it.
        if isinstance(exc, httpx.HTTPError | httpx.InvalidURL):
            error = self._config.transport_error(exc)
            error.__cause__ = exc
            self.error = error
        else:  # citekit's own errors, and Ctrl-C / cancellation: the flow re-raises those
            self.error = exc
        return True


def _limiters(own: RateLimiter | None) -> tuple[RateLimiter, ...]:
    scoped = in_scope()
    return scoped if own is None else (own, *scoped)


def _left(run: Run[Any]) -> float | None:
    """Seconds left of ``run``'s deadline; raises once none are."""
    left = run.left()
    if left is not None and left <= 0:
        raise run.past_deadline()
    return left


def _pause_clock(run: Run[Any], began: float) -> None:
    """Waiting for the rate limit is the caller's own pacing: it does not count."""
    if run.ends is not None:
        run.ends += time.monotonic() - began


def _sleep(run: Run[Any], op: Sleep) -> float:
    """``op``'s seconds, unless they would end past the deadline: then raise at once."""
    left = run.left()
    if left is not None and op.seconds >= left:
        raise run.past_deadline(
            f" (a retry would wait {op.seconds:.1f} s, {max(left, 0):.1f} s were left)"
        )
    return op.seconds


def _waited(run: Run[Any], op: Wait) -> None:
    """After waiting for ``op``: raise if the deadline passed first."""
    if not op.done.done():
        raise run.past_deadline(" (waiting for an identical request in flight)")


def _stall(op: Send, timeout: httpx.Timeout) -> float | None:
    """How long a stream may hand on nothing: its read timeout (None for other requests)."""
    return timeout.read if op.spec.stream else None


def _unknown(op: Op) -> TypeError:
    return TypeError(f"a flow yielded {op!r}, which is not an op")


class SyncDriver:
    """Runs flows with an ``httpx.Client``."""

    def __init__(
        self,
        config: HttpConfig,
        *,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.config = config
        self.limiter = limiter
        self._owned = http_client is None
        # A transport passed in holds its own pool: the limits are its business.
        self._sized = self._owned and transport is None
        self._size = wanted_connections()
        self._retired: list[httpx.Client] = []
        self._client = http_client or self._new_client(transport)

    def _new_client(self, transport: httpx.BaseTransport | None = None) -> httpx.Client:
        return httpx.Client(
            transport=transport,
            timeout=self.config.timeout or make_timeout(None),
            limits=pool_limits(self._size),
        )

    def _pool(self) -> httpx.Client:
        """The client to send with: one whose pool holds the concurrency asked for."""
        if self._sized and (wanted := wanted_connections()) > self._size:
            self._size = wanted
            self._retired.append(self._client)  # requests in flight there finish there
            self._client = self._new_client()
        return self._client

    def close(self) -> None:
        if self._owned:
            for client in (*self._retired, self._client):
                client.close()
            self._retired.clear()

    def run(self, flow: Flow[T], *, deadline: float | None = None) -> T:
        """Run ``flow`` to its end; its result (events it hands on are dropped)."""
        run = Run(flow, self.config, deadline=deadline)
        for _ in self.drive(run):
            pass
        return run.outcome

    def drive(self, run: Run[Any]) -> Generator[list[StreamEvent], None, None]:
        """Run ``run``'s flow, yielding the events it hands on in the lists it hands them on
        in (a read's at a time); its result lands in ``run``.

        Ctrl-C thrown in while events are being handed on goes into the flow, like one that
        comes while a step runs.
        """
        run.start()
        try:
            while (op := run.next_op()) is not None:
                if isinstance(op, list):  # events (a ``TextRead`` too)
                    run.progressed()
                    with run:
                        yield op
                else:
                    self._step(op, run)
        finally:
            self._close(run)
            run.close_flow()

    def _step(self, op: Op, run: Run[Any]) -> None:
        with run:
            if op is READ:
                if run.ends is not None or run.stall is not None:
                    run.check()
                run.value = next(run.chunks, None)
                return
            self._close(run)  # any other op ends the use of the last response
            if isinstance(op, Send):
                if limiters := _limiters(self.limiter):
                    began = time.monotonic()
                    wait_all_sync(limiters, provider=self.config.provider)
                    _pause_clock(run, began)
                client = self._pool()
                timeout = self.config.timeout_for(client, op.spec)
                request = self.config.build(
                    client, op.spec, timeout=timeout, within=_left(run), owned=self._owned
                )
                response = client.send(request, stream=True, follow_redirects=False)
                run.opened(response, response.iter_bytes(), _stall(op, timeout))
            elif isinstance(op, Sleep):
                time.sleep(_sleep(run, op))
            elif isinstance(op, Wait):
                if op.thread != threading.get_ident():  # never block the thread it runs on
                    concurrent.futures.wait([op.done], timeout=_left(run))
                    _waited(run, op)
            elif op is not CLOSE:
                raise _unknown(op)

    @staticmethod
    def _close(run: Run[Any]) -> None:
        response, run.response = run.response, None
        if response is not None:
            response.close()


class AsyncDriver:
    """Runs flows with an ``httpx.AsyncClient``.

    An ``AsyncClient`` belongs to the event loop it was created on; the owning client makes
    one driver per loop.
    """

    def __init__(
        self,
        config: HttpConfig,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.config = config
        self.limiter = limiter
        self._owned = http_client is None
        # A transport passed in holds its own pool: the limits are its business.
        self._sized = self._owned and transport is None
        self._size = wanted_connections()
        self._retired: list[httpx.AsyncClient] = []
        self._client = http_client or self._new_client(transport)
        #: Requests enter the pool one at a time (``_send``): only a pool citekit made, whose
        #: httpcore reports when a request has its connection. One gate per pool: a retired
        #: pool's waiting requests never hold up the pool that replaced it.
        self._gated = self._sized
        self._gate = asyncio.Lock()

    def _new_client(self, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=transport,
            timeout=self.config.timeout or make_timeout(None),
            limits=pool_limits(self._size),
        )

    def _pool(self) -> tuple[httpx.AsyncClient, asyncio.Lock]:
        """The client to send with, one whose pool holds the concurrency asked for, and the
        gate into its pool."""
        if self._sized and (wanted := wanted_connections()) > self._size:
            self._size = wanted
            self._retired.append(self._client)  # requests in flight there finish there
            self._client = self._new_client()
            self._gate = asyncio.Lock()  # its own: none of the old pool's waits hold it up
        return self._client, self._gate

    async def aclose(self) -> None:
        if self._owned:
            for client in (*self._retired, self._client):
                await client.aclose()
            self._retired.clear()

    async def run(self, flow: Flow[T], *, deadline: float | None = None) -> T:
        """Run ``flow`` to its end; its result (events it hands on are dropped).

        ``drive`` without its async generator (whose set-up costs more than a call answered
        from the cache): nothing is handed on, so nothing can be thrown in between steps.
        """
        run = Run(flow, self.config, deadline=deadline)
        run.start()
        try:
            while (op := run.next_op()) is not None:
                if isinstance(op, list):  # events (a ``TextRead`` too)
                    run.progressed()
                else:
                    await self._step(op, run)
        finally:
            await self._close(run)
            run.close_flow()
        return run.outcome

    async def drive(self, run: Run[Any]) -> AsyncGenerator[list[StreamEvent], None]:
        """Run ``run``'s flow, yielding the events it hands on in the lists it hands them on
        in (a read's at a time); its result lands in ``run``."""
        run.start()
        try:
            while (op := run.next_op()) is not None:
                if isinstance(op, list):  # events (a ``TextRead`` too)
                    run.progressed()
                    with run:
                        yield op
                else:
                    await self._step(op, run)
        finally:
            await self._close(run)
            run.close_flow()

    async def _step(self, op: Op, run: Run[Any]) -> None:
        with run:
            if op is READ:
                if run.ends is not None or run.stall is not None:
                    run.check()
                run.value = await anext(run.chunks, None)
                if run.value is None and (place := run.place) is not None:
                    # The body is in: its place goes to the next request, which (in a pool
                    # citekit owns, whose requests say when they have gone out) is let go out
                    # before this answer is parsed.
                    run.place = None
                    if self._gated:
                        await place.hand_over()
                    else:
                        place.give_back()
                return
            await self._close(run)
            if isinstance(op, Send):
                sent: Sent = None
                if (places := in_flight_places()) is not None:
                    began = time.monotonic()
                    sent = await places.take()
                    run.place = places
                    _pause_clock(run, began)
                try:
                    if limiters := _limiters(self.limiter):
                        # The place is taken first, so that the limit spaces the requests
                        # that leave; a worker that handed it over reads on meanwhile.
                        went_out(sent)
                        began = time.monotonic()
                        await wait_all(limiters, provider=self.config.provider)
                        _pause_clock(run, began)
                    client, gate = self._pool()
                    timeout = self.config.timeout_for(client, op.spec)
                    request = self.config.build(
                        client, op.spec, timeout=timeout, within=_left(run), owned=self._owned
                    )
                    response = await self._send(client, gate, request, sent)
                finally:
                    went_out(sent)  # (gone out, or never will)
                run.opened(response, response.aiter_bytes(), _stall(op, timeout))
            elif isinstance(op, Wait):
                # Shielded: a cancelled wait never cancels the call it waits for.
                done = asyncio.shield(asyncio.wrap_future(op.done))
                if op.places is not None and op.places is in_flight_places():
                    # The identical call runs among the same places in flight (one batch's):
                    # it may wait for a place, as this call's own request would, and that wait
                    # does not count; it is held to its own deadline, the batch's.
                    began = time.monotonic()
                    await done
                    _pause_clock(run, began)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(done, _left(run))
                _waited(run, op)
            elif isinstance(op, Sleep):
                await asyncio.sleep(_sleep(run, op))
            elif op is not CLOSE:
                raise _unknown(op)

    async def _send(
        self,
        client: httpx.AsyncClient,
        gate: asyncio.Lock,
        request: httpx.Request,
        sent: Sent = None,
    ) -> httpx.Response:
        """``client.send``; into a pool citekit owns, one request at a time (``gate``, that
        pool's own) until it holds its connection.

        httpcore hands a request an idle connection, and the request takes it (the
        connection turns busy) only after the event loop has run others: requests sent in
        the same turn of the loop (a batch's workers, when a wave of answers arrives) are all
        handed the same connection, all but one find it taken, and they queue again, again
        and again, each time checking every connection of the pool. The gate lets the next
        request in once the one before has taken its connection (httpcore's first trace
        event: a connection being opened or a request's headers going out), so each is
        handed a connection of its own the first time. A request waits at the gate at most
        its pool timeout, then fails as a pool timeout does.

        With ``sent`` (``inflight.InFlight.take``), the request says when it has gone out (its
        reply's head awaited; httpcore's trace again): ``went_out``.
        """
        if not self._gated:
            return await client.send(request, stream=True, follow_redirects=False)
        if gate.locked():
            pool = request.extensions.get("timeout", {}).get("pool")
            try:
                async with asyncio.timeout(pool):
                    await gate.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout(
                    "no connection became free within the pool timeout", request=request
                ) from None
        else:
            await gate.acquire()
        extensions = request.extensions
        held = True

        async def taken(event: str, info: dict[str, Any]) -> None:
            nonlocal held
            if held:
                held = False
                gate.release()
            if sent is not None and event.endswith("receive_response_headers.started"):
                went_out(sent)
            if sent is None or sent.done():
                extensions.pop("trace", None)  # the rest of the request is traced no more

        extensions["trace"] = taken
        try:
            return await client.send(request, stream=True, follow_redirects=False)
        finally:
            if held:
                held = False
                gate.release()

    @staticmethod
    async def _close(run: Run[Any]) -> None:
        place, run.place = run.place, None
        if place is not None:
            place.give_back()
        response, run.response = run.response, None
        if response is not None:
            await response.aclose()
