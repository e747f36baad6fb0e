"""HTML, Markdown and plain text of answers and reference lists, and the live stream display.

``Answer.to_html()``, ``Answer.to_markdown()``, ``References.to_html()`` and the values'
``_repr_mimebundle_`` call the functions here. The HTML uses no JavaScript, prefixes every id
with a token drawn per render, escapes all provider text and links only to http(s) URLs;
``strict=True`` limits it to tags that nbconvert's ``sanitize_html=True`` keeps.
"""

from __future__ import annotations

from ..text.escape import safe_url
from .bundle import answer_bundle, references_bundle, search_bundle
from .fallback import RenderWarning
from .html import answer_html, references_html
from .live import LiveAnswer, NotebookLiveAnswer, TerminalLiveAnswer, shown_live_in_this_cell
from .markdown import answer_markdown, references_markdown
from .text import answer_text, references_text

__all__ = [
    "LiveAnswer",
    "NotebookLiveAnswer",
    "RenderWarning",
    "TerminalLiveAnswer",
    "answer_bundle",
    "answer_html",
    "answer_markdown",
    "answer_text",
    "references_bundle",
    "references_html",
    "references_markdown",
    "references_text",
    "safe_url",
    "search_bundle",
    "shown_live_in_this_cell",
]
