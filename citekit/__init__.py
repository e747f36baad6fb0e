"""citekit: explore sourced answers in Jupyter.

Ask Magisterium AI, Maritaca AI or GPTBots a question, read the answer with clickable
footnotes, and load every citation and knowledge chunk into polars frames and altair charts.
"""

from __future__ import annotations

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

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "AuthenticationError",
    "BadRequestError",
    "Choice",
    "Citation",
    "CitekitError",
    "CitekitWarning",
    "ConfigurationError",
    "ContentFilteredWarning",
    "GPTBots",
    "InsufficientCreditsError",
    "Magisterium",
    "Maritaca",
    "Model",
    "NotFoundError",
    "ProviderError",
    "RateLimitError",
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
]
