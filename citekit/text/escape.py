"""Escaping, the URL allow-list, per-render ids and the inline styles every HTML output shares.

Everything a provider sends goes through :func:`esc` (text) or :func:`safe_url` (link
targets) before it reaches HTML. The styles below use only CSS properties and value forms
that JupyterLab's output sanitizer keeps (no ``var(--jp-...)``, no ``url(...)``): colours are
translucent greys and tints, so the output reads in light and dark themes alike.
"""

from __future__ import annotations

import html
import secrets

from .parser import link_allowed

__all__ = ["STYLE", "esc", "new_token", "safe_url"]


def esc(text: object) -> str:
    """``text`` escaped for HTML element content and double-quoted attribute values."""
    return html.escape(str(text), quote=True)


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an absolute ``http``/``https`` URL with a host, else ``None``.

    Leading and trailing whitespace is ignored; anything else unusual (control characters,
    spaces, quotes, backslashes) makes the URL unusable as a link target.
    """
    if not url:
        return None
    candidate = url.strip()
    return candidate if link_allowed(candidate) else None


def new_token() -> str:
    """A fresh id prefix, so two renders in one page never share an id."""
    return "ck" + secrets.token_hex(5)


class STYLE:
    """Inline style strings (constants only: no provider text is ever put into a style)."""

    ROOT = "line-height:1.5"
    BLOCK = "margin:0 0 0.6em 0"
    # Lists and headings say what they are: marimo's page resets list markers, list padding
    # and heading weight for every output (a numbered list would lose its numbers there).
    BULLETS = "margin:0 0 0.6em 0; padding:0 0 0 2em; list-style-type:disc"
    NUMBERS = "margin:0 0 0.6em 0; padding:0 0 0 2em; list-style-type:decimal"
    HEADING = "margin:0.6em 0 0.3em 0; font-weight:bold"
    MUTED = "opacity:0.75"
    SMALL_MUTED = "opacity:0.75; font-size:0.85em"
    QUESTION = "opacity:0.75; font-size:0.9em; margin:0 0 0.4em 0"
    SECTION = "margin:0.8em 0 0 0; padding:0.4em 0 0 0; border-top:1px solid rgba(127,127,127,0.35)"
    SECTION_TITLE = "font-weight:bold; margin:0 0 0.3em 0"
    LIST = "margin:0; padding:0 0 0 0.2em; list-style-type:none"
    RANKED_LIST = "margin:0; padding:0 0 0 2em; list-style-type:decimal"
    ITEM = "margin:0 0 0.35em 0"
    LABEL = "font-weight:bold"
    BADGE = (
        "display:inline-block; margin:0 0.4em 0.4em 0; padding:0 0.4em; font-size:0.85em;"
        " border:1px solid rgba(127,127,127,0.6); border-radius:3px"
    )
    BADGE_SAMPLE = BADGE + "; background-color:rgba(255,170,0,0.22)"
    BADGE_WARN = BADGE + "; background-color:rgba(220,50,50,0.18)"
    NOTE = (
        "margin:0 0 0.5em 0; padding:0.2em 0.6em;"
        " border-left:3px solid rgba(127,127,127,0.6); background-color:rgba(127,127,127,0.1)"
    )
    MARKER_PENDING = "opacity:0.75"
    DETAILS = "margin:0.15em 0 0.15em 1.6em"
    SUMMARY = "cursor:pointer; font-size:0.9em"
    PASSAGE = (
        "margin:0.3em 0 0.4em 0; padding:0.1em 0.7em;"
        " border-left:3px solid rgba(127,127,127,0.5); background-color:rgba(127,127,127,0.08)"
    )
    PASSAGE_PLAIN = "margin:0.3em 0 0.4em 1.6em"
    PRE = (
        "margin:0 0 0.6em 0; padding:0.4em 0.6em; overflow-x:auto;"
        " background-color:rgba(127,127,127,0.12); border-radius:3px"
    )
    CODE = "padding:0 0.2em; background-color:rgba(127,127,127,0.15); border-radius:3px"
    TABLE = "margin:0 0 0.6em 0; border-collapse:collapse"
    CELL = "padding:0.2em 0.6em; border:1px solid rgba(127,127,127,0.4)"
    BAR = (
        "display:inline-block; width:4em; height:0.6em; margin:0 0.3em 0 0.4em;"
        " vertical-align:middle; background-color:rgba(127,127,127,0.25); border-radius:2px"
    )
    BAR_FILL = (
        "display:block; height:100%; background-color:rgba(33,150,243,0.85); border-radius:2px"
    )
    FOOTER = "opacity:0.75; font-size:0.8em; margin:0.6em 0 0 0"
    FIGURE = "margin:0 0 0.6em 0"
    # A white ground: a chart drawn on a transparent canvas stays readable in a dark theme.
    IMAGE = (
        "display:block; max-width:100%; height:auto; background-color:#fff;"
        " border:1px solid rgba(127,127,127,0.35); border-radius:4px"
    )
    STREAMING = "opacity:0.75; font-size:0.85em; margin:0 0 0.4em 0"
    # The footnote a link lands on (``:target``, in the answer's scoped style): a tint light
    # enough for dark text and dark enough for light text, and an outline that shows in both.
    TARGET = (
        "background-color:rgba(255,190,0,0.2); outline:2px solid rgba(230,150,0,0.85);"
        " outline-offset:1px; border-radius:3px; scroll-margin-top:0.5em"
    )
