"""The two drivers: run any flow (``citekit.wire.flow``) with ``httpx.Client`` or
``httpx.AsyncClient``.

A driver does what a flow yields (send, read, close, sleep, hand events on) and sends the
outcome back; a failure goes back into the flow as the citekit error it means, so the flow
decides what follows. Retries, parsing and partial answers are the flow's: written once.

A driver given a ``RateLimiter`` waits on it before every request it sends (retries too), and
on every limiter ``ratelimit.limiting`` put in scope (``ask_many(rate_limit=)``), so a rate
limit counts HTTP requests wherever they come from.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Generator
from types import TracebackType
from typing import Any, Generic, TypeVar, cast

import httpx

from ..core.errors import StreamInterrupted
from ..core.models import Answer, StreamEvent
from ..wire.flow import CLOSE, READ, Flow, Op, Send, Sleep
from .http import HttpConfig, make_timeout
from .ratelimit import RateLimiter, in_scope, wait_all, wait_all_sync

__all__ = ["AsyncDriver", "Run", "SyncDriver"]

T = TypeVar("T")


class Run(Generic[T]):
    """One flow being driven: its open response, what to send it next, its result.

    Used as ``with run:`` around each step a driver takes, it turns what the step raised into
    what the flow is sent next (httpx's errors translated, ``raise ... from`` kept).
    """

    __slots__ = ("_config", "_flow", "chunks", "error", "partial", "response", "result", "value")

    def __init__(self, flow: Flow[T], config: HttpConfig) -> None:
        self._flow = flow
        self._config = config
        self.value: Any = None
        self.error: BaseException | None = None
        self.response: httpx.Response | None = None
        self.chunks: Any = None  # the body's byte iterator, sync or async
        self.result: T | None = None
        #: The partial answer of a stream that broke (``StreamInterrupted``), if one did.
        self.partial: Answer | None = None

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
        self.value = None
        return op

    def opened(self, response: httpx.Response, chunks: Any) -> None:
        self.value = self.response = response
        self.chunks = chunks

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
        if not isinstance(exc, Exception):  # None, or cancellation and Ctrl-C: not the flow's
            return False
        if isinstance(exc, httpx.HTTPError):
            error = self._config.transport_error(exc)
            error.__cause__ = exc
            self.error = error
        else:
            self.error = exc
        return True


def _limiters(own: RateLimiter | None) -> tuple[RateLimiter, ...]:
    scoped = in_scope()
    return scoped if own is None else (own, *scoped)


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
        self._client = http_client or httpx.Client(
            transport=transport, timeout=config.timeout or make_timeout(None)
        )

    def close(self) -> None:
        if self._owned:
            self._client.close()

    def run(self, flow: Flow[T]) -> T:
        """Run ``flow`` to its end; its result (events it hands on are dropped)."""
        run = Run(flow, self.config)
        for _ in self.drive(run):
            pass
        return run.outcome

    def drive(self, run: Run[Any]) -> Generator[StreamEvent, None, None]:
        """Run ``run``'s flow, yielding the events it hands on; its result lands in ``run``."""
        try:
            while (op := run.next_op()) is not None:
                if type(op) is list:
                    yield from op
                else:
                    self._step(op, run)
        finally:
            self._close(run)
            run.close_flow()

    def _step(self, op: Op, run: Run[Any]) -> None:
        with run:
            if op is READ:
                run.value = next(run.chunks, None)
                return
            self._close(run)  # any other op ends the use of the last response
            if isinstance(op, Send):
                if limiters := _limiters(self.limiter):
                    wait_all_sync(limiters)
                request = self.config.build(self._client, op.spec)
                response = self._client.send(request, stream=True)
                run.opened(response, response.iter_bytes())
            elif isinstance(op, Sleep):
                time.sleep(op.seconds)
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
        self._client = http_client or httpx.AsyncClient(
            transport=transport, timeout=config.timeout or make_timeout(None)
        )

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()

    async def run(self, flow: Flow[T]) -> T:
        """Run ``flow`` to its end; its result (events it hands on are dropped)."""
        run = Run(flow, self.config)
        async for _ in self.drive(run):
            pass
        return run.outcome

    async def drive(self, run: Run[Any]) -> AsyncGenerator[StreamEvent, None]:
        """Run ``run``'s flow, yielding the events it hands on; its result lands in ``run``."""
        try:
            while (op := run.next_op()) is not None:
                if type(op) is list:
                    for event in op:
                        yield event
                else:
                    await self._step(op, run)
        finally:
            await self._close(run)
            run.close_flow()

    async def _step(self, op: Op, run: Run[Any]) -> None:
        with run:
            if op is READ:
                run.value = await anext(run.chunks, None)
                return
            await self._close(run)
            if isinstance(op, Send):
                if limiters := _limiters(self.limiter):
                    await wait_all(limiters)
                request = self.config.build(self._client, op.spec)
                response = await self._client.send(request, stream=True)
                run.opened(response, response.aiter_bytes())
            elif isinstance(op, Sleep):
                await asyncio.sleep(op.seconds)
            elif op is not CLOSE:
                raise _unknown(op)

    @staticmethod
    async def _close(run: Run[Any]) -> None:
        response, run.response = run.response, None
        if response is not None:
            await response.aclose()
