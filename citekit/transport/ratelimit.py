"""One rate limiter: at most ``count`` requests per ``period`` seconds, evenly spaced.

A client's ``rate_limit=`` gives its drivers one ``RateLimiter``, which every request of that
client waits on before it is sent: sync calls from any thread and async calls on any event loop
share it (it keeps time with ``time.monotonic`` under a lock), so retries and each of GPTBots'
three requests per question count. ``ask_many(rate_limit=)`` counts requests the same way: it
puts its limiter in scope (``limiting``) for the calls it makes, and a driver waits on every
limiter in scope as well as its client's, taking a slot in all of them at the same instant
(``wait_all``), so each limit holds exactly when several compose.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Final

__all__ = ["RateLimit", "RateLimiter", "in_scope", "limiting", "wait_all", "wait_all_sync"]

log = logging.getLogger("citekit.transport")

_UNITS: Final = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hour": 3600.0,
}
_RATE_RE: Final = re.compile(
    r"^\s*(\d+(?:\.\d*)?)\s*(?:/|per\s)\s*(\d+(?:\.\d*)?)?\s*([a-z]+?)s?\s*$"
)


class RateLimiter:
    """Spaces requests evenly: at most ``count`` per ``period`` seconds, never a burst.

    Each wait takes the next free slot, ``period / count`` seconds after the previous one, and
    sleeps until it comes; a wait that is cancelled (or interrupted) takes no slot. Thread-safe,
    and shared by sync and async callers on any event loop.

    >>> import citekit as ck
    >>> limiter = ck.RateLimiter.parse("5/s")
    >>> limiter, limiter.interval
    (RateLimiter(5 per 1 s), 0.2)
    >>> mg = ck.Magisterium(rate_limit=limiter)  # or rate_limit="5/s"; a number is per minute
    >>> mg.rate_limit is limiter
    True
    """

    def __init__(self, count: float, period: float = 60.0) -> None:
        if not count > 0 or not period > 0:
            raise ValueError(f"a rate limit needs count > 0 and period > 0, not {count}/{period}")
        self.count = float(count)
        self.period = float(period)
        self.interval = self.period / self.count
        #: When the latest slots were taken (``time.monotonic``, the newest 1,024): the
        #: spacing the limiter kept, to check without timing the requests' arrivals.
        self.slots: collections.deque[float] = collections.deque(maxlen=1024)
        self._next = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RateLimiter({self.count:g} per {self.period:g} s)"

    @classmethod
    def parse(cls, spec: RateLimit) -> RateLimiter:
        """``"60/min"``, ``"5/s"``, ``"3/minute"``, ``"100 per hour"``, ``"10/30s"``, or a
        number of requests per minute; a ``RateLimiter`` is returned as it is."""
        if isinstance(spec, RateLimiter):
            return spec
        if isinstance(spec, int | float) and not isinstance(spec, bool):
            return cls(spec, 60.0)
        if isinstance(spec, str):
            m = _RATE_RE.match(spec.lower())
            if m and m.group(3) in _UNITS:
                span = float(m.group(2)) if m.group(2) else 1.0
                return cls(float(m.group(1)), span * _UNITS[m.group(3)])
        raise ValueError(
            f"rate_limit={spec!r} is not understood; write it like '60/min', '5/s', "
            "'3/minute', '1000/hour', '10/30s', give a number of requests per minute, "
            "or a citekit.RateLimiter"
        )

    async def wait(self) -> None:
        """Wait for the next free slot (async)."""
        await wait_all((self,))

    def wait_sync(self) -> None:
        """Wait for the next free slot, blocking this thread."""
        wait_all_sync((self,))


def _take(limiters: Sequence[RateLimiter]) -> float:
    """Take a slot in every limiter at once if all have come (0.0), else how long until the
    last of them comes (nothing taken)."""
    if len(limiters) == 1:  # the common case: one lock
        [only] = limiters
        with only._lock:
            now = time.monotonic()
            if now >= only._next:
                only._next = now + only.interval
                only.slots.append(now)
                return 0.0
            return only._next - now
    # Locks taken in one global order (by id), so two callers never hold them crosswise.
    ordered = sorted(set(limiters), key=id)
    with contextlib.ExitStack() as held:
        for limiter in ordered:
            held.enter_context(limiter._lock)
        now = time.monotonic()
        wait = max(limiter._next - now for limiter in ordered)
        if wait > 0:
            return wait
        for limiter in ordered:
            limiter._next = now + limiter.interval
            limiter.slots.append(now)
        return 0.0


async def wait_all(limiters: Sequence[RateLimiter]) -> None:
    """Wait until every limiter has a free slot, and take them all at that instant (async).

    A wait that is cancelled takes no slot.
    """
    if limiters and (delay := _take(limiters)) > 0:
        _log(delay, limiters)
        while delay > 0:
            await asyncio.sleep(delay)
            delay = _take(limiters)


def wait_all_sync(limiters: Sequence[RateLimiter]) -> None:
    """``wait_all``, blocking this thread."""
    if limiters and (delay := _take(limiters)) > 0:
        _log(delay, limiters)
        while delay > 0:
            time.sleep(delay)
            delay = _take(limiters)


def _log(delay: float, limiters: Sequence[RateLimiter]) -> None:
    log.debug("Waiting %.2f s for the rate limit (%s)", delay, ", ".join(map(repr, limiters)))


_SCOPE: contextvars.ContextVar[tuple[RateLimiter, ...]] = contextvars.ContextVar(
    "citekit_rate_limits", default=()
)


def in_scope() -> tuple[RateLimiter, ...]:
    """The limiters ``limiting`` put in scope here (innermost last)."""
    return _SCOPE.get()


@contextlib.contextmanager
def limiting(limiter: RateLimiter) -> Iterator[None]:
    """Every HTTP request sent inside the block (in this thread or task, and in the tasks it
    starts) waits on ``limiter`` too, besides its client's own limit."""
    token = _SCOPE.set((*_SCOPE.get(), limiter))
    try:
        yield
    finally:
        _SCOPE.reset(token)


#: What ``rate_limit=`` takes: ``"5/s"``, a number per minute, or a ``RateLimiter``.
RateLimit = str | float | RateLimiter
