"""One provider call as the answer log sees it (the cache look-up, the timing, the record),
and the in-memory cache in front of the file."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..model import Answer

if TYPE_CHECKING:
    from .answer_log import Log

_logger = logging.getLogger(__name__)

#: How many answers the in-memory cache in front of the file keeps.
MEMO_SIZE = 2048


class Memo:
    """Answers by ``(file, request key)``, the least recently used dropped past ``MEMO_SIZE``;
    safe to share between threads."""

    def __init__(self) -> None:
        self._answers: collections.OrderedDict[tuple[str, str], Answer] = collections.OrderedDict()
        self._lock = threading.Lock()

    def remember(self, key: tuple[str, str], answer: Answer) -> None:
        with self._lock:
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > MEMO_SIZE:
                self._answers.popitem(last=False)

    def recall(self, key: tuple[str, str]) -> Answer | None:
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
            return found

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()


class LoggedCall:
    """One provider call seen by the log; made by ``Log.call``."""

    def __init__(
        self,
        log: Log,
        provider: str,
        request: Mapping[str, Any] | None,
        base_url: str | None,
        secrets: tuple[str, ...],
        stream: bool,
        cache: bool | None,
        enabled: bool | None,
    ) -> None:
        self.log = log
        self.provider = provider
        self.request = request
        self.base_url = base_url
        self.secrets = secrets
        self.stream = stream
        self.enabled = enabled
        self.cached: Answer | None = None
        if request is not None:
            self.cached = log.lookup(provider, request, base_url=base_url, cache=cache)
            if self.cached is not None:
                question = (self.cached.question or "")[:80]
                _logger.info("Answered %r from the cache of %s (%s)", question, log.path, provider)
        self.started = time.perf_counter()
        self.row_id: int | None = None
        self._finished = False

    def __enter__(self) -> LoggedCall:
        return self

    def done(self, answer: Answer, *, cacheable: bool = True) -> Answer:
        """Record ``answer`` (unless it came from the cache) and return it.

        ``cacheable=False`` logs it without ever serving it from the cache.
        """
        self._finished = True
        if not answer.cached:
            self._record(answer, None, cacheable=cacheable)
        return answer

    def interrupted(self, partial: Answer, exc: BaseException) -> None:
        """Record what arrived before Ctrl-C or a cancellation (``exc``) stopped the call:
        logged as partial with the interruption as its error, never served from the cache."""
        self._finished = True
        self._record(partial, exc, cacheable=False)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Cancellation and Ctrl-C are the caller's doing, not the provider's: not recorded
        # here (``interrupted`` records what they leave, when something arrived).
        if exc is None or self._finished or not isinstance(exc, Exception):
            return
        self._finished = True
        self._record(None, exc)

    def _record(
        self, answer: Answer | None, error: BaseException | None, *, cacheable: bool = True
    ) -> None:
        self.row_id = self.log.record(
            answer,
            provider=self.provider,
            request=self.request,
            base_url=self.base_url,
            elapsed=time.perf_counter() - self.started,
            error=error,
            stream=self.stream,
            secrets=self.secrets,
            log=self.enabled,
            cacheable=cacheable,
        )
