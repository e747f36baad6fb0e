"""Many questions at once: bounded concurrency, a rate limit, results in input order.

``ask_many(client, questions)`` works with any client that has ``aask`` (Magisterium,
Maritaca, GPTBots). The questions go out through at most ``concurrency`` requests in flight,
a request holding its place until its reply is in (the answer before it is read while the next
request is already out: ``citekit.transport.inflight``);
``rate_limit=`` counts the batch's HTTP requests (retries and GPTBots' three requests per
question included), evenly spaced, and composes with the client's own ``rate_limit=``, which
holds across batches, threads and other calls. Retries are the client's (``max_retries=``). One
failed question does not stop the others: with ``errors="raise"`` (default) a ``BatchError``
carrying every result is raised at the end, with ``errors="keep"`` the failed slots hold
``Failed(question, error, index)`` objects, which are falsy::

    answers = ck.ask_many(mg, questions, concurrency=8, rate_limit="60/min")
    ok = [a for a in ck.ask_many(mg, questions, errors="keep") if a]

Ctrl-C (or cancelling the task of ``aask_many``) stops the batch and keeps what finished:
``ask_many`` raises ``BatchInterrupted`` (a ``KeyboardInterrupt``) whose ``.results`` holds
the answers with ``None`` for the questions that did not finish, and whose ``.batch`` is the
run's ``BatchResult``. Every run, finished or not, is also reachable as ``citekit.last_batch``
(the most recent one of the process), which is where a notebook finds the answers after
Ctrl-C, or after cancelling an ``aask_many`` task::

    ck.ask_many(mg, questions)                  # Ctrl-C after a while
    done = ck.last_batch.answers                # what finished
    rest = ck.ask_many(mg, ck.last_batch.unfinished)
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, overload

from ..core.errors import CitekitError
from ..model import Answer
from ..render.progress import make_progress
from ..store import log as _log
from ..transport.http import connections
from ..transport.inflight import in_flight
from ..transport.loop import run_sync
from ..transport.ratelimit import OnQuota, RateLimit, RateLimiter, limiting
from ._client import ProviderClient

__all__ = [
    "AsyncAsker",
    "BatchError",
    "BatchInterrupted",
    "BatchResult",
    "Failed",
    "RateLimiter",
    "aask_many",
    "ask_many",
    "last_batch",
]

Errors = Literal["raise", "keep"]


class AsyncAsker(Protocol):
    """Anything with an ``aask(question, **options)`` coroutine method returning an Answer."""

    @property
    def aask(self) -> Callable[..., Awaitable[Answer]]: ...


@dataclass(frozen=True, slots=True)
class Failed:
    """The place of a question that failed, in a batch run with ``errors="keep"``.

    Falsy, so ``[a for a in results if a]`` keeps the answers.
    """

    question: str
    error: BaseException
    index: int

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"question {self.index} failed: {self.error}"


class BatchResult:
    """One run of ``ask_many`` / ``aask_many`` as it stands: answered, failed, not finished.

    A run fills it in as its questions finish; ``citekit.last_batch`` is the most recent one
    of the process, and ``BatchInterrupted.batch`` / ``BatchError.batch`` the run they stopped.
    Reading it never changes it; every list is a copy.

    Attributes
    ----------
    questions
        The questions, in input order.
    """

    def __init__(self, questions: Sequence[str]) -> None:
        self.questions: tuple[str, ...] = tuple(questions)
        self._results: list[Answer | Failed | None] = [None] * len(self.questions)
        self._done = 0
        self._failed = 0
        self._running = True
        self._interrupted = False

    @property
    def results(self) -> list[Answer | Failed | None]:
        """Every slot in input order: an ``Answer``, a ``Failed``, or ``None`` (not finished)."""
        return list(self._results)

    @property
    def answers(self) -> list[Answer]:
        """The answers that arrived, in input order."""
        return [r for r in self._results if isinstance(r, Answer)]

    @property
    def failures(self) -> list[Failed]:
        """The questions that failed, in input order."""
        return [r for r in self._results if isinstance(r, Failed)]

    @property
    def unfinished(self) -> list[str]:
        """The questions with neither an answer nor a failure (to ask again)."""
        return [q for q, r in zip(self.questions, self._results, strict=True) if r is None]

    @property
    def done(self) -> int:
        """How many questions finished, answered or failed."""
        return self._done

    @property
    def total(self) -> int:
        return len(self.questions)

    @property
    def running(self) -> bool:
        """True while the run goes on."""
        return self._running

    @property
    def interrupted(self) -> bool:
        """True when Ctrl-C, a cancellation or an error stopped the run before its end."""
        return self._interrupted

    def __repr__(self) -> str:
        state = "running" if self._running else "interrupted" if self._interrupted else "finished"
        failed = f", {self._failed} failed" if self._failed else ""
        return f"<BatchResult {state}: {self._done} of {self.total} done{failed}>"

    def _settle(self, index: int, result: Answer | Failed) -> None:
        self._results[index] = result
        self._done += 1
        if isinstance(result, Failed):
            self._failed += 1

    def _stop(self, *, interrupted: bool) -> None:
        self._interrupted = self._interrupted or interrupted
        self._running = False


#: The most recent batch of the process (``last_batch()``).
_last: BatchResult | None = None


def last_batch() -> BatchResult | None:
    """The most recent ``ask_many`` / ``aask_many`` run of this process, or None.

    ``citekit.last_batch`` reads it. A run becomes the last batch when it starts, so a
    running one is there too. There is one per process: with several batches at once (threads,
    tasks) it is the one started last; each run's own ``BatchResult`` stays on its
    ``BatchInterrupted`` or ``BatchError``.
    """
    return _last


class BatchError(CitekitError):
    """Some questions of a batch failed (``errors="raise"``); the others were answered.

    ``results`` has every slot in input order (``Answer`` or ``Failed``); ``failures`` and
    ``answers`` split them; ``batch`` is the run's ``BatchResult``.
    """

    def __init__(
        self, results: Sequence[Answer | Failed], *, batch: BatchResult | None = None
    ) -> None:
        self.batch = batch
        self.results = list(results)
        self.failures = [r for r in self.results if isinstance(r, Failed)]
        self.answers = [r for r in self.results if isinstance(r, Answer)]
        first = self.failures[0] if self.failures else None
        super().__init__(
            f"{len(self.failures)} of {len(self.results)} questions failed"
            + (f" (first, question {first.index}: {first.error})" if first is not None else "")
            + ". Every result is in .results; pass errors='keep' to get them back with "
            "Failed(...) in the failed places"
        )


class BatchInterrupted(KeyboardInterrupt):
    """A batch stopped by Ctrl-C; ``results`` keeps what finished (``None`` elsewhere) and
    ``batch`` is the run's ``BatchResult`` (also ``citekit.last_batch``)."""

    def __init__(
        self, results: Sequence[Answer | Failed | None], *, batch: BatchResult | None = None
    ) -> None:
        self.batch = batch
        self.results = list(results)
        done = sum(r is not None for r in self.results)
        super().__init__(
            f"Interrupted after {done} of {len(self.results)} questions; "
            "the finished ones are in citekit.last_batch.answers (and in .results, with None "
            "for the others); citekit.last_batch.unfinished lists the questions to ask again"
        )

    @property
    def answers(self) -> list[Answer]:
        """The answers that arrived before the interruption."""
        return [r for r in self.results if isinstance(r, Answer)]


