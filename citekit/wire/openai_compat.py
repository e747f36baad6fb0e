"""What Magisterium and Maritaca share: OpenAI-style chat completions, without I/O.

``parse_chat_completion`` reads a ``chat.completion`` body; ``ChatAccumulator`` assembles
``chat.completion.chunk`` events into the same ``Answer`` (tool-call fragments are merged the
way the OpenAI SDK's ``accumulate_delta`` merges them: strings concatenated, ``index`` and
``type`` replaced).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any

from ..core.errors import ResponseFormatError
from ..core.fields import MAX_INDEX, Fields, int_or_none, parse_created, text_or_none, wrong
from ..core.names import ENTRIES, WEB_SOURCE_PROVIDERS
from ..model import (
    Answer,
    Choice,
    Citation,
    GeneratedFile,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from ..text.think import ThinkSplitter, split_thoughts
from .flow import Flow, RequestSpec, fetch_json, stream_answer
from .maritaca import generated_files
from .maritaca import sources as maritaca_sources
from .response import Wire
from .typed import CHUNK_DECODER, PLAIN_DECODER, REFUSED, ChatChunk, PlainChunk

__all__ = [
    "SPECS",
    "ChatAccumulator",
    "ChatSpec",
    "chat_flow",
    "parse_chat_completion",
    "parse_citations",
]

_new_tuple = tuple.__new__
# A ``PlainChunk``'s text, read in C: ``chunk.choices[0].delta.content``.
_choices, _first, _content = attrgetter("choices"), itemgetter(0), attrgetter("delta.content")

_CONTENT_FILTER_NOTE = (
    "The provider's content filter withheld this answer (finish_reason 'content_filter'). "
    "Rephrase the question, or adjust safety_settings= where the provider allows it."
)


# -- parsing --------------------------------------------------------------------------------
def _content_text(content: Any, provider: str, path: str) -> str:
    """A message's text: a string, or an array of content parts (their ``text`` joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts; a part without text (an image) adds none
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    raise wrong(provider, path, content, "a string or an array of content parts")


