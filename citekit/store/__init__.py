"""The answer log: every call recorded in one SQLite file, read back as answers or frames."""

from __future__ import annotations

from .answer_log import Log, LogWarning, default_path, log
from .call import LoggedCall

__all__ = ["Log", "LogWarning", "LoggedCall", "default_path", "log"]
