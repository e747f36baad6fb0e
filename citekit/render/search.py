"""Search results as text, Markdown and HTML (a ranked list of links), and their mimebundle.

Every value from the provider is escaped (``esc``, ``md_escape``) and links pass the URL
allow-list (``safe_url``), as in an answer's source list. The display never raises into a
cell: on any error it falls back to plain text and reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text.escape import STYLE, esc, new_token
from ._sources import format_score, snippet
from .html import _link
from .markdown import md_escape, md_link

if TYPE_CHECKING:
    from ..model import SearchResult, SearchResults

__all__ = ["search_html", "search_markdown", "search_text"]

_SNIPPET = 240


def _title(item: SearchResult) -> str:
    return item.title or item.url or f"Result {item.rank}"


def _byline(item: SearchResult) -> str:
    return ", ".join(part for part in (item.author, item.year) if part)


def _head(results: SearchResults) -> str:
    count = len(results)
    return f"{count} result{'' if count == 1 else 's'} for {results.query!r}"


def search_text(results: SearchResults) -> str:
    """Plain text: the query, then one numbered entry per result."""
    lines = []
    if results.sample_label:
        lines.append(f"[recorded sample · {results.sample_label}]")
    lines.append(_head(results))
    for item in results:
        head = f"  {item.rank}. {_title(item)}"
        if byline := _byline(item):
            head += f" — {byline}"
        if (score := format_score(item.score)) is not None:
            head += f" (score {score})"
        lines.append(head)
        if item.url:
            lines.append(f"     {item.url.strip()}")
        if item.text:
            lines.append(f"     {snippet(item.text, _SNIPPET)}")
    return "\n".join(lines)


def search_markdown(results: SearchResults) -> str:
    """Markdown: a numbered list of links, each with its byline and a quoted snippet."""
    lines = []
    if results.sample_label:
        lines += [f"> **recorded sample · {md_escape(results.sample_label)}**", ""]
    lines += [f"**{md_escape(_head(results))}**", ""]
    for item in results:
        entry = f"{item.rank}. {md_link(item.url, _title(item))}"
        if byline := _byline(item):
            entry += f" — {md_escape(byline)}"
        if (score := format_score(item.score)) is not None:
            entry += f" · score {score}"
        lines.append(entry)
        if item.text:
            lines.append(f"   > {md_escape(snippet(item.text, _SNIPPET))}")
    return "\n".join(lines) + "\n"


def search_html(results: SearchResults) -> str:
    """HTML: a ranked list of links with bylines, scores and snippets."""
    token = new_token()
    out = [f'<div class="citekit-search" id="{token}" style="{STYLE.ROOT}">\n']
    if results.sample_label:
        out.append(
            f'<div class="citekit-labels"><span class="citekit-label" style="{STYLE.BADGE_SAMPLE}"'
            ' title="Built from a recorded-format file in sample_data/, not a live answer">'
            f"recorded sample · {esc(results.sample_label)}</span></div>"
        )
    out.append(f'<div style="{STYLE.SECTION_TITLE}">{esc(_head(results))}</div>\n')
    if not results.items:
        out.append(f'<div style="{STYLE.MUTED}">Nothing was found.</div>\n')
    else:
        out.append(f'<ol style="{STYLE.RANKED_LIST}">\n')
        for item in results:
            parts = [
                f'<li class="citekit-search-result" style="{STYLE.ITEM}">',
                _link(item.url, _title(item)),
            ]
            if byline := _byline(item):
                parts.append(f' <span style="{STYLE.SMALL_MUTED}">— {esc(byline)}</span>')
            if (score := format_score(item.score)) is not None:
                parts.append(f' <span style="{STYLE.SMALL_MUTED}">· score {score}</span>')
            if item.text:
                parts.append(
                    f'<div style="{STYLE.PASSAGE}">{esc(snippet(item.text, _SNIPPET))}</div>'
                )
            parts.append("</li>\n")
            out.append("".join(parts))
        out.append("</ol>\n")
    out.append("</div>\n")
    return "".join(out)
