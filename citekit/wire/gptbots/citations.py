"""GPTBots corner citations: the ``citations`` of a blocking reply, the Citation (20) and
CorrelateAttachment (83) events of a stream, as ``citekit.Citation``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.fields import int_or_none
from ...model import Citation

__all__ = ["attachment_citations", "citation_from", "parse_citations", "stream_citations"]

_MAX_INDEX = 9999  # the text reader's markers go up to $[9999]$
_SOURCES = ("attachment", "doc", "tool")


def citation_from(data: Mapping[str, Any], *, position: int = 0) -> Citation:
    """A ``Citation`` from one item of a reply's ``citations`` (``corner_citation: true``).

    ``index`` is a string matching the ``$[N]$`` mark (``document_index = N - 1``; a missing or
    unreadable one uses ``position``); ``content`` is the cited fragment; the title is ``name``
    (else the attachment's, doc's or tool's name); the URL is the attachment's when it is
    http(s). ``raw`` keeps the whole item.
    """
    number = int_or_none(data.get("index"), lo=1, hi=_MAX_INDEX, strings=True)
    document_index = position if number is None else number - 1
    source: Mapping[str, Any] = {}
    for key in _SOURCES:
        value = data.get(key)
        if isinstance(value, Mapping):
            source = value
            break
    title = _nonempty(data.get("name")) or _nonempty(source.get("name"))
    url = _nonempty(source.get("url")) or _nonempty(data.get("url"))
    content = _nonempty(data.get("content")) or _nonempty(source.get("content")) or ""
    return Citation(
        cited_text=content,
        document_index=document_index,
        document_title=title,
        source_url=url if url and url.lower().startswith(("http://", "https://")) else None,
        raw=dict(data),
    )


def _nonempty(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def parse_citations(items: Any) -> tuple[Citation, ...]:
    """The ``citations`` array of a reply (anything else, or a non-object item, is skipped)."""
    if not isinstance(items, list):
        return ()
    return tuple(
        citation_from(item, position=n) for n, item in enumerate(items) if isinstance(item, Mapping)
    )


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def stream_citations(data: Any) -> list[dict[str, Any]]:
    """A Citation (code 20) event's items in the blocking reply's shape.

    ``data`` is ``[{citation: {index, name, type, attachment: {...}, dataId, content, ...}}]``;
    the camelCase keys are given the blocking reply's names (``dataId`` -> ``data_id``).
    """
    items = data if isinstance(data, list) else [data]
    found = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        inner = item.get("citation", item)
        if isinstance(inner, Mapping):
            found.append({_snake(str(k)): v for k, v in inner.items()})
    return found


def attachment_citations(items: list[Any]) -> list[dict[str, Any]]:
    """CorrelateAttachment (code 83) items ``{dataId, dataName, dataType, url, content, ...}`` in
    the blocking ``citations`` shape, numbered in order: used when no Citation event came."""
    found: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        snake = {_snake(str(k)): v for k, v in item.items()}
        citation: dict[str, Any] = {
            "index": str(len(found) + 1),
            "name": snake.get("data_name"),
            "type": snake.get("data_type") or "attachment",
            "content": snake.get("content"),
            **{k: v for k, v in snake.items() if k not in ("data_name", "data_type", "content")},
        }
        if isinstance(snake.get("url"), str):
            citation["attachment"] = {"url": snake["url"], "name": snake.get("data_name")}
        found.append(citation)
    return found
