"""The values: an answer, its sources, search results and the stream events before an answer.

They sit above the renderers and import them downward to show themselves (``to_html``,
``_repr_mimebundle_``), as polars' ``DataFrame`` imports its display module; the renderers
see them only for typing. The wire layer, above, builds them from JSON with functions
(``citekit.wire.parsers``).
"""

from __future__ import annotations

from .answer import (
    Answer,
    AudioClip,
    Choice,
    ComponentOutput,
    StreamEvent,
    TextDelta,
    TextRead,
    ToolCall,
    ToolCallDelta,
    Usage,
    first_text,
    first_text_only,
)
from .search import SearchResult, SearchResults
from .sources import IMAGE_TYPES, SAMPLE_FIELD, Citation, GeneratedFile, Reference, References

__all__ = [
    "IMAGE_TYPES",
    "SAMPLE_FIELD",
    "Answer",
    "AudioClip",
    "Choice",
    "Citation",
    "ComponentOutput",
    "GeneratedFile",
    "Reference",
    "References",
    "SearchResult",
    "SearchResults",
    "StreamEvent",
    "TextDelta",
    "TextRead",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "first_text",
    "first_text_only",
]
