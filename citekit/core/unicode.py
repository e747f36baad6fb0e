"""Text made valid: Unicode that a file can hold, HTML entities some providers leave decoded."""

from __future__ import annotations

import html
import re

__all__ = ["decode_entities", "valid_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: surrogate pairs (an emoji split across two JSON strings or
    stream chunks, ``"\\ud83d"`` + ``"\\ude00"``) joined into their character, lone surrogates
    replaced by U+FFFD. Text that UTF-8 cannot encode would be lost on its way to a file."""
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii: the common, fast case
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def decode_entities(text: str) -> str:
    """Decode HTML entities (``&apos;``, ``&oelig;``) that some providers leave in text, and
    make it valid Unicode (:func:`valid_text`): what every source field of a provider goes
    through."""
    return valid_text(html.unescape(text) if "&" in text else text)
