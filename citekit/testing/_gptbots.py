"""GPTBots' knowledge retrieval and conversation history, from the bodies providers.md documents.

* ``POST /v1/vector/match`` ("Knowledge retrieval"): ``{prompt, top_k (1-50), embedding_rate
  ([0,1]), group_ids, data_ids, rerank_version (one of four), doc_correlation ([0.1,0.95])}``
  -> ``{"total", "list": [{content, data_id, document_name, score}]}``; a wrong parameter is
  error 40000. The knowledge base is every chunk the samples' ``correlate_dataset`` holds,
  scored by the words it shares with the prompt (an ``embedding_rate`` of 0 is "keyword only"
  there too); ``data_ids`` limit the documents searched (``[]`` means none, absent all).
* ``GET /v1/bot/conversation/page`` ("List conversations"): ``conversation_type`` (required),
  ``start_time`` / ``end_time`` (required, milliseconds), ``user_id``, ``page`` (from 1),
  ``page_size`` (1-100) -> ``{"list": [{conversation_id, user_id, recent_chat_time, subject,
  conversation_type, message_count, cost_credit, bot_id}], "total"}``: the conversations this
  server opened, with what was asked in them.
* ``GET /v2/messages`` ("Messages of a conversation"): ``conversation_id``, ``page``,
  ``page_size`` (at most 100) -> ``{total, conversation_content: [{message_id,
  parent_message_id, create_time (ms), role, content: [{from_component_branch?,
  branch_content: [{type, text | audio}]}]}]}``; 40356 for an unknown conversation, 40005 for
  a page beyond the data. A user message's ``from_component_branch`` is left out, as
  documented; assistant audio is ``{url, transcript}``.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ._errors import gptbots_body
from ._samples import Sample

__all__ = ["History", "vector_match"]

RERANKERS = ("BGE-Rerank", "Jina-reranker-v2-base-multilingual", "Jina-colbert-v2", "BCE-Rerank")
CONVERSATION_TYPES = (
    "ALL", "API", "EMBED", "WIDGET", "SHARE", "SPACE", "AI_SEARCH", "WHATSAPP_META", "TELEGRAM",
)  # fmt: skip
BOT_ID = "64b902a84f1ff25d1c60c10b"  # the documented example's
_WORD = re.compile(r"\w+", re.UNICODE)


def _bad(what: str) -> tuple[int, dict[str, Any]]:
    return 400, gptbots_body(40000, f"invalid parameter: {what}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def vector_match(samples: tuple[Sample, ...], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The status and body of ``POST /v1/vector/match`` over the samples' knowledge chunks."""
    prompt, top_k = body.get("prompt"), body.get("top_k")
    if not isinstance(prompt, str) or not prompt.strip():
        return _bad("prompt is required")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 50:
        return _bad("top_k must be an integer from 1 to 50")
    rate = body.get("embedding_rate", 1)
    if _number(rate) is None or not 0 <= float(rate) <= 1:
        return _bad("embedding_rate must be a number from 0 to 1")
    floor = body.get("doc_correlation")
    if floor is not None and (_number(floor) is None or not 0.1 <= float(floor) <= 0.95):
        return _bad("doc_correlation must be a number from 0.1 to 0.95")
    rerank = body.get("rerank_version")
    if rerank is not None and rerank not in RERANKERS:
        return _bad(f"rerank_version must be one of {', '.join(RERANKERS)}")
    ids: dict[str, set[str] | None] = {}
    for key in ("data_ids", "group_ids"):
        value = body.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            return _bad(f"{key} must be a list of ids")
        ids[key] = None if value is None else set(value)
    # Both lists given: their union is searched; null or absent: all; []: none. The samples'
    # chunks carry no knowledge-base id, so only data_ids can pick one.
    data_ids, group_ids = ids["data_ids"], ids["group_ids"]
    wanted = _words(prompt)
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for sample in samples:
        for chunk in (sample.correlate or {}).get("correlate_dataset") or []:
            if not isinstance(chunk, dict) or not isinstance(chunk.get("content"), str):
                continue
            data_id = str(chunk.get("data_id", ""))
            if (data_ids is not None or group_ids is not None) and data_id not in (
                (data_ids or set()) | (group_ids or set())
            ):
                continue
            once = (data_id, chunk["content"])
            if once in seen:
                continue
            seen.add(once)
            words = _words(chunk["content"]) | _words(str(chunk.get("data_name", "")))
            score = round(len(wanted & words) / max(len(wanted), 1), 4)
            if score <= 0 or (floor is not None and score < float(floor)):
                continue
            found.append(
                {
                    "content": chunk["content"],
                    "data_id": data_id,
                    "document_name": chunk.get("data_name"),
                    "score": score,
                }
            )
    found.sort(key=lambda item: -item["score"])
    return 200, {"total": min(len(found), top_k), "list": found[:top_k]}


@dataclass
class _Turn:
    question: str
    sample: Sample
    output: list[Any]  # the reply's output[] as it was sent (corner citations or not)
    millis: int


