"""When to send a request again, and how long to wait first: one policy, no I/O.

The rules are the openai SDK's (``_base_client.py``: ``_should_retry``,
``_calculate_retry_timeout``), which the providers' docs recommend as their client. Retried:
errors before the request was sent (a connect error, a pool timeout: nothing reached the
server), HTTP 408, 409, 429 and every 5xx, any status whose reply says ``x-should-retry: true``,
and the in-band errors GPTBots sends with HTTP 200 (``{code, message}``) when they mean "too many
requests" or "internal error". Never a reply that says ``x-should-retry: false``, never another
4xx, never a read error (the server may have started the work), never once the stream has
handed on its first event, never when the server asks (``retry-after-ms`` or ``Retry-After``)
for a longer wait than ``max_retry_after``: that error is raised at once, saying when to try
again (``explain_wait``). One budget of ``max_retries`` covers every kind.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..core.errors import (
    ProviderError,
    QuotaExceededError,
    RateLimitError,
    ServerError,
    TransportError,
)

__all__ = ["MAX_RETRY_AFTER", "RETRY_STATUSES", "RetryPolicy"]

RETRY_STATUSES = frozenset({408, 409, 429, *range(500, 600)})
#: The longest ``Retry-After`` obeyed, in seconds; a longer one is not waited for: the error is
#: raised at once, saying when to try again.
MAX_RETRY_AFTER = 120.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a client retries.

    Parameters
    ----------
    max_retries
        Requests sent again at the most, after the first (``max_retries + 1`` in all).
    backoff, max_backoff
        Without ``Retry-After``, retry ``n`` (0-based) waits ``min(max_backoff, backoff * 2**n)``
        seconds, half of it fixed and half random ("equal jitter").
    statuses
        HTTP statuses worth a retry (a reply's ``x-should-retry`` overrides them).
    max_retry_after
        The longest ``Retry-After`` obeyed; a server asking for longer gets no retry.
    """

    max_retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 20.0
    statuses: frozenset[int] = RETRY_STATUSES
    max_retry_after: float = MAX_RETRY_AFTER

    def should_retry(self, error: BaseException, attempt: int, *, received: bool) -> bool:
        """Whether to send again after ``error`` ended attempt ``attempt`` (0 for the first).

        ``received`` is True once the caller has had part of the reply (a stream's first
        event): a retry would repeat what it already has.
        """
        if received or attempt >= self.max_retries or self.asks_too_long(error):
            return False
        if isinstance(error, ProviderError):
            if error.should_retry is not None:  # the server's own word: x-should-retry
                return error.should_retry
            if error.status in self.statuses:
                return True
            # In-band (GPTBots' HTTP 200 envelope): the error's class says whether it passes.
            return isinstance(error, RateLimitError | ServerError) and error.status in (None, 200)
        return isinstance(error, TransportError) and error.connect

    def asks_too_long(self, error: BaseException) -> bool:
        """Whether ``error`` carries a ``Retry-After`` longer than this policy waits."""
        wait = getattr(error, "retry_after", None)
        return isinstance(wait, float | int) and wait > self.max_retry_after

    def explain_wait(self, error: BaseException, *, now: datetime | None = None) -> None:
        """Add to ``error``'s message when to try again, if it asked too long a wait.

        >>> from datetime import UTC, datetime
        >>> from citekit.wire.retry import RetryPolicy
        >>> from citekit.core.errors import RateLimitError
        >>> error = RateLimitError("Too many requests", provider="maritaca", status=429,
        ...                        retry_after=3600.0)
        >>> RetryPolicy().explain_wait(error, now=datetime(2026, 1, 1, tzinfo=UTC))
        >>> print(error)
        Maritaca returned HTTP 429: Too many requests. The server asks to wait 3600 s (1.0 h),
        longer than citekit waits (120 s): try again after 2026-01-01 01:00:00 UTC
        """
        if not isinstance(error, ProviderError) or not self.asks_too_long(error):
            return
        if isinstance(error, QuotaExceededError):  # citekit's own quota already says when
            return
        wait = float(error.retry_after or 0.0)
        try:
            at = (now or datetime.now(UTC)) + timedelta(seconds=wait)
            when = f"try again after {at:%Y-%m-%d %H:%M:%S} UTC"
        except (OverflowError, ValueError):  # past the year 9999
            when = "try again much later, or ask the provider"
        advice = (
            f"The server asks to wait {wait:.0f} s ({_span(wait)}), longer than citekit waits "
            f"({self.max_retry_after:g} s): {when}"
        )
        error.hint = advice  # replaces the generic advice (retrying sooner cannot help)
        error.args = (error._describe(),)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``attempt + 1``: ``Retry-After`` (capped), else backoff."""
        if retry_after is not None and not math.isnan(retry_after):
            return min(max(retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** min(attempt, 64))
        return float(ceiling * (0.5 + random.random() / 2))


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"
