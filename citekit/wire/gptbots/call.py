"""The GPTBots call as one generator (see ``citekit.wire.flow``): a conversation when none is
given, the message (blocking or streamed), the knowledge references, the suggested questions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...core.errors import (
    CitekitWarning,
    ProviderError,
    ResponseFormatError,
    TransportError,
    warn,
)
from ...core.fields import Fields
from ...core.secrets import scrub
from ...model import Answer, References
from ..flow import Flow, RequestSpec, fetch_json, stream_answer
from ..response import Wire
from .errors import NO_REFERENCES_CODE
from .framing import StreamDecoder
from .reply import GPTBotsAccumulator, parse_message, questions_of

__all__ = [
    "ask_flow",
    "check_flag",
    "conversation_config",
    "message_spec",
    "new_conversation",
    "next_questions_flow",
    "references_flow",
]

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
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"custom_variables[{key!r}] is {value}: JSON has no such number")
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
    cid = Fields(data, "gptbots").string("conversation_id", numbers=True)
    if not cid:
        raise ResponseFormatError("gptbots created a conversation but sent no conversation_id")
    return cid


def new_conversation(wire: Wire, user_id: str) -> Flow[str]:
    """``POST /v1/conversation``: the new conversation's id."""
    spec = RequestSpec("POST", "/v1/conversation", json={"user_id": user_id})
    return (yield from fetch_json(wire, spec, _conversation_id))


def references_flow(wire: Wire, message_id: str) -> Flow[References]:
    """``GET /v1/correlate/dataset``: the knowledge chunks behind the reply ``message_id``."""
    spec = RequestSpec("GET", "/v1/correlate/dataset", params={"message_id": message_id})
    data: Any = yield from fetch_json(wire, spec)
    return References.from_response(data, message_id=message_id)


def next_questions_flow(wire: Wire, answer_id: str) -> Flow[tuple[str, ...]]:
    """``GET /v1/next/question``: questions to ask after the reply ``answer_id``."""
    spec = RequestSpec("GET", "/v1/next/question", params={"answer_id": answer_id})
    return (yield from fetch_json(wire, spec, questions_of))


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
    try:
        return (yield from _completed(wire, answer, references, related_questions))
    except GeneratorExit:  # closed by its owner: nothing to keep
        raise
    except BaseException as stop:
        if not isinstance(stop, Exception) and getattr(stop, "answer", None) is None:
            # Ctrl-C or a cancellation while the references or next questions were fetched:
            # the answer had come whole, and is kept (on ``stop.answer``) without them.
            note = "Stopped while its references or suggested questions were fetched: not included."
            stop.answer = replace(answer, notes=(*answer.notes, note))  # type: ignore[attr-defined]
        raise


def _completed(
    wire: Wire, answer: Answer, references: bool, related_questions: bool
) -> Flow[Answer]:
    """``answer`` with its references and, with ``related_questions``, the next questions."""
    if references and answer.id:
        try:
            refs = yield from references_flow(wire, answer.id)
        except (ProviderError, TransportError, ResponseFormatError) as exc:
            answer = _without_references(answer, exc, wire.secrets)
        else:
            answer = replace(answer, references=refs)
    if related_questions and answer.id:
        try:
            questions = yield from next_questions_flow(wire, answer.id)
        except (ProviderError, TransportError, ResponseFormatError) as exc:
            note = scrub(f"Suggested questions could not be fetched: {exc}", wire.secrets)
            warn(note, CitekitWarning)
            return replace(answer, notes=(*answer.notes, note))
        # Kept in raw (as citekit's own field) so the answer rebuilt from it has them too.
        raw = {**answer.raw, "next_question": list(questions)}
        answer = replace(answer, related_questions=questions, raw=raw)
    return answer


def _without_references(
    answer: Answer,
    problem: ProviderError | TransportError | ResponseFormatError,
    secrets: tuple[str, ...],
) -> Answer:
    """The answer, with a note on why its references are missing: never a failed ask."""
    if isinstance(problem, ProviderError) and problem.code == NO_REFERENCES_CODE:
        note = "No knowledge references: this agent does not support them (GPTBots code 200222)."
        empty = References(message_id=answer.id, note=note)
        return replace(answer, references=empty, notes=(*answer.notes, note))
    note = scrub(f"Knowledge references could not be fetched: {problem}", secrets)
    warn(note, CitekitWarning)
    return replace(answer, notes=(*answer.notes, note))
