"""One provider call as the answer log sees it (the cache look-up, the timing, the record),
the in-memory cache in front of the file, and the cacheable calls in flight.

Identical cacheable requests in flight at once are sent once (single-flight, keyed by the
cache key): the first sends, the others wait for it (``LoggedCall.wait_for_twin``) and take its
answer, marked ``cached``, as they would have taken it from the log a moment later. A call that
fails, or ends with an answer the cache would not serve (partial, uncacheable), leaves its
twins to send their own.
"""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import threading
import time
from collections.abc import Generator, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..core.errors import CitekitError
from ..core.secrets import scrub_value
from ..model import Answer
from ..transport.inflight import in_flight_places
from ..wire.flow import Wait
from .keys import request_key

if TYPE_CHECKING:
    from .answer_log import Log
    from .lifecycle import LogFile

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


class Flight:
    """One cacheable call being sent; ``done`` gets its answer (None: its twins send their
    own). ``thread`` is where it runs; ``twins`` counts the calls waiting for it."""

    __slots__ = ("done", "places", "thread", "twins")

    def __init__(self) -> None:
        self.done: concurrent.futures.Future[Answer | None] = concurrent.futures.Future()
        self.thread = threading.get_ident()
        self.twins = 0
        #: The places in flight its request takes one of (``ask_many``'s), if any.
        self.places = in_flight_places()


class Flights:
    """Cacheable calls in flight by ``(file, request key)``; safe to share between threads
    and event loops."""

    def __init__(self) -> None:
        self._flying: dict[tuple[str, str], Flight] = {}
        self._lock = threading.Lock()

    def board(self, key: tuple[str, str], *, lead: bool) -> tuple[Flight | None, bool]:
        """The flight of ``key`` and False if one is in the air (this call waits for it),
        else a new one and True when ``lead`` (this call sends), else ``(None, False)``."""
        with self._lock:
            flight = self._flying.get(key)
            if flight is not None:
                flight.twins += 1
                return flight, False
            if not lead:
                return None, False
            flight = self._flying[key] = Flight()
            return flight, True

    def land(self, key: tuple[str, str], flight: Flight, answer: Answer | None) -> None:
        with self._lock:
            if self._flying.get(key) is flight:
                del self._flying[key]
        if not flight.done.done():
            flight.done.set_result(answer)

    def __len__(self) -> int:
        with self._lock:
            return len(self._flying)


#: The process's cacheable calls in flight (keyed by file too: one table for every log).
FLIGHTS = Flights()


def said_from_cache(log: Log | LogFile, provider: str, answer: Answer) -> None:
    """The log line of a call answered from the log's cache."""
    if _logger.isEnabledFor(logging.INFO):  # the path is worked out for the line only
        question = (answer.question or "")[:80]
        _logger.info("Answered %r from the cache of %s (%s)", question, log.path, provider)


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
        self._flight: Flight | None = None
        self._leads = False
        self._key: tuple[str, str] = ("", "")
        if request is not None:
            self.cached = log.lookup(provider, request, base_url=base_url, cache=cache)
            if self.cached is not None:
                said_from_cache(log, provider, self.cached)
            elif log.cache_enabled(cache):
                self._board(request, lead=not stream)
        self.started = time.perf_counter()
        self.row_id: int | None = None
        self._finished = False

    def _board(self, request: Mapping[str, Any], *, lead: bool) -> None:
        """Join an identical call in flight, or (``lead``: not a stream, which its reader
        paces) be the one its twins wait for."""
        try:
            path = str(self.log.path)
        except CitekitError:  # no file to key by: no cache, no single-flight
            return
        self._key = (path, request_key(self.provider, request, self.base_url))
        self._flight, self._leads = FLIGHTS.board(self._key, lead=lead)

    def wait_for_twin(self) -> Generator[Wait, None, None]:
        """If an identical cacheable call is in flight, wait for it and take its answer
        (``cached`` is set); if it fails, this call goes on and sends its own request."""
        flight = self._flight
        if flight is None or self._leads:
            return
        self._flight = None
        yield Wait(flight.done, flight.thread, flight.places)
        answer = flight.done.result() if flight.done.done() else None
        if answer is not None:
            self.cached = answer
            question = (answer.question or "")[:80]
            _logger.info("Answered %r with an identical request in flight", question)

    def _land(self, answer: Answer | None) -> None:
        flight, self._flight = self._flight, None
        if flight is None or not self._leads:
            return
        if answer is not None:
            answer = replace(answer, cached=True)
            if flight.twins:  # this call's key never reaches another call's caller
                answer = scrub_value(answer, self.secrets)
        FLIGHTS.land(self._key, flight, answer)

    def __enter__(self) -> LoggedCall:
        return self

    def done(self, answer: Answer, *, cacheable: bool = True) -> Answer:
        """Record ``answer`` (unless it came from the cache) and return it.

        ``cacheable=False`` logs it without ever serving it from the cache.
        """
        self._finished = True
        if not answer.cached:
            self._record(answer, None, cacheable=cacheable)
        self._land(answer if cacheable and not answer.partial else None)
        return answer

    def interrupted(self, partial: Answer, exc: BaseException) -> None:
        """Record what arrived before Ctrl-C or a cancellation (``exc``) stopped the call:
        logged as partial with the interruption as its error, never served from the cache."""
        self._finished = True
        self._land(None)
        self._record(partial, exc, cacheable=False)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._land(None)  # a call that left without an answer: its twins send their own
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
