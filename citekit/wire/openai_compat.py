"""What Magisterium and Maritaca share: OpenAI-style chat completions, without I/O.

``parse_chat_completion`` reads a ``chat.completion`` body; ``ChatAccumulator`` assembles
``chat.completion.chunk`` events into the same ``Answer`` (tool-call fragments are merged the
way the OpenAI SDK's ``accumulate_delta`` merges them: strings concatenated, ``index`` and
``type`` replaced).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.errors import ResponseFormatError
from ..core.models import (
    Answer,
    Choice,
    Citation,
    GeneratedFile,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    parse_created,
)
from .flow import Flow, RequestSpec, fetch_json, stream_answer
from .maritaca import generated_files
from .maritaca import sources as maritaca_sources
from .response import Wire

__all__ = ["ChatAccumulator", "chat_flow", "parse_chat_completion", "parse_citations"]

_CONTENT_FILTER_NOTE = (
    "The provider's content filter withheld this answer (finish_reason 'content_filter'). "
    "Rephrase the question, or adjust safety_settings= where the provider allows it."
)


# -- parsing --------------------------------------------------------------------------------
def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    if not isinstance(raw, list):
        return ()
    calls = []
    for position, item in enumerate(raw):
        if not isinstance(item, Mapping):
            continue
        fn_raw = item.get("function")
        fn: Mapping[str, Any] = fn_raw if isinstance(fn_raw, Mapping) else {}
        args = fn.get("arguments", "")
        calls.append(
            ToolCall(
                id=item.get("id"),
                name=str(fn.get("name") or ""),
                arguments=args if isinstance(args, str) else json.dumps(args),
                index=int(item.get("index", position)),
                type=str(item.get("type") or "function"),
            )
        )
    return tuple(calls)


def parse_citations(raw: Any) -> tuple[Citation, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(
        Citation.from_dict(item, position=i)
        for i, item in enumerate(raw)
        if isinstance(item, Mapping)
    )


def _related(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(q for q in raw if isinstance(q, str) and q.strip())


def _citations(
    provider: str, data: Mapping[str, Any], text: str, message: Any
) -> tuple[Citation, ...]:
    # Maritaca sends no citation array: its sources are the answer's links (or annotations).
    if provider == "maritaca" and "citations" not in data:
        return maritaca_sources(text, message)
    return parse_citations(data.get("citations"))


def _notes(finish_reason: str | None, files: tuple[GeneratedFile, ...] = ()) -> tuple[str, ...]:
    notes = (_CONTENT_FILTER_NOTE,) if finish_reason == "content_filter" else ()
    return notes + tuple(f.note for f in files if f.note)


def parse_chat_completion(data: Any, *, provider: str, question: str | None = None) -> Answer:
    """An ``Answer`` from a ``chat.completion`` body (unknown fields kept in ``raw``)."""
    if not isinstance(data, Mapping):
        raise ResponseFormatError(f"{provider} sent {type(data).__name__}, not a JSON object")
    raw_choices = data.get("choices")
    if not isinstance(raw_choices, list):
        raise ResponseFormatError(f"{provider} sent a completion without a 'choices' list")
    choices = []
    messages: dict[int, Mapping[str, Any]] = {}
    for position, item in enumerate(raw_choices):
        if not isinstance(item, Mapping):
            continue
        message_raw = item.get("message")
        message: Mapping[str, Any] = message_raw if isinstance(message_raw, Mapping) else {}
        messages.setdefault(int(item.get("index", position)), message)
        choices.append(
            Choice(
                index=int(item.get("index", position)),
                text=_content_text(message.get("content")),
                finish_reason=item.get("finish_reason"),
                tool_calls=_tool_calls(message.get("tool_calls")),
                role=str(message.get("role") or "assistant"),
            )
        )
    choices.sort(key=lambda c: c.index)
    first = choices[0] if choices else Choice(index=0, text="")
    files = generated_files(data.get("generated_files"))
    return Answer(
        provider=provider,
        text=first.text,
        model=data.get("model"),
        id=data.get("id"),
        created=parse_created(data.get("created")),
        finish_reason=first.finish_reason,
        citations=_citations(provider, data, first.text, messages.get(first.index)),
        related_questions=_related(data.get("related_questions")),
        usage=Usage.from_dict(data.get("usage")),
        tool_calls=first.tool_calls,
        choices=tuple(choices),
        question=question,
        files=files,
        notes=_notes(first.finish_reason, files),
        raw=dict(data),
    )


class ChatAccumulator:
    """Assembles ``chat.completion.chunk`` events; ``feed`` returns the deltas of one chunk."""

    __slots__ = (
        "_annotations",
        "_extra",
        "_finish",
        "_parts",
        "_roles",
        "_tools",
        "provider",
        "question",
    )

    def __init__(self, *, provider: str, question: str | None = None) -> None:
        self.provider = provider
        self.question = question
        self._parts: dict[int, list[str]] = {0: []}
        self._finish: dict[int, str | None] = {}
        self._roles: dict[int, str] = {}
        self._tools: dict[int, dict[int, dict[str, Any]]] = {}
        self._extra: dict[str, Any] = {}
        self._annotations: dict[int, list[Any]] = {}

    @property
    def finished(self) -> bool:
        """True once every choice seen has reported its ``finish_reason``."""
        return bool(self._finish) and None not in self._finish.values()

    def feed(self, chunk: Any) -> list[StreamEvent]:
        # The hot path of every stream: one call per chunk, so plain dict operations only.
        if type(chunk) is not dict:
            if not isinstance(chunk, Mapping):
                raise ResponseFormatError(
                    f"{self.provider} sent a stream event that is not an object"
                )
            chunk = dict(chunk)
        events: list[StreamEvent] = []
        choices = chunk.get("choices")
        if choices:
            finish = self._finish
            for item in choices:
                if type(item) is not dict:
                    raise ResponseFormatError(f"{self.provider} sent a choice that is {item!r}")
                index = item.get("index", 0)
                delta = item.get("delta")
                if delta:
                    if type(delta) is not dict:
                        raise ResponseFormatError(f"{self.provider} sent a delta that is {delta!r}")
                    text = delta.get("content")
                    if text and type(text) is not str:
                        text = _content_text(text)  # a list of content parts
                    if text:
                        parts = self._parts.get(index)
                        if parts is None:
                            parts = self._parts[index] = []
                        parts.append(text)
                        events.append(TextDelta(text, index))
                    if not text or len(delta) > 1:
                        role = delta.get("role")
                        if role:
                            self._roles[index] = role
                        calls = delta.get("tool_calls")
                        if calls:
                            events.extend(self._merge_tools(index, calls))
                        notes = delta.get("annotations")
                        if isinstance(notes, list):
                            self._annotations.setdefault(index, []).extend(notes)
                reason = item.get("finish_reason")
                if reason is not None:
                    finish[index] = reason
                elif index not in finish:
                    finish[index] = None
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, Mapping) else error
            raise ResponseFormatError(f"{self.provider} reported an error mid-stream: {message}")
        # Every other top-level field is kept, the last non-null value winning: citations and
        # related_questions arrive on the last chunk only, usage on a usage-only chunk.
        extra = self._extra
        if None in chunk.values():
            for key, value in chunk.items():
                if value is not None:
                    extra[key] = value
        else:
            extra.update(chunk)
        return events

    def _merge_tools(self, choice: int, calls: list[Any]) -> list[StreamEvent]:
        acc = self._tools.setdefault(choice, {})
        events: list[StreamEvent] = []
        for fragment in calls:
            if not isinstance(fragment, Mapping) or fragment.get("index") is None:
                raise ResponseFormatError(
                    f"{self.provider} sent a tool-call fragment without an index: {fragment!r}"
                )
            index = int(fragment["index"])
            fn = fragment.get("function") or {}
            entry = acc.get(index)
            if entry is None:
                entry = acc[index] = {"id": None, "type": None, "name": None, "arguments": None}
            for key, value in (
                ("id", fragment.get("id")),
                ("name", fn.get("name")),
                ("arguments", fn.get("arguments")),
            ):
                if value is None:
                    continue
                entry[key] = value if entry[key] is None else entry[key] + value
            if fragment.get("type") is not None:
                entry["type"] = fragment["type"]
            events.append(
                ToolCallDelta(
                    index=index,
                    arguments=fn.get("arguments") or "",
                    id=fragment.get("id"),
                    name=fn.get("name"),
                    choice=choice,
                )
            )
        return events

    def _choice_tools(self, choice: int) -> tuple[ToolCall, ...]:
        calls = self._tools.get(choice, {})
        return tuple(
            ToolCall(
                id=e["id"],
                name=e["name"] or "",
                arguments=e["arguments"] or "",
                index=i,
                type=e["type"] or "function",
            )
            for i, e in sorted(calls.items())
        )

    def answer(self, *, partial: bool = False) -> Answer:
        """The answer so far (``partial`` when the stream did not reach its end)."""
        indexes = sorted(set(self._parts) | set(self._finish) | set(self._tools))
        choices = tuple(
            Choice(
                index=i,
                text="".join(self._parts.get(i, ())),
                finish_reason=self._finish.get(i),
                tool_calls=self._choice_tools(i),
                role=self._roles.get(i, "assistant"),
            )
            for i in indexes
        )
        first = choices[0]
        extra = self._extra
        raw = dict(extra)
        raw.pop("choices", None)
        raw["object"] = "chat.completion"
        raw["choices"] = [
            {
                "index": c.index,
                "message": {
                    "role": c.role,
                    "content": c.text,
                    **(
                        {"annotations": self._annotations[c.index]}
                        if self._annotations.get(c.index)
                        else {}
                    ),
                    **(
                        {
                            "tool_calls": [
                                {
                                    "id": t.id,
                                    "type": t.type,
                                    "function": {"name": t.name, "arguments": t.arguments},
                                }
                                for t in c.tool_calls
                            ]
                        }
                        if c.tool_calls
                        else {}
                    ),
                },
                "finish_reason": c.finish_reason,
            }
            for c in choices
        ]
        files = generated_files(extra.get("generated_files"))
        notes = _notes(first.finish_reason, files)
        if partial:
            notes += ("Incomplete: the stream was interrupted before the provider finished.",)
        return Answer(
            provider=self.provider,
            text=first.text,
            model=extra.get("model"),
            id=extra.get("id"),
            created=parse_created(extra.get("created")),
            finish_reason=first.finish_reason,
            citations=_citations(
                self.provider,
                extra,
                first.text,
                {"annotations": self._annotations.get(first.index)},
            ),
            related_questions=_related(extra.get("related_questions")),
            usage=Usage.from_dict(extra.get("usage")),
            tool_calls=first.tool_calls,
            choices=choices,
            question=self.question,
            files=files,
            notes=notes,
            partial=partial,
            raw=raw,
        )


def chat_flow(wire: Wire, spec: RequestSpec, *, question: str | None = None) -> Flow[Answer]:
    """One chat completion, blocking or streamed as ``spec`` says."""
    if spec.stream:
        acc = ChatAccumulator(provider=wire.provider, question=question)
        unfinished = "the stream ended before the provider's last chunk"
        return (yield from stream_answer(wire, spec, acc, unfinished=unfinished))
    data: Any = yield from fetch_json(wire, spec)
    return parse_chat_completion(data, provider=wire.provider, question=question)