@dataclass
class _Conversation:
    user_id: str
    turns: list[_Turn] = field(default_factory=list)
    created: int = field(default_factory=lambda: int(time.time() * 1000))


class History:
    """What was asked in the conversations the server opened, for the two history endpoints."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conversations: dict[str, _Conversation] = {}

    def opened(self, conversation_id: str, user_id: str) -> None:
        with self._lock:
            self._conversations[conversation_id] = _Conversation(user_id)

    def owner(self, conversation_id: str) -> str | None:
        with self._lock:
            found = self._conversations.get(conversation_id)
        return None if found is None else found.user_id

    def asked(self, conversation_id: str, question: str, sample: Sample, output: list[Any]) -> None:
        with self._lock:
            found = self._conversations.get(conversation_id)
            if found is not None:
                found.turns.append(_Turn(question, sample, output, int(time.time() * 1000)))

    def page(self, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """``GET /v1/bot/conversation/page``."""
        kind = query.get("conversation_type")
        if kind not in CONVERSATION_TYPES:
            return _bad(f"conversation_type must be one of {', '.join(CONVERSATION_TYPES)}")
        window = [_digits(query.get(k)) for k in ("start_time", "end_time")]
        start, end = window
        if start is None or end is None:
            return _bad("start_time and end_time are required, in milliseconds")
        page, size = _digits(query.get("page", "1")), _digits(query.get("page_size", "10"))
        if page is None or page < 1 or size is None or not 1 <= size <= 100:
            return _bad("page is from 1, page_size from 1 to 100")
        user = query.get("user_id")
        rows: list[dict[str, Any]] = []
        with self._lock:
            items = list(self._conversations.items())
        for cid, conv in items:
            if not conv.turns or (user and conv.user_id != user):
                continue
            recent = conv.turns[-1].millis
            if not start <= recent <= end or kind not in ("ALL", "API"):
                continue
            rows.append(
                {
                    "conversation_id": cid,
                    "user_id": conv.user_id,
                    "recent_chat_time": recent,
                    "subject": conv.turns[0].question[:50],
                    "conversation_type": "API",
                    "message_count": 2 * len(conv.turns),
                    "cost_credit": round(sum(_credits(t.sample) for t in conv.turns), 4),
                    "bot_id": BOT_ID,
                }
            )
        rows.sort(key=lambda r: -r["recent_chat_time"])
        return 200, {"list": rows[(page - 1) * size : page * size], "total": len(rows)}

    def messages(self, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """``GET /v2/messages``."""
        cid = query.get("conversation_id", "")
        page, size = _digits(query.get("page", "1")), _digits(query.get("page_size", "20"))
        if page is None or page < 1 or size is None or not 1 <= size <= 100:
            return _bad("page is from 1, page_size from 1 to 100")
        with self._lock:
            conv = self._conversations.get(cid)
            turns = list(conv.turns) if conv is not None else []
        if conv is None:
            return 400, gptbots_body(40356)
        rows: list[dict[str, Any]] = []
        for turn in turns:
            reply = turn.sample.response
            answer_id = str(reply.get("message_id", ""))
            question_id = f"{answer_id[:-1]}q" if answer_id else ""
            rows.append(
                {
                    "message_id": question_id,
                    "parent_message_id": rows[-1]["message_id"] if rows else None,
                    "create_time": turn.millis,
                    "role": "user",
                    "content": [{"branch_content": [{"type": "text", "text": turn.question}]}],
                }
            )
            rows.append(
                {
                    "message_id": answer_id,
                    "parent_message_id": question_id,
                    "create_time": turn.millis + 1,
                    "role": "assistant",
                    "content": [_branch(item) for item in turn.output],
                }
            )
        if rows and (page - 1) * size >= len(rows):
            return 400, gptbots_body(40005, "page beyond the data")
        return 200, {"total": len(rows), "conversation_content": rows[(page - 1) * size :][:size]}


def _branch(item: Any) -> dict[str, Any]:
    """A blocking reply's ``output[]`` item as a message's ``content[]`` item."""
    item = item if isinstance(item, dict) else {}
    content = item.get("content") if isinstance(item.get("content"), dict) else {}
    parts: list[dict[str, Any]] = []
    if content.get("text"):
        parts.append({"type": "text", "text": content["text"]})
    for clip in content.get("audio") or []:
        if isinstance(clip, dict):
            audio = {"url": clip.get("audio"), "transcript": clip.get("transcript", "")}
            parts.append({"type": "audio", "audio": audio})
    return {"from_component_branch": item.get("from_component_branch"), "branch_content": parts}


def _credits(sample: Sample) -> float:
    usage = sample.response.get("usage")
    credits = usage.get("credits") if isinstance(usage, dict) else None
    total = credits.get("total_credits") if isinstance(credits, dict) else None
    return float(total) if isinstance(total, int | float) else 0.0


def _digits(value: str | None) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() else None
