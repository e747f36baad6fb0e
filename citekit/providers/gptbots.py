"""GPTBots: agent conversations and the knowledge chunks behind each answer.

Flow: ``POST /v1/conversation`` gives a ``conversation_id``; ``POST /v2/conversation/message``
answers (blocking JSON or an SSE stream of ``{code, message, data}`` events); then
``GET /v1/correlate/dataset?message_id=`` returns the knowledge chunks with relevance scores.
Errors come as ``{code, message}`` (sometimes ``msg``), with HTTP 200 or an error status.
"""

from __future__ import annotations

import hashlib
import os
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from ..core.errors import (
    CitekitWarning,
    ConfigurationError,
    ProviderError,
    ResponseFormatError,
    StreamInterrupted,
    TransportError,
)
from ..core.models import Answer, References, StreamEvent, TextDelta
from ..transport.http import RequestSpec
from ..wire.gptbots import (
    NO_REFERENCES_CODE,
    GPTBotsAccumulator,
    check_body,
    classify,
    parse_message,
)
from ._client import ProviderClient

__all__ = ["GPTBots"]

REGIONS = ("sg", "jp", "th")
MAX_USER_ID = 32


def _check_question(question: Any) -> str:
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    return question


def _check_user_id(user_id: Any) -> str:
    if user_id is None:
        return "citekit-" + uuid.uuid4().hex[:16]
    if not isinstance(user_id, str) or not user_id or len(user_id) > MAX_USER_ID:
        raise ValueError(
            f"user_id={user_id!r} must be a non-empty string of at most {MAX_USER_ID} characters"
        )
    return user_id


def _check_message_id(message_id: Any) -> str:
    if not isinstance(message_id, str) or not message_id.strip():
        raise ValueError(f"message_id={message_id!r} must be the agent reply's message id")
    return message_id.strip()


def _message_spec(conversation_id: str, question: str, *, stream: bool) -> RequestSpec:
    return RequestSpec(
        "POST",
        "/v2/conversation/message",
        json={
            "conversation_id": conversation_id,
            "response_mode": "streaming" if stream else "blocking",
            "messages": [{"role": "user", "content": question}],
        },
        stream=stream,
    )


def _conversation_id(data: Any) -> str:
    cid = data.get("conversation_id") if isinstance(data, Mapping) else None
    if not cid:
        raise ResponseFormatError("gptbots created a conversation but sent no conversation_id")
    return str(cid)


def _with_references(
    answer: Answer,
    refs: References | None,
    problem: ProviderError | TransportError | ResponseFormatError | None,
) -> Answer:
    if problem is None:
        return replace(answer, references=refs)
    if isinstance(problem, ProviderError) and problem.code == NO_REFERENCES_CODE:
        note = "No knowledge references: this agent does not support them (GPTBots code 200222)."
        empty = References(message_id=answer.id, note=note)
        return replace(answer, references=empty, notes=(*answer.notes, note))
    note = f"Knowledge references could not be fetched: {problem}"
    warnings.warn(note, CitekitWarning, stacklevel=4)
    return replace(answer, notes=(*answer.notes, note))