def _tool_calls(message: Fields) -> tuple[ToolCall, ...]:
    calls = []
    for position, item in enumerate(message.objects("tool_calls")):
        fn = item.object("function") or Fields({}, item.provider, item.at("function"))
        index = item.integer("index")
        calls.append(
            ToolCall(
                id=item.string("id"),
                name=fn.string("name") or "",
                arguments=fn.string("arguments") or "",
                index=position if index is None else index,
                type=item.string("type") or "function",
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
    if provider in WEB_SOURCE_PROVIDERS and "citations" not in data:
        return maritaca_sources(text, message)
    return parse_citations(data.get("citations"))


def _notes(finish_reason: str | None, files: tuple[GeneratedFile, ...] = ()) -> tuple[str, ...]:
    notes = (_CONTENT_FILTER_NOTE,) if finish_reason == "content_filter" else ()
    return notes + tuple(f.note for f in files if f.note)


def parse_chat_completion(data: Any, *, provider: str, question: str | None = None) -> Answer:
    """An ``Answer`` from a ``chat.completion`` body (unknown fields kept in ``raw``).

    Every field read is type-checked (``citekit.core.fields``): one of the wrong type or range
    raises ``ResponseFormatError`` naming its path.
    """
    body = Fields(data, provider)
    if not isinstance(body.data.get("choices"), list):
        raise ResponseFormatError(f"{provider} sent a completion without a 'choices' list")
    choices = []
    thoughts: dict[int, tuple[str, ...]] = {}
    messages: dict[int, Mapping[str, Any]] = {}
    for position, item in enumerate(body.objects("choices")):
        message = item.object("message") or Fields({}, provider, item.at("message"))
        index = item.integer("index")
        index = position if index is None else index
        messages.setdefault(index, message.data)
        content = _content_text(message.data.get("content"), provider, message.at("content"))
        text, thoughts[index] = split_thoughts(content)  # <think> blocks: citekit.text.think
        choices.append(
            Choice(
                index=index,
                text=text,
                finish_reason=item.string("finish_reason"),
                tool_calls=_tool_calls(message),
                role=message.string("role") or "assistant",
            )
        )
    choices.sort(key=lambda c: c.index)
    first = choices[0] if choices else Choice(index=0, text="")
    files = generated_files(data.get("generated_files"))
    return Answer(
        provider=provider,
        text=first.text,
        model=body.string("model"),
        id=body.string("id", numbers=True),
        created=parse_created(data.get("created")),
        finish_reason=first.finish_reason,
        citations=_citations(provider, data, first.text, messages.get(first.index)),
        related_questions=_related(data.get("related_questions")),
        usage=Usage.from_dict(data.get("usage")),
        tool_calls=first.tool_calls,
        choices=tuple(choices),
        question=question,
        thoughts=thoughts.get(first.index, ()),
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
        "_header",
        "_parts",
        "_roles",
        "_think",
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
        # The last typed chunk's id, object, created and model, all four set: what it would
        # write over the kept ones (once, when ``_extra`` is read), not written per chunk.
        self._header: ChatChunk | PlainChunk | None = None
        self._annotations: dict[int, list[Any]] = {}
        # Per choice, what the live deltas show: the text without its <think> blocks.
        self._think: dict[int, ThinkSplitter] = {}

    @property
    def finished(self) -> bool:
        """True once every choice seen has reported its ``finish_reason``."""
        return bool(self._finish) and None not in self._finish.values()

    def feed_json(self, data: bytes) -> list[StreamEvent] | None:
        """``feed`` of the event whose JSON text is ``data``, decoded typed (``wire.typed``);
        None, with nothing read, when the event is not of the usual shape: the caller then
        decodes it with ``json`` and hands it to ``feed``, which gives the same for any event.
        """
        try:
            chunk = CHUNK_DECODER.decode(data)
        except REFUSED:
            return None
        extra = self._extra
        cid, obj, created, model = chunk.id, chunk.object, chunk.created, chunk.model
        # A field ``raw`` does not hold yet goes the general way: ``raw`` keeps the order the
        # fields first came in, which a Struct does not tell.
        if (
            (cid is not None and "id" not in extra)
            or (obj is not None and "object" not in extra)
            or (created is not None and "created" not in extra)
            or (model is not None and "model" not in extra)
            or (chunk.system_fingerprint is not None and "system_fingerprint" not in extra)
        ):
            return None
        choices = chunk.choices
        events: list[StreamEvent] = []
        if choices:
            if not all(0 <= item.index <= MAX_INDEX for item in choices):
                return None  # the general way says what is wrong with it
            for item in choices:
                delta = item.delta
                if delta is None:
                    self._take(item.index, None, None, item.finish_reason, events)
                else:
                    self._take(item.index, delta.content, delta.role, item.finish_reason, events)
        # The last non-null value wins, as ``feed`` keeps it; ``choices`` is not kept in ``raw``.
        if cid is not None and obj is not None and created is not None and model is not None:
            self._header = chunk  # the usual chunk: all four, written when they are read
        else:
            self._write_header()
            if cid is not None:
                extra["id"] = cid
            if obj is not None:
                extra["object"] = obj
            if created is not None:
                extra["created"] = created
            if model is not None:
                extra["model"] = model
        if chunk.system_fingerprint is not None:
            extra["system_fingerprint"] = chunk.system_fingerprint
        return events

    def feed_plain(self, datas: list[bytes]) -> list[StreamEvent] | None:
        """``feed_json`` of each of ``datas`` (the events of one read) at once, when every one
        is a ``PlainChunk`` (``wire.typed``) and ``raw`` holds their fields already; None, with
        nothing read, otherwise (the caller then reads them one by one)."""
        extra = self._extra
        if not ("id" in extra and "object" in extra and "created" in extra and "model" in extra):
            return None
        try:
            chunks = list(map(PLAIN_DECODER.decode, datas))
        except REFUSED:
            return None
        texts = list(map(_content, map(_first, map(_choices, chunks))))
        parts = self._parts.get(0)
        if parts is None:
            parts = self._parts[0] = []
        parts += texts
        splitter = self._think.get(0)
        if splitter is None:
            splitter = self._think[0] = ThinkSplitter()
        if 0 not in self._finish:
            self._finish[0] = None
        self._header = chunks[-1]
        shown = filter(None, splitter.feed_all(texts))
        # ``TextDelta(text, 0)`` for each text shown, made in C.
        return list(map(_new_tuple, repeat(TextDelta), zip(shown, repeat(0))))

    def _write_header(self) -> None:
        """Write the last typed chunk's four fields into ``_extra`` (before it is read or
        written otherwise)."""
        chunk = self._header
        if chunk is not None:
            self._header = None
            extra = self._extra
            extra["id"], extra["object"] = chunk.id, chunk.object
            extra["created"], extra["model"] = chunk.created, chunk.model

    def _take(
        self,
        index: int,
        text: str | None,
        role: str | None,
        reason: str | None,
        events: list[StreamEvent],
        calls: list[StreamEvent] | None = None,
    ) -> None:
        """Keep one choice's checked fields of a chunk, adding to ``events`` what it shows:
        ``feed`` and ``feed_json`` read a choice through this alone."""
        if text:
            parts = self._parts.get(index)
            if parts is None:
                parts = self._parts[index] = []
            parts.append(text)
            splitter = self._think.get(index)
            if splitter is None:
                splitter = self._think[index] = ThinkSplitter()
            shown = splitter.feed(text)
            if shown:  # ``TextDelta(shown, index)``, without its Python __new__
                events.append(_new_tuple(TextDelta, (shown, index)))
        if role:
            self._roles[index] = role
        if calls:
            events.extend(calls)
        if reason is not None:
            self._finish[index] = reason
            held = self._think.get(index)
            rest = held.flush() if held is not None else ""
            if rest:  # a held-back "<" that was no tag after all
                events.append(TextDelta(rest, index))
        elif index not in self._finish:
            self._finish[index] = None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        # Every value kept is type-checked before it is kept (``citekit.core.fields``): a
        # wrong one raises with nothing of it stored, so the partial answer stays readable.
        if self._header is not None:
            self._write_header()
        if type(chunk) is not dict:
            if not isinstance(chunk, Mapping):
                raise wrong(self.provider, "a stream event", chunk, "an object")
            chunk = dict(chunk)
        events: list[StreamEvent] = []
        model, cid = chunk.get("model"), chunk.get("id")
        if model is not None and type(model) is not str:
            raise wrong(self.provider, "model", model, "a string")
        if cid is not None and type(cid) is not str and text_or_none(cid, numbers=True) is None:
            raise wrong(self.provider, "id", cid, "a string")
        choices = chunk.get("choices")
        if choices:
            if type(choices) is not list:
                raise wrong(self.provider, "choices", choices, "an array")
            for position, item in enumerate(choices):
                if type(item) is not dict:
                    raise wrong(self.provider, f"choices[{position}]", item, "an object")
                index = item.get("index", 0)
                if type(index) is not int or not 0 <= index <= MAX_INDEX:
                    index = self._index(index, position)
                reason = item.get("finish_reason")
                if reason is not None and type(reason) is not str:
                    path = f"choices[{position}].finish_reason"
                    raise wrong(self.provider, path, reason, "a string")
                text = role = calls = None
                delta = item.get("delta")
                if delta:
                    if type(delta) is not dict:
                        path = f"choices[{position}].delta"
                        raise wrong(self.provider, path, delta, "an object")
                    text = delta.get("content")
                    if text and type(text) is not str:
                        path = f"choices[{position}].delta.content"
                        text = _content_text(text, self.provider, path)  # content parts
                    if not text or len(delta) > 1:
                        role = delta.get("role")
                        if role is not None and type(role) is not str:
                            path = f"choices[{position}].delta.role"
                            raise wrong(self.provider, path, role, "a string")
                        calls = delta.get("tool_calls")
                        if calls:
                            calls = self._merge_tools(index, calls, position)
                        notes = delta.get("annotations")
                        if isinstance(notes, list):
                            self._annotations.setdefault(index, []).extend(notes)
                self._take(index, text, role, reason, events, calls)
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, Mapping) else error
            said = text_or_none(message) or "no message"
            raise ResponseFormatError(f"{self.provider} reported an error mid-stream: {said}")
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

    def _index(self, index: Any, position: int) -> int:
        """A choice's ``index`` that is not a plain integer: 0 when missing, else checked."""
        if index is None:
            return 0
        number = int_or_none(index)
        if number is None:
            path = f"choices[{position}].index"
            raise wrong(self.provider, path, index, f"an integer from 0 to {MAX_INDEX}")
        return number

    def _merge_tools(self, choice: int, calls: Any, position: int) -> list[StreamEvent]:
        """The deltas of a chunk's tool-call fragments, merged once all are checked."""
        path = f"choices[{position}].delta.tool_calls"
        if type(calls) is not list:
            raise wrong(self.provider, path, calls, "an array")
        checked = []
        for n, raw in enumerate(calls):
            fragment = Fields(raw, self.provider, f"{path}[{n}]")
            index = fragment.integer("index")
            if index is None:
                raise wrong(self.provider, fragment.at("index"), None, "an integer from 0")
            fn = fragment.object("function") or Fields({}, self.provider, fragment.at("function"))
            checked.append(
                (
                    index,
                    fragment.string("id"),
                    fragment.string("type"),
                    fn.string("name"),
                    fn.string("arguments"),
                )
            )
        acc = self._tools.setdefault(choice, {})
        events: list[StreamEvent] = []
        for index, call_id, kind, name, arguments in checked:
            entry = acc.get(index)
            if entry is None:
                entry = acc[index] = {"id": None, "type": None, "name": None, "arguments": None}
            for key, value in (("id", call_id), ("name", name), ("arguments", arguments)):
                if value is None:
                    continue
                entry[key] = value if entry[key] is None else entry[key] + value
            if kind is not None:
                entry["type"] = kind
            events.append(
                ToolCallDelta(
                    index=index, arguments=arguments or "", id=call_id, name=name, choice=choice
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
        self._write_header()
        indexes = sorted(set(self._parts) | set(self._finish) | set(self._tools))
        received = {i: "".join(self._parts.get(i, ())) for i in indexes}
        split = {i: split_thoughts(received[i]) for i in indexes}  # as the live deltas did
        choices = tuple(
            Choice(
                index=i,
                text=split[i][0],
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
                    "content": received[c.index],  # as it came, <think> blocks and all
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
            model=text_or_none(extra.get("model")),
            id=text_or_none(extra.get("id"), numbers=True),
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
            thoughts=split[first.index][1],
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


# -- the parsers of each provider that speaks chat completions ------------------------------
class ChatSpec:
    """The parsers of one provider whose answers are chat completions (``wire.parsers``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer:
        return parse_chat_completion(data, provider=self.name, question=question)

    def new_accumulator(self, *, question: str | None = None) -> ChatAccumulator:
        return ChatAccumulator(provider=self.name, question=question)


#: One ``ChatSpec`` per provider whose entry says it speaks chat completions.
SPECS = tuple(ChatSpec(entry.name) for entry in ENTRIES if entry.chat_completions)
