"""Maritaca's Responses API (``POST /api/v1/responses``), without I/O.

``responses_body`` turns a checked chat-completions body into the Responses form (the system
message as ``instructions``, ``max_tokens`` as ``max_output_tokens``, chat-style tools flat,
built-in tool switches as ``tools`` entries, tool turns as ``function_call`` /
``function_call_output`` items); ``parse_responses`` reads a ``response`` object into an
``Answer``; ``ResponsesAccumulator`` reads the ``response.*`` stream events into the same one.

What the answer is made of (providers.md, "Maritaca AI: Responses API"):

- the text: the ``output_text`` parts of the ``message`` items, found by ``type`` (the
  documented example puts a ``code_execution_artifact`` before the message);
- ``function_call`` items: ``ToolCall``s whose ``id`` is the ``call_id`` (what a later
  ``function_call_output`` answers);
- ``code_execution_artifact`` items: ``GeneratedFile``s;
- annotations: the sources, when there are any (else the text's links, as on Chat Completions);
- ``usage``: ``input_tokens`` / ``output_tokens`` as prompt / completion tokens, cached input
  tokens, and what the built-in tools did (``tool_execution_details``);
- ``incomplete_details``: ``finish_reason="length"``; ``status: "failed"``: its ``error`` as a
  note (the call raises ``ProviderError`` carrying the answer; :func:`failure`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import ProviderError, ResponseFormatError
from ..core.fields import Fields, count_or_none, parse_created, text_or_none, wrong
from ..model import (
    Answer,
    Choice,
    GeneratedFile,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from ..model.answer import tool_usage
from .flow import Flow, RequestSpec, fetch_json, stream_answer
from .maritaca import sources
from .response import Wire

__all__ = [
    "RESPONSES_PATH",
    "ResponsesAccumulator",
    "failure",
    "is_response",
    "parse_responses",
    "responses_body",
    "responses_flow",
    "text_format",
]

#: The documented path, under the base URL ``.../api``.
RESPONSES_PATH = "/v1/responses"

#: Chat's built-in tool switches and their ``tools`` entries on the Responses API.
_BUILT_IN = {
    "web_search": "web_search",
    "code_execution": "code_interpreter",
    "data_ocean": "data_ocean",
}
#: Chat-completions parameters the Responses API does not document (``service_tier`` is
#: listed as not documented on this endpoint).
_CHAT_ONLY = ("n", "frequency_penalty", "presence_penalty", "stream_options", "service_tier")


# -- the request ----------------------------------------------------------------------------
def _input_items(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    system: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "system" and isinstance(content, str) and not items:
            system.append(content)
        elif role == "tool":
            output = content if isinstance(content, str) else str(content)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": output,
                }
            )
        else:
            if content:
                items.append({"role": role, "content": content})
            for call in message.get("tool_calls") or ():
                fn = call.get("function") if isinstance(call, Mapping) else None
                fn = fn if isinstance(fn, Mapping) else {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.get("id"),
                        "name": fn.get("name"),
                        "arguments": fn.get("arguments") or "",
                    }
                )
    return ("\n\n".join(system) or None), items


def responses_body(chat: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses body for a checked chat-completions ``chat`` body.

    A chat-only parameter (``n``, the penalties, ``stream_options``, ``service_tier``) is a
    ``ValueError``: the Responses API does not document it.
    """
    chat = dict(chat)
    given = [name for name in _CHAT_ONLY if name in chat]
    if given:
        raise ValueError(
            f"Maritaca's Responses API does not take {', '.join(given)}: "
            "leave it out, or call with api='chat'"
        )
    instructions, items = _input_items(chat.pop("messages"))
    # One question is sent as the documented examples send it: ``input`` a string.
    alone = len(items) == 1 and items[0].get("role") == "user"
    one = items[0]["content"] if alone and isinstance(items[0]["content"], str) else None
    body: dict[str, Any] = {"model": chat.pop("model"), "input": items if one is None else one}
    if instructions is not None:
        body["instructions"] = instructions
    if "max_tokens" in chat:
        body["max_output_tokens"] = chat.pop("max_tokens")
    tools = [{"type": "function", **dict(t["function"])} for t in chat.pop("tools", None) or ()]
    for switch, kind in _BUILT_IN.items():
        if chat.pop(switch, None) is True:
            tools.append({"type": kind})
    if tools:
        body["tools"] = tools
    choice = chat.pop("tool_choice", None)
    if isinstance(choice, Mapping):
        choice = {"type": "function", "name": choice["function"]["name"]}
    if choice is not None:
        body["tool_choice"] = choice
    response_format = chat.pop("response_format", None)
    if response_format is not None and "text" not in chat:
        body["text"] = {"format": text_format(response_format)}
    body.update(chat)
    return body


