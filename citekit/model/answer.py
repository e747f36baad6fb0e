"""An answer and what streams in before it: text, sources, usage, tool calls, choices.

``Answer`` is a frozen value that does no I/O. The wire layer builds it from JSON
(``citekit.wire.parsers.parse_response`` / ``parse_chunks``, ``ck.parse_response``), so a saved
response or a saved list of stream chunks gives the same object that a live call gives. It
shows itself by importing its renderers downward (``citekit.render``), which see it only for
typing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import itemgetter
from typing import Any, NamedTuple

from ..core.fields import count_or_none, number_or_none, opt_text, representable_time
from ..core.names import REFERENCES_PROVIDER
from ..core.secrets import Scrubbed
from ..core.unicode import valid_text
from ..text.reader import numbers
from .sources import (
    SAMPLE_FIELD,
    SAMPLE_MATCHED_FIELD,
    SAMPLE_QUESTION_FIELD,
    Citation,
    GeneratedFile,
    References,
)

__all__ = [
    "Answer",
    "AudioClip",
    "Choice",
    "ComponentOutput",
    "StreamEvent",
    "TextDelta",
    "TextRead",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "first_text",
    "first_text_only",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token (and, for GPTBots, credit) counts; any field a provider omits is ``None``.

    ``tools`` is what Maritaca's built-in tools did, billed per use (its
    ``usage.tool_execution_details``: ``web_search_calls``, ``page_reads``,
    ``data_ocean_gb_processed``, ``code_execution_minutes``, each a number), or ``None``
    when no tool ran.

    >>> ans = ck.Maritaca().ask("Pesquise na web: o que mudou no Pix em 2025?", web_search=True)
    >>> ans.usage.tools
    {'web_search_calls': 2.0, 'page_reads': 5.0}
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_tokens: int | None = None
    tools: Mapping[str, float] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage | None:
        if not isinstance(data, Mapping):
            return None
        details = data.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
        return cls(
            prompt_tokens=count_or_none(data.get("prompt_tokens")),
            completion_tokens=count_or_none(data.get("completion_tokens")),
            total_tokens=count_or_none(data.get("total_tokens")),
            cached_tokens=count_or_none(cached),
            tools=tool_usage(data.get("tool_execution_details")),
            raw=dict(data),
        )


def tool_usage(details: Any) -> dict[str, float] | None:
    """The numbers of a ``tool_execution_details`` object (anything else in it is left out)."""
    if not isinstance(details, Mapping):
        return None
    out: dict[str, float] = {}
    for key, value in details.items():
        number = number_or_none(value)
        if isinstance(key, str) and number is not None:
            out[key] = number
    return out or None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call the model asked for; ``arguments`` is the JSON text as sent."""

    id: str | None
    name: str
    arguments: str
    index: int = 0
    type: str = "function"

    def parsed_arguments(self) -> Any:
        """``arguments`` decoded from JSON (raises ``json.JSONDecodeError`` if malformed)."""
        return json.loads(self.arguments) if self.arguments else {}


@dataclass(frozen=True, slots=True)
class AudioClip:
    """A piece of spoken answer: where to fetch it, what it says, how long it lasts (if told)."""

    url: str | None
    transcript: str = ""
    seconds: float | None = None


