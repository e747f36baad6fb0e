"""``_repr_mimebundle_`` for answers, reference lists and search results: never raises into a
cell."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from ..core.models import Answer, References
from ..core.search import SearchResults
from ._safe import report_render_error
from .html import answer_html, references_html, render_answer_html
from .markdown import answer_markdown, references_markdown
from .search import search_html, search_markdown, search_text
from .text import answer_text, references_text

__all__ = ["answer_bundle", "mimebundle"]

_MIMETYPES = ("text/plain", "text/markdown", "text/html")

_ANSWER: dict[str, Callable[[Any], str]] = {
    "text/plain": answer_text,
    "text/markdown": answer_markdown,
    "text/html": answer_html,
}
_REFERENCES: dict[str, Callable[[Any], str]] = {
    "text/plain": references_text,
    "text/markdown": references_markdown,
    "text/html": references_html,
}
_SEARCH: dict[str, Callable[[Any], str]] = {
    "text/plain": search_text,
    "text/markdown": search_markdown,
    "text/html": search_html,
}


def _wanted(include: Container[str] | None, exclude: Container[str] | None) -> list[str]:
    return [
        m
        for m in _MIMETYPES
        if (include is None or m in include) and (exclude is None or m not in exclude)
    ]


def _fallback_text(obj: object) -> str:
    attempts: list[Callable[[], str]] = []
    if isinstance(obj, Answer):
        attempts.append(lambda: answer_text(obj))
    if isinstance(obj, References):
        attempts.append(lambda: references_text(obj))
    if isinstance(obj, SearchResults):
        attempts.append(lambda: search_text(obj))
        attempts.append(lambda: f"<SearchResults for {obj.query!r}: {len(obj.items)} items>")
    attempts.append(lambda: str(getattr(obj, "text", "")))
    for attempt in attempts:
        try:
            text = attempt()
        except Exception:
            continue
        if text:
            return text
    try:
        return object.__repr__(obj)
    except Exception:
        return "<citekit object>"


def mimebundle(
    obj: Answer | References | SearchResults | Any,
    *,
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
) -> dict[str, str]:
    """``text/plain``, ``text/markdown`` and ``text/html`` for an Answer, References or
    SearchResults.

    ``include`` / ``exclude`` are what IPython passes to ``_repr_mimebundle_``. On any error
    the result is ``{"text/plain": ...}`` and a :class:`RenderWarning` is issued (or, when
    warnings are errors, a message goes to stderr): a display never raises into the cell.
    """
    return _bundle(obj, include, exclude, None)


def answer_bundle(answer: Answer, *, body_html: str | None) -> dict[str, str]:
    """:func:`mimebundle` of an answer whose text HTML is already rendered (see
    :func:`~citekit.render.html.render_answer_html`)."""
    return _bundle(answer, None, None, body_html)


def _bundle(
    obj: object,
    include: Container[str] | None,
    exclude: Container[str] | None,
    body_html: str | None,
) -> dict[str, str]:
    what = type(obj).__name__
    try:
        if isinstance(obj, Answer):
            renderers = _ANSWER
            if body_html is not None:
                html = body_html
                renderers = {
                    **_ANSWER,
                    "text/html": lambda a: render_answer_html(a, body_html=html),
                }
        elif isinstance(obj, References):
            renderers = _REFERENCES
        elif isinstance(obj, SearchResults):
            renderers = _SEARCH
        else:
            raise TypeError(f"cannot render a {what}")
        bundle: dict[str, str] = {}
        for mimetype in _wanted(include, exclude):
            what = f"{type(obj).__name__} as {mimetype}"
            bundle[mimetype] = renderers[mimetype](obj)
        return bundle
    except Exception as exc:
        report_render_error(what, exc)
        return {"text/plain": _fallback_text(obj)}
