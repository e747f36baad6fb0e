"""The in-memory cache in front of the log file: recent answers by file and request key."""

from __future__ import annotations

import collections
import threading

from ._models import Answer

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