class GPTBots(ProviderClient):
    """Client for GPTBots agents (``GPTBOTS_API_KEY``, region from ``GPTBOTS_ENDPOINT``).

    Parameters
    ----------
    endpoint
        Region: ``"sg"`` (Singapore, default), ``"jp"`` or ``"th"``.
    user_id
        Who conversations are created for (at most 32 characters); generated when omitted.
    """

    name: ClassVar[str] = "gptbots"
    default_base_url: ClassVar[str] = "https://api-sg.gptbots.ai"
    api_key_env: ClassVar[str] = "GPTBOTS_API_KEY"

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        user_id: str | None = None,
        base_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        base_url = base_url or os.environ.get(self.base_url_env) or None
        region = endpoint or (None if base_url else os.environ.get("GPTBOTS_ENDPOINT")) or "sg"
        if region not in REGIONS:
            raise ConfigurationError(
                f"endpoint={region!r} is not a GPTBots region; use one of {', '.join(REGIONS)}"
            )
        self.endpoint = region
        self.user_id = _check_user_id(user_id)
        super().__init__(base_url=base_url or f"https://api-{region}.gptbots.ai", **kwargs)

    @property
    def _agent(self) -> str:
        """A short digest of the key: which agent answered, without the key itself."""
        return hashlib.sha256(self._config.api_key.encode()).hexdigest()[:16]

    _classify_error = staticmethod(classify)
    _check_body = staticmethod(check_body)

    # -- sync ------------------------------------------------------------------------------
    def new_conversation(self, *, user_id: str | None = None) -> str:
        """Create a conversation; return its id."""
        spec = RequestSpec("POST", "/v1/conversation", json={"user_id": self._user(user_id)})
        return _conversation_id(self._sender.request_json(spec))

    def references(self, message_id: str) -> References:
        """The knowledge chunks behind the agent reply ``message_id``, ranked."""
        mid = _check_message_id(message_id)
        spec = RequestSpec("GET", "/v1/correlate/dataset", params={"message_id": mid})
        return References.from_response(self._sender.request_json(spec), message_id=mid)

    def ask(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        display: bool | None = None,
        references: bool = True,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> Answer:
        """Ask the agent (a new conversation unless ``conversation_id=``) and attach references.

        ``references=False`` skips ``GET /v1/correlate/dataset``; ``log`` and ``cache`` work
        as for the other clients.
        """
        _check_question(question)
        if stream:
            events = self.stream(
                question,
                conversation_id=conversation_id,
                user_id=user_id,
                references=references,
                cache=cache,
                log=log,
            )
            return self._consume(events, display)
        request = _log_request(question, conversation_id, references, self._agent)
        with self._log_call(request, cache=cache, log=log) as call:
            if call.cached is not None:
                return call.cached
            cid = conversation_id or self.new_conversation(user_id=user_id)
            data = self._sender.request_json(_message_spec(cid, question, stream=False))
            answer = _with_conversation(parse_message(data, question=question), cid)
            answer = self._attach(answer) if references else answer
            return call.done(answer, cacheable=_complete(answer, references))

    def stream(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        references: bool = True,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> Iterator[StreamEvent]:
        """Yield text deltas as they arrive, then the ``Answer`` (with references)."""
        _check_question(question)
        user = self._user(user_id)
        logging = {"cache": cache, "log": log}
        return self._stream_events(question, conversation_id, user, references, logging)

    def _stream_events(
        self,
        question: str,
        conversation_id: str | None,
        user: str,
        references: bool,
        logging: dict[str, bool | None],
    ) -> Iterator[StreamEvent]:
        request = _log_request(question, conversation_id, references, self._agent)
        with self._log_call(request, stream=True, **logging) as call:
            if call.cached is not None:
                yield TextDelta(call.cached.text, 0)
                yield call.cached
                return
            cid = conversation_id or self.new_conversation(user_id=user)
            acc = GPTBotsAccumulator(question=question)
            received = False
            try:
                for event in self._sender.stream_json(_message_spec(cid, question, stream=True)):
                    received = True
                    yield from acc.feed(event)
            except (TransportError, ResponseFormatError, ProviderError) as exc:
                if not received:
                    raise
                raise _interrupted(acc, cid, exc) from exc
            answer = _finished(acc, cid)
            answer = self._attach(answer) if references else answer
            yield call.done(answer, cacheable=_complete(answer, references))

    def _attach(self, answer: Answer) -> Answer:
        if not answer.id:
            return answer
        try:
            refs = self.references(answer.id)
        except (ProviderError, TransportError, ResponseFormatError) as exc:
            return _with_references(answer, None, exc)
        return _with_references(answer, refs, None)

    # -- async -----------------------------------------------------------------------------
    async def anew_conversation(self, *, user_id: str | None = None) -> str:
        """Async twin of ``new_conversation``."""
        spec = RequestSpec("POST", "/v1/conversation", json={"user_id": self._user(user_id)})
        return _conversation_id(await self._asender.request_json(spec))

    async def areferences(self, message_id: str) -> References:
        """Async twin of ``references``."""
        mid = _check_message_id(message_id)
        spec = RequestSpec("GET", "/v1/correlate/dataset", params={"message_id": mid})
        return References.from_response(await self._asender.request_json(spec), message_id=mid)

    async def aask(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        display: bool | None = None,
        references: bool = True,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> Answer:
        """Async twin of ``ask``."""
        _check_question(question)
        if stream:
            events = self.astream(
                question,
                conversation_id=conversation_id,
                user_id=user_id,
                references=references,
                cache=cache,
                log=log,
            )
            return await self._aconsume(events, display)
        request = _log_request(question, conversation_id, references, self._agent)
        with self._log_call(request, cache=cache, log=log) as call:
            if call.cached is not None:
                return call.cached
            cid = conversation_id or await self.anew_conversation(user_id=user_id)
            data = await self._asender.request_json(_message_spec(cid, question, stream=False))
            answer = _with_conversation(parse_message(data, question=question), cid)
            answer = await self._aattach(answer) if references else answer
            return call.done(answer, cacheable=_complete(answer, references))

    def astream(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        references: bool = True,
        cache: bool | None = None,
        log: bool | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Async twin of ``stream``."""
        _check_question(question)
        user = self._user(user_id)
        logging = {"cache": cache, "log": log}
        return self._astream_events(question, conversation_id, user, references, logging)

    async def _astream_events(
        self,
        question: str,
        conversation_id: str | None,
        user: str,
        references: bool,
        logging: dict[str, bool | None],
    ) -> AsyncIterator[StreamEvent]:
        request = _log_request(question, conversation_id, references, self._agent)
        with self._log_call(request, stream=True, **logging) as call:
            if call.cached is not None:
                yield TextDelta(call.cached.text, 0)
                yield call.cached
                return
            cid = conversation_id or await self.anew_conversation(user_id=user)
            acc = GPTBotsAccumulator(question=question)
            received = False
            try:
                spec = _message_spec(cid, question, stream=True)
                async for event in self._asender.stream_json(spec):
                    received = True
                    for item in acc.feed(event):
                        yield item
            except (TransportError, ResponseFormatError, ProviderError) as exc:
                if not received:
                    raise
                raise _interrupted(acc, cid, exc) from exc
            answer = _finished(acc, cid)
            answer = await self._aattach(answer) if references else answer
            yield call.done(answer, cacheable=_complete(answer, references))

    async def _aattach(self, answer: Answer) -> Answer:
        if not answer.id:
            return answer
        try:
            refs = await self.areferences(answer.id)
        except (ProviderError, TransportError, ResponseFormatError) as exc:
            return _with_references(answer, None, exc)
        return _with_references(answer, refs, None)

    # -- shared ----------------------------------------------------------------------------
    def _user(self, user_id: str | None) -> str:
        return self.user_id if user_id is None else _check_user_id(user_id)


def _with_conversation(answer: Answer, conversation_id: str) -> Answer:
    return answer if answer.conversation_id else replace(answer, conversation_id=conversation_id)


def _finished(acc: GPTBotsAccumulator, conversation_id: str) -> Answer:
    if not acc.finished:
        raise _interrupted(
            acc, conversation_id, ResponseFormatError("the stream ended before its End event")
        )
    return _with_conversation(acc.answer(), conversation_id)


def _log_request(
    question: str, conversation_id: str | None, references: bool, agent: str
) -> dict[str, Any]:
    """What identifies an ask in the answer log: no user id (fresh asks can be cached), but
    the agent (a GPTBots key belongs to one agent; a digest of it, never the key)."""
    return {
        "question": question,
        "conversation_id": conversation_id,
        "references": references,
        "agent": agent,
    }


def _complete(answer: Answer, references: bool) -> bool:
    """False when references were asked for and could not be fetched: not worth caching."""
    return not references or answer.references is not None


def _interrupted(
    acc: GPTBotsAccumulator, conversation_id: str, exc: Exception
) -> StreamInterrupted:
    partial = acc.answer(partial=True)
    if partial.conversation_id is None:
        partial = replace(partial, conversation_id=conversation_id)
    return StreamInterrupted(
        f"The GPTBots stream broke after {len(partial.text)} characters ({exc}). "
        "The partial answer is in .answer",
        answer=partial,
    )
