"""The parsers of each provider, by name, and the two functions that rebuild an ``Answer`` from
saved JSON: ``parse_response`` (a response body) and ``parse_chunks`` (stream events)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ..core.names import ENTRIES, MARITACA, unknown_provider
from ..model import Answer, StreamEvent
from .gptbots import SPEC as GPTBOTS_SPEC
from .maritaca_responses import ResponsesAccumulator, is_response, parse_responses
from .openai_compat import SPECS as CHAT_SPECS
from .openai_compat import ChatAccumulator

__all__ = [
    "Accumulator",
    "PlainAccumulator",
    "ProviderSpec",
    "TypedAccumulator",
    "get_spec",
    "parse_chunks",
    "parse_response",
]


class Accumulator(Protocol):
    @property
    def finished(self) -> bool: ...
    def feed(self, chunk: Any) -> list[StreamEvent]: ...
    def answer(self, *, partial: bool = False) -> Answer: ...


class TypedAccumulator(Accumulator, Protocol):
    """An accumulator that also reads events of its usual shape from their bytes
    (``citekit.wire.typed``): ``feed_json`` returns None, having read nothing, for any other."""

    def feed_json(self, data: bytes) -> list[StreamEvent] | None: ...


class PlainAccumulator(TypedAccumulator, Protocol):
    """A typed accumulator that also reads a whole read's events at once when each is of the
    plainest shape (``citekit.wire.typed.PlainChunk``): ``feed_plain`` returns None, having
    read nothing, when one is not."""

    def feed_plain(self, datas: list[bytes]) -> list[StreamEvent] | None: ...


class ProviderSpec(Protocol):
    name: str

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer: ...
    def new_accumulator(self, *, question: str | None = None) -> Accumulator: ...


def _specs(*specs: ProviderSpec) -> dict[str, ProviderSpec]:
    found = {spec.name: spec for spec in specs}
    missing = [entry.name for entry in ENTRIES if entry.name not in found]
    if missing or len(found) != len(specs):  # pragma: no cover - checked at import
        raise RuntimeError(f"providers without exactly one parser spec: {missing or specs}")
    return found


class _EitherAccumulator:
    """Maritaca's events: chat-completion chunks, or the Responses API's ``response.*``
    events (told apart by the first event's ``type``)."""

    __slots__ = ("_acc", "provider", "question")

    def __init__(self, provider: str, question: str | None) -> None:
        self.provider = provider
        self.question = question
        self._acc: Accumulator | None = None

    @property
    def finished(self) -> bool:
        return self._acc is not None and self._acc.finished

    def _for(self, chunk: Any) -> Accumulator:
        if self._acc is None:
            kind = chunk.get("type") if isinstance(chunk, Mapping) else None
            responses = isinstance(kind, str) and kind.startswith("response.")
            self._acc = (
                ResponsesAccumulator(provider=self.provider, question=self.question)
                if responses
                else ChatAccumulator(provider=self.provider, question=self.question)
            )
        return self._acc

    def feed(self, chunk: Any) -> list[StreamEvent]:
        return self._for(chunk).feed(chunk)

    def feed_json(self, data: bytes) -> list[StreamEvent] | None:
        # The first event tells which protocol this is; after it, chat chunks are typed.
        acc = self._acc
        return acc.feed_json(data) if type(acc) is ChatAccumulator else None

    def feed_plain(self, datas: list[bytes]) -> list[StreamEvent] | None:
        acc = self._acc
        return acc.feed_plain(datas) if type(acc) is ChatAccumulator else None

    def answer(self, *, partial: bool = False) -> Answer:
        return self._for(None).answer(partial=partial)


class _MaritacaSpec:
    """Maritaca's two wire protocols: a saved body is read by what it is."""

    def __init__(self, chat: ProviderSpec) -> None:
        self.name = chat.name
        self._chat = chat

    def parse_response(self, data: Mapping[str, Any], *, question: str | None = None) -> Answer:
        if is_response(data):
            return parse_responses(data, provider=self.name, question=question)
        return self._chat.parse_response(data, question=question)

    def new_accumulator(self, *, question: str | None = None) -> Accumulator:
        return _EitherAccumulator(self.name, question)


def _with_responses(spec: ProviderSpec) -> ProviderSpec:
    return _MaritacaSpec(spec) if spec.name == MARITACA.name else spec


#: provider name -> its parsers, as each wire module declares them.
_SPECS = _specs(*(_with_responses(s) for s in CHAT_SPECS), GPTBOTS_SPEC)


def get_spec(provider: str) -> ProviderSpec:
    """The parsers of ``provider`` ("magisterium", "maritaca" or "gptbots")."""
    spec = _SPECS.get(provider) if isinstance(provider, str) else None
    if spec is None:
        raise unknown_provider(provider)
    return spec


def parse_response(
    data: Mapping[str, Any],
    *,
    provider: str,
    question: str | None = None,
) -> Answer:
    """The ``Answer`` of a provider's (saved) non-streaming JSON response.

    Raises
    ------
    ResponseFormatError
        When ``data`` is not a response of the provider: not an object, or a field the
        answer is made of (an id, the model, a choice's index or finish reason, a tool
        call, GPTBots' ``output``) of the wrong type or range; the message names the
        field's path. An odd detail of one citation or reference is left out instead.

    Examples
    --------
    A Magisterium ``chat.completion`` body, as saved from an earlier call:

    >>> saved = {
    ...     "id": "chatcmpl-1",
    ...     "object": "chat.completion",
    ...     "created": 1767225600,
    ...     "model": "magisterium-1",
    ...     "choices": [
    ...         {
    ...             "index": 0,
    ...             "message": {"role": "assistant", "content": "Work is for man.[^1]"},
    ...             "finish_reason": "stop",
    ...         }
    ...     ],
    ...     "citations": [
    ...         {
    ...             "cited_text": "Work is for man, not man for work.",
    ...             "document_index": 0,
    ...             "document_title": "Catechism of the Catholic Church",
    ...             "document_year": "1992",
    ...             "document_reference": "2428",
    ...         }
    ...     ],
    ... }
    >>> ans = ck.parse_response(saved, provider="magisterium")
    >>> ans.text, ans.created.year, ans.citations[0].marker
    ('Work is for man.[^1]', 2026, 1)

    ``raw`` is the provider's JSON, so a live answer saved with ``json`` comes back equal:

    >>> import json
    >>> live = ck.Magisterium().ask("What is the principle of subsidiarity?")
    >>> text = json.dumps(dict(live.raw))
    >>> again = ck.parse_response(json.loads(text), provider="magisterium", question=live.question)
    >>> again == live
    True

    A body that is not what the provider sends is refused, naming the field:

    >>> ck.parse_response({"choices": [{"index": "zero"}]}, provider="maritaca")
    Traceback (most recent call last):
    ...
    citekit.core.errors.ResponseFormatError: Maritaca sent choices[0].index as a string ...
    """
    return get_spec(provider).parse_response(data, question=question)


def parse_chunks(
    chunks: Iterable[Mapping[str, Any]],
    *,
    provider: str,
    question: str | None = None,
) -> Answer:
    """The ``Answer`` of a (saved) list of decoded stream events, in arrival order
    (``ResponseFormatError`` for an event of the wrong shape, as :func:`parse_response`)."""
    acc = get_spec(provider).new_accumulator(question=question)
    for chunk in chunks:
        acc.feed(chunk)
    return acc.answer()
