"""One long-lived event loop on a daemon thread, so sync code can run coroutines anywhere.

A notebook cell already runs inside the kernel's event loop, where ``asyncio.run`` fails.
Rather than patching that loop (``nest_asyncio``), ``run_sync`` hands the coroutine to a
dedicated loop on a background thread and waits for it, as jupyter_core's ``run_sync`` does.
The same loop serves every call, so an ``httpx.AsyncClient`` a client opened on it (and its
connection pool) is reused from one call to the next.

Ctrl-C while waiting cancels the task, waits for it to wind down (so it can keep what it
finished), then raises ``KeyboardInterrupt`` in the caller.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["allow_nested_asyncio", "background_loop", "run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None

#: Seconds to wait for a cancelled task to finish its cleanup after Ctrl-C.
CANCEL_GRACE = 5.0


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared loop, started on first use on a daemon thread named ``citekit-loop``."""
    global _loop, _thread
    with _lock:
        if _loop is not None and _thread is not None and _thread.is_alive():
            return _loop
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        thread = threading.Thread(target=serve, name="citekit-loop", daemon=True)
        thread.start()
        ready.wait()
        _loop, _thread = loop, thread
        return loop


def _on_background_thread() -> bool:
    return _thread is not None and threading.current_thread() is _thread


def run_sync(
    coro: Coroutine[Any, Any, T],
    *,
    poll: Callable[[], None] | None = None,
    interval: float = 0.1,
) -> T:
    """Run ``coro`` to completion on the background loop and return its result.

    Works the same with or without an event loop running in the calling thread (a notebook
    cell, a plain script). Context variables of the caller are visible inside ``coro``.

    Parameters
    ----------
    coro
        The coroutine to run.
    poll
        Called from the calling thread about every ``interval`` seconds while waiting (used to
        redraw a progress bar from the thread that owns the display).
    interval
        Seconds between ``poll`` calls.
    """
    if _on_background_thread():
        coro.close()
        raise RuntimeError(
            "run_sync was called from citekit's own event loop thread; use the async API "
            "(await ...) in coroutines"
        )
    loop = background_loop()
    context = contextvars.copy_context()
    done = threading.Event()
    holder: list[asyncio.Task[T]] = []

    def start() -> None:
        task = loop.create_task(coro, context=context)
        task.add_done_callback(lambda _: done.set())
        holder.append(task)

    loop.call_soon_threadsafe(start)
    try:
        while not done.wait(interval if poll is not None else None):
            if poll is not None:
                poll()
    except KeyboardInterrupt:
        _cancel_and_wait(loop, holder, done)
        raise
    if poll is not None:
        poll()
    return holder[0].result()


def _cancel_and_wait(
    loop: asyncio.AbstractEventLoop, holder: list[asyncio.Task[Any]], done: threading.Event
) -> None:
    def cancel() -> None:
        if holder:
            holder[0].cancel()

    loop.call_soon_threadsafe(cancel)
    # A second Ctrl-C during the grace period stops waiting at once.
    if done.wait(CANCEL_GRACE) and not holder[0].cancelled():
        holder[0].exception()  # retrieved, so asyncio does not log it as never retrieved


def allow_nested_asyncio() -> None:
    """Let ``asyncio.run`` and ``loop.run_until_complete`` nest inside a running loop.

    citekit itself never needs this (its sync API runs on a background loop). It is an opt-in
    for your own cells that call ``asyncio.run``; it patches asyncio with ``nest_asyncio2``,
    the maintained fork that ipykernel 7 depends on (the archived ``nest_asyncio`` breaks on
    Python 3.12+). Patching a kernel's loop has been reported to destabilise kernels.
    """
    try:
        import nest_asyncio2
    except ImportError as exc:  # pragma: no cover - shipped with ipykernel 7
        raise ImportError(
            "allow_nested_asyncio() needs nest-asyncio2: pip install nest-asyncio2"
        ) from exc
    nest_asyncio2.apply()
