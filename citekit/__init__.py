"""citekit: explore sourced answers in Jupyter.

Ask Magisterium AI, Maritaca AI or GPTBots a question, read the answer with clickable
footnotes, and load every citation and knowledge chunk into polars frames and altair charts.

``citekit.last_batch`` is the most recent ``ask_many`` / ``aask_many`` run of the process (a
``BatchResult``, or None before any): after Ctrl-C in a notebook, ``ck.last_batch.answers``
holds what finished. ``citekit.last_answer`` is the answer the most recent call ended with,
partial after Ctrl-C, a deadline or a broken stream. Both are read afresh at each access and
cannot be assigned.

Examples
--------
Ask, read the sources, and make a frame of them (the key comes from ``MAGISTERIUM_API_KEY``):

>>> import citekit as ck
>>> mg = ck.Magisterium()
>>> ans = mg.ask("What is the principle of subsidiarity?")
>>> ans.citations[0].document_title, ans.citations[0].document_author
('Quadragesimo anno', 'Pius XI')
>>> ck.citations_frame([ans]).select("marker", "document_author", "year").head(3)
shape: (3, 3)
┌────────┬─────────────────┬──────┐
│ marker ┆ document_author ┆ year │
│ ---    ┆ ---             ┆ ---  │
│ i32    ┆ str             ┆ i32  │
╞════════╪═════════════════╪══════╡
│ 1      ┆ Pius XI         ┆ 1931 │
│ 2      ┆ Catholic Church ┆ 1992 │
│ 2      ┆ Catholic Church ┆ 1992 │
└────────┴─────────────────┴──────┘

In a notebook, ``ans`` on its own displays the answer with clickable footnotes.

The examples in citekit's docstrings run as tests against ``citekit.testing``'s loopback
server, which answers a recorded question with its recorded sample from ``sample_data/``
(``ans.sample`` names it); a live provider words its answers differently.
"""

from __future__ import annotations

import importlib
import logging
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.errors import (
        APITimeoutError,
        AuthenticationError,
        BadRequestError,
        CitekitError,
        CitekitWarning,
        ConfigurationError,
        DiskFullError,
        InsufficientCreditsError,
        NotFoundError,
        ProviderError,
        QuotaExceededError,
        RateLimitError,
        ResponseFormatError,
        ResponseTooLargeError,
        ServerError,
        StreamInterrupted,
        StreamTimeout,
        TokenLimitError,
        TransportError,
        UnsupportedFeatureError,
    )
    from .core.errors import (
        TimeoutError as TimeoutError,  # the name before 0.2, kept out of __all__
    )
    from .data import charts
    from .data.compare.clients import acompare, compare
    from .data.compare.comparison import Comparison
    from .data.corpus.cocitation import cocitation_frame
    from .data.corpus.health import health_frame
    from .data.corpus.support import support_frame
    from .data.corpus.support_view import SupportView, show_support
    from .data.corpus.works import sources_frame, works_frame
    from .data.frames import answers_frame, citations_frame, references_frame
    from .data.identity.aliases import Aliases
    from .data.io.dataset import ParquetDataset, to_parquet
    from .data.io.exports import SamplesLeftOut, export_answer, export_citations
    from .data.io.scan import scan_answers, scan_citations, scan_references, scan_sources
    from .model import (
        Answer,
        AudioClip,
        Choice,
        Citation,
        ComponentOutput,
        GeneratedFile,
        Reference,
        References,
        SearchResult,
        SearchResults,
        TextDelta,
        ToolCall,
        ToolCallDelta,
        Usage,
    )
    from .notebook.explorer import explore
    from .notebook.magic import load_ipython_extension
    from .providers._chat import ContentFilteredWarning
    from .providers.batch import (
        BatchError,
        BatchInterrupted,
        BatchResult,
        Failed,
        aask_many,
        ask_many,
    )
    from .providers.failure import Failure
    from .providers.gptbots import GPTBots
    from .providers.magisterium import Magisterium
    from .providers.maritaca import Maritaca, MaritacaModel
    from .providers.maritaca import Model as Model  # the name before 0.2
    from .providers.maritaca_batch import BatchJob
    from .providers.registry import client
    from .store import log
    from .transport.loop import allow_nested_asyncio
    from .transport.ratelimit import RateLimiter
    from .transport.stream import AsyncStream, Stream
    from .wire.parsers import parse_chunks, parse_response

    #: The most recent batch (see ``_Facade.last_batch``).
    last_batch: BatchResult | None
    #: The most recent answer, whole or partial (see ``_Facade.last_answer``).
    last_answer: Answer | None
    #: The most recent failure, explained (see ``_Facade.last_error``).
    last_error: Failure | None