def _question_list(questions: Iterable[str]) -> list[str]:
    if isinstance(questions, str):
        raise TypeError("questions must be a list of strings; wrap one question in [...]")
    return list(questions)


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class _Batch:
    """One run: it asks the questions and fills in its ``BatchResult``."""

    def __init__(
        self,
        client: AsyncAsker,
        questions: Sequence[str],
        *,
        concurrency: int,
        rate_limit: RateLimit | None,
        on_quota: OnQuota,
        cache: bool | None,
        log: bool | None,
        options: dict[str, Any],
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency={concurrency!r} must be a whole number >= 1")
        ask = getattr(client, "aask", None)
        if not callable(ask):
            raise TypeError(f"{type(client).__name__} has no aask(question) method")
        for i, q in enumerate(questions):
            if not isinstance(q, str) or not q.strip():
                raise ValueError(f"questions[{i}]={q!r} must be a non-empty string")
        if options.get("stream") and "display" not in options and _accepts(ask, "display"):
            options["display"] = False  # one live display per question would flood the cell
        self.client = client
        self.ask: Callable[..., Awaitable[Answer]] = ask
        self.questions = list(questions)
        self.concurrency = concurrency
        self.limiter = (
            RateLimiter.parse(rate_limit, on_quota=on_quota) if rate_limit is not None else None
        )
        self.cache = cache
        self.log = log
        self.options = options
        self.result = BatchResult(self.questions)
        self.on_progress: Callable[[int, int], None] | None = None
        global _last
        _last = self.result

    @property
    def done(self) -> int:
        return self.result._done

    @property
    def failed(self) -> int:
        return self.result._failed

    def settle_held(self) -> bool:
        """Settle at once the questions a citekit client answers from memory (caching on:
        ``ask`` would return the same answer without sending anything); whether any are
        left to ask. A cached re-run is then answered on the caller's thread, with no
        event loop to wait for; a question whose call would fail is left to it."""
        held = getattr(self.client, "_held_answer", None)
        if not callable(held):
            return True
        with _log.options(log=self.log, cache=self.cache):
            for index, question in enumerate(self.questions):
                try:
                    answer = held(question, **self.options)
                except Exception:  # said where the call runs, as a Failed or an error
                    answer = None
                if answer is not None:
                    self.result._settle(index, answer)
        if self.done < len(self.questions):
            return True
        self.result._stop(interrupted=False)
        return False

    async def run(self) -> None:
        results = self.result._results
        pending = iter([i for i in range(len(self.questions)) if results[i] is None])
        left = len(self.questions) - self.done
        try:
            # The client's pool holds as many connections as requests run at once; the
            # answers are written to the log once the batch is done (``Log.holding``).
            # A client's requests take places in flight (``in_flight``) until their reply is
            # in: twice as many workers as places, so that one sends as soon as a reply is
            # in, while the worker that got it reads the answer.
            workers = self.concurrency
            if isinstance(self.client, ProviderClient):
                workers *= 2
            with (
                _log.options(log=self.log, cache=self.cache),
                connections(self.concurrency),
                in_flight(self.concurrency),
                _log.holding(),
            ):
                async with asyncio.TaskGroup() as group:
                    for _ in range(min(workers, left)):
                        group.create_task(self._worker(pending))
        except BaseException:  # cancelled (Ctrl-C included), or the run itself broke
            self.result._stop(interrupted=True)
            raise
        finally:
            self.result._stop(interrupted=False)

    async def _worker(self, pending: Iterable[int]) -> None:
        if self.limiter is None:
            await self._ask_each(pending)
        elif isinstance(self.client, ProviderClient):
            # The limit counts HTTP requests: every request these calls send waits on it.
            with limiting(self.limiter):
                await self._ask_each(pending)
        else:  # an asker whose requests citekit cannot see: space its calls instead
            await self._ask_each(pending, spaced=self.limiter)

    async def _ask_each(self, pending: Iterable[int], spaced: RateLimiter | None = None) -> None:
        for index in pending:
            if spaced is not None:
                await spaced.wait()
            question = self.questions[index]
            try:
                result: Answer | Failed = await self.ask(question, **self.options)
            except Exception as exc:
                result = Failed(question, exc, index)
            self.result._settle(index, result)
            if self.on_progress is not None:
                self.on_progress(self.done, self.failed)

    def outcome(self, errors: Errors) -> list[Any]:
        results = [r for r in self.result.results if r is not None]
        if errors == "raise" and self.failed:
            raise BatchError(results, batch=self.result)
        return results


def _check_errors(errors: str) -> None:
    if errors not in ("raise", "keep"):
        raise ValueError(f"errors={errors!r} must be 'raise' or 'keep'")


@overload
async def aask_many(
    client: AsyncAsker,
    questions: Iterable[str],
    *,
    concurrency: int = ...,
    rate_limit: RateLimit | None = ...,
    on_quota: OnQuota = ...,
    errors: Literal["raise"] = ...,
    progress: bool | None = ...,
    cache: bool | None = ...,
    log: bool | None = ...,
    **options: Any,
) -> list[Answer]: ...
@overload
async def aask_many(
    client: AsyncAsker,
    questions: Iterable[str],
    *,
    concurrency: int = ...,
    rate_limit: RateLimit | None = ...,
    on_quota: OnQuota = ...,
    errors: Literal["keep"],
    progress: bool | None = ...,
    cache: bool | None = ...,
    log: bool | None = ...,
    **options: Any,
) -> list[Answer | Failed]: ...
async def aask_many(
    client: AsyncAsker,
    questions: Iterable[str],
    *,
    concurrency: int = 8,
    rate_limit: RateLimit | None = None,
    on_quota: OnQuota = "wait",
    errors: Errors = "raise",
    progress: bool | None = None,
    cache: bool | None = None,
    log: bool | None = None,
    **options: Any,
) -> list[Answer] | list[Answer | Failed]:
    """Async twin of ``ask_many``: await it in a notebook cell or a coroutine.

    A cancelled call cancels the requests in flight and re-raises ``CancelledError``; what
    finished is then in ``citekit.last_batch`` (see ``last_batch``).
    """
    _check_errors(errors)
    batch = _Batch(
        client,
        _question_list(questions),
        concurrency=concurrency,
        rate_limit=rate_limit,
        on_quota=on_quota,
        cache=cache,
        log=log,
        options=dict(options),
    )
    bar = make_progress(len(batch.questions), progress, description=_name(client))
    batch.on_progress = bar.update
    try:
        await batch.run()
    except BaseException as exc:  # Ctrl-C or a cancelled task: the bar says it stopped
        bar.close(batch.done, batch.failed, interrupted=not isinstance(exc, Exception))
        raise
    bar.close(batch.done, batch.failed)
    return batch.outcome(errors)


@overload
def ask_many(
    client: AsyncAsker,
    questions: Iterable[str],
    *,
    concurrency: int = ...,
    rate_limit: RateLimit | None = ...,
    on_quota: OnQuota = ...,
    errors: Literal["raise"] = ...,
    progress: bool | None = ...,
    cache: bool | None = ...,
    log: bool | None = ...,
    **options: Any,
) -> list[Answer]: ...
@overload
def ask_many(
    client: AsyncAsker,
    questions: Iterable[str],
    *,
    concurrency: int = ...,
    rate_limit: RateLimit | None = ...,
    on_quota: OnQuota = ...,
    errors: Literal["keep"],
    progress: bool | None = ...,
    cache: bool | None = ...,
    log: bool | None = ...,
    **options: Any,
) -> list[Answer | Failed]: ...
def ask_many(
    client: AsyncAsker,
    questions: Iterable[str],
    *,
    concurrency: int = 8,
    rate_limit: RateLimit | None = None,
    on_quota: OnQuota = "wait",
    errors: Errors = "raise",
    progress: bool | None = None,
    cache: bool | None = None,
    log: bool | None = None,
    **options: Any,
) -> list[Answer] | list[Answer | Failed]:
    """Ask every question, ``concurrency`` at a time, and return the answers in input order.

    Works in a notebook cell (the requests run on citekit's background event loop, the
    kernel's loop is not patched) and in plain scripts.

    Parameters
    ----------
    client
        A Magisterium, Maritaca or GPTBots client, or anything with ``aask``.
    questions
        The questions (non-empty strings).
    concurrency
        Most requests in flight at once (each from its sending until its reply is in; the
        answers are read meanwhile).
    rate_limit
        At most this many HTTP requests of the batch, evenly spaced: ``"60/min"``, ``"2/s"``,
        a number per minute, or a ``RateLimiter``; a window of an hour or more is a quota,
        counted rather than spaced (``"5/min,100/day"``). Retries count, and a GPTBots question
        is three requests. It applies on top of the client's own ``rate_limit=`` (both hold).
        None: no limit of the batch's own. (For an asker that is not a citekit client, whose
        requests citekit cannot see, it spaces the calls instead.)
    on_quota
        Once a quota of the batch's ``rate_limit=`` is spent: ``"wait"`` until it frees a
        request, or ``"raise"``: the questions left fail with ``QuotaExceededError``.
    errors
        ``"raise"``: if any question failed, raise ``BatchError`` after all are done (its
        ``.results`` has everything). ``"keep"``: return ``Failed`` objects in their places.
    progress
        A progress bar (a widget in a notebook, text on a terminal's stderr); None shows one
        where it can be seen, False never.
    cache, log
        Answer repeated requests from the local log / record the answers there (default:
        the log's settings, see ``citekit.store.answer_log``).
    **options
        Passed to every ``client.aask`` call (``system=``, ``model=``, ...).

    Raises
    ------
    BatchInterrupted
        On Ctrl-C, with the finished answers in ``.results`` and the run in ``.batch``; the
        run is also ``citekit.last_batch``.
    """
    _check_errors(errors)
    batch = _Batch(
        client,
        _question_list(questions),
        concurrency=concurrency,
        rate_limit=rate_limit,
        on_quota=on_quota,
        cache=cache,
        log=log,
        options=dict(options),
    )
    bar = make_progress(len(batch.questions), progress, description=_name(client))
    try:
        if batch.settle_held():
            run_sync(batch.run(), poll=lambda: bar.update(batch.done, batch.failed))
    except KeyboardInterrupt:
        # The run may still be winding down on the background loop: it is stopped all the same.
        batch.result._stop(interrupted=True)
        bar.close(batch.done, batch.failed, interrupted=True)
        raise BatchInterrupted(batch.result.results, batch=batch.result) from None
    bar.close(batch.done, batch.failed)
    return batch.outcome(errors)


def _name(client: object) -> str:
    return str(getattr(client, "display_name", type(client).__name__))
