"""Show an answer while it streams: in place in a notebook, progressively in a terminal.

A client does::

    live = LiveAnswer.start(provider="magisterium", question=q)
    try:
        for delta in deltas:
            live.add(delta)
    except Exception as exc:
        live.fail(exc)
        raise
    live.finish(answer)

``add`` only appends to a list and, every few deltas, reads the clock. The growing text is
re-rendered at most about ten times a second (less often when a render is slow), block by
block so a re-render parses only what is new; ``finish`` replaces it with the full footnoted
answer in the same display, reusing the streamed HTML when the final text is the streamed
text. Updates go out from the thread that calls ``add``; from another thread than the one
that started the display, they carry the starting cell's parent header, so ipykernel does
not route them to whichever cell runs last.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, TextIO

from ..core.kernel import in_kernel
from ..text.escape import STYLE, esc
from ..text.incremental import IncrementalMarkdown, fill_markers
from ..text.markdown_html import render_markdown
from ..text.reader import read
from ._sources import answer_notes
from .bundle import answer_bundle
from .fallback import report_render_error
from .text import TerminalText, answer_text, sources_text

if TYPE_CHECKING:
    from ..model import Answer

__all__ = ["LiveAnswer", "NotebookLiveAnswer", "TerminalLiveAnswer", "shown_live_in_this_cell"]

#: Seconds between two re-renders of the growing text (about ten a second).
DEFAULT_INTERVAL = 0.1
# A re-render may use at most 1/_COST_FACTOR of the wall time: after a render that took
# t seconds, the next one waits at least _COST_FACTOR * t.
_COST_FACTOR = 10.0
# At most this many deltas between two looks at the clock.
_MAX_STRIDE = 16


#: Answers the live display has just shown in full, with the notebook cell it ran in: the
#: cell's own result (``mg.ask(..., stream=True)`` as its last line) is then not shown again.
_SHOWN: deque[tuple[Answer, int | None]] = deque(maxlen=8)


def _why(exc: BaseException) -> str:
    """``KeyboardInterrupt`` for a bare Ctrl-C, ``ReadTimeout: timed out`` for an error with a
    message."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _execution_count() -> int | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
        return None
    shell = get_ipython()
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def shown_live_in_this_cell(answer: Answer) -> bool:
    """Whether the live display already showed ``answer`` whole in the running cell."""
    count = _execution_count()
    return count is not None and any(a is answer and c == count for a, c in _SHOWN)


def _ipython_display() -> Callable[..., Any]:
    from IPython.display import display

    return display


class LiveAnswer:
    """Live display of a streaming answer; this base class displays nothing.

    Use :meth:`start` to get the implementation that fits where the code runs.
    """

    def __init__(self, provider: str, question: str | None = None) -> None:
        self.provider = provider
        self.question = question

    @classmethod
    def start(
        cls,
        *,
        provider: str,
        question: str | None = None,
        enabled: bool = True,
        interval: float = DEFAULT_INTERVAL,
    ) -> LiveAnswer:
        """A notebook display inside a Jupyter kernel, a terminal printer elsewhere, and a
        no-op when ``enabled`` is false."""
        if not enabled:
            return LiveAnswer(provider, question)
        if in_kernel():
            return NotebookLiveAnswer(provider, question, interval=interval)
        return TerminalLiveAnswer(provider, question, interval=interval)

    def add(self, text_delta: str) -> None:
        """Append a piece of answer text."""

    def finish(self, answer: Answer) -> None:
        """Replace the growing text with the full answer."""

    def fail(self, exc: BaseException) -> None:
        """Keep the partial text visible, marked as interrupted."""


def _streaming_marker(number: int, source: str) -> str:
    return f'<sup style="{STYLE.MARKER_PENDING}">[{number}]</sup>'


def streaming_html(
    provider: str, question: str | None, text: str, *, status: str, body_html: str | None = None
) -> str:
    """The growing answer: status line, question and the Markdown rendered so far
    (``body_html``: the text's HTML, when already rendered; marker placeholders in it are
    drawn as pending markers)."""
    parts = [
        '<div class="citekit-answer citekit-streaming" style="',
        STYLE.ROOT,
        '">',
        f'<div class="citekit-status" style="{STYLE.STREAMING}">',
        f"{esc(provider)} · {esc(status)}</div>",
    ]
    if question:
        parts.append(f'<div class="citekit-question" style="{STYLE.QUESTION}">')
        parts.append(f"Question: {esc(question)}</div>")
    if text:
        parts.append('<div class="citekit-text">')
        if body_html is None:
            parts.append(render_markdown(text, markers=_streaming_marker))
        else:
            parts.append(fill_markers(body_html, _streaming_marker))
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)


