"""Magisterium search without I/O: the request, its checks, the lenient parser, the flow.

``POST /search`` takes ``{query (<= 1024 characters), numResults (1-100), category ("auto",
"magisterial" or "scholarly")}``. The response shape is not documented publicly, so the parser
takes a list of results under any of the usual keys (``results``, ``data``, ``documents``,
``items``, ``hits``, one level deep too, as in ``{"hits": {"hits": [...]}}``) or a bare list,
and reads each item's fields under the names search APIs use; a body that holds no list is a
``ResponseFormatError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from ..core.errors import ResponseFormatError
from ..core.fields import int_or_none, number_or_none
from ..core.names import MAGISTERIUM
from ..core.unicode import decode_entities
from ..model import SearchResult, SearchResults
from .flow import Flow, RequestSpec, fetch_json
from .response import Wire

__all__ = [
    "CATEGORIES",
    "MAX_QUERY_CHARS",
    "Category",
    "parse_search",
    "search_flow",
    "search_request",
]

Category = Literal["auto", "magisterial", "scholarly"]
CATEGORIES: Final[tuple[str, ...]] = ("auto", "magisterial", "scholarly")
MAX_QUERY_CHARS: Final = 1024
MAX_RESULTS: Final = 100

_LIST_KEYS: Final = ("results", "data", "documents", "items", "hits")
# Where an item may nest its fields (Elasticsearch's ``_source``, vector stores' ``metadata``).
_NESTED: Final = ("_source", "metadata", "document", "source")
_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "title": ("title", "document_title", "name", "heading"),
    "url": ("url", "source_url", "link", "href", "uri"),
    "text": ("text", "snippet", "content", "cited_text", "excerpt", "passage", "body"),
    "author": ("author", "document_author", "authors", "creator"),
    "year": ("year", "date", "document_year", "published", "published_date", "publication_date"),
}
_SCORES: Final = ("score", "_score", "relevance_score", "relevance", "similarity")


def search_request(query: str, *, num_results: int = 10, category: str = "auto") -> RequestSpec:
    """The ``POST /search`` request, its inputs checked before anything is sent."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query={query!r} must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(
            f"query has {len(query)} characters; Magisterium search takes at most "
            f"{MAX_QUERY_CHARS}: shorten it"
        )
    if (
        isinstance(num_results, bool)
        or not isinstance(num_results, int)
        or not 1 <= num_results <= MAX_RESULTS
    ):
        raise ValueError(f"num_results={num_results!r} must be a whole number from 1 to 100")
    if category not in CATEGORIES:
        allowed = ", ".join(repr(c) for c in CATEGORIES)
        raise ValueError(f"category={category!r} is not allowed; use one of {allowed}")
    body = {"query": query, "numResults": num_results, "category": category}
    return RequestSpec("POST", "/search", json=body)


def search_flow(wire: Wire, spec: RequestSpec) -> Flow[SearchResults]:
    """Send a search (retried as any request) and parse what comes back."""
    query = str(spec.json["query"]) if isinstance(spec.json, Mapping) else ""
    return fetch_json(wire, spec, lambda data: parse_search(data, query=query))


def _find_list(data: Any, depth: int = 0) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if not isinstance(data, Mapping) or depth > 1:
        return None
    for key in _LIST_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            return value
        if isinstance(value, Mapping):
            found = _find_list(value, depth + 1)
            if found is not None:
                return found
    return None


def parse_search(data: Any, *, query: str, provider: str = MAGISTERIUM.name) -> SearchResults:
    """``SearchResults`` of a decoded search body; ``ResponseFormatError`` if it holds no list.

    >>> from citekit.wire.search import parse_search
    >>> hit = {"name": "Laborem exercens", "link": "https://x.va/le", "date": "1981",
    ...        "snippet": "Work is a good thing for man", "_score": 0.9}
    >>> found = parse_search({"hits": [hit]}, query="work")
    >>> first = found[0]
    >>> first.title, first.url, first.year, first.score
    ('Laborem exercens', 'https://x.va/le', '1981', 0.9)
    """
    found = _find_list(data)
    if found is None:
        keys = ", ".join(_LIST_KEYS)
        if isinstance(data, Mapping):
            what = f"an object with keys {sorted(map(str, data))[:8]}"
        else:
            what = f"a JSON {type(data).__name__}"
        raise ResponseFormatError(
            f"{provider} search sent {what} and no list of results (looked for a bare list or "
            f"one under {keys}): citekit does not know this response shape; please report it"
        )
    items: list[SearchResult] = []
    for item in found:
        result = _item(item, rank=len(items) + 1)
        if result is not None:
            items.append(result)
    return SearchResults(query=query, items=tuple(items), raw=data, provider=provider)


def _item(item: Any, *, rank: int) -> SearchResult | None:
    if isinstance(item, str):
        return SearchResult(rank=rank, text=item, raw={"text": item}) if item.strip() else None
    if not isinstance(item, Mapping):
        return None
    layers = [item, *(item[k] for k in _NESTED if isinstance(item.get(k), Mapping))]
    values = {name: _first_text(layers, keys) for name, keys in _FIELDS.items()}
    return SearchResult(
        rank=rank,
        score=_first_score(layers),
        raw=dict(item),
        **values,
    )


def _text(value: Any, *, nested: bool = True) -> str | None:
    """A field's text: a string (entities decoded, as in Magisterium's citations), a whole
    number, and one level down (``nested``) a list of them or an object's ``name``."""
    if isinstance(value, str):
        return decode_entities(value) if value.strip() else None
    number = int_or_none(value, lo=-(2**63), hi=2**63)
    if number is not None:
        return str(number)
    if not nested:
        return None
    if isinstance(value, list):  # e.g. a list of authors, or of {"name": ...}
        parts = [t for t in (_text(v, nested=False) or _name(v) for v in value) if t]
        return "; ".join(parts) or None
    return _name(value)  # e.g. {"name": "..."}


def _name(value: Any) -> str | None:
    return _text(value.get("name"), nested=False) if isinstance(value, Mapping) else None


def _first_text(layers: list[Mapping[str, Any]], keys: tuple[str, ...]) -> str | None:
    for layer in layers:
        for key in keys:
            text = _text(layer.get(key))
            if text is not None:
                return text
    return None


def _first_score(layers: list[Mapping[str, Any]]) -> float | None:
    for layer in layers:
        for key in _SCORES:
            score = number_or_none(layer.get(key), strings=True)
            if score is not None:
                return score
    return None
