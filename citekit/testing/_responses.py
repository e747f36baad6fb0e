"""Maritaca's Responses API (``POST /api/v1/responses``, and ``/api/responses`` where the openai
SDK goes with the documented ``base_url=".../api"``), answered from the chat samples.

Every rule here is the one ``shared/reference/providers.md`` gives under "Maritaca AI:
Responses API" (from Maritaca's ``api/en/responses-api.md``, ``responses-api-response.md``,
``docs/en/tools.md``, ``docs/en/structured_outputs.md``):

- the request needs ``model`` and ``input`` (a string or an array of items); ``metadata`` holds
  at most 16 pairs (keys up to 64, values up to 512 characters); built-in tools come
  as ``tools`` entries (``web_search``, ``code_interpreter``, ``data_ocean``) or as the Chat
  booleans, and "a streaming request that enables a tool returns a 400";
- the reply is a ``response`` object (``id`` "resp-...", ``created_at`` in seconds, ``status``,
  ``output[]``, ``usage`` with ``input_tokens`` / ``output_tokens`` / ``total_tokens``, their
  details and ``tool_execution_details`` when a tool ran, ``error``, ``incomplete_details``
  ``{reason: "max_output_tokens"}`` for a cut reply, the request's settings echoed);
- ``output[]`` holds ``code_execution_artifact`` items BEFORE the message (as the documented
  example does), then the ``message`` (``output_text`` parts with ``annotations: []``), then
  one ``function_call`` item per call (``id`` "fc-...", its ``call_id``);
- a stream is SSE frames of two lines (``event:`` then ``data:``), every event with ``type``
  and ``sequence_number`` numbered from 1, in the documented order: ``response.created``,
  ``response.in_progress``, then per item ``response.output_item.added``, (for a message)
  ``response.content_part.added``, ``response.output_text.delta``..., ``response.output_text.done``,
  ``response.content_part.done``, then ``response.output_item.done``; last
  ``response.completed``, or ``response.failed`` on error; no ``data: [DONE]``;
- structured output (``text.format`` ``json_schema`` / ``json_object``) works blocking and
  streamed: the reply's text is then a JSON value valid for the schema, built from the sample;
- a failed response has ``status: "failed"`` and ``error: {code: "server_error", message}``
  (the ``"failed"`` fault sends one, with half of the text).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ._sse import Segment, cycle_pieces, pieces_of

__all__ = ["as_response", "responses_problem", "responses_stream", "structured_text"]

#: tools entry type -> the Chat Completions switch it enables (docs/en/tools.md).
BUILT_IN = {
    "web_search": "web_search",
    "code_interpreter": "code_execution",
    "data_ocean": "data_ocean",
}


def tools_on(body: dict[str, Any]) -> frozenset[str]:
    """The Chat switches a Responses body turns on, by ``tools`` entry or by boolean."""
    on = {name for name in BUILT_IN.values() if body.get(name) is True}
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and tool.get("type") in BUILT_IN:
            on.add(BUILT_IN[tool["type"]])
    return frozenset(on)


def responses_problem(body: dict[str, Any]) -> str | None:
    """What makes ``body`` a 400, or None."""
    if not body.get("model"):
        return "'model' is required"
    given = body.get("input")
    if not (isinstance(given, str) and given.strip()) and not (isinstance(given, list) and given):
        return "'input' must be a non-empty string or a non-empty array of items"
    if body.get("stream") is True and tools_on(body):
        return "built-in tools require 'stream': false"
    metadata = body.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict)
        or len(metadata) > 16
        or any(len(str(k)) > 64 or len(str(v)) > 512 for k, v in metadata.items())
    ):
        return "'metadata' holds at most 16 pairs, keys up to 64 and values up to 512 characters"
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    named = isinstance(fmt, dict) and fmt.get("name") and isinstance(fmt.get("schema"), dict)
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and not named:
        return "text.format needs 'name' and 'schema' for json_schema"
    return None


def question_of(body: dict[str, Any]) -> str:
    """The text of the last user input (a string input is one)."""
    given = body.get("input")
    if isinstance(given, str):
        return given
    for item in reversed(given if isinstance(given, list) else []):
        if isinstance(item, dict) and item.get("role", "user") == "user" and "content" in item:
            content = item["content"]
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    str(p.get("text", "")) for p in content if isinstance(p, dict)
                ).strip()
    return ""


# -- structured output ------------------------------------------------------------------------
def _instance(schema: Any, root: dict[str, Any], text: str, depth: int = 0) -> Any:
    """A value valid for ``schema`` (the documented subset), filled from the sample's text."""
    if not isinstance(schema, dict) or depth > 8:
        return text
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return _instance(target, root, text, depth + 1)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _instance(schema[key][0], root, text, depth + 1)
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {name: _instance(sub, root, text, depth + 1) for name, sub in props.items()}
    if kind == "array":
        return [_instance(schema.get("items"), root, text, depth + 1)]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return text


