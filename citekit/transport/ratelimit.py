"""One rate limiter: at most ``count`` requests per ``period`` seconds, evenly spaced.

A client's ``rate_limit=`` gives its drivers one ``RateLimiter``, which every request of that
client waits on before it is sent: sync calls from any thread and async calls on any event loop
share it (it keeps time with ``time.monotonic`` under a lock), so retries and each of GPTBots'
three requests per question count. ``ask_many(rate_limit=)`` spaces questions with the same
class.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from typing import Final

__all__ = ["RateLimit", "RateLimiter"]

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

    def _take(self) -> float:
        """Take the slot if it has come (0.0), else how long until it comes (nothing taken)."""
        with self._lock:
            now = time.monotonic()
            if now >= self._next:
                self._next = now + self.interval
                return 0.0
            return self._next - now

    async def wait(self) -> None:
        """Wait for the next free slot (async)."""
        if (delay := self._take()) > 0:
            self._log(delay)
            while delay > 0:
                await asyncio.sleep(delay)
                delay = self._take()

    def wait_sync(self) -> None:
        """Wait for the next free slot, blocking this thread."""
        if (delay := self._take()) > 0:
            self._log(delay)
            while delay > 0:
                time.sleep(delay)
                delay = self._take()

    def _log(self, delay: float) -> None:
        log.debug("Waiting %.2f s for the rate limit (%r)", delay, self)


#: What ``rate_limit=`` takes: ``"5/s"``, a number per minute, or a ``RateLimiter``.
RateLimit = str | float | RateLimiter
