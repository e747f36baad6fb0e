"""GPTBots knowledge retrieval and conversation history, without I/O (providers.md, "GPTBots:
more endpoints").

* ``POST /v1/vector/match`` searches the agent's knowledge base: the knowledge-base twin of
  Magisterium's search, read into the same ``SearchResults`` (``search_request``,
  ``parse_vector_match``).
* ``GET /v1/bot/conversation/page`` lists conversations in a time window (``conversations_flow``,
  every page).
* ``GET /v2/messages`` gives a conversation's messages (``history_flow``, every page): each
  assistant message becomes an ``Answer`` with the user message before it as its question,
  shaped like a blocking reply so ``parse_response(answer.raw)`` rebuilds it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time
from typing import Any, Final

from ...core.errors import ProviderError
from ...core.fields import int_or_none, number_or_none
from ...core.names import GPTBOTS
from ...model import Answer, SearchResult, SearchResults
from ..flow import Flow, RequestSpec, fetch_json
from ..response import Wire
from .call import _completed
from .reply import parse_message

__all__ = [
    "CONVERSATION_TYPES",
    "RERANKERS",
    "conversations_flow",
    "history_flow",
    "millis",
    "parse_messages",
    "parse_vector_match",
    "search_request",
    "vector_search_flow",
]

RERANKERS: Final = (
    "BGE-Rerank",
    "Jina-reranker-v2-base-multilingual",
    "Jina-colbert-v2",
    "BCE-Rerank",
)
CONVERSATION_TYPES: Final = (
    "ALL", "API", "EMBED", "WIDGET", "SHARE", "SPACE", "AI_SEARCH", "WHATSAPP_META", "TELEGRAM",
)  # fmt: skip
MAX_TOP_K: Final = 50
PAGE_SIZE: Final = 100  # the most either list endpoint gives a page
MAX_PAGES: Final = 10_000  # a server whose ``total`` never comes within reach stops here
PAGE_BEYOND_DATA: Final = 40005


def _fraction(name: str, value: Any, lo: float, hi: float) -> float | None:
    if value is None:
        return None
    number = number_or_none(value)
    if number is None or not lo <= number <= hi:
        raise ValueError(f"{name}={value!r} must be a number from {lo} to {hi}")
    return number


def _ids(name: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(f"{name}= must be a list of ids, e.g. {name}=['...']")
    if not all(isinstance(one, str) and one.strip() for one in value):
        raise ValueError(f"{name}= holds an empty or non-string id")
    return list(value)


def search_request(
    query: str,
    *,
    top_k: int = 10,
    rerank: str | None = None,
    embedding_rate: float | None = None,
    group_ids: Sequence[str] | None = None,
    data_ids: Sequence[str] | None = None,
    min_score: float | None = None,
) -> RequestSpec:
    """The ``POST /v1/vector/match`` request, its inputs checked (as documented) before sending.

    ``rerank`` is the ``rerank_version``, ``min_score`` the ``doc_correlation``; ``group_ids``
    and ``data_ids`` given together search their union, ``[]`` searches nothing.
    """
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query={query!r} must be a non-empty string")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ValueError(f"top_k={top_k!r} must be a whole number from 1 to {MAX_TOP_K}")
    if rerank is not None and rerank not in RERANKERS:
        allowed = ", ".join(repr(r) for r in RERANKERS)
        raise ValueError(f"rerank={rerank!r} is not a GPTBots reranker; use one of {allowed}")
    body: dict[str, Any] = {"prompt": query, "top_k": top_k}
    rate = _fraction("embedding_rate", embedding_rate, 0.0, 1.0)
    if rate is not None:
        body["embedding_rate"] = rate
    for key, ids in (("group_ids", group_ids), ("data_ids", data_ids)):
        checked = _ids(key, ids)
        if checked is not None:
            body[key] = checked
    if rerank is not None:
        body["rerank_version"] = rerank
    floor = _fraction("min_score", min_score, 0.1, 0.95)
    if floor is not None:
        body["doc_correlation"] = floor
    return RequestSpec("POST", "/v1/vector/match", json=body)


def parse_vector_match(data: Any, *, query: str) -> SearchResults:
    """``SearchResults`` of a ``/v1/vector/match`` body ``{total, list: [{content, data_id,
    document_name, score}]}``: ``document_name`` is the title, ``content`` the text. Items that
    are not objects are skipped; ``raw`` keeps each as sent (its ``data_id`` included)."""
    found = data.get("list") if isinstance(data, Mapping) else data
    items: list[SearchResult] = []
    for item in found if isinstance(found, list) else []:
        if not isinstance(item, Mapping):
            continue
        title = item.get("document_name", item.get("data_name"))
        text = item.get("content")
        items.append(
            SearchResult(
                rank=len(items) + 1,
                title=title if isinstance(title, str) and title.strip() else None,
                text=text if isinstance(text, str) and text.strip() else None,
                url=_url(item.get("source_url")),
                score=number_or_none(item.get("score"), strings=True),
                raw=dict(item),
            )
        )
    return SearchResults(query=query, items=tuple(items), raw=data, provider=GPTBOTS.name)


def _url(value: Any) -> str | None:
    return value if isinstance(value, str) and value.startswith(("http://", "https://")) else None


def vector_search_flow(wire: Wire, spec: RequestSpec) -> Flow[SearchResults]:
    """Send a knowledge search (retried as any request) and read what comes back."""
    query = str(spec.json["prompt"]) if isinstance(spec.json, Mapping) else ""
    return fetch_json(wire, spec, lambda data: parse_vector_match(data, query=query))


def millis(value: Any, name: str) -> int:
    """A time as the milliseconds the list endpoint takes: a ``datetime`` (naive is UTC), a
    ``date`` (its midnight, UTC) or an ISO 8601 string of either."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"{name}={value!r} is not an ISO date or datetime, e.g. '2026-12-01'"
            ) from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(), tzinfo=UTC)
    if not isinstance(value, datetime):
        raise TypeError(f"{name}= must be a datetime, a date or an ISO date string")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    ms: int = math.floor(value.timestamp() * 1000)
    return ms


