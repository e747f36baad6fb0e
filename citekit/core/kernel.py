"""Where the code runs: inside a Jupyter kernel or not."""

from __future__ import annotations

import sys

__all__ = ["in_kernel"]


def in_kernel() -> bool:
    """True inside a Jupyter kernel. IPython is only looked at when something already
    imported it, so plain Python and CI never pay for importing it."""
    if "IPython" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except Exception:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
