"""What each endpoint answers, decided without touching a socket.

``Responder.reply`` turns a parsed request into a ``Reply``: a status, a body or a list of SSE
segments, and headers. The HTTP handler adds latency, faults and the bytes on the wire.
"""

from __future__ import annotations

import copy
import json
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from ._errors import error_body, gptbots_body
from ._samples import (
    ProviderName,
    Sample,
    SampleSet,
    _normalise,
    choose_sample,
    find_by_message_id,
    last_user_text,
)
from ._scenario import Endpoint, Scenario
from ._sse import (
    Segment,
    cycle_pieces,
    data_event,
    drop_usage_chunk,
    pieces_of,
    split_segments,
    strip_related_questions,
    synthesize_chat_stream,
)

__all__ = ["Reply", "Responder"]

SAMPLE_FIELD = "citekit_sample"
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

    def reply(
        self,
        provider: ProviderName,
        endpoint: Endpoint,
        body: Any,
        query: dict[str, str],
        scenario: Scenario,
    ) -> Reply:
        """The normal answer to a request that passed routing and authentication.

        ``body`` is the parsed JSON body, or ``ValueError`` when the body is not JSON.
        """
        if endpoint == "models":
            return json_reply(200, self.samples.models or {"object": "list", "data": []})
        if endpoint == "correlate":
            return self._correlate(query, scenario)
        if not isinstance(body, dict):
            what = "Request body is not a valid JSON object"
            if provider == "gptbots":
                return json_reply(400, gptbots_body(40000, f"invalid parameter: {what}"))
            return json_reply(400, error_body(provider, 400, what))
        if endpoint == "conversation":
            return self._new_conversation(body)
        if endpoint == "message":
            return self._gptbots_message(body)
        return self._chat(provider, body, scenario)

    # Magisterium and Maritaca -------------------------------------------------------------

    def _chat(self, provider: ProviderName, body: dict[str, Any], scenario: Scenario) -> Reply:
        problem = self._chat_problem(provider, body)
        if problem:
            return json_reply(400, error_body(provider, 400, problem))
        candidates = self.samples[provider]
        question = last_user_text(body["messages"])
        if provider == "maritaca" and not _asks_exactly(candidates, question):
            candidates = _tool_samples(candidates, body)
        sample = choose_sample(candidates, question)
        if sample is None:
            return self._no_samples(provider)
        related = bool(body.get("return_related_questions"))
        options = body.get("stream_options")
        usage = isinstance(options, dict) and options.get("include_usage") is True
        if body.get("stream") is True:
            return self._chat_stream(provider, sample, scenario.chunks, related, usage)
        response = copy.deepcopy(sample.response)
        if not related:
            response.pop("related_questions", None)
        if scenario.chunks:
            pieces = pieces_of(_message_text(response))
            text = "".join(cycle_pieces(pieces, scenario.chunks))
            for choice in response.get("choices") or []:
                if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                    choice["message"]["content"] = text
                    break
        return json_reply(200, response)

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
    ) -> Reply:
        if sample.sse is not None and not chunks:
            segments = split_segments(sample.sse)
            if not related:
                segments = strip_related_questions(segments)
            if provider == "maritaca" and not usage:
                segments = drop_usage_chunk(segments, SAMPLE_FIELD)
            return Reply(200, stream=segments)
        response = sample.response
        pieces = pieces_of(_message_text(response))
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
        return json_reply(200, {"conversation_id": conversation_id})

    def _gptbots_message(self, body: dict[str, Any]) -> Reply:
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
        sample = choose_sample(self.samples["gptbots"], last_user_text(messages))
        if sample is None:
            return self._no_samples("gptbots")
        if mode == "blocking":
            message = copy.deepcopy(sample.response)
            message["conversation_id"] = conversation_id
            return json_reply(200, message)
        if sample.sse is not None:
            raw = sample.sse
            if sample.conversation_id:
                raw = raw.replace(sample.conversation_id.encode(), conversation_id.encode())
            return Reply(200, stream=split_segments(raw))
        return Reply(200, stream=_gptbots_stream(sample, conversation_id))

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


def _gptbots_stream(sample: Sample, conversation_id: str) -> list[Segment]:
    """A GPTBots stream built from the blocking body, for samples recorded without ``.sse``."""
    message_id = sample.message_id or ""
    events: list[dict[str, Any]] = [
        {
            "code": 11,
            "message": "MessageInfo",
            "data": {"message_id": message_id, "conversation_id": conversation_id},
        }
    ]
    text = _gptbots_text(sample.response)
    events.extend({"code": 3, "message": "Text", "data": piece} for piece in pieces_of(text))
    if "usage" in sample.response:
        events.append({"code": 4, "message": "Cost", "data": sample.response["usage"]})
    events.append({"code": 0, "message": "End", "data": None})
    return [data_event(event) for event in events]
