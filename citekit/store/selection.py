"""A part of the answer log chosen by its filters (``ck.log.where(...)``): the one place the
filters are declared. ``Log.answers``, ``Log.rows`` and ``Log.frame`` read a selection, and so
do the frames (``citations_frame``, ``references_frame``, ``answers_frame``, ``sources_frame``)
and ``ck.to_parquet``."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from .query import row_limit, timestamp
from .search import match_query

if TYPE_CHECKING:
    import polars as pl

    from ..model import Answer
    from .answer_log import Log

#: A filter bound: an ISO date or time, a ``date``, a ``datetime`` or Unix seconds.
Bound = str | date | datetime | float | None
#: A dataset partition of the selected rows: provider, month and the first and last row id.
Partition = tuple[str, str, int, int]


@dataclass(frozen=True, slots=True)
class LogSelection:
    """The logged calls that pass the log's filters (``Log.where``); a source for
    ``citations_frame``, ``references_frame``, ``answers_frame``, ``sources_frame`` and
    ``to_parquet``, read from the SQLite tables when the frame is made (so it sees answers
    logged since).

    ``provider`` keeps one provider's calls; ``since`` / ``until`` take ISO dates or times
    (``"2026-11-01"``), ``date``, ``datetime`` or Unix seconds, naive values being local time
    (``until`` excluded); ``question_contains`` keeps the questions holding that text
    (ASCII letters in either case); ``text`` keeps the calls whose question, answer or cited
    passages hold all its words (full-text search, ``Log.search``: accents and case folded,
    ``"a phrase"``, ``work*``; a text with no word keeps none); ``samples=False`` leaves
    recorded samples out (the offline answers of the loopback server), ``samples=True`` keeps
    only them; ``limit`` keeps the most recent ones. A bad bound or limit is refused when the
    selection is made.

    Failed calls are left out of the answers and the frames, partial answers (an interrupted
    stream) kept; :meth:`rows` and :meth:`frame` have the failed calls too unless
    ``errors=False``.

    Examples
    --------
    >>> _ = ck.GPTBots().ask("Why was the Great Wall built?")
    >>> chunks = ck.log.where(provider="gptbots", question_contains="Great Wall")
    >>> ck.references_frame(chunks).select("rank", "document_title").head(2).rows()
    [(1, 'great_wall_history.pdf'), (2, 'The Great Wall - UNESCO World Heritage Centre')]
    >>> [a.question for a in chunks.answers()]
    ['Why was the Great Wall built?']
    """

    log: Log
    provider: str | None = None
    since: Bound = None
    until: Bound = None
    question_contains: str | None = None
    limit: int | None = None
    text: str | None = None
    samples: bool | None = None
    #: One partition of a dataset (``to_parquet``): provider, created month in UTC (or
    #: ``"undated"``) and the range of row ids, applied after the filters and ``limit``.
    part: Partition | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        timestamp(self.since), timestamp(self.until)  # a bad bound is named here, not at use
        row_limit(self.limit)
        if self.text is not None and not isinstance(self.text, str):
            raise TypeError(f"text= takes the words to search for, not {type(self.text).__name__}")
        if self.samples is not None and not isinstance(self.samples, bool):
            raise TypeError(
                "samples= takes False (leave recorded samples out), True (only them) or None"
            )

    @property
    def filters(self) -> dict[str, Any]:
        """The filters, by name (those not given are None)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("log", "part")
        }

    @property
    def match(self) -> str | None:
        """``text`` as the FTS5 query the search runs (``search.match_query``); None without
        ``text``, or when it has no word."""
        return match_query(self.text) if self.text is not None else None

    @property
    def narrowed(self) -> bool:
        """Whether any filter is given (else the selection is the whole log)."""
        return self.part is not None or any(v is not None for v in self.filters.values())

    def answers(self) -> list[Answer]:
        """The selected answers rebuilt from their saved JSON (``Log.answers``), oldest first."""
        return self.log.answers(self)

    def count(self) -> int:
        """How many answers are selected (failed calls left out)."""
        from .query import where_sql

        condition, params = where_sql(self, errors=False)
        found = self.log.fetch(f"SELECT count(*) FROM answers WHERE {condition}", params)
        return int(found[0][0]) if found else 0

    def rows(self, *, errors: bool = True) -> list[dict[str, Any]]:
        """The selected rows, one dict per call (``Log.rows``), oldest first."""
        return self.log.rows(self, errors=errors)

    def frame(self, *, errors: bool = True) -> pl.DataFrame:
        """The selected rows as a polars frame (``Log.frame``)."""
        return self.log.frame(self, errors=errors)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.filters.items() if v is not None)
        return f"{self.log!r}.where({shown})"


def selected(log: Log, selection: LogSelection | None) -> LogSelection:
    """What a read of ``log`` takes: ``selection``, or (None) the whole log."""
    if selection is None:
        return LogSelection(log)
    if not isinstance(selection, LogSelection):
        raise TypeError(
            "the log's reads take a selection: ck.log.where(provider=, since=, until=, "
            f"question_contains=, text=, samples=, limit=), not {type(selection).__name__}"
        )
    return selection
