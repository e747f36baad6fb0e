"""What each endpoint answers, decided without touching a socket.

``Responder.reply`` turns a parsed request into a ``Reply``: a status, a body or a list of SSE
segments, and headers. The HTTP handler adds latency, faults and the bytes on the wire.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from ._errors import error_body, gptbots_body
from ._gptbots import History, vector_match
from ._responses import (
    as_response,
    question_of,
    responses_problem,
    responses_stream,
    structured_text,
    tools_on,
)
from ._samples import (
    ProviderName,
    Sample,
    SampleSet,
    _normalise,
    choose_sample,
    find_by_message_id,
    last_user_text,
)
from ._scenario import Endpoint, Framing, Scenario
from ._sse import (
    Segment,
    cycle_pieces,
    data_event,
    drop_usage_chunk,
    json_line,
    pieces_of,
    split_lines,
    split_segments,
    strip_related_questions,
    synthesize_chat_stream,
)

__all__ = ["Reply", "Responder"]

SAMPLE_FIELD = "citekit_sample"
#: Beside ``citekit_sample`` when the question asked is not the sample's own: the sample's
#: question and ``false``, so the client can say whose answer it shows.
QUESTION_FIELD = "citekit_sample_question"
MATCHED_FIELD = "citekit_sample_matched"
_MARITACA_NON_STREAM_TOOLS = ("web_search", "code_execution", "data_ocean")


@dataclass
class Reply:
    """A response to send: a JSON/text ``body``, or ``stream`` segments as ``text/event-stream``."""

    status: int
    body: bytes = b""
    content_type: str = "application/json"
    stream: list[Segment] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(status: int, obj: Any) -> Reply:
    """``obj`` serialized as the reply body."""
    return Reply(status, json.dumps(obj, ensure_ascii=False).encode())


def _mark(value: Any, fields: dict[str, Any]) -> bool:
    """Add ``fields`` to every object in ``value`` that carries ``citekit_sample``."""
    changed = False
    if isinstance(value, dict):
        if SAMPLE_FIELD in value:
            value.update(fields)
            changed = True
        for item in value.values():
            changed = _mark(item, fields) or changed
    elif isinstance(value, list):
        for item in value:
            changed = _mark(item, fields) or changed
    return changed


def served(reply: Reply, sample: Sample, question: str) -> Reply:
    """``reply`` (a sample's answer to ``question``) saying whether it answers that question.

    A question that is the sample's own is sent as recorded; any other gets, beside each
    ``citekit_sample`` label in the body or the stream, the sample's question and
    ``citekit_sample_matched: false``.
    """
    if _normalise(sample.question) == _normalise(question):
        return reply
    fields = {QUESTION_FIELD: sample.question, MATCHED_FIELD: False}
    if reply.stream is None:
        try:
            body = json.loads(reply.body)
        except ValueError:
            return reply
        if _mark(body, fields):
            reply.body = json.dumps(body, ensure_ascii=False).encode()
        return reply
    segments: list[Segment] = []
    for segment in reply.stream:
        payload = segment.payload() if segment.data and SAMPLE_FIELD in segment.data else None
        if segment.data is not None and "\n" not in segment.data and _mark(payload, fields):
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            raw = segment.raw.replace(segment.data.encode(), text.encode(), 1)
            segment = Segment(raw, text)
        segments.append(segment)
    reply.stream = segments
    return reply


def _message_text(response: dict[str, Any]) -> str:
    choices = response.get("choices") or [{}]
    first = choices[0] if isinstance(choices[0], dict) else {}
    message = first.get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def _gptbots_text(message: dict[str, Any]) -> str:
    texts: list[str] = []
    for item in message.get("output") or []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            texts.append(content["text"])
    return "\n\n".join(texts)


def _tools_on(body: Any) -> frozenset[str]:
    if not isinstance(body, dict):
        return frozenset()
    return frozenset(t for t in _MARITACA_NON_STREAM_TOOLS if body.get(t) is True)


def _asks_exactly(samples: tuple[Sample, ...], question: str) -> bool:
    """Whether ``question`` is one sample's own question (that sample then answers it)."""
    wanted = _normalise(question)
    return any(_normalise(s.question) == wanted for s in samples)


def _tool_samples(samples: tuple[Sample, ...], body: dict[str, Any]) -> tuple[Sample, ...]:
    """The samples a Maritaca request may be answered from: those recorded with one of the
    built-in tools it turns on, or, without tools, those recorded without any. Only a request
    with a tool gets a tool's output (``usage.tool_execution_details`` is "present only when a
    tool ran", providers.md). When none fits, every sample may answer. A sample's own
    question always gets that sample (the offline demo asks each one as it is)."""
    wanted = _tools_on(body)
    if wanted:
        fitting = tuple(s for s in samples if wanted & _tools_on(s.request))
    else:
        fitting = tuple(s for s in samples if not _tools_on(s.request))
    return fitting or samples


class Responder:
    """The endpoints' behaviour over one sample set, plus the GPTBots conversations it opened."""

    def __init__(self, samples: SampleSet) -> None:
        self.samples = samples
        self._lock = threading.Lock()
        self._conversations: dict[str, str] = {}
        self.history = History()

    def reply(
        self,
        provider: ProviderName,
        endpoint: Endpoint,
        body: Any,
        query: dict[str, str],
        scenario: Scenario,
        failed: bool = False,
    ) -> Reply:
        """The normal answer to a request that passed routing and authentication.

        ``body`` is the parsed JSON body, or ``ValueError`` when the body is not JSON;
        ``failed``: a Responses API reply reports a failed response.
        """
        if endpoint == "models":
            return json_reply(200, self.samples.models or {"object": "list", "data": []})
        if endpoint == "correlate":
            return self._correlate(query, scenario)
        if endpoint == "next_question":
            return self._next_question(query)
        if endpoint == "conversations":
            return json_reply(*self.history.page(query))
        if endpoint == "messages":
            return json_reply(*self.history.messages(query))
        if not isinstance(body, dict):
            what = "Request body is not a valid JSON object"
            if provider == "gptbots":
                return json_reply(400, gptbots_body(40000, f"invalid parameter: {what}"))
            return json_reply(400, error_body(provider, 400, what))
        if endpoint == "conversation":
            return self._new_conversation(body)
        if endpoint == "message":
            return self._gptbots_message(body, scenario)
        if endpoint == "vector_match":
            return json_reply(*vector_match(self.samples["gptbots"], body))
        if endpoint == "search":
            return self._search(body)
        if endpoint == "responses":
            return self._responses(body, scenario, failed)
        return self._chat(provider, body, scenario)

    # Maritaca's Responses API (rules in _responses.py) --------------------------------------

    def _responses(self, body: dict[str, Any], scenario: Scenario, failed: bool) -> Reply:
        problem = responses_problem(body)
        if problem:
            return json_reply(400, error_body("maritaca", 400, problem))
        candidates = self.samples["maritaca"]
        question = question_of(body)
        if not _asks_exactly(candidates, question):
            candidates = _tool_samples(candidates, dict.fromkeys(tools_on(body), True))
        sample = choose_sample(candidates, question)
        if sample is None:
            return self._no_samples("maritaca")
        text = _message_text(sample.response)
        fmt = body.get("text", {}).get("format") if isinstance(body.get("text"), dict) else None
        text = structured_text(fmt, text) or text
        response = as_response(sample.response, body, sample.label, text=text, failed=failed)
        if body.get("stream") is True:
            stream = responses_stream(response, scenario.chunks)
            return served(Reply(200, stream=stream), sample, question)
        if scenario.chunks:
            for item in response["output"]:
                if item.get("type") == "message":
                    part = item["content"][0]
                    part["text"] = "".join(cycle_pieces(pieces_of(part["text"]), scenario.chunks))
        return served(json_reply(200, response), sample, question)

    # Magisterium search ---------------------------------------------------------------------

    def _search(self, body: dict[str, Any]) -> Reply:
        """``POST /search``: the documented inputs are checked (query <= 1024 characters,
        numResults 1-100, category auto | magisterial | scholarly); the response shape is not
        documented, so the samples hold a plausible one, cut to ``numResults``."""
        query, count = body.get("query"), body.get("numResults", 10)
        category = body.get("category", "auto")
        problem = None
        if not isinstance(query, str) or not query.strip() or len(query) > 1024:
            problem = "'query' must be a non-empty string of at most 1024 characters"
        elif isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100:
            problem = "'numResults' must be an integer from 1 to 100"
        elif category not in ("auto", "magisterial", "scholarly"):
            problem = "'category' must be 'auto', 'magisterial' or 'scholarly'"
        if problem:
            return json_reply(400, error_body("magisterium", 400, problem))
        assert isinstance(query, str) and isinstance(count, int)
        sample = choose_sample(self.samples.searches, query)
        if sample is None:
            what = f"No recorded magisterium search samples in {self.samples.root}"
            return json_reply(500, error_body("magisterium", 500, what))
        response = copy.deepcopy(sample.response)
        if isinstance(response.get("results"), list):
            response["results"] = response["results"][:count]
        return json_reply(200, response)

    # Magisterium and Maritaca -------------------------------------------------------------

    def _chat(self, provider: ProviderName, body: dict[str, Any], scenario: Scenario) -> Reply:
        problem = self._chat_problem(provider, body)
        if problem:
            return json_reply(400, error_body(provider, 400, problem))
        candidates = self.samples[provider]
        question = last_user_text(body["messages"])
        fmt = body.get("response_format") if provider == "maritaca" else None
        if provider == "maritaca" and not _asks_exactly(candidates, question):
            candidates = _tool_samples(candidates, body)
        sample = choose_sample(candidates, question)
        if sample is None:
            return self._no_samples(provider)
        related = bool(body.get("return_related_questions"))
        options = body.get("stream_options")
        usage = isinstance(options, dict) and options.get("include_usage") is True
        # Structured output (response_format): the message is a JSON value valid for the schema.
        structured = structured_text(fmt, _message_text(sample.response))
        if body.get("stream") is True:
            reply = self._chat_stream(provider, sample, scenario.chunks, related, usage, structured)
            return served(reply, sample, question)
        response = copy.deepcopy(sample.response)
        if structured is not None:
            response["choices"][0]["message"]["content"] = structured
        if not related:
            response.pop("related_questions", None)
        if scenario.chunks:
            pieces = pieces_of(_message_text(response))
            text = "".join(cycle_pieces(pieces, scenario.chunks))
            for choice in response.get("choices") or []:
                if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                    choice["message"]["content"] = text
                    break
        return served(json_reply(200, response), sample, question)

    @staticmethod
    def _chat_problem(provider: ProviderName, body: dict[str, Any]) -> str | None:
        if not body.get("model"):
            return "'model' is required"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "'messages' must be a non-empty list"
        # Maritaca's built-in tools "require stream: false": a streaming request with one is
        # a 400 (providers.md, Maritaca, built-in tools).
        if provider == "maritaca" and body.get("stream") is True:
            for name in _MARITACA_NON_STREAM_TOOLS:
                if body.get(name):
                    return f"'{name}' requires 'stream': false"
        return None

    def _chat_stream(
        self,
        provider: ProviderName,
        sample: Sample,
        chunks: int | None,
        related: bool,
        usage: bool,
        text: str | None = None,
    ) -> Reply:
        if sample.sse is not None and not chunks and text is None:
            segments = split_segments(sample.sse)
            if not related:
                segments = strip_related_questions(segments)
            if provider == "maritaca" and not usage:
                segments = drop_usage_chunk(segments, SAMPLE_FIELD)
            return Reply(200, stream=segments)
        response = sample.response
        pieces = pieces_of(_message_text(response) if text is None else text)
        if chunks:
            pieces = list(cycle_pieces(pieces, chunks))
        extra: dict[str, Any] = {
            key: response[key]
            for key in ("citations", "related_questions")
            if key in response and (related or key != "related_questions")
        }
        usage_chunk: dict[str, Any] | None = None
        if provider == "maritaca" and usage and "usage" in response:
            usage_chunk = {"usage": response["usage"], SAMPLE_FIELD: sample.label}
        else:
            if "usage" in response and provider != "maritaca":
                extra["usage"] = response["usage"]
            extra[SAMPLE_FIELD] = sample.label
        segments = synthesize_chat_stream(
            response, pieces, last_extra=extra, usage_chunk=usage_chunk
        )
        return Reply(200, stream=segments)

    def _no_samples(self, provider: ProviderName) -> Reply:
        what = f"No recorded {provider} samples in {self.samples.root}"
        if provider == "gptbots":
            return json_reply(500, gptbots_body(50000, what))
        return json_reply(500, error_body(provider, 500, what))

    # GPTBots ------------------------------------------------------------------------------

    def _new_conversation(self, body: dict[str, Any]) -> Reply:
        user_id = body.get("user_id")
        if not isinstance(user_id, str) or not user_id or len(user_id) > 32:
            what = "invalid parameter: user_id is required, at most 32 characters"
            return json_reply(400, gptbots_body(40000, what))
        conversation_id = secrets.token_hex(12)
        with self._lock:
            self._conversations[conversation_id] = user_id
        self.history.opened(conversation_id, user_id)
        return json_reply(200, {"conversation_id": conversation_id})

    def _gptbots_message(self, body: dict[str, Any], scenario: Scenario) -> Reply:
        conversation_id = body.get("conversation_id")
        with self._lock:
            known = isinstance(conversation_id, str) and conversation_id in self._conversations
        if not isinstance(conversation_id, str) or not known:
            return json_reply(400, gptbots_body(40356))
        mode = body.get("response_mode")
        messages = body.get("messages")
        if mode not in ("blocking", "streaming"):
            what = "invalid parameter: response_mode must be 'blocking' or 'streaming'"
            return json_reply(400, gptbots_body(40000, what))
        if not isinstance(messages, list) or not messages:
            return json_reply(400, gptbots_body(40000, "invalid parameter: messages is empty"))
        question = last_user_text(messages)
        sample = choose_sample(self.samples["gptbots"], question)
        if sample is None:
            return self._no_samples("gptbots")
        config = body.get("conversation_config")
        asked = isinstance(config, dict) and config.get("corner_citation") is True
        cited = asked or "citations" not in sample.response  # nothing to leave out
        sent = copy.deepcopy(sample.response)
        sent = sent if cited else _uncited_message(sent)
        self.history.asked(conversation_id, last_user_text(messages), sample, sent["output"])
        if mode == "blocking":
            message = copy.deepcopy(sample.response)
            message["conversation_id"] = conversation_id
            reply = json_reply(200, message if cited else _uncited_message(message))
            return served(reply, sample, question)
        segments = _gptbots_stream(sample, conversation_id, scenario.framing)
        stream = segments if cited else _uncited_stream(segments, scenario.framing)
        return served(Reply(200, stream=stream), sample, question)

    def _next_question(self, query: dict[str, str]) -> Reply:
        # GPTBots offers suggested follow-up questions at GET /v1/next/question?answer_id=
        # (shared/reference/providers.md); the samples record the body as "next_question".
        answer_id = query.get("answer_id", "")
        if not answer_id:
            return json_reply(400, gptbots_body(40000, "invalid parameter: answer_id"))
        sample = find_by_message_id(self.samples["gptbots"], answer_id)
        if sample is None:
            return json_reply(400, gptbots_body(40000, f"invalid parameter: no answer {answer_id}"))
        recorded = sample.data.get("next_question")
        return json_reply(200, recorded if isinstance(recorded, dict) else {"questions": []})

    def _correlate(self, query: dict[str, str], scenario: Scenario) -> Reply:
        message_id = query.get("message_id", "")
        if not message_id:
            return json_reply(400, gptbots_body(40000, "invalid parameter: message_id"))
        sample = find_by_message_id(self.samples["gptbots"], message_id)
        if sample is None:
            what = f"invalid parameter: no message {message_id}"
            return json_reply(400, gptbots_body(40000, what))
        # As recorded (conversation_id included), whichever conversation the message was
        # replayed in: the answer to a message id never depends on earlier requests.
        body = copy.deepcopy(sample.correlate) or {"answer_id": message_id}
        if scenario.correlate_empty or "correlate_dataset" not in body:
            body["correlate_dataset"] = []
        return json_reply(200, body)


# Samples are recorded with ``conversation_config.corner_citation: true``. Without it GPTBots'
# text carries no ``$[N]$`` marks and the reply no citations (shared/reference/providers.md),
# so the server takes them out.
_CORNER = re.compile(r"\$\[[0-9]{1,4}\]\$")
_CITATION_CODES = (20, 83)


def _uncited_message(message: dict[str, Any]) -> dict[str, Any]:
    message.pop("citations", None)
    for item in message.get("output") or []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            content["text"] = _CORNER.sub("", content["text"])
    return message


def _uncited_stream(segments: list[Segment], framing: Framing) -> list[Segment]:
    """The stream without Citation (20) and CorrelateAttachment (83) events or ``$[N]$`` marks;
    only the events that change are re-serialized."""
    out: list[Segment] = []
    for segment in segments:
        event = segment.payload() if segment.data is not None else None
        if not isinstance(event, dict):
            out.append(segment)
            continue
        code, data = event.get("code"), event.get("data")
        if code in _CITATION_CODES:
            continue
        if code == 3 and isinstance(data, str) and _CORNER.search(data):
            event["data"] = _CORNER.sub("", data)
            if event["data"]:
                out.append(gptbots_event(event, framing))
        elif code == 10 and isinstance(data, list) and _CORNER.search(segment.data or ""):
            for item in data:
                if isinstance(item, dict) and isinstance(item.get("content"), str):
                    item["content"] = _CORNER.sub("", item["content"])
            out.append(gptbots_event(event, framing))
        else:
            out.append(segment)
    return out


def gptbots_event(obj: Any, framing: Framing) -> Segment:
    """One GPTBots stream event in ``framing``."""
    return json_line(obj) if framing == "lines" else data_event(obj)


def _gptbots_stream(sample: Sample, conversation_id: str, framing: Framing) -> list[Segment]:
    """The sample's stream in ``framing``: the recorded bytes of that framing when there are
    some (bare JSON lines by default, as every official GPTBots example streams), else the
    other framing's events re-framed, else events built from the blocking body.

    The recorded streams follow providers.md's "GPTBots: streaming semantics": FlowOutput
    (code 10) is the "User Input" component echoing the question, as in the documented text
    stream (not a copy of the answer); a voice agent sends Audio (39) transcript deltas with
    ``audioAnswer: ""``, then audio chunks with ``transcript: ""``, then FlowOutput from its
    model component with ``audioDatas: [{transcript, url, seconds}]``, and no Text events.
    """
    raw = sample.lines if framing == "lines" else sample.sse
    if raw is not None:
        if sample.conversation_id:
            raw = raw.replace(sample.conversation_id.encode(), conversation_id.encode())
        return split_lines(raw) if framing == "lines" else split_segments(raw)
    other = sample.sse if framing == "lines" else sample.lines
    if other is not None:
        segments = split_segments(other) if framing == "lines" else split_lines(other)
        events = [s.payload() for s in segments if s.data is not None]
        if sample.conversation_id:
            old, new = sample.conversation_id, conversation_id
            events = [json.loads(json.dumps(e).replace(old, new)) for e in events]
        return [gptbots_event(event, framing) for event in events]
    return [gptbots_event(event, framing) for event in _built_events(sample, conversation_id)]


def _built_events(sample: Sample, conversation_id: str) -> list[dict[str, Any]]:
    """A GPTBots stream built from the blocking body, for samples recorded without a stream."""
    message_id = sample.message_id or ""
    events: list[dict[str, Any]] = [
        {
            "code": 11,
            "message": "MessageInfo",
            "data": {"message_id": message_id, "conversation_id": conversation_id},
        }
    ]
    # providers.md, "FlowOutput (code 10): whose output it is": in the documented text stream
    # FlowOutput is the "User Input" component echoing the question, with a sibling
    # componentId; the answer comes as Text (3) events, never as FlowOutput.
    echo = {"content": sample.question, "branch": None, "from_component_name": "User Input"}
    events.append({"code": 10, "message": "FlowOutput", "data": [echo], "componentId": 1})
    text = _gptbots_text(sample.response)
    events.extend({"code": 3, "message": "Text", "data": piece} for piece in pieces_of(text))
    if "usage" in sample.response:
        events.append({"code": 4, "message": "Cost", "data": sample.response["usage"]})
    events.append({"code": 0, "message": "End", "data": None})
    return events
