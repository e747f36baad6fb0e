"""A griffe extension for the docs site: docstring examples shown as code blocks.

citekit's docstrings write their examples as doctest lines (``>>> ...`` and the output after
them), which ``tests/project/test_docs.py`` runs. Markdown would read ``>>>`` as nested quotes;
this extension fences each run of them (from a ``>>>`` line to the next blank line) as a
``pycon`` block before mkdocstrings renders the docstring. Used by ``mkdocs.yml``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

PROMPT = re.compile(r"^(?P<indent>\s*)>>> ")


def fence_examples(text: str) -> str:
    """``text`` with every run of doctest lines inside a ``pycon`` fence.

    A run ends at a blank line or a fence line; lines already inside a fence are left as they are.
    """
    lines = text.split("\n")
    out: list[str] = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        match = None if fenced else PROMPT.match(line)
        if match is None:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            out.append(line)
            i += 1
            continue
        out.append(f"{match['indent']}```pycon")
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith("```"):
            out.append(lines[i])
            i += 1
        out.append(f"{match['indent']}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fences the doctest examples of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>> " in obj.docstring.value:
            obj.docstring.value = fence_examples(obj.docstring.value)