def conversations_flow(
    wire: Wire,
    *,
    since: Any,
    until: Any,
    conversation_type: str = "ALL",
    user_id: str | None = None,
) -> Flow[list[dict[str, Any]]]:
    """Every conversation in ``[since, until]``, page after page, as the API lists them."""
    if conversation_type not in CONVERSATION_TYPES:
        allowed = ", ".join(CONVERSATION_TYPES)
        raise ValueError(f"conversation_type={conversation_type!r}: use one of {allowed}")
    start = 0 if since is None else millis(since, "since")
    end = millis(datetime.now(UTC), "until") if until is None else millis(until, "until")
    if start > end:
        raise ValueError("since= is after until=: the window is empty")
    params: dict[str, str] = {
        "conversation_type": conversation_type,
        "start_time": str(start),
        "end_time": str(end),
        "page_size": str(PAGE_SIZE),
    }
    if user_id is not None:
        params["user_id"] = user_id
    found: list[dict[str, Any]] = []
    for page in range(1, MAX_PAGES + 1):
        spec = RequestSpec("GET", "/v1/bot/conversation/page", params={**params, "page": str(page)})
        data: Any = yield from fetch_json(wire, spec)
        rows = [dict(r) for r in _list(data, "list") if isinstance(r, Mapping)]
        found.extend(rows)
        if not rows or len(found) >= _total(data, len(found)):
            break
    return found


def _list(data: Any, key: str) -> list[Any]:
    return _seq(data.get(key) if isinstance(data, Mapping) else None)


def _seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _total(data: Any, seen: int) -> int:
    """``total`` (a number, or digits: the messages table types it as a string)."""
    value = data.get("total") if isinstance(data, Mapping) else None
    total = int_or_none(value, lo=0, hi=2**63 - 1, strings=True)
    return seen if total is None else total


def history_flow(wire: Wire, conversation_id: str, *, references: bool) -> Flow[list[Answer]]:
    """The answers of ``conversation_id``, oldest first, with their references if asked."""
    messages: list[Any] = []
    for page in range(1, MAX_PAGES + 1):
        params = {
            "conversation_id": conversation_id,
            "page": str(page),
            "page_size": str(PAGE_SIZE),
        }
        spec = RequestSpec("GET", "/v2/messages", params=params)
        try:
            data: Any = yield from fetch_json(wire, spec)
        except ProviderError as exc:
            if exc.code == PAGE_BEYOND_DATA and page > 1:  # the last page was full
                break
            raise
        rows = _list(data, "conversation_content")
        messages.extend(rows)
        if not rows or len(messages) >= _total(data, len(messages)):
            break
    answers = []
    for answer in parse_messages(messages, conversation_id=conversation_id):
        answers.append((yield from _completed(wire, answer, references, False)))
    return answers


def parse_messages(messages: Any, *, conversation_id: str | None = None) -> list[Answer]:
    """One ``Answer`` per assistant message of a ``/v2/messages`` list, its question the user
    message it answers (its ``parent_message_id``, else the user message before it).

    ``content`` is ``[{from_component_branch?, branch_content: [{type, text | audio | ...}]}]``:
    each item is one of the answer's ``outputs``, its text parts the text and its audio parts
    (``{url, transcript}``) the clips. The legacy ``/v1/messages`` shape (``message_type``
    ``QUESTION`` / ``ANSWER`` with a ``text``) is read too.
    """
    items = [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []
    questions: dict[str, str] = {}
    last_question: str | None = None
    answers: list[Answer] = []
    for message in items:
        role = message.get("role") or {"QUESTION": "user", "ANSWER": "assistant"}.get(
            str(message.get("message_type"))
        )
        branches = _branches(message)
        if role == "user":
            text = "\n\n".join(b["content"]["text"] for b in branches if b["content"]["text"])
            last_question = text
            if isinstance(message.get("message_id"), str):
                questions[message["message_id"]] = text
            continue
        if role != "assistant":
            continue
        parent = message.get("parent_message_id")
        question = questions.get(parent) if isinstance(parent, str) else None
        reply = {
            "message_id": message.get("message_id"),
            "conversation_id": message.get("conversation_id", conversation_id),
            "create_time": message.get("create_time"),
            "output": branches,
            "history_message": dict(message),
        }
        answers.append(parse_message(reply, question=question or last_question))
    return answers


def _branches(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A message's content items as blocking-reply ``output[]`` items."""
    if "content" not in message and isinstance(message.get("text"), str):  # legacy v1
        return [{"content": {"text": message["text"]}}]
    out: list[dict[str, Any]] = []
    for item in _seq(message.get("content")):
        if not isinstance(item, Mapping):
            continue
        texts: list[str] = []
        clips: list[dict[str, Any]] = []
        for part in _seq(item.get("branch_content")):
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "audio" and isinstance(part.get("audio"), Mapping):
                audio = part["audio"]
                clips.append({"audio": audio.get("url"), "transcript": audio.get("transcript")})
        content: dict[str, Any] = {"text": "".join(texts)}
        if clips:
            content["audio"] = clips
        out.append({"from_component_branch": item.get("from_component_branch"), "content": content})
    return out
