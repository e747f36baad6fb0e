"""Places for requests in flight: at most so many of citekit's async requests out at once,
each holding its place only until its reply is in.

``ask_many`` runs twice as many workers as its ``concurrency`` inside ``in_flight(concurrency)``:
a request takes a place as it is sent (``AsyncDriver``) and gives it back once its reply's body
has arrived, before its answer is parsed, scrubbed and logged. A place given back goes straight
to the request that waited longest for one; with ``hand_over``, the worker that gave it reads
its answer only once that very request has gone out (or failed to, or waits for a rate limit:
``went_out``), so the next request leaves at once instead of after the answer before it. With
replies that all take the same latency, the requests keep leaving on time while the answers
are read between them. A request takes its place before its turn of a rate limit, so that the
limit spaces the requests that leave. Neither the wait for a place nor the wait for an
identical request among the same places (one batch's, which may itself wait for a place)
counts against a call's deadline. A stream read among places holds its place until it is
closed (``async with``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Iterator

__all__ = ["HAND_OVER", "InFlight", "Sent", "in_flight", "in_flight_places", "went_out"]

#: The longest a worker that handed its place over waits for that request to go out before it
#: reads its answer anyway (a failure that never says so): seconds.
HAND_OVER = 0.1

#: What a request handed a place resolves once it has gone out (``went_out``); None when no
#: worker waits for that.
Sent = asyncio.Future[None] | None


def went_out(sent: Sent) -> None:
    """The request that was handed a place (``sent``, what ``InFlight.take`` gave) has gone
    out, failed before it could, or waits for something else: the worker that handed it the
    place reads on. Safe to call again."""
    if sent is not None and not sent.done():
        sent.set_result(None)


class InFlight:
    """``count`` places for requests in flight, on one event loop. A place given back goes to
    the request that waited longest for one, directly: none is taken in between."""

    __slots__ = ("_free", "_waiters")

    def __init__(self, count: int) -> None:
        self._free = count
        # Requests waiting for a place; each is handed one as its future's result: the
        # future to resolve once it has gone out, or None.
        self._waiters: deque[asyncio.Future[Sent]] = deque()

    async def take(self) -> Sent:
        """Wait for a place and take it. Returns what to pass to ``went_out`` once this
        request has gone out (or will not): a worker may be waiting for that."""
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return None
        waiter: asyncio.Future[Sent] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                # Handed a place as it was cancelled: the place goes on to the next request.
                went_out(waiter.result())
                self.give_back()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def _handed(self, sent: Sent) -> bool:
        """Hand a place to the request that waited longest, if one waits."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(sent)
                return True
        return False

    def give_back(self) -> None:
        """Free a place: the next waiting request takes it, or it is free."""
        if not self._handed(None):
            self._free += 1

    async def hand_over(self) -> None:
        """``give_back``; when a request was waiting for the place, return once it has gone
        out (``went_out``), or after ``HAND_OVER`` seconds at most."""
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self._handed(sent):
            self._free += 1
            return
        # ``asyncio.wait``, not ``wait_for``: on Python 3.11 ``wait_for`` drops a cancellation
        # that comes in the turn ``sent`` is resolved in (CPython gh-86296), and a cancelled
        # batch would go on.
        await asyncio.wait((sent,), timeout=HAND_OVER)


_PLACES: contextvars.ContextVar[InFlight | None] = contextvars.ContextVar(
    "citekit_in_flight", default=None
)


@contextlib.contextmanager
def in_flight(count: int) -> Iterator[None]:
    """Within the block (and the tasks started in it, on the event loop it runs on), at most
    ``count`` of citekit's async requests are in flight at once."""
    token = _PLACES.set(InFlight(count))
    try:
        yield
    finally:
        _PLACES.reset(token)


def in_flight_places() -> InFlight | None:
    """The places a request sent here takes one of (``in_flight``), if any."""
    return _PLACES.get()