@dataclass(frozen=True, slots=True)
class ComponentOutput:
    """What one component of a GPTBots flow agent sent to the output node.

    ``name`` is the component (``from_component_name``: ``"User Input"``, ``"AI Model-1"``),
    ``branch`` its flow branch, ``content`` its text and ``audio`` its clips. A blocking reply's
    ``output[]`` items are these, and its text is theirs; a stream's FlowOutput (code 10) events
    are these too, but its text comes from the Text events: the documented text stream's
    FlowOutput is the "User Input" component echoing the question.
    """

    name: str | None
    branch: str | None
    content: str
    audio: tuple[AudioClip, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", valid_text(self.content))


@dataclass(frozen=True, slots=True)
class Choice:
    """One of the ``n`` completions of a request."""

    index: int
    text: str
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    role: str = "assistant"

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", valid_text(self.text))


@dataclass(frozen=True, slots=True)
class Answer(Scrubbed):
    """A provider's answer: text, where it came from, and what it cost.

    ``text`` is choice 0; ``choices`` holds all of them when ``n > 1``. ``raw`` keeps the
    provider's JSON with every field, known or not. ``notes`` are messages for the reader
    (a content filter, references that could not be fetched, a recorded sample).
    ``parsed`` is the decoded reply of a call with ``schema=``.

    Examples
    --------
    >>> ans = ck.Magisterium().ask(
    ...     "What does Catholic social teaching say about the dignity of human work?"
    ... )
    >>> print(ans.text.splitlines()[0])  # Markdown, with [^n] footnote markers
    Catholic social teaching treats work not merely as a way of earning a living but as a place
    where the human person expresses and develops the dignity given by God.
    >>> len(ans.citations), ans.cited_markers
    (9, {1, 2, 3, 4, 5})
    >>> {marker: len(passages) for marker, passages in ans.citation_groups().items()}
    {1: 3, 2: 2, 3: 1, 4: 2, 5: 1}
    >>> ans.related_questions[0]
    'How does Laborem exercens explain the priority of labour over capital?'
    >>> ans.usage.total_tokens, ans.finish_reason, ans.sample
    (7169, 'stop', 'magisterium/01_dignity_of_work')
    """

    provider: str
    text: str
    model: str | None = None
    id: str | None = None
    created: datetime | None = None
    finish_reason: str | None = None
    citations: tuple[Citation, ...] = ()
    references: References | None = None
    related_questions: tuple[str, ...] = ()
    usage: Usage | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    choices: tuple[Choice, ...] = ()
    question: str | None = None
    conversation_id: str | None = None
    #: The flow components' outputs (GPTBots), in the order they came.
    outputs: tuple[ComponentOutput, ...] = ()
    #: Reasoning apart from the text (GPTBots Thought events, ``<think>`` blocks).
    thoughts: tuple[str, ...] = ()
    files: tuple[GeneratedFile, ...] = ()
    notes: tuple[str, ...] = ()
    partial: bool = False
    cached: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: With ``schema=``: the reply decoded (a pydantic instance for a pydantic model), or None
    #: when it is not JSON valid for the schema (a note says why). Derived from ``text``.
    parsed: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", valid_text(self.text))
        if self.created is not None:  # a time with no UTC form is none (the parser's rule)
            object.__setattr__(self, "created", representable_time(self.created))

    # -- derived -------------------------------------------------------------------------
    @property
    def content_filtered(self) -> bool:
        """True when the provider withheld the answer (``finish_reason == "content_filter"``)."""
        return self.finish_reason == "content_filter"

    @property
    def sample(self) -> str | None:
        """The ``sample_data`` file this answer came from, or ``None`` for a live answer."""
        value = self.raw.get(SAMPLE_FIELD)
        if value is None and self.references is not None:
            return self.references.sample if self.provider == REFERENCES_PROVIDER else None
        return opt_text(value)

    @property
    def batch_id(self) -> str | None:
        """The Maritaca batch this answer came from (``mt.batch``), or None."""
        return opt_text(self.raw.get("batch_id"))

    @property
    def sample_question(self) -> str | None:
        """The question of the recorded sample served for another question, else ``None``.

        The loopback server answers a question it has no recording of with the closest sample,
        and says so (``citekit_sample_matched: false``); the renderers put a notice on top.
        """
        if self.raw.get(SAMPLE_MATCHED_FIELD) is not False:
            return None
        return opt_text(self.raw.get(SAMPLE_QUESTION_FIELD)) or "another question"

    @property
    def cited_markers(self) -> set[int]:
        """Footnote numbers that appear inline in ``text`` (outside code).

        A citation whose marker is not among them is listed but cited nowhere in the text:

        >>> ans = ck.Magisterium().ask("What is a just wage according to Catholic teaching?")
        >>> sorted(ans.cited_markers)
        [1, 2, 3, 4, 5]
        >>> sorted({c.marker for c in ans.citations} - ans.cited_markers)
        [6]
        """
        return set(numbers(self.text))

    def citation_groups(self) -> dict[int, list[Citation]]:
        """Citations grouped by footnote number (several passages may share one document)."""
        groups: dict[int, list[Citation]] = {}
        for c in sorted(self.citations, key=lambda c: c.document_index):
            groups.setdefault(c.marker, []).append(c)
        return groups

    def with_question(self, question: str | None) -> Answer:
        return replace(self, question=question)

    # -- display -------------------------------------------------------------------------
    def to_html(self, *, strict: bool = False) -> str:
        """The answer as HTML with clickable footnotes (``strict`` survives sanitizers).

        Element ids start with a prefix unique to each render, so two renders of one answer
        can share a page.

        >>> ans = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> html = ans.to_html()
        >>> html.startswith('<div class="citekit-answer" id="ck')
        True
        >>> html.count('class="citekit-footnote"')  # one per cited document
        5
        """
        from ..render import answer_html

        return answer_html(self, strict=strict)

    def to_markdown(self) -> str:
        """The answer as Markdown with ``[^n]`` footnotes and their definitions.

        >>> ans = ck.parse_response(
        ...     {
        ...         "choices": [{"message": {"content": "Work is for man.[^1]"}}],
        ...         "citations": [
        ...             {
        ...                 "cited_text": "Work is for man, not man for work.",
        ...                 "document_index": 0,
        ...                 "document_title": "Catechism of the Catholic Church",
        ...                 "document_reference": "2428",
        ...             }
        ...         ],
        ...     },
        ...     provider="magisterium",
        ... )
        >>> print(ans.to_markdown())
        Work is for man.[^1]
        <BLANKLINE>
        [^1]: Catechism of the Catholic Church — no. 2428
        <BLANKLINE>
            > *no. 2428*
            >
            > Work is for man, not man for work.
        <BLANKLINE>
        """
        from ..render import answer_markdown

        return answer_markdown(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from ..render.bundle import answer_bundle

        return answer_bundle(self, include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        # IPython asks this first, for display() and for a cell's result: an answer the live
        # display just showed in this cell is not shown a second time below it.
        from IPython.display import display

        from ..render import shown_live_in_this_cell

        if not shown_live_in_this_cell(self):
            display(self._repr_mimebundle_(), raw=True)  # type: ignore[no-untyped-call]

    def __str__(self) -> str:
        return self.text


class TextDelta(NamedTuple):
    """A piece of answer text as it streams in (``choice`` is the choice index).

    A named tuple, not a dataclass: one is made per streamed chunk, so it must be cheap.
    """

    text: str
    choice: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call: the first one names it, later ones add argument text."""

    index: int
    arguments: str = ""
    id: str | None = None
    name: str | None = None
    choice: int = 0


#: What ``Client.stream()`` yields: deltas as they arrive, then the final ``Answer``.
StreamEvent = TextDelta | ToolCallDelta | Answer

_ONLY_DELTAS = {TextDelta}
# A ``TextDelta``'s fields by position (it is a tuple), which no other event has: neither a
# ``ToolCallDelta`` nor an ``Answer`` can be indexed.
_at_text: Callable[[Any], str] = itemgetter(0)
_at_choice: Callable[[Any], int] = itemgetter(1)


class TextRead(list[StreamEvent]):
    """The events of one read that are all text deltas of the first choice, with ``text``,
    theirs joined: set where the read was already joined (the key's scrub, ``wire.guard``),
    so that ``first_text`` of it costs nothing."""

    __slots__ = ("text",)

    def __init__(self, events: Iterable[StreamEvent], text: str) -> None:
        super().__init__(events)
        self.text = text


def first_text_only(events: Collection[StreamEvent]) -> str | None:
    """The text of ``events`` (a read's) joined, when they are text deltas of the first
    choice alone, and some: the usual read, told and joined in C (no Python per event);
    else None."""
    if set(map(type, events)) == _ONLY_DELTAS and not any(map(_at_choice, events)):
        return "".join(map(_at_text, events))
    return None


def first_text(events: Collection[StreamEvent]) -> str:
    """The text the first choice's deltas among ``events`` add, joined (read in C when they
    are all such deltas: two passes, where telling their types first took a third; none for
    a ``TextRead``)."""
    if type(events) is TextRead:
        return events.text
    try:
        if not any(map(_at_choice, events)):
            return "".join(map(_at_text, events))
    except TypeError:  # an event that is no text delta
        pass
    return "".join(e.text for e in events if type(e) is TextDelta and e.choice == 0)
