"""``Log``, the front of the answer log (``citekit.log``): the file, the write path, the reads
and ``LogSelection`` over the parts the package docstring names."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import CitekitError
from ..model import Answer
from .call import MEMO_SIZE as MEMO_SIZE
from .call import LoggedCall, Memo
from .keys import KEY_ENVS as KEY_ENVS
from .keys import canonical_json as canonical_json
from .keys import request_key as request_key
from .lifecycle import RECORD_WAIT as RECORD_WAIT
from .lifecycle import LogFile, LogWarning
from .query import LOG_SCHEMA as LOG_SCHEMA
from .read import Reader
from .schema import BUSY_WAIT, cache_enabled, log_enabled, switched
from .schema import FILE_NAME as FILE_NAME
from .schema import HOME_ENV as HOME_ENV
from .schema import SCHEMA_VERSION as SCHEMA_VERSION
from .schema import default_path as default_path
from .search import hits_frame, search_hits
from .selection import LogSelection, selected
from .write import Writer

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Log", "LogWarning", "LoggedCall", "default_path", "log"]


class Log:
    """The answer log (``citekit.log``): record, look up, and read back answers.

    Parameters
    ----------
    path
        The SQLite file; by default ``default_path()``, read at each use (a change of
        ``CITEKIT_HOME`` takes effect at once; a relative one is resolved when first read).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self._file = LogFile(path)
        # The newest answer per request key, in memory (written through, filled on lookup).
        self._memo = Memo()
        self._writer = Writer(self._file, self._memo)
        self._reader = Reader(self._file, self._memo, self._writer.settle)

    def forget(self) -> None:
        """Empty the in-memory cache (the file keeps everything)."""
        self._memo.clear()

    @property
    def path(self) -> Path:
        return self._file.path

    def __repr__(self) -> str:
        try:
            where = str(self.path)
        except CitekitError as exc:  # CITEKIT_HOME names a file: repr never raises
            where = f"<{exc}>"
        return f"Log({where!r}, enabled={self.enabled})"

    # switches ----------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether answers are recorded here (``CITEKIT_LOG``, then ``options(log=)``)."""
        return log_enabled()

    def cache_enabled(self, cache: bool | None = None) -> bool:
        return cache_enabled(cache)

    @contextlib.contextmanager
    def options(self, *, log: bool | None = None, cache: bool | None = None) -> Iterator[None]:
        """Within the block (and tasks started in it) turn logging and caching on or off.

        Examples
        --------
        >>> mg = ck.Magisterium()
        >>> with ck.log.options(cache=True):
        ...     first = mg.ask("What is the principle of subsidiarity?")
        ...     again = mg.ask("What is the principle of subsidiarity?")  # from the log
        >>> first.cached, again.cached, again.text == first.text
        (False, True, True)
        >>> with ck.log.options(log=False):
        ...     _ = mg.ask("How does the Church define the common good?")
        >>> ck.log.count()  # the cached answer and the unlogged one are not rows
        1
        """
        with switched(log=log, cache=cache):
            yield

    # the file ------------------------------------------------------------------------------
    def connect(self) -> sqlite3.Connection:
        """This thread's connection to the file (created, with its schema, on first use; a new
        one, with a ``LogWarning``, if the file was deleted or replaced since)."""
        return self._file.connect()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every answer recorded so far is in the file; False if ``timeout``
        seconds passed first (the rows still wait, and are written when the file is free).

        Answers recorded while the file was busy (or from an event loop) are written by a
        background thread; the log's reads and :meth:`close` flush first, and so does the
        interpreter's exit.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.flush()
        True
        """
        return self._writer.flush(timeout)

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """In the block, answers recorded on a loop wait for its end (or a read) to be written."""
        return self._writer.holding()

    def close(self) -> None:
        """Write what is waiting (:meth:`flush`, for as long as a record would have waited
        before: a file locked for good cannot hang it), then close this thread's connections
        (others close when their thread ends)."""
        self._writer.flush(BUSY_WAIT)
        self._file.close()

    # writing -----------------------------------------------------------------------------
    def record(
        self,
        answer: Answer | None,
        *,
        provider: str | None = None,
        request: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        elapsed: float | None = None,
        error: BaseException | None = None,
        stream: bool = False,
        secrets: Iterable[str] = (),
        log: bool | None = None,
        cacheable: bool = True,
    ) -> int | None:
        """Write one call to the log and return its row id (None when logging is off).

        Returns None too when the row waits for the file (busy past ``RECORD_WAIT`` seconds, or
        recorded on a thread running an event loop): see ``citekit.store.write``. Never
        raises: a log that cannot be written gives a ``LogWarning``.

        Parameters
        ----------
        answer
            The answer, or None for a call that failed before one existed.
        provider
            Needed when ``answer`` is None.
        request
            The JSON body sent (fields named like keys are masked).
        base_url
            The client's base URL (part of the cache key).
        elapsed
            Seconds the call took.
        error
            The exception the call ended with, if any.
        secrets
            Strings that must never be written (the client's API key); the providers' key
            environment variables are always added.
        log
            False skips this call; None follows ``enabled``.
        cacheable
            False keeps the answer out of the cache (it is logged but never served again):
            for an answer that is complete but lacks something worth fetching anew.
        """
        if not (self.enabled if log is None else log):
            return None
        return self._writer.record(
            answer, provider, request, base_url, elapsed, error, stream, secrets, cacheable
        )

    def call(
        self,
        provider: str,
        request: Mapping[str, Any] | None,
        *,
        base_url: str | None = None,
        secrets: Iterable[str] = (),
        stream: bool = False,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> LoggedCall:
        """A context manager around one provider call: cache look-up, timing, recording.

        ::

            with log.call("magisterium", body, base_url=url, secrets=[key]) as call:
                if call.cached is not None:
                    return call.cached
                return call.done(send_and_parse(body))

        An exception leaving the block is recorded as the call's error and re-raised.
        """
        return LoggedCall(self, provider, request, base_url, tuple(secrets), stream, cache, log)

    # reading -----------------------------------------------------------------------------
    def lookup(
        self,
        provider: str,
        request: Mapping[str, Any],
        *,
        base_url: str | None = None,
        cache: bool | None = None,
        memory_only: bool = False,
    ) -> Answer | None:
        """The newest complete logged answer to an identical request, marked ``cached``.

        Returns None when caching is off (``cache`` is False, or None and caching is not on
        through ``options`` / ``CITEKIT_CACHE``), when nothing matches, or when the log
        cannot be read. ``memory_only``: an answer held in memory (recorded or read in this
        process) or None, the file unread; a hit is logged as a call's is."""
        if not self.cache_enabled(cache):
            return None
        return self._reader.lookup(provider, request, base_url, memo_only=memory_only)

    def where(
        self,
        *,
        provider: str | None = None,
        since: str | date | datetime | float | None = None,
        until: str | date | datetime | float | None = None,
        question_contains: str | None = None,
        text: str | None = None,
        samples: bool | None = None,
        limit: int | None = None,
    ) -> LogSelection:
        """The logged calls that pass these filters (``LogSelection``, which says what each
        takes): what :meth:`answers`, :meth:`rows` and :meth:`frame` read, and a source for the
        frames: ``ck.citations_frame(ck.log.where(provider="magisterium"))`` reads the citations
        of those answers straight from the log's tables, ``ck.to_parquet(ck.log.where(...),
        folder)`` writes them as a dataset. ``ck.log`` itself is a source too: every logged
        answer. Failed calls add nothing; partial answers are kept, as :meth:`answers` keeps
        them.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> _ = ck.Maritaca().ask("O que é o Pix?")
        >>> ck.citations_frame(ck.log).height
        7
        >>> mg = ck.log.where(provider="magisterium", since="2020-01-01")
        >>> ck.answers_frame(mg).select("provider", "n_citations").rows()
        [('magisterium', 7)]
        >>> ck.citations_frame(mg).equals(ck.citations_frame(mg.answers()))
        True
        """
        return LogSelection(self, provider, since, until, question_contains, limit, text, samples)

    def search(
        self, text: str, selection: LogSelection | None = None, *, limit: int = 20
    ) -> pl.DataFrame:
        """The calls whose question, answer or cited passages hold every word of ``text``,
        best first (FTS5, bm25): ``id``, ``time``, ``provider``, ``question``, ``snippet``
        (the words found in ``**``), ``score``; ``selection`` narrows the calls searched, and
        ``ck.log.where(text=...)`` is the same search for the frames (``citekit.store.search``).

        >>> mg = ck.Magisterium()
        >>> _ = mg.ask("What does Catholic social teaching say about the dignity of human work?")
        >>> ck.log.search("dignity of work").select("id", "provider").rows()
        [(1, 'magisterium')]
        >>> ck.citations_frame(ck.log.where(text="dignity of work")).height
        9
        """
        return hits_frame(search_hits(self, text, selected(self, selection), limit))

    def answers(self, selection: LogSelection | None = None) -> list[Answer]:
        """Every logged answer (failed calls left out), oldest first.

        ``selection`` (``ck.log.where(...)``; by default the whole log) says which;
        ``ck.log.where(...).answers()`` is the same. Answers are rebuilt from the saved JSON
        with ``parse_response``.

        Examples
        --------
        >>> mg = ck.Magisterium()
        >>> _ = mg.ask("What is the principle of subsidiarity?")
        >>> _ = mg.ask("How does the Church define the common good?")
        >>> [a.question for a in ck.log.where(provider="magisterium", since="2020-01-01").answers()]
        ['What is the principle of subsidiarity?', 'How does the Church define the common good?']
        >>> [ans] = ck.log.answers(ck.log.where(question_contains="common good"))
        >>> ans.citations[0].document_title
        'Gaudium et spes'
        >>> cits = ck.citations_frame(ck.log)  # every logged citation, read from the tables
        >>> cits.height
        15
        """
        return self._reader.answers(selected(self, selection))

    def get(self, row_id: int) -> Answer:
        """The answer logged as row ``row_id`` (``KeyError`` if none).

        Examples
        --------
        >>> _ = ck.Maritaca().ask("O que é o Pix?")
        >>> row = ck.log.rows()[-1]
        >>> ck.log.get(row["id"]).sample
        'maritaca/01_pix'
        """
        return self._reader.get(row_id)

    def rows(
        self, selection: LogSelection | None = None, *, errors: bool = True
    ) -> list[dict[str, Any]]:
        """The log rows (one dict per call, failed ones included unless ``errors=False``) of
        ``selection`` (``ck.log.where(...)``; by default the whole log), oldest first.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> row = ck.log.rows()[0]
        >>> row["provider"], row["n_citations"], row["error_type"], row["sample"]
        ('magisterium', 7, None, 'magisterium/02_subsidiarity')
        """
        return self._reader.rows(selected(self, selection), errors=errors)

    def frame(self, selection: LogSelection | None = None, *, errors: bool = True) -> pl.DataFrame:
        """The log rows (as :meth:`rows` gives them) as a polars frame with the ``LOG_SCHEMA``
        columns.

        Examples
        --------
        >>> mg = ck.Magisterium()
        >>> _ = mg.ask("What is the principle of subsidiarity?")
        >>> _ = mg.ask("How does the Church define the common good?")
        >>> ck.log.where(provider="magisterium").frame().select("id", "question", "n_citations")
        shape: (2, 3)
        ┌─────┬─────────────────────────────────┬─────────────┐
        │ id  ┆ question                        ┆ n_citations │
        │ --- ┆ ---                             ┆ ---         │
        │ i64 ┆ str                             ┆ i64         │
        ╞═════╪═════════════════════════════════╪═════════════╡
        │ 1   ┆ What is the principle of subsi… ┆ 7           │
        │ 2   ┆ How does the Church define the… ┆ 8           │
        └─────┴─────────────────────────────────┴─────────────┘
        """
        return self._reader.frame(selected(self, selection), errors=errors)

    def fetch(
        self, sql: str, params: Sequence[Any] = (), *, damaged: list[Any] | None = None
    ) -> list[tuple[Any, ...]]:
        """The rows of a read-only query of the tables once the answers recorded are written
        (none without a file). Not UTF-8: U+FFFD, the rows' first cells in ``damaged``/warned.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.fetch("SELECT count(*), sum(cited_inline) FROM citations")
        [(7, 7)]
        """
        return self._reader.fetch(sql, params, damaged)

    def size(self) -> int:
        """The bytes the log takes on disk: the file and its write-ahead log (0 with none).

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> ck.log.size() > 0
        True
        """
        return self._reader.size()

    def vacuum(self) -> tuple[int, int]:
        """Rewrite the file without its free pages (SQLite's ``VACUUM``, after a checkpoint);
        the bytes on disk ``(before, after)``. Every answer stays; readers go on, writers wait.

        Examples
        --------
        >>> _ = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> before, after = ck.log.vacuum()
        >>> after <= before, ck.log.count()
        (True, 1)
        """
        return self._reader.vacuum()

    def count(self) -> int:
        """How many calls the log holds (failed ones included).

        Examples
        --------
        >>> _ = ck.GPTBots().ask("Why was the Great Wall built?")
        >>> ck.log.count()
        1
        """
        return self._reader.count()


#: The log every client writes to (``citekit.log``).
log = Log()
