"""What ``client.stream()`` and ``client.astream()`` return, after openai's ``Stream``.

::

    with mg.stream("What is subsidiarity?") as s:
        for event in s:          # TextDelta / ToolCallDelta as they arrive, then the Answer
            ...
    s.answer                     # the final Answer

Leaving the ``with`` block (or ``close()``) closes the HTTP response, so a stream read only in
part gives its connection back at once. Leaving it by Ctrl-C (or, for ``AsyncStream``, a
cancellation) keeps what arrived: the ``KeyboardInterrupt`` carries it as ``.answer``, and so
does the stream object.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any

from ..model import Answer, StreamEvent, TextDelta
from ..wire.flow import Flow
from .driver import AsyncDriver, Run, SyncDriver

__all__ = ["AsyncStream", "Stream"]


class _Outcome:
    _run: Run[Answer] | None = None

    @property
    def answer(self) -> Answer | None:
        """The final ``Answer`` once the stream is consumed (None before); after
        ``StreamInterrupted`` (a deadline's ``StreamTimeout`` too) or Ctrl-C, the partial
        answer."""
        run = self._run
        if run is None:
            return None
        return run.result if run.result is not None else run.partial


def _result(run: Run[Answer]) -> Iterator[Answer]:
    """The final answer, when the flow got to return it (not after ``close()``)."""
    if run.result is not None:
        yield run.result


class Stream(_Outcome):
    """The events of one streamed answer: ``TextDelta`` and ``ToolCallDelta`` as they arrive,
    then the final ``Answer``.

    An iterator and a context manager; ``close()`` frees the connection of a stream you stop
    reading. A stream that breaks after it began raises ``StreamInterrupted``, whose ``.answer``
    (and this object's) holds the partial answer.

    >>> mg = ck.Magisterium()
    >>> with mg.stream("What is the principle of subsidiarity?") as s:
    ...     text = "".join(s.text_deltas())
    >>> s.answer.text == text, len(s.answer.citations) > 0
    (True, True)
    """

    def __init__(
        self, driver: SyncDriver, flow: Flow[Answer], *, deadline: float | None = None
    ) -> None:
        run = self._run = Run(flow, driver.config, deadline=deadline)
        self._driving = driver.drive(run)
        # ``chain`` (C) rather than a generator around the events: no Python frame per event.
        self._events: Iterator[StreamEvent] = itertools.chain(
            itertools.chain.from_iterable(self._driving), _result(run)
        )

    def __iter__(self) -> Iterator[StreamEvent]:
        return self._events

    def __next__(self) -> StreamEvent:
        return next(self._events)

    def batches(self) -> Iterator[list[StreamEvent]]:
        """The events in the lists they arrive in (those of one read of the response each),
        without the final ``Answer`` (it is in ``.answer`` at the end): the cheapest way
        through a stream whose events are not needed one at a time. Use it in place of
        iterating the stream, not with it."""
        return self._driving

    def text_deltas(self) -> Iterator[str]:
        """Only the text, piece by piece (of the first choice)."""
        for event in self._events:
            if type(event) is TextDelta and event.choice == 0:
                yield event.text

    def close(self) -> None:
        """Stop here: close the HTTP response (safe to call at any time, and again)."""
        self._driving.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, KeyboardInterrupt):
            # Ctrl-C in the loop over this stream: the flow attaches what arrived to it.
            try:
                self._driving.throw(exc)
            except KeyboardInterrupt as raised:
                if raised is not exc:
                    raise
        self.close()


class AsyncStream(_Outcome):
    """Async twin of ``Stream``: ``async for``, ``async with``, ``await close()``."""

    def __init__(
        self,
        driver: Callable[[], AsyncDriver],
        flow: Flow[Answer],
        *,
        deadline: float | None = None,
    ) -> None:
        self._events = self._iterate(driver, flow, deadline)

    async def _iterate(
        self, driver: Callable[[], AsyncDriver], flow: Flow[Answer], deadline: float | None
    ) -> AsyncGenerator[StreamEvent, None]:
        sender = driver()  # on first use: the driver of the loop that iterates
        run = self._run = Run(flow, sender.config, deadline=deadline)
        events = sender.drive(run)
        try:
            async for batch in events:
                for event in batch:
                    try:
                        yield event
                    except (KeyboardInterrupt, asyncio.CancelledError) as stop:
                        await events.athrow(stop)  # the flow attaches what arrived, re-raises
                        raise
        finally:
            await events.aclose()
        if run.result is not None:
            yield run.result

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events

    async def __anext__(self) -> StreamEvent:
        return await anext(self._events)

    async def text_deltas(self) -> AsyncIterator[str]:
        """Only the text, piece by piece (of the first choice)."""
        async for event in self._events:
            if type(event) is TextDelta and event.choice == 0:
                yield event.text

    async def close(self) -> None:
        """Stop here: close the HTTP response (safe to call at any time, and again)."""
        await self._events.aclose()

    aclose = close

    async def __aenter__(self) -> AsyncStream:
        return self

    async def __aexit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
            # Stopped in the loop over this stream: the flow attaches what arrived to ``exc``.
            try:
                await self._events.athrow(exc)
            except (KeyboardInterrupt, asyncio.CancelledError) as raised:
                if raised is not exc:
                    raise
            except StopAsyncIteration:
                pass
        await self.close()
