"""Conversations on the command line: ``citekit ask -c`` continues the last one of the log,
``citekit chat`` holds one, a question a line, until Ctrl-D.

A conversation is what the provider needs to go on: GPTBots keeps it on its side, so the next
question carries its ``conversation_id``; Magisterium and Maritaca keep nothing, so the next
question is sent after the whole history (the messages of the last call, its answer, the new
question), as their chat-completions APIs document. The last conversation is read back from
the answer log: its newest complete answer (of ``--provider``, when given).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..core.names import display_name
from ..core.secrets import MASK
from ..model import Answer
from ..store.keys import masked_tokens

__all__ = ["Conversation", "last_conversation", "questions"]

#: The newest complete answer of the log (of one provider, with the second form).
_LAST = (
    "SELECT provider, request_json, text, conversation_id, base_url, question FROM answers "
    "WHERE error_type IS NULL AND response_json IS NOT NULL AND partial = 0 {} "
    "ORDER BY id DESC LIMIT 1"
)


class NoConversation(ValueError):
    """There is no conversation in the log to continue (a usage error: exit status 2)."""


@dataclass
class Conversation:
    """What the next question of a conversation is sent with.

    ``messages``: the history so far, for the chat-completions providers; ``conversation_id``:
    GPTBots' conversation; ``model``: the model the conversation was held with (None: the
    client's); ``base_url``: where it was held (GPTBots knows its conversations only there).
    """

    provider: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    conversation_id: str | None = None
    model: str | None = None
    base_url: str | None = None
    #: The questions of ``messages`` (numbered from 1) that the log holds with ``***`` where
    #: it did not keep what stood there (an API key, which is never logged; in a log written
    #: before questions were kept as typed, a word shaped like a key too): they are sent as
    #: the log holds them (``masked_note`` says so).
    masked: list[int] = field(default_factory=list)

    def masked_note(self) -> str | None:
        """What ``ask -c`` says of the questions it resends with ``***`` (None: none)."""
        if not self.masked:
            return None
        which = ", ".join(str(i) for i in self.masked)
        many = len(self.masked) > 1
        return (
            f"citekit: note: question{'s' if many else ''} {which} of this conversation "
            f"{'are' if many else 'is'} sent as the answer log holds "
            f"{'them' if many else 'it'}, with *** where the log keeps no key (API keys are "
            "never logged): ask without -c, with the full question, if the answer needs it"
        )

    def _messages(self, question: str) -> list[dict[str, Any]]:
        return [*self.messages, {"role": "user", "content": question}]

    def stream(self, client: Any, question: str) -> Any:
        """The client's stream of the next answer."""
        if callable(getattr(client, "chat", None)):
            return client.stream(self._messages(question))
        return client.stream(question, conversation_id=self.conversation_id)

    def ask(self, client: Any, question: str) -> Answer:
        """The next answer, whole."""
        answer: Answer
        if callable(getattr(client, "chat", None)):
            answer = client.chat(self._messages(question), display=False)
        else:
            answer = client.ask(question, conversation_id=self.conversation_id, display=False)
        return answer

    def went_on(self, question: str, answer: Answer) -> None:
        """Keep the turn: the question and the answer join the history (GPTBots: its
        conversation id is kept)."""
        self.messages = [*self._messages(question), {"role": "assistant", "content": answer.text}]
        if answer.conversation_id:
            self.conversation_id = answer.conversation_id


def last_conversation(log: Any, provider: str | None) -> Conversation:
    """The conversation of the newest complete answer of ``log`` (of ``provider`` when
    given), ready for the next question; ``NoConversation`` when there is none."""
    params: list[Any] = []
    condition = ""
    if provider is not None:
        condition, params = "AND provider = ?", [provider]
    found = log.fetch(_LAST.format(condition), params)
    if not found:
        whose = f" of {display_name(provider)}" if provider else ""
        raise NoConversation(
            f"ask -c: the answer log {log.path} holds no answer{whose} to continue from; "
            'ask a first question without -c (citekit ask "What is grace?")'
        )
    name, request_json, text, conversation_id, base_url, question = found[0]
    try:
        request = json.loads(request_json or "null")
    except ValueError:
        request = None
    sent = request.get("messages") if isinstance(request, dict) else None
    if (
        isinstance(sent, list)
        and sent
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in sent)
    ):  # a chat-completions conversation: its whole history goes with the next question
        model = request.get("model") if isinstance(request.get("model"), str) else None
        history = [*_as_typed(sent, question), {"role": "assistant", "content": text or ""}]
        asked = [m for m in history if m["role"] == "user"]
        masked = [i for i, m in enumerate(asked, 1) if MASK in str(m.get("content"))]
        return Conversation(name, history, model=model, base_url=base_url, masked=masked)
    if conversation_id:  # a conversation the provider keeps (GPTBots)
        return Conversation(name, conversation_id=conversation_id, base_url=base_url)
    raise NoConversation(
        f"ask -c: the last {display_name(name)} call in the log has neither a message history "
        "nor a conversation id to continue; ask without -c to start a new conversation"
    )


def _as_typed(sent: list[dict[str, Any]], question: Any) -> list[dict[str, Any]]:
    """The logged messages, the last question as the ``question`` column holds it: as typed
    (API keys out), where a log written before citekit kept what the user typed in the
    request had its words shaped like keys masked there (``key AB12cd34ef`` as ``key ***``)."""
    last = max((i for i, m in enumerate(sent) if m.get("role") == "user"), default=None)
    if last is None or not isinstance(question, str):
        return sent
    logged = sent[last].get("content")
    if isinstance(logged, str) and logged != question and masked_tokens(question) == logged:
        return [*sent[:last], {**sent[last], "content": question}, *sent[last + 1 :]]
    return sent


def questions(stdin: TextIO | None = None, out: TextIO | None = None) -> Iterator[str]:
    """The questions of ``citekit chat``: asked for with a ``> `` prompt on a terminal (line
    editing with readline where Python has it), one a line from a pipe (each echoed after
    ``> `` so the transcript reads as a dialogue); until the end of input (Ctrl-D), ``exit``
    or ``quit``. Blank lines are skipped."""
    source = stdin if stdin is not None else sys.stdin
    shown = out if out is not None else sys.stdout
    isatty = getattr(source, "isatty", None)
    interactive = source is sys.stdin and callable(isatty) and isatty()
    read: Callable[[], str]
    if interactive:
        with contextlib.suppress(ImportError):  # Windows has none
            import readline  # noqa: F401  (line editing and history for input())

        def read() -> str:
            try:
                return input("> ") + "\n"
            except EOFError:
                shown.write("\n")
                return ""

    else:
        read = source.readline
    while True:
        line = read()
        if not line:
            return
        question = line.strip()
        if not question:
            continue
        if question.lower() in ("exit", "quit"):
            return
        if not interactive:
            shown.write(f"> {' '.join(question.split())}\n")
        yield question
