"""The chat-completions client shared by Magisterium and Maritaca (sync and async methods).

Every call is one flow, ``citekit.wire.openai_compat.chat_flow`` inside the answer log's
wrapper; sync methods drive it with ``httpx.Client``, the ``a``-prefixed twins with an
``httpx.AsyncClient`` bound to the running loop, so both give equal answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, Unpack

from ..core.errors import CitekitWarning, warn
from ..model import Answer
from ..transport.stream import AsyncStream, Stream
from ..wire.chat_params import CHAT_PARAMETERS, build_chat_body, last_user_message
from ..wire.flow import Flow, RequestSpec
from ..wire.openai_compat import chat_flow
from ._client import ProviderClient, _answer_log

__all__ = ["ChatClient", "ChatParams", "ContentFilteredWarning"]


class ContentFilteredWarning(CitekitWarning):
    """The provider withheld an answer with its content filter."""


class ChatParams(TypedDict, total=False):
    """Chat-completions parameters; each is checked against its documented range."""

    model: str
    temperature: float
    top_p: float
    max_tokens: int
    n: int
    stop: Sequence[str]
    frequency_penalty: float
    presence_penalty: float
    tools: Sequence[Mapping[str, Any]]
    tool_choice: Any
    stream_options: Mapping[str, Any]
    extra_body: Mapping[str, Any]
    return_related_questions: bool
    safety_settings: Mapping[str, Any]
    web_search: bool
    data_ocean: bool
    code_execution: bool
    service_tier: str
    api: Literal["chat", "responses"]
    schema: Any
    response_format: Mapping[str, Any]


Messages = Sequence[Mapping[str, Any]]
#: A call's flow over one wire protocol: ``chat_flow`` and its like.
WireFlow = Callable[..., Flow[Answer]]


def _messages_for(question: str, system: str | None) -> list[dict[str, Any]]:
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": question})
    return messages


class ChatClient(ProviderClient):
    """OpenAI-style chat completions with citekit answers."""

    def _provider_body(self, body: dict[str, Any], options: dict[str, Any]) -> None:
        """Add provider-specific options to ``body`` (after checking them)."""
        if options:
            names = ", ".join(sorted(options))
            raise TypeError(f"{self.display_name} does not take {names}")

    def _prepare(
        self, messages: Messages, *, stream: bool, params: dict[str, Any]
    ) -> tuple[RequestSpec, str | None]:
        params = dict(params)
        model = params.pop("model", None)
        if model is None:
            model = self.model
        if model is None:
            raise ValueError(f"No model for {self.display_name}: pass model=")
        common = {k: params.pop(k) for k in list(params) if k in _COMMON}
        body = build_chat_body(messages, model=model, stream=stream, **common)
        self._provider_body(body, params)
        return (
            RequestSpec("POST", "/chat/completions", json=body, stream=stream),
            last_user_message(body["messages"]),
        )

    def _call(
        self,
        messages: Messages,
        *,
        stream: bool,
        cache: bool | None,
        log: bool | None,
        params: Mapping[str, Any],
    ) -> Flow[Answer]:
        """The call as a flow; its arguments are checked now, before anything is sent."""
        spec, question = self._prepare(messages, stream=stream, params=dict(params))
        flow = self._wire_flow(spec)(self._wire, spec, question=question)
        return self._logged(flow, spec.json, stream=stream, cache=cache, log=log, finish=self._done)

    def _recalled(
        self,
        messages: Messages,
        cache: bool | None,
        params: Mapping[str, Any],
        deadline: float | None,
    ) -> Answer | None:
        """The answer of a blocking call held in memory (``ProviderClient._held``), or None;
        its arguments checked as a call that runs checks them."""
        self._deadline(deadline)
        if not _answer_log().cache_enabled(cache):  # the request is not even built
            return None
        spec, _ = self._prepare(messages, stream=False, params=dict(params))
        return self._held(spec.json, cache)

    def _held_answer(
        self,
        question: str,
        *,
        system: str | None = None,
        stream: bool = False,
        cache: bool | None = None,
        deadline: float | None = None,
        **params: Any,
    ) -> Answer | None:
        """What ``ask(question, ...)`` answers from memory (``_recalled``), else None: a
        batch settles these on its caller's thread before it starts its event loop."""
        if stream:
            return None
        params.pop("display", None)  # neither changes the answer given from memory
        params.pop("log", None)
        return self._recalled(_messages_for(question, system), cache, params, deadline)

    def _wire_flow(self, spec: RequestSpec) -> WireFlow:
        """The flow that speaks ``spec``'s protocol (Maritaca also speaks its Responses API)."""
        return chat_flow

    def _done(self, answer: Answer) -> Answer:
        if answer.content_filtered:
            warn(
                f"{self.display_name} withheld the answer to {answer.question!r}: "
                "finish_reason is 'content_filter'. See answer.notes.",
                ContentFilteredWarning,
            )
        return answer

    def chat(
        self,
        messages: Messages,
        *,
        stream: bool = False,
        display: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
        **params: Unpack[ChatParams],
    ) -> Answer:
        """Send ``messages`` and return the ``Answer``.

        With ``stream=True`` the answer streams in (shown live in a notebook or terminal;
        ``display=False`` turns that off) and the same final ``Answer`` is returned.
        ``log=False`` keeps this call out of the local answer log; ``cache=True`` answers a
        request identical to a logged one from the log (``answer.cached`` is then True).
        ``deadline=`` overrides the client's for this call: seconds it may take in all.

        >>> mg = ck.Magisterium()
        >>> ans = mg.chat([{"role": "user", "content": "What is subsidiarity?"}], deadline=30)
        >>> ans.partial
        False
        """
        if stream:
            events = self.stream(messages, cache=cache, log=log, deadline=deadline, **params)
            return self._consume(events, display)
        held = self._recalled(messages, cache, params, deadline)
        if held is not None:
            return held
        flow = self._call(messages, stream=False, cache=cache, log=log, params=params)
        return self._run(flow, deadline)

    async def achat(
        self,
        messages: Messages,
        *,
        stream: bool = False,
        display: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
        **params: Unpack[ChatParams],
    ) -> Answer:
        """Async twin of ``chat``."""
        if stream:
            events = self.astream(messages, cache=cache, log=log, deadline=deadline, **params)
            return await self._aconsume(events, display)
        held = self._recalled(messages, cache, params, deadline)
        if held is not None:
            return held
        flow = self._call(messages, stream=False, cache=cache, log=log, params=params)
        return await self._arun(flow, deadline)

    def ask(
        self,
        question: str,
        *,
        system: str | None = None,
        stream: bool = False,
        display: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
        **params: Unpack[ChatParams],
    ) -> Answer:
        """Ask one question (optionally after a ``system`` message); see ``chat``."""
        messages = _messages_for(question, system)
        return self.chat(
            messages,
            stream=stream,
            display=display,
            cache=cache,
            log=log,
            deadline=deadline,
            **params,
        )

    async def aask(
        self,
        question: str,
        *,
        system: str | None = None,
        stream: bool = False,
        display: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
        **params: Unpack[ChatParams],
    ) -> Answer:
        """Async twin of ``ask``."""
        messages = _messages_for(question, system)
        return await self.achat(
            messages,
            stream=stream,
            display=display,
            cache=cache,
            log=log,
            deadline=deadline,
            **params,
        )

    def stream(
        self,
        messages: Messages | str,
        *,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
        **params: Unpack[ChatParams],
    ) -> Stream:
        """Stream the answer: ``TextDelta`` and ``ToolCallDelta`` events as they arrive, then
        the ``Answer``; ``messages`` may be a question.

        The ``Stream`` is a context manager (leaving it frees the connection) and holds the
        final answer in ``.answer``. A stream that breaks after it began raises
        ``StreamInterrupted`` with the partial answer in ``.answer`` (``StreamTimeout`` past
        its ``deadline=``); after Ctrl-C in the loop, the ``KeyboardInterrupt`` and the stream
        hold it in ``.answer`` too.
        """
        if isinstance(messages, str):
            messages = _messages_for(messages, None)
        flow = self._call(messages, stream=True, cache=cache, log=log, params=params)
        return self._stream(flow, deadline)

    def astream(
        self,
        messages: Messages | str,
        *,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
        **params: Unpack[ChatParams],
    ) -> AsyncStream:
        """Async twin of ``stream``: an ``AsyncStream`` (``async for``, ``async with``)."""
        if isinstance(messages, str):
            messages = _messages_for(messages, None)
        flow = self._call(messages, stream=True, cache=cache, log=log, params=params)
        return self._astream(flow, deadline)


#: What _prepare hands to build_chat_body; the rest are provider options.
_COMMON = CHAT_PARAMETERS | {"extra_body"}