# A library logs, the application decides what is shown: nothing unless logging is set up.
logging.getLogger(__name__).addHandler(logging.NullHandler())

#: Every public name, loaded on first use (PEP 562), so that ``import citekit`` stays fast: the
#: errors and the values too (their dataclasses, the text reader's and the scrubber's
#: expressions cost several times what the rest of the import does), and the clients, which
#: bring httpx (and, through httpx's command line, rich and click), which a notebook that only
#: reads saved answers never needs. ``tests/project/test_layout.py`` lists what the import
#: must leave unloaded.
_LAZY = {
    "APITimeoutError": ".core.errors",
    "AuthenticationError": ".core.errors",
    "BadRequestError": ".core.errors",
    "CitekitError": ".core.errors",
    "CitekitWarning": ".core.errors",
    "ConfigurationError": ".core.errors",
    "DiskFullError": ".core.errors",
    "InsufficientCreditsError": ".core.errors",
    "NotFoundError": ".core.errors",
    "ProviderError": ".core.errors",
    "QuotaExceededError": ".core.errors",
    "RateLimitError": ".core.errors",
    "ResponseFormatError": ".core.errors",
    "ResponseTooLargeError": ".core.errors",
    "ServerError": ".core.errors",
    "StreamInterrupted": ".core.errors",
    "StreamTimeout": ".core.errors",
    "TokenLimitError": ".core.errors",
    "TransportError": ".core.errors",
    "UnsupportedFeatureError": ".core.errors",
    "TimeoutError": ".core.errors",
    "Answer": ".model",
    "AudioClip": ".model",
    "Choice": ".model",
    "Citation": ".model",
    "ComponentOutput": ".model",
    "GeneratedFile": ".model",
    "Reference": ".model",
    "References": ".model",
    "SearchResult": ".model",
    "SearchResults": ".model",
    "TextDelta": ".model",
    "ToolCall": ".model",
    "ToolCallDelta": ".model",
    "Usage": ".model",
    "AsyncStream": ".transport.stream",
    "ContentFilteredWarning": ".providers._chat",
    "GPTBots": ".providers.gptbots",
    "Magisterium": ".providers.magisterium",
    "Maritaca": ".providers.maritaca",
    "MaritacaModel": ".providers.maritaca",
    "Model": ".providers.maritaca",
    "Stream": ".transport.stream",
    "client": ".providers.registry",
    "allow_nested_asyncio": ".transport.loop",
    "BatchError": ".providers.batch",
    "BatchInterrupted": ".providers.batch",
    "BatchResult": ".providers.batch",
    "BatchJob": ".providers.maritaca_batch",
    "Failed": ".providers.batch",
    "RateLimiter": ".transport.ratelimit",
    "aask_many": ".providers.batch",
    "ask_many": ".providers.batch",
    "export_answer": ".data.io.exports",
    "export_citations": ".data.io.exports",
    "SamplesLeftOut": ".data.io.exports",
    "load_ipython_extension": ".notebook.magic",
    "log": ".store",
    "offline": ".providers.loopback",
    "answers_frame": ".data.frames",
    "citations_frame": ".data.frames",
    "references_frame": ".data.frames",
    "sources_frame": ".data.corpus.works",
    "works_frame": ".data.corpus.works",
    "health_frame": ".data.corpus.health",
    "support_frame": ".data.corpus.support",
    "show_support": ".data.corpus.support_view",
    "SupportView": ".data.corpus.support_view",
    "cocitation_frame": ".data.corpus.cocitation",
    "Aliases": ".data.identity.aliases",
    "Comparison": ".data.compare.comparison",
    "acompare": ".data.compare.clients",
    "compare": ".data.compare.clients",
    "explore": ".notebook.explorer",
    "charts": ".data.charts",
    "ParquetDataset": ".data.io.dataset",
    "scan_answers": ".data.io.scan",
    "scan_citations": ".data.io.scan",
    "scan_references": ".data.io.scan",
    "scan_sources": ".data.io.scan",
    "to_parquet": ".data.io.dataset",
    "parse_chunks": ".wire.parsers",
    "parse_response": ".wire.parsers",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'citekit' has no attribute {name!r}")
    imported = importlib.import_module(module, __name__)
    value = imported if module.endswith(f".{name}") else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"last_answer", "last_batch", "last_error"})


