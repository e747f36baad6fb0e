"""When to send a request again, and how long to wait first: one policy, no I/O.

Retried: connect errors (nothing reached the server), HTTP 408, 429, 500, 502, 503, 504, and
the in-band errors GPTBots sends with HTTP 200 (``{code, message}``) when they mean "too many
requests" or "internal error". Never another 4xx, never a read error (the server may have
started the work), never once the stream has handed on its first event. One budget of
``max_retries`` covers every kind.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..core.errors import ProviderError, RateLimitError, ServerError, TransportError

__all__ = ["MAX_RETRY_AFTER", "RETRY_STATUSES", "RetryPolicy"]

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: The longest ``Retry-After`` obeyed, in seconds; a longer one is cut to this.
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
        HTTP statuses worth a retry.
    max_retry_after
        The longest ``Retry-After`` obeyed.
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
        if received or attempt >= self.max_retries:
            return False
        if isinstance(error, ProviderError):
            if error.status in self.statuses:
                return True
            # In-band (GPTBots' HTTP 200 envelope): the error's class says whether it passes.
            return isinstance(error, RateLimitError | ServerError) and error.status in (None, 200)
        return isinstance(error, TransportError) and error.connect

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``attempt + 1``: ``Retry-After`` (capped), else backoff."""
        if retry_after is not None and not math.isnan(retry_after):
            return min(max(retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** min(attempt, 64))
        return float(ceiling * (0.5 + random.random() / 2))
