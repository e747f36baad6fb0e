"""Markdown to HTML with markdown-it-py: raw HTML off, http(s) links only, footnote markers.

markdown-it parses; the small renderer below writes the HTML itself, so every tag and
attribute that can appear is listed here. Two tag sets exist: the normal one, and the strict
one made only of tags that nbconvert's ``sanitize_html=True`` keeps (``div``, ``span``,
``a``, ``em``, ``strong``, ``code``, ``pre``, ``ul``/``ol``/``li``, ``blockquote``,
``table``/``tr``/``td``), so a sanitized export shows no literal tags.

The parser is the one the text reader uses (:func:`citekit.text.parser.make_parser`): inline
markers (``[^2]``, ``[2]``, ``$[2]$``) come out as tokens of their own, code and links keep
them literal, and :attr:`Answer.cited_markers` and the frames count exactly the markers drawn
here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from markdown_it.token import Token

from .escape import STYLE, esc, safe_url
from .fast_html import fast_markdown, heading_tags
from .parser import MARKER_TOKEN, NO_MARKERS, make_parser

__all__ = ["MarkerRenderer", "plain_paragraph", "render_markdown"]

#: ``(number, source text of the marker) -> HTML`` for one inline marker.
MarkerRenderer = Callable[[int, str], str]

_PARSER = make_parser()


_ALIGN = {
    "text-align:left": "; text-align:left",
    "text-align:center": "; text-align:center",
    "text-align:right": "; text-align:right",
}


def _pending_marker(number: int, source: str) -> str:
    return esc(source)


class _Renderer:
    """Writes HTML for markdown-it tokens; only the tags and attributes listed here exist."""

    def __init__(self, *, strict: bool, markers: MarkerRenderer | None, top_heading: int):
        self.strict = strict
        self.markers = markers or _pending_marker
        self.top_heading = top_heading
        self.out: list[str] = []
        self._first_cell = True

    def block(self, tokens: Sequence[Token]) -> str:
        out = self.out
        for token in tokens:
            kind = token.type
            if kind == "inline":
                self.inline(token.children or ())
            elif kind == "paragraph_open":
                if not token.hidden:
                    out.append(f'<div style="{STYLE.BLOCK}">')
            elif kind == "paragraph_close":
                if not token.hidden:
                    out.append("</div>\n")
            elif kind == "heading_open":
                out.append(self._heading(token, opening=True))
            elif kind == "heading_close":
                out.append(self._heading(token, opening=False))
            elif kind in ("fence", "code_block"):
                out.append(f'<pre style="{STYLE.PRE}"><code>{esc(token.content)}</code></pre>\n')
            elif kind == "hr":
                out.append(
                    '<div style="margin:0.6em 0; text-align:center; opacity:0.75">* * *</div>\n'
                    if self.strict
                    else f'<hr style="{STYLE.BLOCK}">\n'
                )
            elif kind in ("bullet_list_open", "ordered_list_open"):
                tag = "ul" if kind == "bullet_list_open" else "ol"
                start = token.attrGet("start")
                extra = f' start="{int(start)}"' if isinstance(start, int | str) and start else ""
                style = STYLE.BULLETS if tag == "ul" else STYLE.NUMBERS
                out.append(f'<{tag}{extra} style="{style}">\n')
            elif kind in ("bullet_list_close", "ordered_list_close"):
                out.append("</ul>\n" if kind == "bullet_list_close" else "</ol>\n")
            elif kind == "list_item_open":
                out.append("<li>")
            elif kind == "list_item_close":
                out.append("</li>\n")
            elif kind == "blockquote_open":
                out.append(f'<blockquote style="{STYLE.PASSAGE}">\n')
            elif kind == "blockquote_close":
                out.append("</blockquote>\n")
            elif kind.startswith(("table_", "thead_", "tbody_", "tr_", "th_", "td_")):
                out.append(self._table(token) if not self.strict else self._strict_table(token))
            elif token.content:
                # Anything unexpected (html_block cannot occur with html off) is shown as text.
                out.append(f"<div>{esc(token.content)}</div>\n")
        return "".join(out)

    def _table(self, token: Token) -> str:
        kind = token.type
        if kind == "table_open":
            return f'<table style="{STYLE.TABLE}">\n'
        if kind in ("th_open", "td_open"):
            align = _ALIGN.get(str(token.attrGet("style") or ""), "")
            return f'<{token.tag} style="{STYLE.CELL}{align}">'
        closing = "/" if token.nesting < 0 else ""
        newline = (
            "\n"
            if kind
            in ("tr_close", "thead_open", "thead_close", "tbody_open", "tbody_close", "table_close")
            else ""
        )
        return f"<{closing}{token.tag}>{newline}"

    def _strict_table(self, token: Token) -> str:
        # html5lib (inside nbconvert's sanitizer) inserts <tbody>, which it then escapes into
        # visible text: a strict table is a block of rows with cells separated by bars.
        kind = token.type
        if kind == "table_open":
            return f'<div style="{STYLE.BLOCK}">'
        if kind == "table_close":
            return "</div>\n"
        if kind == "tr_open":
            self._first_cell = True
            return "<div>"
        if kind == "tr_close":
            return "</div>\n"
        if kind in ("th_open", "td_open"):
            sep = "" if self._first_cell else " | "
            self._first_cell = False
            return sep + ("<strong>" if kind == "th_open" else "<span>")
        if kind == "th_close":
            return "</strong>"
        if kind == "td_close":
            return "</span>"
        return ""

    def _heading(self, token: Token, *, opening: bool) -> str:
        level = int(token.tag[1:]) if token.tag[1:].isdigit() else 6
        tags = heading_tags(level, strict=self.strict, top_heading=self.top_heading)
        return tags[0] if opening else tags[1]

    def inline(self, tokens: Sequence[Token]) -> None:
        out = self.out
        strict = self.strict
        for token in tokens:
            kind = token.type
            if kind == "text" or kind == "text_special":
                out.append(esc(token.content))
            elif kind == MARKER_TOKEN:
                out.append(self.markers(int(token.meta["number"]), token.content))
            elif kind == "softbreak":
                out.append("\n")
            elif kind == "hardbreak":
                out.append("<div></div>" if strict else "<br>\n")
            elif kind == "code_inline":
                out.append(f'<code style="{STYLE.CODE}">{esc(token.content)}</code>')
            elif kind in ("em_open", "strong_open"):
                out.append(f"<{token.tag}>")
            elif kind in ("em_close", "strong_close"):
                out.append(f"</{token.tag}>")
            elif kind in ("s_open", "s_close"):
                out.append("~~" if strict else ("<s>" if kind == "s_open" else "</s>"))
            elif kind == "link_open":
                out.append(_link_open(token))
            elif kind == "link_close":
                out.append("</a>")
            elif token.content:
                out.append(esc(token.content))


def _link_open(token: Token) -> str:
    href = safe_url(str(token.attrGet("href") or ""))
    if href is None:  # markdown-it already refused it; never emit a bad target anyway
        return "<a>"
    title = token.attrGet("title")
    title_attr = f' title="{esc(title)}"' if title else ""
    return f'<a href="{esc(href)}"{title_attr} target="_blank" rel="noopener noreferrer">'


# Text that markdown-it would turn into one plain paragraph: one line, no character with a
# Markdown meaning, nothing at the start that opens a block. Passages and chunks are mostly
# like that, and skipping the parser for them halves the cost of a long source list.
_SPECIAL = re.compile(r"[\\`*_\[\]<>!&#|~\n\r\x00]")
_BLOCK_START = re.compile(r"[-+=]|[0-9]{1,9}[.)]")


def plain_paragraph(text: str) -> str | None:
    """The HTML markdown-it would give for ``text`` when it is a single plain paragraph,
    else ``None``."""
    if not text or text != text.strip() or _SPECIAL.search(text) or _BLOCK_START.match(text):
        return None
    return f'<div style="{STYLE.BLOCK}">{esc(text)}</div>\n'


def render_markdown(
    text: str,
    *,
    strict: bool = False,
    markers: MarkerRenderer | None = None,
    top_heading: int = 3,
) -> str:
    """HTML for Markdown ``text``; ``markers`` renders each inline marker (``None``: the
    marker stays literal text)."""
    plain = plain_paragraph(text)
    if plain is not None:
        return plain
    fast = fast_markdown(
        text, strict=strict, markers=markers or _pending_marker, top_heading=top_heading
    )
    if fast is not None:
        return fast
    env: dict[str, Any] = {} if markers is not None else {NO_MARKERS: True}
    tokens = _PARSER.parse(text, env)
    return _Renderer(strict=strict, markers=markers, top_heading=top_heading).block(tokens)
