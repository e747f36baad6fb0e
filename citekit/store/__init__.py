"""The local log of every answer: one SQLite file shared by notebooks, scripts and processes.

Each call to a provider becomes one row of ``answers`` (request body without secrets, the
response JSON, timings, the error if any) with its ``citations`` and ``knowledge_references``
rows, whose columns have the names of every table of sources (``citekit.core.columns``).
The file lives at ``$CITEKIT_HOME/log.sqlite3``, or in the user's data directory
(``~/.local/share/citekit`` on Linux, ``~/Library/Application Support/citekit`` on macOS,
``%LOCALAPPDATA%\\citekit`` on Windows). ``CITEKIT_LOG=0`` turns recording off.

Several processes can write at once, and a process killed mid-write leaves a file that still
opens (``schema``). What the tables hold is stored once and large JSON compressed (``encode``,
``decode``). A busy log delays the record, never the answer (``write``: ``log.flush()`` waits
for the rows still waiting, and the reads do). A file deleted or replaced while a session runs
is noticed at the next use (``lifecycle``). An older citekit's file is migrated in place when
first opened (``migrations``); a newer one's, or one this process cannot write, is read, never
written. With caching on (``cache=True`` per call, ``with log.options(cache=True)``, or
``CITEKIT_CACHE=1``) a request identical to a logged one (same provider, base URL and body)
is answered from the log, with ``Answer.cached == True``. Questions, answers and cited
passages are searched in full text (``search``: SQLite FTS5). ``Log`` (``answer_log``) is the
front over those parts, the reads (``read``: a damaged row never hides the others) and
``LogSelection``.
"""

from __future__ import annotations

from .answer_log import Log, LogWarning, default_path, log
from .call import LoggedCall
from .selection import LogSelection

__all__ = ["Log", "LogSelection", "LogWarning", "LoggedCall", "default_path", "log"]
