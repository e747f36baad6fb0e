"""GPTBots replies: the blocking ``/v2/conversation/message`` body and the stream's events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import ResponseFormatError
from ...core.fields import Fields, int_or_none, number_or_none, parse_created
from ...model import Answer, AudioClip, ComponentOutput, StreamEvent, TextDelta, Usage
from ...text.think import ThinkSplitter, split_thoughts
from ..typed import decode_text_event
from .citations import attachment_citations, parse_citations, stream_citations

__all__ = [
    "GPTBotsAccumulator",
    "component_output",
    "flow_outputs",
    "parse_message",
    "questions_of",
]

# Stream event codes.
END, TEXT, COST, FLOW_OUTPUT, MESSAGE_INFO, AUDIO = 0, 3, 4, 10, 11, 39
CITATION, CORRELATE_ATTACHMENT = 20, 83
TOOL_CALL, TOOL_RESPONSE, THOUGHT = 5, 6, 41


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None
    tokens_raw = raw.get("tokens")
    tokens: Mapping[str, Any] = tokens_raw if isinstance(tokens_raw, Mapping) else raw

    def pick(*names: str) -> int | None:
        for name in names:
            value = int_or_none(tokens.get(name), lo=0, hi=2**63 - 1)
            if value is not None:
                return value
        return None

    prompt = pick("prompt_tokens", "input_tokens", "prompt", "input")
    completion = pick("completion_tokens", "output_tokens", "completion", "output")
    total = pick("total_tokens", "total")
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    return Usage(prompt, completion, total, None, raw=dict(raw))


def _output_text(item: Any) -> str:
    """An output item's text; a voice agent's item has none, but its audio's transcripts."""
    if not isinstance(item, Mapping):
        return ""
    content = item.get("content")
    if isinstance(content, Mapping):
        text = content.get("text")
        if isinstance(text, str) and text:
            return text
        return "".join(_transcript(a) for a in _items(content.get("audio")))
    return content if isinstance(content, str) else ""


def component_output(item: Any) -> ComponentOutput | None:
    """A blocking reply's ``output[]`` item (or a FlowOutput item shaped as one by
    ``flow_outputs``) as a ``ComponentOutput``; None for anything that is not an object.

    Audio is ``content.audio``: ``[{audio: <url>, transcript}]`` in blocking replies, FlowOutput's
    ``audioDatas`` ``[{transcript, url, seconds}]`` in streams (providers.md, "Audio events").
    """
    if not isinstance(item, Mapping):
        return None
    content = item.get("content")
    body: Mapping[str, Any] = content if isinstance(content, Mapping) else {"text": content}
    clips = tuple(c for c in (_clip(a) for a in _items(body.get("audio"))) if c is not None)
    return ComponentOutput(
        name=_label(item.get("from_component_name")),
        branch=_label(item.get("from_component_branch")),
        content=_string(body.get("text")),
        audio=clips,
    )


def _clip(item: Any) -> AudioClip | None:
    if not isinstance(item, Mapping):
        return None
    url = item.get("url", item.get("audio"))
    return AudioClip(
        url=url if isinstance(url, str) and url else None,
        transcript=_string(item.get("transcript")),
        seconds=number_or_none(item.get("seconds")),
    )


def _label(value: Any) -> str | None:
    """A component's name or branch: a string (a number as its digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) and value else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _transcript(audio: Any) -> str:
    """The transcript of an Audio (39) event's data or of an output item's audio entry."""
    if not isinstance(audio, Mapping):
        return ""
    return _string(audio.get("transcript"))


def _thought(data: Any) -> str:
    if isinstance(data, Mapping):
        for key in ("content", "text", "thought"):
            if isinstance(data.get(key), str):
                return str(data[key])
        return ""
    return _string(data)


def flow_outputs(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A FlowOutput (code 10) event's items, shaped as a blocking reply's ``output`` items.

    As documented, ``data`` is a list ``[{content: "<text>", branch, from_component_name,
    audioDatas?}]`` with a sibling ``componentId``; an older single ``{from_component_branch,
    from_component_name, content: {text}}`` dict is taken as it is.
    """
    data = event.get("data")
    if isinstance(data, Mapping):
        return [dict(data)]
    if not isinstance(data, list):
        return []
    items = []
    for item in data:
        if not isinstance(item, Mapping):
            continue
        content = item.get("content")
        body: dict[str, Any] = (
            dict(content) if isinstance(content, Mapping) else {"text": _string(content)}
        )
        if "audioDatas" in item:
            body.setdefault("audio", item["audioDatas"])
        output: dict[str, Any] = {
            "from_component_branch": item.get("branch"),
            "from_component_name": item.get("from_component_name"),
            "content": body,
        }
        if event.get("componentId") is not None:
            output["component_id"] = event["componentId"]
        items.append(output)
    return items


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _ids(data: Fields) -> tuple[str | None, str | None]:
    """``(message_id, conversation_id)``: strings (or integers, as their digits), checked."""
    return data.string("message_id", numbers=True), data.string("conversation_id", numbers=True)


