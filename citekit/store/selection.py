"""A part of the answer log chosen by the log's filters: what the frames read it as."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import Answer
    from .answer_log import Log

#: A filter bound: an ISO date or time, a ``date``, a ``datetime`` or Unix seconds.
Bound = str | date | datetime | float | None


@dataclass(frozen=True, slots=True)
class LogSelection:
    """The logged answers that pass the log's filters (``Log.where``); a source for
    ``citations_frame``, ``references_frame``, ``answers_frame`` and ``sources_frame``, read
    from the SQLite tables when the frame is made (so it sees answers logged since).

    Failed calls are left out, partial answers (an interrupted stream) kept: what
    ``Log.answers`` gives for the same filters.

    Examples
    --------
    >>> _ = ck.GPTBots().ask("Why was the Great Wall built?")
    >>> chunks = ck.log.where(provider="gptbots", question_contains="Great Wall")
    >>> ck.references_frame(chunks).select("rank", "document_title").head(2).rows()
    [(1, 'great_wall_history.pdf'), (2, 'The Great Wall - UNESCO World Heritage Centre')]
    """

    log: Log
    provider: str | None = None
    since: Bound = None
    until: Bound = None
    question_contains: str | None = None

    @property
    def filters(self) -> dict[str, Any]:
        """The filters as ``Log.answers`` / ``Log.rows`` take them."""
        return {
            "provider": self.provider,
            "since": self.since,
            "until": self.until,
            "question_contains": self.question_contains,
        }

    def answers(self) -> list[Answer]:
        """The selected answers rebuilt from their saved JSON (``Log.answers``), oldest first."""
        return self.log.answers(**self.filters)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.filters.items() if v is not None)
        return f"{self.log!r}.where({shown})"
