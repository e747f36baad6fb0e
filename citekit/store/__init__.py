"""The answer log: every call recorded in one SQLite file, read back as answers or frames."""

from __future__ import annotations

from .answer_log import Log, LogWarning, default_path, log
from .call import LoggedCall
from .selection import LogSelection

__all__ = ["Log", "LogSelection", "LogWarning", "LoggedCall", "default_path", "log"]
