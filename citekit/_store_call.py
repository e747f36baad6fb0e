"""One provider call as the answer log sees it: the cache look-up, the timing, the record."""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._models import Answer

if TYPE_CHECKING:
    from .store import Log


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
        if answer.cached:
            return answer
        self.row_id = self.log.record(
            answer,
            request=self.request,
            base_url=self.base_url,
            elapsed=time.perf_counter() - self.started,
            stream=self.stream,
            secrets=self.secrets,
            log=self.enabled,
            cacheable=cacheable,
        )
        return answer

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Cancellation and Ctrl-C are the caller's doing, not the provider's: not recorded.
        if exc is None or self._finished or not isinstance(exc, Exception):
            return
        self._finished = True
        self.row_id = self.log.record(
            None,
            provider=self.provider,
            request=self.request,
            base_url=self.base_url,
            elapsed=time.perf_counter() - self.started,
            error=exc,
            stream=self.stream,
            secrets=self.secrets,
            log=self.enabled,
        )
