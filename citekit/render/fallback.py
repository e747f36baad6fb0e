"""What a renderer does when it fails: a warning, never an exception into the cell.

The escaping, URL allow-list and styles every HTML output shares are
:mod:`citekit.text.escape`.
"""

from __future__ import annotations

import contextlib
import sys
import warnings

__all__ = ["RenderWarning", "report_render_error"]


class RenderWarning(UserWarning):
    """A display method could not render an answer and fell back to plain text."""


def report_render_error(what: str, exc: BaseException) -> None:
    """Tell the user a rendering failed, without ever raising into the notebook cell."""
    message = f"citekit could not render {what} ({type(exc).__name__}: {exc}); showing plain text"
    try:
        warnings.warn(message, RenderWarning, stacklevel=3)
    except Exception:
        # Warnings turned into errors must still not reach the cell.
        with contextlib.suppress(Exception):
            print(message, file=sys.stderr)
