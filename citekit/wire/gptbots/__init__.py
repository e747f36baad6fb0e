"""GPTBots wire format without I/O: error envelopes, blocking replies, stream events, the call.

Errors come as ``{code, message}`` (sometimes ``msg``), with HTTP 200 or an error status; stream
events as ``{code, message, data}`` with small codes (11 message info, 3 text, 10 flow output,
4 cost, 20 citation, 83 correlate attachment, 0 end, ...), so an envelope is an error only when
its code is 10000 or more. Streams come as bare JSON lines or as SSE (``StreamDecoder``).

``ask_flow`` (``call``) is the whole call as one generator (see ``citekit.wire.flow``): a
conversation when none is given, the message (blocking or streamed), then the knowledge
references and the suggested questions. ``reply`` reads blocking replies and stream events,
``citations`` the corner citations, ``framing`` the stream's framing, ``errors`` the error codes,
``history`` the knowledge search (``/v1/vector/match``) and the conversation history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.names import GPTBOTS
from ...model import Answer
from .call import (
    ask_flow,
    check_flag,
    conversation_config,
    message_spec,
    new_conversation,
    next_questions_flow,
    references_flow,
)
from .citations import citation_from, parse_citations
from .errors import NO_REFERENCES_CODE, check_body, classify, error_from_code
from .framing import StreamDecoder
from .history import (
    conversations_flow,
    history_flow,
    parse_messages,
    parse_vector_match,
    search_request,
    vector_search_flow,
)
from .reply import GPTBotsAccumulator, flow_outputs, parse_message

__all__ = [
    "NO_REFERENCES_CODE",
    "SPEC",
    "GPTBotsAccumulator",
    "StreamDecoder",
    "ask_flow",
    "check_body",
    "check_flag",
    "citation_from",
    "classify",
    "conversation_config",
    "conversations_flow",
    "error_from_code",
    "flow_outputs",
    "history_flow",
    "message_spec",
    "new_conversation",
    "next_questions_flow",
    "parse_citations",
    "parse_message",
    "parse_messages",
    "parse_vector_match",
    "references_flow",
    "search_request",
    "vector_search_flow",
]


class _Spec:
    name: str = GPTBOTS.name

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer:
        return parse_message(data, question=question)

    def new_accumulator(self, *, question: str | None = None) -> GPTBotsAccumulator:
        return GPTBotsAccumulator(question=question)


SPEC = _Spec()
