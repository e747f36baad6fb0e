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
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, ClassVar

from ..core.errors import ConfigurationError
from ..core.names import GPTBOTS, ProviderEntry
from ..model import Answer, References, SearchResults
from ..transport.stream import AsyncStream, Stream
from ..wire.flow import Flow
from ..wire.gptbots import (
    ask_flow,
    check_body,
    check_flag,
    classify,
    conversation_config,
    conversations_flow,
    history_flow,
    new_conversation,
    references_flow,
    search_request,
    vector_search_flow,
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


def _check_conversation_id(conversation_id: Any) -> str | None:
    if conversation_id is None:
        return None
    if not isinstance(conversation_id, str) or not conversation_id.strip():
        raise ValueError(
            f"conversation_id={conversation_id!r} must be an id from an earlier answer "
            "(Answer.conversation_id) or new_conversation(); omit it to start a new one"
        )
    return conversation_id.strip()


def _check_message_id(message_id: Any) -> str:
    if not isinstance(message_id, str) or not message_id.strip():
        raise ValueError(f"message_id={message_id!r} must be the agent reply's message id")
    return message_id.strip()


class GPTBots(ProviderClient):
    """Client for GPTBots agents (``GPTBOTS_API_KEY``, region from ``GPTBOTS_ENDPOINT``).

    Parameters
    ----------
    endpoint
        Region: ``"sg"`` (Singapore, default), ``"jp"`` or ``"th"``.
    user_id
        Who conversations are created for (at most 32 characters); generated when omitted.
    citations
        Ask for corner citations by default (``conversation_config.corner_citation``): the
        text then carries ``$[1]$`` marks and ``Answer.citations`` the cited fragments. Each
        call can say otherwise with ``citations=``.

    Examples
    --------
    >>> gb = ck.GPTBots(citations=True)
    >>> ans = gb.ask("What does the travel policy say about booking flights?")
    >>> "$[1]$" in ans.text, ans.citations[0].marker
    (True, 1)
    >>> ans.citations[0].document_title
    'Travel Policy 2025.pdf'
    """

    entry: ClassVar[ProviderEntry] = GPTBOTS

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        user_id: str | None = None,
        citations: bool = False,
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
        self.citations = check_flag("citations", citations)
        super().__init__(base_url=base_url or f"https://api-{region}.gptbots.ai", **kwargs)

    @property
    def _agent(self) -> str:
        """A short digest of the key: which agent answered, without the key itself."""
        return hashlib.sha256(self._config.api_key.encode()).hexdigest()[:16]

    _classify_error = staticmethod(classify)
    _check_body = staticmethod(check_body)

    def _user(self, user_id: str | None) -> str:
        return self.user_id if user_id is None else _check_user_id(user_id)

    def _call(
        self,
        question: str,
        conversation_id: str | None,
        user_id: str | None,
        stream: bool,
        options: dict[str, Any],
    ) -> Flow[Answer]:
        """The ask as one flow; its arguments are checked now, before anything is sent.

        ``options`` are the keyword arguments every ask takes: references, related_questions,
        cache, log, and the ``conversation_config`` ones.
        """
        references = check_flag("references", options.pop("references"))
        related = check_flag("related_questions", options.pop("related_questions"))
        cache, log = options.pop("cache"), options.pop("log")
        if options["citations"] is None:
            options["citations"] = self.citations
        config = conversation_config(**options)
        flow = ask_flow(
            self._wire,
            _check_question(question),
            conversation_id=_check_conversation_id(conversation_id),
            user_id=self._user(user_id),
            stream=stream,
            references=references,
            related_questions=related,
            config=config,
        )
        request = _log_request(question, conversation_id, references, self._agent, config)
        if related:
            request["related_questions"] = True
        return self._logged(
            flow,
            request,
            stream=stream,
            cache=cache,
            log=log,
            cacheable=lambda answer: (
                (not references or answer.references is not None)
                and (not related or "next_question" in answer.raw)
            ),
        )

    def new_conversation(self, *, user_id: str | None = None) -> str:
        """Create a conversation; return its id."""
        return self._run(new_conversation(self._wire, self._user(user_id)))

    async def anew_conversation(self, *, user_id: str | None = None) -> str:
        """Async twin of ``new_conversation``."""
        return await self._arun(new_conversation(self._wire, self._user(user_id)))

    def references(self, message_id: str) -> References:
        """The knowledge chunks behind the agent reply ``message_id``, ranked."""
        return self._run(references_flow(self._wire, _check_message_id(message_id)))

    async def areferences(self, message_id: str) -> References:
        """Async twin of ``references``."""
        return await self._arun(references_flow(self._wire, _check_message_id(message_id)))

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        rerank: str | None = None,
        embedding_rate: float | None = None,
        group_ids: Sequence[str] | None = None,
        data_ids: Sequence[str] | None = None,
        min_score: float | None = None,
    ) -> SearchResults:
        """Search the agent's knowledge base (``POST /v1/vector/match``), best first.

        Parameters
        ----------
        query
            What to look for.
        top_k
            How many chunks, 1 to 50.
        rerank
            A reranker: ``"BGE-Rerank"``, ``"Jina-reranker-v2-base-multilingual"``,
            ``"Jina-colbert-v2"`` or ``"BCE-Rerank"``.
        embedding_rate
            0 (keyword only) to 1 (semantic only, the provider's default).
        group_ids, data_ids
            Knowledge bases and documents to search (both: their union; ``[]``: none).
        min_score
            The lowest relevance kept (``doc_correlation``, 0.1 to 0.95).

        Notes
        -----
        Each result's ``title`` is the document's name and ``text`` the chunk; the frame uses
        the source vocabulary and the results show as HTML, as Magisterium's search does.

        Examples
        --------
        >>> found = ck.GPTBots().search("Great Wall Ming dynasty", top_k=3)
        >>> len(found), found[0].rank, found.provider
        (3, 1, 'gptbots')
        """
        spec = search_request(
            query,
            top_k=top_k,
            rerank=rerank,
            embedding_rate=embedding_rate,
            group_ids=group_ids,
            data_ids=data_ids,
            min_score=min_score,
        )
        return self._run(vector_search_flow(self._wire, spec))

    async def asearch(
        self,
        query: str,
        *,
        top_k: int = 10,
        rerank: str | None = None,
        embedding_rate: float | None = None,
        group_ids: Sequence[str] | None = None,
        data_ids: Sequence[str] | None = None,
        min_score: float | None = None,
    ) -> SearchResults:
        """Async twin of ``search``."""
        spec = search_request(
            query,
            top_k=top_k,
            rerank=rerank,
            embedding_rate=embedding_rate,
            group_ids=group_ids,
            data_ids=data_ids,
            min_score=min_score,
        )
        return await self._arun(vector_search_flow(self._wire, spec))

    def conversations(
        self,
        *,
        since: datetime | date | str | None = None,
        until: datetime | date | str | None = None,
        conversation_type: str = "ALL",
        user_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """The agent's conversations whose last message falls in ``[since, until]``
        (``GET /v1/bot/conversation/page``, every page), as the API lists them:
        ``conversation_id``, ``user_id``, ``recent_chat_time`` (milliseconds), ``subject``,
        ``conversation_type``, ``message_count``, ``cost_credit``, ``bot_id``.

        ``since`` and ``until`` take datetimes (naive ones are UTC), dates or ISO strings and
        are sent as milliseconds; ``since`` defaults to the beginning, ``until`` to now.
        ``conversation_type`` is ``"ALL"``, ``"API"``, ``"EMBED"``, ``"WIDGET"``, ...; a
        ``user_id`` lists only that user's.
        """
        flow = conversations_flow(
            self._wire,
            since=since,
            until=until,
            conversation_type=conversation_type,
            user_id=user_id,
        )
        return self._run(flow)

    async def aconversations(
        self,
        *,
        since: datetime | date | str | None = None,
        until: datetime | date | str | None = None,
        conversation_type: str = "ALL",
        user_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Async twin of ``conversations``."""
        flow = conversations_flow(
            self._wire,
            since=since,
            until=until,
            conversation_type=conversation_type,
            user_id=user_id,
        )
        return await self._arun(flow)

    def history(self, conversation_id: str, *, references: bool = True) -> list[Answer]:
        """What the agent already answered in ``conversation_id`` (``GET /v2/messages``, every
        page): one ``Answer`` per assistant message, oldest first, each with the question it
        answered and, with ``references=True``, its knowledge references (one
        ``GET /v1/correlate/dataset`` per answer). ``ck.sources_frame`` and the charts take
        them as they take any answers.

        >>> gb = ck.GPTBots()
        >>> first = gb.ask("Why was the Great Wall built?")
        >>> past = gb.history(first.conversation_id)
        >>> [a.question for a in past], past[0].text == first.text
        (['Why was the Great Wall built?'], True)
        """
        cid = _check_conversation_id(conversation_id)
        if cid is None:
            raise ValueError("conversation_id= is required: an id from gb.conversations()")
        references = check_flag("references", references)
        return self._run(history_flow(self._wire, cid, references=references))

    async def ahistory(self, conversation_id: str, *, references: bool = True) -> list[Answer]:
        """Async twin of ``history``."""
        cid = _check_conversation_id(conversation_id)
        if cid is None:
            raise ValueError("conversation_id= is required: an id from gb.conversations()")
        references = check_flag("references", references)
        return await self._arun(history_flow(self._wire, cid, references=references))

    def ask(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        display: bool | None = None,
        references: bool = True,
        related_questions: bool = False,
        citations: bool | None = None,
        knowledge: Mapping[str, Sequence[str]] | None = None,
        custom_variables: Mapping[str, Any] | None = None,
        long_term_memory: bool | None = None,
        short_term_memory: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
    ) -> Answer:
        """Ask the agent (a new conversation unless ``conversation_id=``) and attach references.

        One ask is up to four requests: a conversation (skipped with ``conversation_id=``), the
        message, its knowledge references (skipped with ``references=False``) and, with
        ``related_questions=True``, ``GET /v1/next/question`` for ``Answer.related_questions``.
        The free plan allows 3 requests a minute.

        ``citations=True`` asks for corner citations (``$[N]$`` marks in the text,
        ``Answer.citations``); None uses the client's default. ``knowledge={"data_ids": [...],
        "group_ids": [...]}`` limits the knowledge searched, ``custom_variables={...}`` fills
        the agent's variables, ``long_term_memory=`` / ``short_term_memory=`` switch its
        memories: each goes in ``conversation_config`` only when given. ``log``, ``cache`` and
        ``deadline`` (seconds the whole ask may take, all its requests together) work as for
        the other clients.

        >>> gb = ck.GPTBots()
        >>> ans = gb.ask(
        ...     "Where is my refund for order 55102?",
        ...     references=False,
        ...     related_questions=True,
        ...     custom_variables={"customer_tier": "gold"},
        ... )
        >>> ans.related_questions[0]
        'How long do card refunds take to appear?'
        >>> again = gb.ask("And for a gift card?", conversation_id=ans.conversation_id)
        >>> again.conversation_id == ans.conversation_id
        True

        With ``stream=True`` the text shows as it arrives (``display=False`` turns that off)
        and the same final ``Answer`` is returned.
        """
        options = dict(
            references=references,
            related_questions=related_questions,
            citations=citations,
            knowledge=knowledge,
            custom_variables=custom_variables,
            long_term_memory=long_term_memory,
            short_term_memory=short_term_memory,
            cache=cache,
            log=log,
        )
        flow = self._call(question, conversation_id, user_id, stream, options)
        if stream:
            return self._consume(self._stream(flow, deadline), display)
        return self._run(flow, deadline)

    async def aask(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        display: bool | None = None,
        references: bool = True,
        related_questions: bool = False,
        citations: bool | None = None,
        knowledge: Mapping[str, Sequence[str]] | None = None,
        custom_variables: Mapping[str, Any] | None = None,
        long_term_memory: bool | None = None,
        short_term_memory: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
    ) -> Answer:
        """Async twin of ``ask``."""
        options = dict(
            references=references,
            related_questions=related_questions,
            citations=citations,
            knowledge=knowledge,
            custom_variables=custom_variables,
            long_term_memory=long_term_memory,
            short_term_memory=short_term_memory,
            cache=cache,
            log=log,
        )
        flow = self._call(question, conversation_id, user_id, stream, options)
        if stream:
            return await self._aconsume(self._astream(flow, deadline), display)
        return await self._arun(flow, deadline)

    def stream(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        references: bool = True,
        related_questions: bool = False,
        citations: bool | None = None,
        knowledge: Mapping[str, Sequence[str]] | None = None,
        custom_variables: Mapping[str, Any] | None = None,
        long_term_memory: bool | None = None,
        short_term_memory: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
    ) -> Stream:
        """Stream the answer: ``TextDelta`` events as they arrive, then the ``Answer`` (with
        references). The ``Stream`` is a context manager and holds the answer in ``.answer``.
        """
        options = dict(
            references=references,
            related_questions=related_questions,
            citations=citations,
            knowledge=knowledge,
            custom_variables=custom_variables,
            long_term_memory=long_term_memory,
            short_term_memory=short_term_memory,
            cache=cache,
            log=log,
        )
        flow = self._call(question, conversation_id, user_id, True, options)
        return self._stream(flow, deadline)

    def astream(
        self,
        question: str,
        *,
        conversation_id: str | None = None,
        user_id: str | None = None,
        references: bool = True,
        related_questions: bool = False,
        citations: bool | None = None,
        knowledge: Mapping[str, Sequence[str]] | None = None,
        custom_variables: Mapping[str, Any] | None = None,
        long_term_memory: bool | None = None,
        short_term_memory: bool | None = None,
        cache: bool | None = None,
        log: bool | None = None,
        deadline: float | None = None,
    ) -> AsyncStream:
        """Async twin of ``stream``: an ``AsyncStream`` (``async for``, ``async with``)."""
        options = dict(
            references=references,
            related_questions=related_questions,
            citations=citations,
            knowledge=knowledge,
            custom_variables=custom_variables,
            long_term_memory=long_term_memory,
            short_term_memory=short_term_memory,
            cache=cache,
            log=log,
        )
        flow = self._call(question, conversation_id, user_id, True, options)
        return self._astream(flow, deadline)


def _log_request(
    question: str,
    conversation_id: str | None,
    references: bool,
    agent: str,
    config: dict[str, Any],
) -> dict[str, Any]:
    """What identifies an ask in the answer log: no user id (fresh asks can be cached), but
    the agent (a GPTBots key belongs to one agent; a digest of it, never the key) and the
    ``conversation_config`` when one is sent."""
    request: dict[str, Any] = {
        "question": question,
        "conversation_id": conversation_id,
        "references": references,
        "agent": agent,
    }
    if config:
        request["conversation_config"] = config
    return request
