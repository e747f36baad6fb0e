"""One rate limiter: requests spaced evenly under each short limit, and counted under quotas.

A client's ``rate_limit=`` gives its drivers one ``RateLimiter``, which every request of that
client waits on before it is sent: sync calls from any thread and async calls on any event loop
share it (it keeps time with ``time.monotonic`` under a lock), so retries and each of GPTBots'
three requests per question count. ``ask_many(rate_limit=)`` counts requests the same way: it
puts its limiter in scope (``limiting``) for the calls it makes, and a driver waits on every
limiter in scope as well as its client's, taking a slot in all of them at the same instant
(``wait_all``), so each limit holds exactly when several compose.

A limit whose window is an hour or more (``"100/day"``, ``"1000/h"``) is a quota, as
Magisterium's plans are (requests per day): it is not spaced (no 14.4 minutes between the
requests of ``"100/day"``) but counted, in a sliding window, so its requests go as fast as the
shorter limits allow; once it is spent a call waits until the oldest of its requests leaves the
window (``on_quota="wait"``, the default) or raises a ``QuotaExceededError`` saying when that
is (``on_quota="raise"``). Several limits at once: ``"5/min,100/day"``. A quota is counted per
limiter in this process: pass one ``RateLimiter`` to every client that shares it.
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from ..core.errors import QuotaExceededError

__all__ = [
    "QUOTA_WINDOW",
    "OnQuota",
    "RateLimit",
    "RateLimiter",
    "in_scope",
    "limiting",
    "wait_all",
    "wait_all_sync",
]

log = logging.getLogger("citekit.transport")

#: A window of this many seconds or more is a quota: counted, not spaced.
QUOTA_WINDOW: Final = 3600.0

#: What a call does once a quota is spent: wait for it to free a request, or raise.
OnQuota = Literal["wait", "raise"]

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
    "d": 86400.0,
    "day": 86400.0,
}
_RATE_RE: Final = re.compile(
    r"^\s*(\d+(?:\.\d*)?)\s*(?:/|per\s)\s*(\d+(?:\.\d*)?)?\s*([a-z]+?)s?\s*$"
)


class _Quota:
    """``count`` requests in any ``period`` seconds: the times of the latest ``count``."""

    __slots__ = ("count", "period", "taken")

    def __init__(self, count: float, period: float) -> None:
        if count < 1:
            raise ValueError(
                f"a quota (a window of an hour or more) needs at least 1 request, not "
                f"{count:g} per {period:g} s"
            )
        self.count = int(count)
        self.period = period
        self.taken: collections.deque[float] = collections.deque(maxlen=self.count)

    def wait(self, now: float) -> float:
        """Seconds until it frees a request (0.0: one is free now)."""
        if len(self.taken) < self.count:
            return 0.0
        return max(self.taken[0] + self.period - now, 0.0)


class RateLimiter:
    """Spaces requests evenly under each limit shorter than an hour (at most ``count`` per
    ``period`` seconds, never a burst) and counts them under each longer one (a quota).

    Each wait takes the next free slot, ``interval`` seconds after the previous one, and
    sleeps until it comes; a wait that is cancelled (or interrupted) takes no slot. Thread-safe,
    and shared by sync and async callers on any event loop.

    Parameters
    ----------
    count, period
        The first limit: ``count`` requests per ``period`` seconds.
    also
        More limits, as ``(count, period)`` pairs: ``RateLimiter(5, 60, also=[(100, 86400)])``
        is ``"5/min,100/day"``.
    on_quota
        Once a quota is spent: ``"wait"`` until it frees a request, or ``"raise"`` a
        ``QuotaExceededError`` saying when it will.
    clock
        Seconds on a monotonic clock (``time.monotonic``).

    Examples
    --------
    >>> import citekit as ck
    >>> limiter = ck.RateLimiter.parse("5/s")
    >>> limiter, limiter.interval
    (RateLimiter(5 per 1 s), 0.2)
    >>> mg = ck.Magisterium(rate_limit=limiter)  # or rate_limit="5/s"; a number is per minute
    >>> mg.rate_limit is limiter
    True
    >>> ck.RateLimiter.parse("5/min,100/day").interval  # the quota adds no spacing
    12.0
    """

    def __init__(
        self,
        count: float,
        period: float = 60.0,
        *,
        also: Iterable[tuple[float, float]] = (),
        on_quota: OnQuota = "wait",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        limits = [(float(count), float(period)), *((float(c), float(p)) for c, p in also)]
        for c, p in limits:
            if not c > 0 or not p > 0:
                raise ValueError(f"a rate limit needs count > 0 and period > 0, not {c:g}/{p:g}")
        if on_quota not in ("wait", "raise"):
            raise ValueError(f"on_quota={on_quota!r} must be 'wait' or 'raise'")
        self.count, self.period = limits[0]
        #: Every limit, as ``(count, period)`` pairs, in the order given.
        self.limits: tuple[tuple[float, float], ...] = tuple(limits)
        #: Seconds between two requests: the strictest spacing of the limits under an hour
        #: (0.0 when every limit is a quota).
        self.interval = max((p / c for c, p in limits if p < QUOTA_WINDOW), default=0.0)
        self.on_quota: OnQuota = on_quota
        self._quotas = tuple(_Quota(c, p) for c, p in limits if p >= QUOTA_WINDOW)
        self._clock = clock
        #: When the latest slots were taken (its clock, the newest 1,024): the spacing the
        #: limiter kept, to check without timing the requests' arrivals.
        self.slots: collections.deque[float] = collections.deque(maxlen=1024)
        self._next = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        limits = ", ".join(f"{c:g} per {p:g} s" for c, p in self.limits)
        return f"RateLimiter({limits})"

    @classmethod
    def parse(cls, spec: RateLimit, *, on_quota: OnQuota = "wait") -> RateLimiter:
        """``"60/min"``, ``"5/s"``, ``"3/minute"``, ``"100 per hour"``, ``"10/30s"``,
        ``"100/day"``, several at once (``"5/min,100/day"``), or a number of requests per
        minute; a ``RateLimiter`` is returned as it is (with its own ``on_quota``)."""
        if isinstance(spec, RateLimiter):
            return spec
        if isinstance(spec, int | float) and not isinstance(spec, bool):
            return cls(spec, 60.0, on_quota=on_quota)
        if isinstance(spec, str):
            limits = [_parse_one(part) for part in spec.split(",")]
            if limits and None not in limits:
                (count, period), *more = [lim for lim in limits if lim is not None]
                return cls(count, period, also=more, on_quota=on_quota)
        raise ValueError(
            f"rate_limit={spec!r} is not understood; write it like '60/min', '5/s', "
            "'3/minute', '1000/hour', '100/day', '10/30s', several at once as "
            "'5/min,100/day', give a number of requests per minute, or a citekit.RateLimiter"
        )

    def wait_time(self) -> float:
        """Seconds until a request may be sent (0.0: now); takes nothing."""
        with self._lock:
            now = self._clock()
            return max(self._next - now, *(q.wait(now) for q in self._quotas), 0.0)

    async def wait(self) -> None:
        """Wait for the next free slot (async)."""
        await wait_all((self,))

    def wait_sync(self) -> None:
        """Wait for the next free slot, blocking this thread."""
        wait_all_sync((self,))

    def _exhausted(self, wait: float, provider: str) -> QuotaExceededError:
        quota = max(self._quotas, key=lambda q: q.wait(self._clock()))
        try:
            at: datetime | None = datetime.now(UTC) + timedelta(seconds=wait)
        except OverflowError:  # pragma: no cover - a window past the year 9999
            at = None
        when = f" ({at:%Y-%m-%d %H:%M:%S} UTC)" if at is not None else ""
        return QuotaExceededError(
            f"The quota of {quota.count:,} requests per {_span(quota.period)} "
            f"(rate_limit=) is spent in this process: it frees a request in {_span(wait)}"
            f"{when}, and resets fully {_span(quota.period)} after its first request. "
            "Nothing was sent. Pass on_quota='wait' to wait instead, or a larger quota if "
            "your plan allows it",
            provider=provider,
            retry_after=wait,
            resets_at=at,
        )


def _parse_one(part: str) -> tuple[float, float] | None:
    m = _RATE_RE.match(part.lower())
    if not m or m.group(3) not in _UNITS:
        return None
    span = float(m.group(2)) if m.group(2) else 1.0
    return float(m.group(1)), span * _UNITS[m.group(3)]


def _span(seconds: float) -> str:
    for unit, size in (("day", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            amount = seconds / size
            return unit if amount == 1 else f"{amount:.3g} {unit}"
    return f"{seconds:.3g} s"


def _try(ordered: Sequence[RateLimiter], provider: str) -> float:
    """With every limiter's lock held: take a slot in each if all are free (0.0), else how
    long until the last of them is (nothing taken); a spent quota that says ``"raise"``
    raises."""
    # One reading per clock: limiters on the same clock take their slots at one instant.
    clocks: dict[Callable[[], float], float] = {}
    wait = 0.0
    for limiter in ordered:
        now = clocks.setdefault(limiter._clock, limiter._clock())
        quota = max((q.wait(now) for q in limiter._quotas), default=0.0)
        if quota > 0 and limiter.on_quota == "raise":
            raise limiter._exhausted(quota, provider)
        wait = max(wait, limiter._next - now, quota)
    if wait > 0:
        return wait
    for limiter in ordered:
        now = clocks[limiter._clock]
        limiter._next = now + limiter.interval
        limiter.slots.append(now)
        for q in limiter._quotas:
            q.taken.append(now)
    return 0.0


def _take(limiters: Sequence[RateLimiter], provider: str = "") -> float:
    """Take a slot in every limiter at once if all have come (0.0), else how long until the
    last of them comes (nothing taken)."""
    if len(limiters) == 1:  # the common case: one lock
        [only] = limiters
        with only._lock:
            return _try(limiters, provider)
    # Locks taken in one global order (by id), so two callers never hold them crosswise.
    ordered = sorted(set(limiters), key=id)
    with contextlib.ExitStack() as held:
        for limiter in ordered:
            held.enter_context(limiter._lock)
        return _try(ordered, provider)


async def wait_all(limiters: Sequence[RateLimiter], *, provider: str = "") -> None:
    """Wait until every limiter has a free slot, and take them all at that instant (async).

    A wait that is cancelled takes no slot. ``provider`` names who a ``QuotaExceededError``
    is about.
    """
    if limiters and (delay := _take(limiters, provider)) > 0:
        _log(delay, limiters)
        while delay > 0:
            await asyncio.sleep(delay)
            delay = _take(limiters, provider)


def wait_all_sync(limiters: Sequence[RateLimiter], *, provider: str = "") -> None:
    """``wait_all``, blocking this thread."""
    if limiters and (delay := _take(limiters, provider)) > 0:
        _log(delay, limiters)
        while delay > 0:
            time.sleep(delay)
            delay = _take(limiters, provider)


def _log(delay: float, limiters: Sequence[RateLimiter]) -> None:
    level = logging.INFO if delay >= 60 else logging.DEBUG  # a spent quota is worth saying
    log.log(level, "Waiting %.2f s for the rate limit (%s)", delay, ", ".join(map(repr, limiters)))


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


#: What ``rate_limit=`` takes: ``"5/s"``, ``"5/min,100/day"``, a number per minute, or a
#: ``RateLimiter``.
RateLimit = str | float | RateLimiter