def parse_message(data: Any, *, question: str | None = None) -> Answer:
    """An ``Answer`` from a blocking ``/v2/conversation/message`` reply.

    The text is the ``output[]`` items' texts (a voice agent's: their transcripts), joined by
    a blank line; each item is also kept in ``outputs``. A streamed answer's saved ``raw``
    carries its text as citekit's own ``text`` field (its FlowOutput items are not its text),
    so it rebuilds equal to itself. ``<think>`` blocks in the text are its ``thoughts``
    (``citekit.text.think``), after any Thought events' ones. Its fields are type-checked
    (``citekit.core.fields``): a wrong one raises ``ResponseFormatError`` naming it. A streamed
    answer that broke before its ids came has ``output`` but no ``message_id``: its saved
    ``raw`` still reads.
    """
    body = Fields(data, "gptbots")
    message_id, conversation_id = _ids(body)
    if not message_id and "output" not in body.data:
        raise ResponseFormatError("gptbots sent a message reply without a message_id")
    items = body.array("output")
    streamed = data.get("text")
    if isinstance(streamed, str):
        text = streamed
    else:
        text = "\n\n".join(t for t in (_output_text(o) for o in items) if t)
    text, inline = split_thoughts(text)
    # Thought (41) events come in streams only; a streamed answer's raw keeps them to rebuild it.
    thoughts = tuple(t for t in _items(data.get("thoughts")) if isinstance(t, str))
    return Answer(
        provider="gptbots",
        text=text,
        id=message_id or None,
        created=parse_created(data.get("create_time")),
        finish_reason="stop",
        usage=_usage(data.get("usage")),
        question=question,
        conversation_id=conversation_id,
        citations=parse_citations(data.get("citations")),
        outputs=tuple(o for o in (component_output(i) for i in items) if o is not None),
        thoughts=thoughts + inline,
        related_questions=questions_of(data.get("next_question")),
        raw=dict(data),
    )


