"""``_repr_mimebundle_`` for answers, reference lists and search results: never raises into a
cell."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Any

from .fallback import report_render_error
from .html import answer_html, references_html, render_answer_html
from .markdown import answer_markdown, references_markdown
from .search import search_html, search_markdown, search_text
from .text import answer_text, references_text

if TYPE_CHECKING:
    from ..model import Answer, References, SearchResults

__all__ = ["answer_bundle", "references_bundle", "search_bundle"]

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


def _first_text(obj: object, attempts: list[Callable[[], str]]) -> str:
    """The first of ``attempts`` that gives text, else the object's bare repr: what a display
    that failed shows instead."""
    last: Callable[[], str] = lambda: str(getattr(obj, "text", ""))  # noqa: E731
    for attempt in [*attempts, last]:
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


def answer_bundle(
    answer: Answer,
    *,
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
    body_html: str | None = None,
) -> dict[str, str]:
    """``text/plain``, ``text/markdown`` and ``text/html`` of an answer (``_repr_mimebundle_``).

    ``include`` / ``exclude`` are what IPython passes to ``_repr_mimebundle_``; ``body_html`` is
    the answer's text already rendered as HTML (the live display's, see
    :func:`~citekit.render.html.render_answer_html`). On any error the result is
    ``{"text/plain": ...}`` and a :class:`~citekit.render.fallback.RenderWarning` is issued (or,
    when warnings are errors, a message goes to stderr): a display never raises into the cell.
    """
    renderers = _ANSWER
    if body_html is not None:
        html = body_html
        renderers = {**_ANSWER, "text/html": lambda a: render_answer_html(a, body_html=html)}
    return _bundle(answer, renderers, [lambda: answer_text(answer)], include, exclude)


def references_bundle(
    references: References,
    *,
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
) -> dict[str, str]:
    """:func:`answer_bundle` of a GPTBots reference list."""
    return _bundle(references, _REFERENCES, [lambda: references_text(references)], include, exclude)


def search_bundle(
    results: SearchResults,
    *,
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
) -> dict[str, str]:
    """:func:`answer_bundle` of search results."""
    attempts: list[Callable[[], str]] = [
        lambda: search_text(results),
        lambda: f"<SearchResults for {results.query!r}: {len(results.items)} items>",
    ]
    return _bundle(results, _SEARCH, attempts, include, exclude)


def _bundle(
    obj: object,
    renderers: dict[str, Callable[[Any], str]],
    fallbacks: list[Callable[[], str]],
    include: Container[str] | None,
    exclude: Container[str] | None,
) -> dict[str, str]:
    what = type(obj).__name__
    try:
        bundle: dict[str, str] = {}
        for mimetype in _wanted(include, exclude):
            what = f"{type(obj).__name__} as {mimetype}"
            bundle[mimetype] = renderers[mimetype](obj)
        return bundle
    except Exception as exc:
        report_render_error(what, exc)
        return {"text/plain": _first_text(obj, fallbacks)}