def structured_text(fmt: Any, text: str) -> str | None:
    """The reply's text for a requested format: JSON for ``json_schema`` / ``json_object``."""
    if not isinstance(fmt, dict):
        return None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]
    if fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        if not isinstance(schema, dict):
            inner = fmt.get("json_schema")
            schema = inner.get("schema") if isinstance(inner, dict) else None
        if isinstance(schema, dict):
            return json.dumps(_instance(schema, schema, first), ensure_ascii=False)
    if fmt.get("type") == "json_object":
        return json.dumps({"answer": first}, ensure_ascii=False)
    return None


# -- the response object ----------------------------------------------------------------------
def as_response(
    chat: dict[str, Any], body: dict[str, Any], label: str, *, text: str, failed: bool = False
) -> dict[str, Any]:
    """The ``response`` object a chat sample's completion becomes."""
    choice = (chat.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    rid = str(chat.get("id") or "sample").replace("chatcmpl-", "")
    output: list[dict[str, Any]] = []
    for i, f in enumerate(chat.get("generated_files") or []):
        output.append(
            {"type": "code_execution_artifact", "id": f"cea_{rid}_{i}", "status": "completed", **f}
        )
    if failed:
        text = text[: len(text) // 2]
    if text or not message.get("tool_calls"):
        output.append(
            {
                "id": f"msg_{rid}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for i, call in enumerate([] if failed else message.get("tool_calls") or []):
        fn = call.get("function") or {}
        output.append(
            {
                "id": f"fc-{rid}-{i}",
                "type": "function_call",
                "name": fn.get("name"),
                "arguments": fn.get("arguments") or "",
                "call_id": call.get("id"),
                "status": "completed",
            }
        )
    usage = chat.get("usage") or {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    response_usage: dict[str, Any] = {
        "input_tokens": usage.get("prompt_tokens", 0),
        "output_tokens": usage.get("completion_tokens", 0),
        "total_tokens": usage.get("total_tokens", 0),
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    if "tool_execution_details" in usage:
        response_usage["tool_execution_details"] = usage["tool_execution_details"]
    cut = choice.get("finish_reason") == "length"
    return {
        "id": f"resp-{rid}",
        "object": "response",
        "created_at": chat.get("created", 0),
        "status": "failed" if failed else "completed",
        "model": body.get("model") or chat.get("model"),
        "output": output,
        "usage": response_usage,
        "error": {"code": "server_error", "message": "The model stopped with an internal error"}
        if failed
        else None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut and not failed else None,
        "instructions": body.get("instructions"),
        "temperature": body.get("temperature", 0.7),
        "top_p": body.get("top_p", 0.95),
        "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") or {},
        "tools": copy.deepcopy(body.get("tools") or []),
        "tool_choice": body.get("tool_choice", "auto"),
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "store": body.get("store", False),
        "text": copy.deepcopy(body.get("text") or {"format": {"type": "text"}}),
        "citekit_sample": label,
    }


def _frame(event: dict[str, Any]) -> Segment:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return Segment(f"event: {event['type']}\ndata: {data}\n\n".encode(), data)


def responses_stream(response: dict[str, Any], chunks: int | None = None) -> list[Segment]:
    """The documented event sequence of ``response``, numbered from 1."""
    events: list[dict[str, Any]] = []

    def add(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events) + 1, **fields})

    start = {**response, "status": "in_progress", "output": [], "usage": None, "error": None}
    start["incomplete_details"] = None
    add("response.created", response=start)
    add("response.in_progress", response=start)
    for index, item in enumerate(response["output"]):
        if item.get("type") != "message":
            add(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress"},
            )
            add("response.output_item.done", output_index=index, item=item)
            continue
        part = item["content"][0]
        ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
        add(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "content": []},
        )
        add("response.content_part.added", **ids, part={**part, "text": ""})
        pieces = pieces_of(part["text"]) if part["text"] else []
        if chunks and pieces:
            pieces = list(cycle_pieces(pieces, chunks))
            part = {**part, "text": "".join(pieces)}
            item = {**item, "content": [part]}
            response = {
                **response,
                "output": [*response["output"][:index], item, *response["output"][index + 1 :]],
            }
        for piece in pieces:
            add("response.output_text.delta", **ids, delta=piece)
        add("response.output_text.done", **ids, text=part["text"])
        add("response.content_part.done", **ids, part=part)
        add("response.output_item.done", output_index=index, item=item)
    last = "response.failed" if response.get("status") == "failed" else "response.completed"
    add(last, response=response)
    return [_frame(event) for event in events]
