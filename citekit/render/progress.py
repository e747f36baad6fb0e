"""Progress of a batch: a widget in a notebook, a text bar on a terminal, nothing in a pipe.

A reporter only draws; the batch keeps the counts. ``update`` may be called often: drawing is
throttled to about ten times a second, and ``close`` always draws the final state.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

from ..core.kernel import in_kernel

__all__ = ["NullProgress", "Progress", "TextProgress", "WidgetProgress", "make_progress"]

_MIN_REDRAW = 0.1


class Progress(Protocol):
    def update(self, done: int, failed: int) -> None: ...
    def close(self, done: int, failed: int, *, interrupted: bool = False) -> None: ...


class NullProgress:
    """Draws nothing."""

    def update(self, done: int, failed: int) -> None:
        pass

    def close(self, done: int, failed: int, *, interrupted: bool = False) -> None:
        pass


def _label(done: int, failed: int, total: int, started: float, *, interrupted: bool = False) -> str:
    text = f"{done}/{total}"
    if failed:
        text += f" ({failed} failed)"
    text = f"{text} {time.monotonic() - started:.1f} s"
    if interrupted:
        text = f"interrupted at {text}: the finished answers are in citekit.last_batch"
    return text


class TextProgress:
    """``[#######.....] 70/100 (2 failed) 3.1 s`` redrawn in place with ``\\r``."""

    def __init__(self, total: int, *, stream: TextIO | None = None, width: int = 30) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._started = time.monotonic()
        self._drawn = 0.0

    def _draw(self, done: int, failed: int, *, interrupted: bool = False) -> None:
        filled = self.width * done // self.total if self.total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        label = _label(done, failed, self.total, self._started, interrupted=interrupted)
        self.stream.write(f"\r[{bar}] {label}")
        self.stream.flush()

    def update(self, done: int, failed: int) -> None:
        now = time.monotonic()
        if now - self._drawn >= _MIN_REDRAW:
            self._drawn = now
            self._draw(done, failed)

    def close(self, done: int, failed: int, *, interrupted: bool = False) -> None:
        self._draw(done, failed, interrupted=interrupted)
        self.stream.write("\n")
        self.stream.flush()


class WidgetProgress:
    """An ``ipywidgets.IntProgress`` with a label, displayed in the current cell."""

    def __init__(self, total: int, *, description: str = "") -> None:
        import ipywidgets
        from IPython.display import display

        self.total = total
        self._started = time.monotonic()
        self._drawn = 0.0
        # The description's width follows its text: "Magisterium" is not cut to "Magisteri...".
        self.bar: Any = ipywidgets.IntProgress(
            value=0,
            min=0,
            max=max(total, 1),
            description=description,
            style={"description_width": "initial"},
        )
        self.label: Any = ipywidgets.Label(value=f"0/{total}")
        self.box: Any = ipywidgets.HBox([self.bar, self.label])
        show: Any = display  # untyped in IPython
        show(self.box)

    def _draw(self, done: int, failed: int, *, interrupted: bool = False) -> None:
        self.bar.value = done
        self.label.value = _label(done, failed, self.total, self._started, interrupted=interrupted)
        if failed:
            self.bar.bar_style = "warning"

    def update(self, done: int, failed: int) -> None:
        now = time.monotonic()
        if now - self._drawn >= _MIN_REDRAW:
            self._drawn = now
            self._draw(done, failed)

    def close(self, done: int, failed: int, *, interrupted: bool = False) -> None:
        self._draw(done, failed, interrupted=interrupted)
        if interrupted:
            self.bar.bar_style = "danger"
        elif not failed and done == self.total:
            self.bar.bar_style = "success"


def make_progress(total: int, progress: bool | None, *, description: str = "") -> Progress:
    """The reporter for where we run; ``progress=False`` draws nothing, ``None`` picks."""
    if progress is False or total == 0:
        return NullProgress()
    if in_kernel():
        try:
            return WidgetProgress(total, description=description)
        except Exception:  # no ipywidgets, no frontend: a batch must not fail over a bar
            return NullProgress()
    isatty = getattr(sys.stderr, "isatty", None)
    if progress is True or (isatty is not None and isatty()):
        return TextProgress(total)
    return NullProgress()