class GPTBotsAccumulator:
    """Assembles the ``{code, message, data}`` events of a streaming reply.

    11 MessageInfo (ids), 3 Text (the text), 10 FlowOutput (``outputs``: the components'
    outputs, never the text, as the documented text stream's "User Input" echo shows), 4 Cost
    (``usage``),
    20 Citation and 83 CorrelateAttachment (``citations``), 41 Thought (``thoughts``: apart from
    the text; consecutive events are one thought; ``<think>`` blocks in the Text deltas are
    thoughts too, never shown as text), 39 Audio (``{audioAnswer, transcript}``: a
    voice agent sends no Text, so the transcripts are the text), 5 / 6 tool call request and
    response (kept as they came in ``raw["tool_events"]``), 0 End. Other codes are kept in
    ``raw["unknown_events"]``. ``raw`` is shaped like a blocking reply, so
    ``parse_response(answer.raw)`` gives the answer back.
    """

    def __init__(self, *, question: str | None = None, conversation_id: str | None = None) -> None:
        self.question = question
        #: The conversation asked in, for a reply that does not name it.
        self.conversation_id = conversation_id
        self._parts: list[str] = []
        self._think = ThinkSplitter()  # what the live deltas show: the text without <think>
        self._outputs: list[dict[str, Any]] = []
        self._info: dict[str, Any] = {}
        self._usage: Any = None
        self._citations: list[dict[str, Any]] = []
        self._attachments: list[Any] = []
        self._thoughts: list[list[str]] = []
        self._last_code: int | None = None
        self._transcripts: list[str] = []
        self._audio: list[Any] = []
        self._tools: list[dict[str, Any]] = []
        self._end: dict[str, Any] | None = None
        self._unknown: list[Any] = []

    @property
    def finished(self) -> bool:
        return self._end is not None

    def feed_json(self, data: bytes) -> list[StreamEvent] | None:
        """``feed`` of a Text (code 3) event from its JSON text, decoded typed
        (``citekit.wire.typed``); None, with nothing read, for any other event (the caller
        decodes it with ``json`` and hands it to ``feed``)."""
        event = decode_text_event(data)
        if event is None or event.code != TEXT:
            return None
        self._last_code = TEXT
        text = event.data
        if not text:
            return []
        self._parts.append(text)
        shown = self._think.feed(text)
        return [TextDelta(shown)] if shown else []

    def feed(self, event: Any) -> list[StreamEvent]:
        code = _event_code(event)
        if code is None:  # a keep-alive or anything else without a code: kept, not read
            self._unknown.append(event)
            return []
        data = event.get("data")
        last, self._last_code = self._last_code, code
        if code == TEXT:
            if isinstance(data, str) and data:
                self._parts.append(data)
                shown = self._think.feed(data)
                return [TextDelta(shown)] if shown else []
        elif code == THOUGHT:
            piece = _thought(data)
            if last != THOUGHT or not self._thoughts:
                self._thoughts.append([])  # consecutive Thought events are one thought
            self._thoughts[-1].append(piece)
        elif code == AUDIO:
            # A voice agent sends no Text events: the transcript is the answer's text.
            self._audio.append(data)
            piece = _transcript(data)
            if piece:
                self._transcripts.append(piece)
                if not self._parts:
                    return [TextDelta(piece)]
        elif code in (TOOL_CALL, TOOL_RESPONSE):
            self._tools.append(dict(event))
        elif code == MESSAGE_INFO and isinstance(data, Mapping):
            _ids(Fields(data, "gptbots", "MessageInfo (code 11) data"))  # checked before kept
            self._info.update(data)
        elif code == FLOW_OUTPUT:
            self._outputs.extend(flow_outputs(event))
        elif code == CITATION:
            self._citations.extend(stream_citations(data))
        elif code == CORRELATE_ATTACHMENT:
            self._attachments.extend(data if isinstance(data, list) else [data])
        elif code == COST:
            self._usage = data
        elif code == END:
            if isinstance(data, Mapping):
                _ids(Fields(data, "gptbots", "End (code 0) data"))
            self._end = dict(data) if isinstance(data, Mapping) else {}
            rest = self._think.flush()  # a held-back "<" that was no tag after all
            return [TextDelta(rest)] if rest else []
        else:
            self._unknown.append(dict(event))  # kept, not fatal
        return []

    def answer(self, *, partial: bool = False) -> Answer:
        received = "".join(self._parts) or "".join(self._transcripts)
        text, inline = split_thoughts(received)  # the same split as the live deltas'
        events = tuple(t for t in ("".join(p) for p in self._thoughts) if t)
        thoughts = events + inline
        outputs = tuple(o for o in (component_output(i) for i in self._outputs) if o is not None)
        raw: dict[str, Any] = {**self._info, **(self._end or {})}
        # Shaped like a blocking reply, so parse_response(answer.raw) gives this answer; the
        # text is the Text events' (or the transcripts'), never the FlowOutput items'.
        raw["output"] = list(self._outputs)
        raw["text"] = received  # as it came: parse_message splits it the same way
        raw["usage"] = self._usage
        citations = self._citations or attachment_citations(self._attachments)
        if citations:
            raw["citations"] = citations
        if self._attachments:
            raw["correlate_attachments"] = self._attachments
        if events:
            raw["thoughts"] = list(events)
        if self._audio:
            raw["audio"] = self._audio
        if self._tools:
            raw["tool_events"] = self._tools
        if self._unknown:
            raw["unknown_events"] = self._unknown
        notes = ("Incomplete: the stream was interrupted before the provider finished.",)
        message_id, conversation_id = _ids(Fields(self._info, "gptbots"))
        return Answer(
            provider="gptbots",
            text=text,
            id=message_id or None,
            created=parse_created(self._info.get("create_time")),
            finish_reason=None if partial else "stop",
            usage=_usage(self._usage),
            question=self.question,
            conversation_id=conversation_id or self.conversation_id,
            citations=parse_citations(citations),
            outputs=outputs,
            thoughts=thoughts,
            notes=notes if partial else (),
            partial=partial,
            raw=raw,
        )


def questions_of(data: Any) -> tuple[str, ...]:
    """The suggested questions of a ``GET /v1/next/question`` body.

    Read from ``questions`` (or ``data``, itself a list or holding ``questions``); anything
    that is not a non-empty string is skipped.
    """
    if isinstance(data, Mapping):
        inner = data.get("questions", data.get("data"))
        if isinstance(inner, Mapping):
            inner = inner.get("questions")
        data = inner
    return tuple(q for q in _items(data) if isinstance(q, str) and q.strip())


def _event_code(event: Any) -> int | None:
    """An event's integer ``code`` (``3`` or ``"3"``), or None when it has none."""
    if not isinstance(event, Mapping):
        return None
    return int_or_none(event.get("code"), hi=2**63 - 1, strings=True)