def text_format(response_format: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions ``response_format`` as the Responses ``text.format``."""
    inner = response_format.get("json_schema")
    if response_format.get("type") == "json_schema" and isinstance(inner, Mapping):
        return {"type": "json_schema", **dict(inner)}
    return dict(response_format)


# -- the response ---------------------------------------------------------------------------
def is_response(data: Any) -> bool:
    """Whether ``data`` is a Responses API object rather than a chat completion."""
    return (
        isinstance(data, Mapping)
        and "choices" not in data
        and (data.get("object") == "response" or "output" in data)
    )


def _usage(data: Any) -> Usage | None:
    """``usage`` in the chat vocabulary: input / output tokens as prompt / completion tokens."""
    if not isinstance(data, Mapping):
        return None
    details = data.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return Usage(
        prompt_tokens=count_or_none(data.get("input_tokens")),
        completion_tokens=count_or_none(data.get("output_tokens")),
        total_tokens=count_or_none(data.get("total_tokens")),
        cached_tokens=count_or_none(cached),
        tools=tool_usage(data.get("tool_execution_details")),
        raw=dict(data),
    )


class _Output:
    """What the ``output[]`` items say, read in order."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.texts: list[str] = []
        self.annotations: list[Any] = []
        self.calls: list[ToolCall] = []
        self.files: list[GeneratedFile] = []

    def read(self, items: list[Fields]) -> None:
        for item in items:
            kind = item.string("type")
            if kind == "message" or (kind is None and "content" in item.data):
                self._message(item)
            elif kind == "function_call":
                self.calls.append(
                    ToolCall(
                        id=item.string("call_id") or item.string("id"),
                        name=item.string("name") or "",
                        arguments=item.string("arguments") or "",
                        index=len(self.calls),
                    )
                )
            elif kind == "code_execution_artifact":
                self.files.append(GeneratedFile.from_dict(item.data, position=len(self.files)))

    def _message(self, item: Fields) -> None:
        content = item.data.get("content")
        if isinstance(content, str):
            self.texts.append(content)
            return
        for part in item.objects("content"):
            if part.string("type") in ("output_text", "text", None):
                self.texts.append(part.string("text") or "")
                notes = part.data.get("annotations")
                if isinstance(notes, list):
                    self.annotations.extend(notes)


def _finish(data: Mapping[str, Any], calls: list[ToolCall]) -> str | None:
    if data.get("incomplete_details"):
        return "length"
    status = data.get("status")
    if status == "failed":
        return "error"
    if status == "in_progress":
        return None
    return "tool_calls" if calls else "stop"


def _error_note(data: Mapping[str, Any]) -> str | None:
    if data.get("status") != "failed":
        return None
    error = data.get("error")
    said = error.get("message") if isinstance(error, Mapping) else error
    code = error.get("code") if isinstance(error, Mapping) else None
    return (
        f"Maritaca reported the response as failed ({text_or_none(code) or 'no code'}): "
        f"{text_or_none(said) or 'no message'}"
    )


def _answer(
    data: Mapping[str, Any],
    out: _Output,
    *,
    provider: str,
    question: str | None,
    partial: bool = False,
) -> Answer:
    body = Fields(data, provider)
    text = "".join(out.texts)
    finish = None if partial and data.get("status") != "failed" else _finish(data, out.calls)
    files = tuple(out.files)
    notes = tuple(n for n in (_error_note(data),) if n) + tuple(f.note for f in files if f.note)
    if finish == "length":
        notes += ("Cut short: the reply reached max_output_tokens (incomplete_details).",)
    if partial:
        notes += ("Incomplete: the stream was interrupted before the provider finished.",)
    calls = tuple(out.calls)
    return Answer(
        provider=provider,
        text=text,
        model=body.string("model"),
        id=body.string("id", numbers=True),
        created=parse_created(data.get("created_at")),
        finish_reason=finish,
        citations=sources(text, {"annotations": out.annotations}),
        usage=_usage(data.get("usage")),
        tool_calls=calls,
        choices=(Choice(index=0, text=text, finish_reason=finish, tool_calls=calls),),
        question=question,
        files=files,
        notes=notes,
        partial=partial,
        raw=dict(data),
    )


def parse_responses(
    data: Any, *, provider: str = "maritaca", question: str | None = None
) -> Answer:
    """An ``Answer`` from a Responses API ``response`` object (unknown fields kept in ``raw``).

    A field the answer is made of of the wrong type raises ``ResponseFormatError`` naming its
    path (``output[0].content[0].text``).
    """
    body = Fields(data, provider)
    if not isinstance(body.data.get("output"), list):
        raise ResponseFormatError(f"{provider} sent a response without an 'output' list")
    out = _Output(provider)
    out.read(body.objects("output"))
    _check_top(body)
    return _answer(body.data, out, provider=provider, question=question)


def _check_top(body: Fields) -> None:
    """The top-level fields the answer is made of, checked (raises naming the field)."""
    body.string("model")
    body.string("id", numbers=True)
    body.string("status")
    body.object("usage")


def failure(answer: Answer) -> ProviderError | None:
    """The error a failed response (``status: "failed"``) is raised as, carrying ``answer``."""
    if answer.finish_reason != "error" or answer.raw.get("status") != "failed":
        return None
    error = answer.raw.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    said = error.get("message") if isinstance(error, Mapping) else None
    err = ProviderError(
        text_or_none(said) or "the response failed",
        provider=answer.provider,
        status=200,
        code=text_or_none(code),
        hint="the partial answer is in .answer; ask again",
    )
    err.answer = answer
    return err


class ResponsesAccumulator:
    """Assembles the ``response.*`` events; ``feed`` returns the text deltas of one event.

    The response object of ``response.completed`` / ``response.failed`` (or, while streaming,
    the items of ``response.output_item.done`` and the deltas) make the answer; its ``raw`` is
    a ``response`` object, so ``parse_response(answer.raw)`` gives the answer back.
    """

    __slots__ = ("_deltas", "_final", "_items", "_response", "provider", "question")

    def __init__(self, *, provider: str = "maritaca", question: str | None = None) -> None:
        self.provider = provider
        self.question = question
        self._response: dict[str, Any] = {}
        self._items: dict[int, dict[str, Any]] = {}
        self._deltas: dict[int, list[str]] = {}
        self._final: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self._final is not None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        if not isinstance(chunk, Mapping):
            raise wrong(self.provider, "a stream event", chunk, "an object")
        event = Fields(chunk, self.provider)
        kind = event.string("type")
        if kind in ("response.created", "response.in_progress"):
            response = event.object("response")
            if response is not None:
                _check_top(response)  # checked before it is kept
                self._response.update(response.data)
            return []
        if kind in ("response.completed", "response.failed", "response.incomplete"):
            response = event.object("response") or Fields({}, self.provider, "response")
            final = {**self._response, **response.data}
            if not isinstance(final.get("output"), list):
                final["output"] = self._output()
            parse_responses(final, provider=self.provider)  # checked before it is kept
            self._final = final
            return []
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            index = event.integer("output_index")
            item = event.object("item")
            if item is None:
                return []
            read = _Output(self.provider)
            read.read([item])  # checked before it is kept
            at = len(self._items) if index is None else index
            first_done = (
                kind.endswith(".done") and self._items.get(at, {}).get("status") != "completed"
            )
            self._items[at] = dict(item.data)
            if not (first_done and read.calls):
                return []
            # No argument deltas are documented: a function call arrives whole, when done.
            done = sum(
                1
                for i, other in self._items.items()
                if i < at and other.get("type") == "function_call"
            )
            (call,) = read.calls
            return [ToolCallDelta(index=done, arguments=call.arguments, id=call.id, name=call.name)]
        if kind == "response.output_text.delta":
            delta = event.data.get("delta")
            if not isinstance(delta, str):
                raise event.wrong("delta", delta, "a string")
            index = event.integer("output_index") or 0
            self._deltas.setdefault(index, []).append(delta)
            return [TextDelta(delta, 0)] if delta else []
        if kind == "error":
            said = text_or_none(event.data.get("message")) or "no message"
            raise ResponseFormatError(f"{self.provider} reported an error mid-stream: {said}")
        return []  # content_part.*, output_text.done and events not documented

    def _output(self) -> list[dict[str, Any]]:
        """The output items as far as the events went: deltas fill a message not done yet."""
        out = []
        for index in sorted(set(self._items) | set(self._deltas)):
            item = dict(self._items.get(index) or {"type": "message", "role": "assistant"})
            if (
                index in self._deltas
                and item.get("type") == "message"
                and item.get("status") != "completed"
            ):
                text = "".join(self._deltas[index])
                item["content"] = [{"type": "output_text", "text": text, "annotations": []}]
            out.append(item)
        return out

    def answer(self, *, partial: bool = False) -> Answer:
        if self._final is not None and not partial:
            return parse_responses(self._final, provider=self.provider, question=self.question)
        data = dict(self._final or self._response)
        data.setdefault("object", "response")
        data["output"] = self._output()
        body = Fields(data, self.provider)
        out = _Output(self.provider)
        out.read(body.objects("output"))
        return _answer(data, out, provider=self.provider, question=self.question, partial=partial)


def responses_flow(wire: Wire, spec: RequestSpec, *, question: str | None = None) -> Flow[Answer]:
    """One Responses API call, blocking or streamed as ``spec`` says; a failed response raises
    ``ProviderError`` with the answer in ``.answer``."""
    if spec.stream:
        acc = ResponsesAccumulator(provider=wire.provider, question=question)
        unfinished = "the stream ended before response.completed"
        answer = yield from stream_answer(wire, spec, acc, unfinished=unfinished)
    else:
        data: Any = yield from fetch_json(wire, spec)
        answer = parse_responses(data, provider=wire.provider, question=question)
    err = failure(answer)
    if err is not None:
        raise err
    return answer
