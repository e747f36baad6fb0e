"""GPTBots wire format without I/O: error envelopes, blocking replies, stream events.

Errors come as ``{code, message}`` (sometimes ``msg``), with HTTP 200 or an error status; stream
events as ``{code, message, data}`` with small codes (11 message info, 3 text, 10 flow output,
4 cost, 20 citation, 83 correlate attachment, 0 end, ...), so an envelope is an error only when
its code is 10000 or more. Streams come as bare JSON lines or as SSE (``StreamDecoder``).

``ask_flow`` is the whole call as one generator (see ``citekit.wire.flow``): a conversation
when none is given, the message (blocking or streamed), then the knowledge references.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..core.errors import (
    AuthenticationError,
    BadRequestError,
    CitekitWarning,
    InsufficientCreditsError,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    TokenLimitError,
    TransportError,
    UnsupportedFeatureError,
    warn,
)
from ..core.models import (
    Answer,
    Citation,
    References,
    StreamEvent,
    TextDelta,
    Usage,
    parse_created,
)
from .flow import Flow, RequestSpec, fetch_json, stream_answer
from .response import Wire
from .sse import SSEDecoder

__all__ = [
    "SPEC",
    "GPTBotsAccumulator",
    "StreamDecoder",
    "ask_flow",
    "check_flag",
    "citation_from",
    "conversation_config",
    "error_from_code",
    "new_conversation",
    "next_questions_flow",
    "parse_message",
    "references_flow",
]

# Stream event codes.
END, TEXT, COST, FLOW_OUTPUT, MESSAGE_INFO, AUDIO = 0, 3, 4, 10, 11, 39
CITATION, CORRELATE_ATTACHMENT = 20, 83
TOOL_CALL, TOOL_RESPONSE, THOUGHT = 5, 6, 41

_CODES: dict[int, tuple[type[ProviderError], str | None]] = {
    40000: (BadRequestError, "Check the request parameters (message_id, user_id, messages)"),
    40379: (InsufficientCreditsError, "Top up the GPTBots account's credits"),
    20022: (InsufficientCreditsError, "Top up the GPTBots account's credits"),
    200222: (UnsupportedFeatureError, "This agent does not offer knowledge references"),
    20055: (UnsupportedFeatureError, "Enable this API in the agent's settings"),
    40364: (UnsupportedFeatureError, "The agent's model does not take image input"),
    40378: (NotFoundError, "The agent was deleted"),
    40356: (NotFoundError, "Omit conversation_id= to start a new conversation"),
    40358: (NotFoundError, "The conversation belongs to another agent or user"),
    40127: (AuthenticationError, "Check the key in GPTBOTS_API_KEY or the api_key= you passed"),
    20040: (TokenLimitError, "Shorten the question"),
    50000: (ServerError, None),
}
NO_REFERENCES_CODE = 200222


def error_from_code(
    code: int, message: str, *, status: int | None, request_id: str | None
) -> ProviderError:
    """The typed error for a GPTBots ``{code, message}`` envelope."""
    cls, hint = _CODES.get(code, (ProviderError, None))
    low = message.lower()
    if cls is ProviderError and ("rate" in low or "too many" in low or "frequen" in low):
        return RateLimitError(
            message,
            provider="gptbots",
            status=status,
            code=code,
            request_id=request_id,
            hint="The free plan allows 3 requests per minute",
        )
    return cls(
        message, provider="gptbots", status=status, code=code, request_id=request_id, hint=hint
    )


def _envelope(data: Any) -> tuple[int, str] | None:
    """``(code, message)`` when ``data`` is an error envelope (event codes are below 10000)."""
    if not isinstance(data, Mapping):
        return None
    code = data.get("code")
    if isinstance(code, bool) or not isinstance(code, int) or code < 10000:
        return None
    message = data.get("message") or data.get("msg") or f"error code {code}"
    return code, str(message)


def classify(
    status: int | None, parsed: Any, message: str, request_id: str | None
) -> ProviderError | None:
    found = _envelope(parsed)
    if found is None or status == 429:
        return None
    return error_from_code(found[0], found[1], status=status, request_id=request_id)


def check_body(data: Any, request_id: str | None) -> ProviderError | None:
    found = _envelope(data)
    if found is None:
        return None
    return error_from_code(found[0], found[1], status=200, request_id=request_id)


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None
    tokens_raw = raw.get("tokens")
    tokens: Mapping[str, Any] = tokens_raw if isinstance(tokens_raw, Mapping) else raw

    def pick(*names: str) -> int | None:
        for name in names:
            value = tokens.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return int(value)
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


# -- corner citations --------------------------------------------------------------------------
_MAX_INDEX = 9999  # the text reader's markers go up to $[9999]$
_SOURCES = ("attachment", "doc", "tool")


def citation_from(data: Mapping[str, Any], *, position: int = 0) -> Citation:
    """A ``Citation`` from one item of a reply's ``citations`` (``corner_citation: true``).

    ``index`` is a string matching the ``$[N]$`` mark (``document_index = N - 1``; a missing or
    unreadable one uses ``position``); ``content`` is the cited fragment; the title is ``name``
    (else the attachment's, doc's or tool's name); the URL is the attachment's when it is
    http(s). ``raw`` keeps the whole item.
    """
    document_index = position
    index = data.get("index")
    if isinstance(index, str | int) and not isinstance(index, bool):
        try:
            number = int(str(index).strip())
        except ValueError:
            number = 0
        if 1 <= number <= _MAX_INDEX:
            document_index = number - 1
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


def parse_message(data: Any, *, question: str | None = None) -> Answer:
    """An ``Answer`` from a blocking ``/v2/conversation/message`` reply."""
    if not isinstance(data, Mapping) or not data.get("message_id"):
        raise ResponseFormatError("gptbots sent a message reply without a message_id")
    outputs = tuple(text for text in (_output_text(o) for o in data.get("output") or []) if text)
    return Answer(
        provider="gptbots",
        text="\n\n".join(outputs),
        id=str(data["message_id"]),
        created=parse_created(data.get("create_time")),
        finish_reason="stop",
        usage=_usage(data.get("usage")),
        question=question,
        conversation_id=data.get("conversation_id"),
        citations=parse_citations(data.get("citations")),
        outputs=outputs,
        # Thoughts come in streams only; a streamed answer's raw keeps them to rebuild it.
        thoughts=tuple(t for t in _items(data.get("thoughts")) if isinstance(t, str)),
        related_questions=_questions(data.get("next_question")),
        raw=dict(data),
    )


class GPTBotsAccumulator:
    """Assembles the ``{code, message, data}`` events of a streaming reply.

    11 MessageInfo (ids), 3 Text (the text), 10 FlowOutput (``outputs``), 4 Cost (``usage``),
    20 Citation and 83 CorrelateAttachment (``citations``), 41 Thought (``thoughts``: apart from
    the text; consecutive events are one thought), 39 Audio (``{audioAnswer, transcript}``: a
    voice agent sends no Text, so the transcripts are the text), 5 / 6 tool call request and
    response (kept as they came in ``raw["tool_events"]``), 0 End. Other codes are kept in
    ``raw["unknown_events"]``. ``raw`` is shaped like a blocking reply, so
    ``Answer.from_response(answer.raw)`` gives the answer back.
    """

    def __init__(self, *, question: str | None = None, conversation_id: str | None = None) -> None:
        self.question = question
        #: The conversation asked in, for a reply that does not name it.
        self.conversation_id = conversation_id
        self._parts: list[str] = []
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

    def feed(self, event: Any) -> list[StreamEvent]:
        if not isinstance(event, Mapping) or not isinstance(event.get("code"), int):
            raise ResponseFormatError(f"gptbots sent a stream event without a code: {event!r}")
        code, data = event["code"], event.get("data")
        last, self._last_code = self._last_code, code
        if code == TEXT:
            if isinstance(data, str) and data:
                self._parts.append(data)
                return [TextDelta(data)]
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
            self._end = dict(data) if isinstance(data, Mapping) else {}
        else:
            self._unknown.append(dict(event))  # kept, not fatal
        return []

    def answer(self, *, partial: bool = False) -> Answer:
        text = "".join(self._parts) or "".join(self._transcripts)
        thoughts = tuple(t for t in ("".join(p) for p in self._thoughts) if t)
        outputs = tuple(t for t in (_output_text(o) for o in self._outputs) if t) or (
            (text,) if text else ()
        )
        raw: dict[str, Any] = {**self._info, **(self._end or {})}
        # Shaped like a blocking reply, so Answer.from_response(answer.raw) gives this answer.
        if "\n\n".join(outputs) == text:
            raw["output"] = list(self._outputs) or [{"content": {"text": text}}]
        else:  # flow outputs missing or cut short: the text as received is the reply
            raw["output"] = [{"content": {"text": text}}]
        raw["usage"] = self._usage
        citations = self._citations or attachment_citations(self._attachments)
        if citations:
            raw["citations"] = citations
        if self._attachments:
            raw["correlate_attachments"] = self._attachments
        if thoughts:
            raw["thoughts"] = list(thoughts)
        if self._audio:
            raw["audio"] = self._audio
        if self._tools:
            raw["tool_events"] = self._tools
        if self._unknown:
            raw["unknown_events"] = self._unknown
        notes = ("Incomplete: the stream was interrupted before the provider finished.",)
        message_id = self._info.get("message_id")
        return Answer(
            provider="gptbots",
            text=text,
            id=str(message_id) if message_id else None,
            created=parse_created(self._info.get("create_time")),
            finish_reason=None if partial else "stop",
            usage=_usage(self._usage),
            question=self.question,
            conversation_id=self._info.get("conversation_id") or self.conversation_id,
            citations=parse_citations(citations),
            outputs=outputs,
            thoughts=thoughts,
            notes=notes if partial else (),
            partial=partial,
            raw=raw,
        )


_BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r\n"


class StreamDecoder:
    """GPTBots stream bytes in, the JSON text of each event out, in either framing.

    The documentation calls the stream SSE, but every official example (and clients written
    against the real service) shows bare JSON lines, ``{"code":3,"message":"Text","data":"I"}``
    one per line with no ``data: `` prefix. The framing is decided once per stream from its
    first non-blank bytes: ``{`` or ``[`` means JSON lines, anything else (``data:``, a
    ``:`` comment, ``event:``) server-sent events. Blank lines between JSON lines are skipped.
    """

    __slots__ = ("_buffer", "_head", "_lines", "_sse")

    def __init__(self) -> None:
        self._head = b""  # what came before the framing was known
        self._buffer = b""
        self._lines = False
        self._sse: SSEDecoder | None = None

    @property
    def framing(self) -> str | None:
        """``"lines"`` or ``"sse"`` once decided, else None."""
        return "lines" if self._lines else "sse" if self._sse is not None else None

    def feed(self, chunk: bytes) -> list[bytes]:
        """The payloads of the events ``chunk`` completes, in order."""
        if self._lines:
            return self._split(chunk)
        if self._sse is not None:
            return self._sse.feed(chunk)
        head = self._head + chunk
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head  # may still be a byte order mark
            return []
        body = head[len(_BOM) :] if head.startswith(_BOM) else head
        first = body.lstrip(_BLANK)[:1]
        if not first:
            self._head = head
            return []
        self._head = b""
        if first in (b"{", b"["):
            self._lines = True
            return self._split(body)
        self._sse = SSEDecoder()
        return self._sse.feed(head)

    def flush(self) -> list[bytes]:
        """End of stream: a last line without its line break still counts."""
        if self._sse is not None:
            return self._sse.flush()
        tail, self._buffer = self._buffer, b""
        return [tail] if tail.strip(_BLANK) else []

    def _split(self, chunk: bytes) -> list[bytes]:
        buffer = self._buffer + chunk if self._buffer else chunk
        end = max(buffer.rfind(b"\n"), buffer.rfind(b"\r"))
        if end < 0:
            self._buffer = buffer
            return []
        self._buffer = buffer[end + 1 :]
        lines = buffer[:end]
        if b"\r" in lines:
            lines = lines.replace(b"\r", b"\n")
        return [line for line in lines.split(b"\n") if line.strip(_BLANK)]


class _Spec:
    name = "gptbots"

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer:
        return parse_message(data, question=question)

    def new_accumulator(self, *, question: str | None = None) -> GPTBotsAccumulator:
        return GPTBotsAccumulator(question=question)


SPEC = _Spec()


# -- the call ---------------------------------------------------------------------------------
_KNOWLEDGE_KEYS = ("data_ids", "group_ids")


def conversation_config(
    *,
    citations: bool = False,
    knowledge: Mapping[str, Any] | None = None,
    custom_variables: Mapping[str, Any] | None = None,
    long_term_memory: bool | None = None,
    short_term_memory: bool | None = None,
) -> dict[str, Any]:
    """The message's ``conversation_config``: only what was given, checked.

    Raises ``TypeError`` for a value of the wrong type and ``ValueError`` for a wrong key or
    an empty id, each naming the argument.
    """
    config: dict[str, Any] = {}
    if check_flag("citations", citations):
        config["corner_citation"] = True
    for name, value in (
        ("long_term_memory", long_term_memory),
        ("short_term_memory", short_term_memory),
    ):
        if value is not None:
            config[name] = check_flag(name, value)
    if knowledge is not None:
        config["knowledge"] = _knowledge(knowledge)
    if custom_variables is not None:
        config["custom_variables"] = _variables(custom_variables)
    return config


def check_flag(name: str, value: Any) -> bool:
    """``value`` when it is a bool; else a ``TypeError`` naming the argument."""
    if not isinstance(value, bool):
        raise TypeError(f"{name}= must be True or False, not {type(value).__name__}")
    return value


def _knowledge(knowledge: Any) -> dict[str, list[str]]:
    example = 'knowledge={"data_ids": ["..."], "group_ids": ["..."]}'
    if not isinstance(knowledge, Mapping):
        raise TypeError(f"knowledge= must be a dict like {example}")
    unknown = sorted(str(k) for k in knowledge if k not in _KNOWLEDGE_KEYS)
    if unknown:
        raise ValueError(f"knowledge= takes only data_ids and group_ids, not {unknown}")
    found: dict[str, list[str]] = {}
    for key in _KNOWLEDGE_KEYS:
        if key not in knowledge:
            continue
        ids = knowledge[key]
        if isinstance(ids, str | bytes) or not isinstance(ids, list | tuple):
            raise TypeError(f"knowledge[{key!r}] must be a list of ids, as in {example}")
        for one in ids:
            if not isinstance(one, str):
                raise TypeError(f"knowledge[{key!r}] holds {one!r}: ids are strings")
            if not one.strip():
                raise ValueError(f"knowledge[{key!r}] holds an empty id")
        found[key] = list(ids)
    return found


def _variables(variables: Any) -> dict[str, Any]:
    if not isinstance(variables, Mapping):
        raise TypeError('custom_variables= must be a dict like {"user_name": "Ada"}')
    for key, value in variables.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"custom_variables has the key {key!r}: names are non-empty strings")
        if not isinstance(value, str | int | float | bool):
            raise TypeError(
                f"custom_variables[{key!r}] is {type(value).__name__}: values are strings, "
                "numbers or booleans"
            )
    return dict(variables)


def message_spec(
    conversation_id: str,
    question: str,
    *,
    stream: bool,
    config: Mapping[str, Any] | None = None,
) -> RequestSpec:
    """``POST /v2/conversation/message``; ``config`` is sent as ``conversation_config`` (only
    when it holds something)."""
    body: dict[str, Any] = {
        "conversation_id": conversation_id,
        "response_mode": "streaming" if stream else "blocking",
        "messages": [{"role": "user", "content": question}],
    }
    if config:
        body["conversation_config"] = dict(config)
    return RequestSpec("POST", "/v2/conversation/message", json=body, stream=stream)


def _conversation_id(data: Any) -> str:
    cid = data.get("conversation_id") if isinstance(data, Mapping) else None
    if not cid:
        raise ResponseFormatError("gptbots created a conversation but sent no conversation_id")
    return str(cid)


def new_conversation(wire: Wire, user_id: str) -> Flow[str]:
    """``POST /v1/conversation``: the new conversation's id."""
    spec = RequestSpec("POST", "/v1/conversation", json={"user_id": user_id})
    return (yield from fetch_json(wire, spec, _conversation_id))


def references_flow(wire: Wire, message_id: str) -> Flow[References]:
    """``GET /v1/correlate/dataset``: the knowledge chunks behind the reply ``message_id``."""
    spec = RequestSpec("GET", "/v1/correlate/dataset", params={"message_id": message_id})
    data: Any = yield from fetch_json(wire, spec)
    return References.from_response(data, message_id=message_id)


def _questions(data: Any) -> tuple[str, ...]:
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


def next_questions_flow(wire: Wire, answer_id: str) -> Flow[tuple[str, ...]]:
    """``GET /v1/next/question``: questions to ask after the reply ``answer_id``."""
    spec = RequestSpec("GET", "/v1/next/question", params={"answer_id": answer_id})
    return (yield from fetch_json(wire, spec, _questions))


def ask_flow(
    wire: Wire,
    question: str,
    *,
    conversation_id: str | None,
    user_id: str,
    stream: bool,
    references: bool,
    related_questions: bool = False,
    config: Mapping[str, Any] | None = None,
) -> Flow[Answer]:
    """Ask in ``conversation_id`` (a new one for ``user_id`` when None); attach references
    and, with ``related_questions``, the suggested next questions.

    ``config`` is the message's ``conversation_config`` (``corner_citation``, ``knowledge``, ...).
    """
    cid = conversation_id or (yield from new_conversation(wire, user_id))
    spec = message_spec(cid, question, stream=stream, config=config)
    if stream:
        acc = GPTBotsAccumulator(question=question, conversation_id=cid)
        unfinished = "the stream ended before its End event"
        answer = yield from stream_answer(
            wire, spec, acc, unfinished=unfinished, decoder=StreamDecoder
        )
    else:
        data: Any = yield from fetch_json(wire, spec)
        answer = parse_message(data, question=question)
        if not answer.conversation_id:
            answer = replace(answer, conversation_id=cid)
    if references and answer.id:
        try:
            refs = yield from references_flow(wire, answer.id)
        except (ProviderError, TransportError, ResponseFormatError) as exc:
            answer = _without_references(answer, exc)
        else:
            answer = replace(answer, references=refs)
    if related_questions and answer.id:
        try:
            questions = yield from next_questions_flow(wire, answer.id)
        except (ProviderError, TransportError, ResponseFormatError) as exc:
            note = f"Suggested questions could not be fetched: {exc}"
            warn(note, CitekitWarning)
            return replace(answer, notes=(*answer.notes, note))
        # Kept in raw (as citekit's own field) so the answer rebuilt from it has them too.
        raw = {**answer.raw, "next_question": list(questions)}
        answer = replace(answer, related_questions=questions, raw=raw)
    return answer


def _without_references(
    answer: Answer, problem: ProviderError | TransportError | ResponseFormatError
) -> Answer:
    """The answer, with a note on why its references are missing: never a failed ask."""
    if isinstance(problem, ProviderError) and problem.code == NO_REFERENCES_CODE:
        note = "No knowledge references: this agent does not support them (GPTBots code 200222)."
        empty = References(message_id=answer.id, note=note)
        return replace(answer, references=empty, notes=(*answer.notes, note))
    note = f"Knowledge references could not be fetched: {problem}"
    warn(note, CitekitWarning)
    return replace(answer, notes=(*answer.notes, note))
