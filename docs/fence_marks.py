"""A MkDocs hook for the docs site: the marks after a code block's language left off the page.

A block that cannot run in ``tests/project/test_pages.py`` says why with a word after its
language (```` ```bash network ````, ``live``, ``spark``, ``suite``: that test's ``MARKS``).
pymdownx.superfences reads an info string as a language and ``{attributes}`` only, so a block
with a bare word after its language would not be a fence at all: its text would show as a
paragraph, and its closing fence open a block that swallows the page below. This hook keeps
the language and drops the marks before the page is rendered. Used by ``mkdocs.yml``.
"""

from __future__ import annotations

import re
from typing import Any

#: An opening fence with words after its language: the fence and language kept, the rest dropped.
MARKED = re.compile(r"^(?P<fence>[ \t]*(?:`{3,}|~{3,})[\w+-]+)[ \t]+[\w \t-]+$", re.MULTILINE)


def strip_marks(markdown: str) -> str:
    """``markdown`` with each fence's marks after its language left off."""
    return MARKED.sub(r"\g<fence>", markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return strip_marks(markdown)
