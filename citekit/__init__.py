"""citekit: explore sourced answers in Jupyter.

Ask Magisterium AI, Maritaca AI or GPTBots a question, read the answer with clickable
footnotes, and load every citation and knowledge chunk into polars frames and altair charts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import (
    AuthenticationError,
    BadRequestError,
    CitekitError,
    CitekitWarning,
    ConfigurationError,
    InsufficientCreditsError,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    StreamInterrupted,
    TimeoutError,
    TokenLimitError,
    TransportError,
    UnsupportedFeatureError,
)
from ._models import (
    Answer,
    Choice,
    Citation,
    Reference,
    References,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from .providers._chat import ContentFilteredWarning
from .providers.gptbots import GPTBots
from .providers.magisterium import Magisterium
from .providers.maritaca import Maritaca, Model

if TYPE_CHECKING:
    from . import charts
    from ._loop import allow_nested_asyncio
    from .batch import BatchError, BatchInterrupted, Failed, RateLimiter, aask_many, ask_many
    from .exports import export_answer, export_citations
    from .frames import answers_frame, citations_frame, references_frame
    from .magic import load_ipython_extension
    from .store import log
    from .widgets import explore

#: Names loaded on first use, so that ``import citekit`` stays fast.
_LAZY = {
    "allow_nested_asyncio": "._loop",
    "BatchError": ".batch",
    "BatchInterrupted": ".batch",
    "Failed": ".batch",
    "RateLimiter": ".batch",
    "aask_many": ".batch",
    "ask_many": ".batch",
    "export_answer": ".exports",
    "export_citations": ".exports",
    "load_ipython_extension": ".magic",
    "log": ".store",
    "answers_frame": ".frames",
    "citations_frame": ".frames",
    "references_frame": ".frames",
    "explore": ".widgets",
    "charts": ".charts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'citekit' has no attribute {name!r}")
    imported = importlib.import_module(module, __name__)
    value = imported if module == f".{name}" else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "Answer",
    "AuthenticationError",
    "BadRequestError",
    "BatchError",
    "BatchInterrupted",
    "Choice",
    "Citation",
    "CitekitError",
    "CitekitWarning",
    "ConfigurationError",
    "ContentFilteredWarning",
    "Failed",
    "GPTBots",
    "InsufficientCreditsError",
    "Magisterium",
    "Maritaca",
    "Model",
    "NotFoundError",
    "ProviderError",
    "RateLimitError",
    "RateLimiter",
    "Reference",
    "References",
    "ResponseFormatError",
    "ServerError",
    "StreamInterrupted",
    "TextDelta",
    "TimeoutError",
    "TokenLimitError",
    "ToolCall",
    "ToolCallDelta",
    "TransportError",
    "UnsupportedFeatureError",
    "Usage",
    "__version__",
    "aask_many",
    "allow_nested_asyncio",
    "answers_frame",
    "ask_many",
    "charts",
    "citations_frame",
    "explore",
    "export_answer",
    "export_citations",
    "load_ipython_extension",
    "log",
    "references_frame",
]