class _Ticker:
    """Decides cheaply when to look at the clock: every ``stride`` deltas, where the stride
    grows while deltas pour in (several per millisecond) and shrinks when they trickle."""

    __slots__ = ("_clock", "_countdown", "_last", "_stride")

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._countdown = 1
        self._stride = 1
        self._last = clock()

    def due(self) -> bool:
        self._countdown -= 1
        return self._countdown <= 0

    def now(self) -> float:
        now = self._clock()
        gap = now - self._last
        self._last = now
        if gap < 0.0005:
            self._stride = min(self._stride * 2, _MAX_STRIDE)
        elif gap > 0.005:
            self._stride = max(self._stride // 2, 1)
        self._countdown = self._stride
        return now


class NotebookLiveAnswer(LiveAnswer):
    """Updates one ``display_id`` output in place while the text grows."""

    def __init__(
        self,
        provider: str,
        question: str | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
        display: Callable[..., Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(provider, question)
        self._parts: list[str] = []
        self._interval = interval
        self._clock = clock
        self._ticker = _Ticker(clock)
        self._next_render = clock()  # the first delta shows at once
        self._renders = 0
        self._markdown = IncrementalMarkdown()
        self._thread = threading.get_ident()
        self._parent: Any = None
        if display is None:
            from IPython import get_ipython

            display = _ipython_display()
            shell = get_ipython()
            self._parent = getattr(getattr(shell, "display_pub", None), "parent_header", None)
        self._handle: Any = None
        try:
            self._handle = display(
                self._snapshot("waiting for the answer…"), raw=True, display_id=True
            )
        except Exception as exc:
            report_render_error("the live answer", exc)

    @property
    def text(self) -> str:
        """The text received so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def renders(self) -> int:
        """How many times the growing text was re-rendered (for tests and benchmarks)."""
        return self._renders

    def add(self, text_delta: str) -> None:
        self._parts.append(text_delta)
        if self._ticker.due() and self._ticker.now() >= self._next_render:
            self._refresh("receiving…")

    def _refresh(self, status: str) -> None:
        started = self._clock()
        self._renders += 1
        self._publish(self._snapshot(status, self.text))
        ended = self._clock()
        self._next_render = ended + max(self._interval, _COST_FACTOR * (ended - started))

    def _snapshot(self, status: str, text: str = "") -> dict[str, str]:
        plain = text or f"{self.provider}: {status}"
        try:
            body = self._markdown.render(text, markers=_streaming_marker) if text else None
            html = streaming_html(self.provider, self.question, text, status=status, body_html=body)
        except Exception as exc:  # the text is still shown, as it came
            report_render_error("the growing answer", exc)
            html = f'<pre style="white-space:pre-wrap">{esc(plain)}</pre>'
        return {"text/plain": plain, "text/html": html}

    @contextmanager
    def _thread_parent(self) -> Iterator[None]:
        # ipykernel routes output from other threads to the latest cell unless the thread's
        # parent header is set: point it at the cell that started the stream.
        token = None
        pub = None
        if threading.get_ident() != self._thread and self._parent:
            from IPython import get_ipython

            pub = getattr(get_ipython(), "display_pub", None)
            setter = getattr(pub, "set_thread_parent", None)
            if setter is not None:
                token = setter(self._parent)
        try:
            yield
        finally:
            if token is not None and pub is not None:
                pub.reset_thread_parent(token)

    def _publish(self, bundle: dict[str, str]) -> None:
        if self._handle is None:
            return
        try:
            with self._thread_parent():
                self._handle.update(bundle, raw=True)
        except Exception as exc:
            report_render_error("the live answer", exc)

    def finish(self, answer: Answer) -> None:
        body: str | None = None
        text = self.text
        # Reuse the HTML rendered while streaming when it is exactly that of the final text
        # and holds most of it (else the final scan and the markers' fill cost more than a
        # fresh render: a stream that came faster than the re-renders).
        # The answer's HTML renders the text's body: without definition lines (then the
        # text is rendered afresh) and without trailing blank lines (which count inside an
        # open code fence).
        if text and text == answer.text and 2 * self._markdown.settled >= len(text):
            try:
                reading = read(text)
                if not reading.definitions and text.startswith(reading.body):
                    rendered = self._markdown.render(reading.body, final=True)
                    if self._markdown.exact:
                        body = rendered
            except Exception:
                body = None
        self._publish(answer_bundle(answer, body_html=body))
        _SHOWN.append((answer, _execution_count()))

    def fail(self, exc: BaseException) -> None:
        self._refresh(f"incomplete: the stream was interrupted ({_why(exc)})")


class TerminalLiveAnswer(LiveAnswer):
    """Prints the text as it arrives (flushed about ten times a second), then the sources."""

    def __init__(
        self,
        provider: str,
        question: str | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(provider, question)
        self._stream = stream if stream is not None else sys.stdout
        self._interval = interval
        self._ticker = _Ticker(clock)
        self._next_flush = clock()
        self._pending: list[str] = []
        self._wrote = False
        self._at_line_start = True
        # Whatever the provider sends reaches the terminal without its control sequences.
        self._clean = TerminalText()

    def _write(self, text: str, *, last: bool = False) -> None:
        text = self._clean.feed(text) + (self._clean.flush() if last else "")
        if not text:
            return
        try:
            self._stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            self._stream.write(text.encode(encoding, "replace").decode(encoding))
        except Exception as exc:
            report_render_error("the live answer", exc)

    def _drain(self) -> None:
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            self._write(text)
            self._wrote = True
            self._at_line_start = text.endswith("\n")
        with suppress(Exception):
            self._stream.flush()

    def add(self, text_delta: str) -> None:
        self._pending.append(text_delta)
        if self._ticker.due():
            now = self._ticker.now()
            if now >= self._next_flush:
                self._drain()
                self._next_flush = now + self._interval

    def finish(self, answer: Answer) -> None:
        self._drain()
        try:
            if not self._wrote:
                self._write(answer_text(answer) + "\n")
            else:
                tail = [
                    f"[{text}]" if kind != "note" else f"Note: {text}"
                    for kind, text in answer_notes(answer)
                ]
                sources = sources_text(answer)
                if not self._at_line_start:
                    self._write("\n")
                if tail or sources:
                    self._write("\n" + "\n".join([*tail, sources] if sources else tail) + "\n")
            self._write("", last=True)
        except Exception as exc:
            report_render_error("the sources", exc)
        with suppress(Exception):
            self._stream.flush()

    def fail(self, exc: BaseException) -> None:
        self._drain()
        prefix = "" if self._at_line_start else "\n"
        self._write(
            f"{prefix}[incomplete: the stream was interrupted ({_why(exc)})]\n",
            last=True,
        )
        with suppress(Exception):
            self._stream.flush()