class _Facade(types.ModuleType):
    """The class of this module, for the one attribute that must be read at each access."""

    @property
    def last_batch(self) -> BatchResult | None:
        """The most recent ``ask_many`` / ``aask_many`` run of this process, or None.

        One per process (the run started last, in any thread or task); running, finished or
        interrupted. See ``citekit.providers.batch.BatchResult``.
        """
        if "citekit.providers.batch" not in sys.modules:
            return None  # no batch has run: nothing to import
        from .providers.batch import last_batch

        return last_batch()

    @property
    def last_answer(self) -> Answer | None:
        """The answer the most recent call of this process ended with, or None before any.

        Partial (``.partial`` True) when the call ended early: a stream stopped by Ctrl-C (or a
        cancelled task), past its ``deadline=``, or broken; that is where a notebook finds it
        after an interrupt. Complete and cached answers count too; one per process.

        >>> mg = ck.Magisterium()
        >>> ans = mg.ask("What is the principle of subsidiarity?")
        >>> ck.last_answer is ans
        True
        """
        from .providers._client import last_answer

        return last_answer()

    @property
    def last_error(self) -> Failure | None:
        """The most recent failure of a call in this process, explained, or None before any:
        the exception's type, the provider, the HTTP status, the provider's message and what
        to do (``citekit.providers.failure.Failure``; ``.error`` is the exception itself).
        ``%ask --error`` shows it in a notebook; ``print`` writes it as lines of text.

        >>> from citekit.testing import serve
        >>> with serve() as srv:
        ...     url = srv.base_url("magisterium", api_key="the-right-key")
        ...     try:
        ...         ck.Magisterium(api_key="a-wrong-key", base_url=url).ask("What is grace?")
        ...     except ck.AuthenticationError:
        ...         pass
        >>> failure = ck.last_error
        >>> failure.kind, failure.provider, failure.status
        ('AuthenticationError', 'magisterium', 401)
        """
        if "citekit.providers.failure" not in sys.modules:
            return None  # no call has run: nothing to import
        from .providers.failure import last_error

        return last_error()


sys.modules[__name__].__class__ = _Facade


__version__ = "0.1.0"

# ``last_batch`` is left out: ``from citekit import *`` would copy the value of the moment.
__all__ = [
    "APITimeoutError",
    "Aliases",
    "Answer",
    "AsyncStream",
    "AudioClip",
    "AuthenticationError",
    "BadRequestError",
    "BatchError",
    "BatchInterrupted",
    "BatchJob",
    "BatchResult",
    "Choice",
    "Citation",
    "CitekitError",
    "CitekitWarning",
    "Comparison",
    "ComponentOutput",
    "ConfigurationError",
    "ContentFilteredWarning",
    "DiskFullError",
    "Failed",
    "GPTBots",
    "GeneratedFile",
    "InsufficientCreditsError",
    "Magisterium",
    "Maritaca",
    "MaritacaModel",
    "NotFoundError",
    "ParquetDataset",
    "ProviderError",
    "QuotaExceededError",
    "RateLimitError",
    "RateLimiter",
    "Reference",
    "References",
    "ResponseFormatError",
    "ResponseTooLargeError",
    "SamplesLeftOut",
    "SearchResult",
    "SearchResults",
    "ServerError",
    "Stream",
    "StreamInterrupted",
    "StreamTimeout",
    "SupportView",
    "TextDelta",
    "TokenLimitError",
    "ToolCall",
    "ToolCallDelta",
    "TransportError",
    "UnsupportedFeatureError",
    "Usage",
    "__version__",
    "aask_many",
    "acompare",
    "allow_nested_asyncio",
    "answers_frame",
    "ask_many",
    "charts",
    "citations_frame",
    "client",
    "cocitation_frame",
    "compare",
    "explore",
    "export_answer",
    "export_citations",
    "health_frame",
    "load_ipython_extension",
    "log",
    "offline",
    "parse_chunks",
    "parse_response",
    "references_frame",
    "scan_answers",
    "scan_citations",
    "scan_references",
    "scan_sources",
    "show_support",
    "sources_frame",
    "support_frame",
    "to_parquet",
    "works_frame",
]
