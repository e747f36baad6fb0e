"""Places for requests in flight: at most so many of citekit's async requests out at once,
each holding its place only until its reply is in.

``ask_many`` runs twice as many workers as its ``concurrency`` inside ``in_flight(concurrency)``:
a request takes a place as it is sent (``AsyncDriver``) and gives it back once its reply's body
has arrived, before its answer is parsed, scrubbed and logged. When another worker waits for
the place, the worker that gave it back reads its answer only once that worker's request has
gone out (``InFlight.sent``), so the next request leaves at once instead of after the answer
before it: with replies that all take the same latency, the requests keep leaving on time
while the answers are read between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Iterator

__all__ = ["HAND_OVER", "InFlight", "in_flight", "in_flight_places"]

#: The longest a worker that gave back its place waits for the next request to go out
#: before it reads its answer anyway (that request may have been cancelled, or have failed
#: in a way that never says so): seconds.
HAND_OVER = 0.1


class InFlight:
    """``count`` places for requests in flight, on one event loop."""

    __slots__ = ("_free", "_handed", "_waiting")

    def __init__(self, count: int) -> None:
        self._free = asyncio.Semaphore(count)
        self._waiting = 0  # requests waiting for a place
        self._handed: deque[asyncio.Future[None]] = deque()  # givers waiting for a send

    async def take(self) -> None:
        """Wait for a place and take it."""
        if not self._free.locked():
            await self._free.acquire()
            return
        self._waiting += 1
        try:
            await self._free.acquire()
        finally:
            self._waiting -= 1

    def give_back(self) -> None:
        """Free a place."""
        self._free.release()

    async def hand_over(self) -> None:
        """Free a place; when a request waits for one, return once it has gone out (``sent``),
        or after ``HAND_OVER`` seconds at most."""
        if not self._waiting:
            self._free.release()
            return
        handed = asyncio.get_running_loop().create_future()
        self._handed.append(handed)
        self._free.release()
        try:
            await asyncio.wait_for(handed, HAND_OVER)
        except TimeoutError:
            pass
        finally:
            if not handed.done():
                handed.cancel()

    def sent(self) -> None:
        """A request that took a place has gone out (or failed before it could): the earliest
        giver still waiting (``hand_over``) goes on."""
        while self._handed:
            handed = self._handed.popleft()
            if not handed.done():
                handed.set_result(None)
                return


_PLACES: contextvars.ContextVar[InFlight | None] = contextvars.ContextVar(
    "citekit_in_flight", default=None
)


@contextlib.contextmanager
def in_flight(count: int) -> Iterator[InFlight]:
    """Within the block (and the tasks started in it, on the event loop it runs on), at most
    ``count`` of citekit's async requests are in flight at once."""
    places = InFlight(count)
    token = _PLACES.set(places)
    try:
        yield places
    finally:
        _PLACES.reset(token)


def in_flight_places() -> InFlight | None:
    """The places a request sent here takes one of (``in_flight``), if any."""
    return _PLACES.get()
