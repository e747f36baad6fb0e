"""Provider-neutral values: an answer, its citations, its knowledge references, usage.

Every class here is a frozen dataclass and does no I/O. Provider modules build them from wire
JSON (``citekit.providers.*.parse_*``); ``Answer.from_response`` and ``Answer.from_chunks`` reach
those parsers so a saved response or a saved list of stream chunks gives the same object that a
live call gives.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, overload

from .fields import MAX_INDEX, int_or_none, number_or_none, text_or_none
from .names import REFERENCES_PROVIDER, ProviderName
from .text import numbers

__all__ = [
    "Answer",
    "Choice",
    "Citation",
    "GeneratedFile",
    "ProviderName",
    "Reference",
    "References",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
]


#: Field an answer carries when it was built from the recorded-format files in ``sample_data/``.
SAMPLE_FIELD = "citekit_sample"


def _opt_str(value: Any) -> str | None:
    # A wire string, or an integer as its digits (ids, years); anything else is not one.
    return text_or_none(value, numbers=True)


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: surrogate pairs (an emoji split across two JSON strings or
    stream chunks, ``"\\ud83d"`` + ``"\\ude00"``) joined into their character, lone surrogates
    replaced by U+FFFD. Text that UTF-8 cannot encode would be lost on its way to a file."""
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii: the common, fast case
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def decode_entities(text: str) -> str:
    """Decode HTML entities (``&apos;``, ``&oelig;``) that some providers leave in text, and
    make it valid Unicode (:func:`valid_text`): what every source field of a provider goes
    through."""
    return valid_text(html.unescape(text) if "&" in text else text)


@dataclass(frozen=True, slots=True)
class Citation:
    """A passage the answer cites, with Magisterium's field names.

    ``document_index`` is zero-based; ``marker`` is the one-based footnote number used inline.
    Several passages of one document share its index and its marker.

    Examples
    --------
    >>> ans = ck.Magisterium().ask(
    ...     "What does Catholic social teaching say about the dignity of human work?"
    ... )
    >>> c = ans.citations[4]
    >>> c.marker, c.document_index
    (2, 1)
    >>> c.document_title, c.document_author, c.document_year, c.document_reference
    ('Catechism of the Catholic Church', 'Catholic Church', '1992', '2428')
    >>> c.cited_text_heading
    'Human work'
    >>> c.cited_text
    'In work, the person exercises ... Work is for man, not man for work.'
    >>> c.source_url
    'https://www.vatican.va/archive/ENG0015/__P8B.HTM'
    """

    cited_text: str
    document_index: int
    cited_text_heading: str | None = None
    document_title: str | None = None
    document_author: str | None = None
    document_year: str | None = None
    document_reference: str | None = None
    source_url: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def marker(self) -> int:
        """The one-based footnote number (``document_index + 1``)."""
        return self.document_index + 1

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, position: int = 0) -> Citation:
        """Build from a provider citation object; a missing ``document_index`` uses ``position``."""
        # An index that is not a whole number from 0 (``"zero"``, ``NaN``, ``1e400``, a list)
        # is wire nonsense: the citation keeps its position instead.
        index = int_or_none(data.get("document_index"), hi=MAX_INDEX - 1, strings=True)
        document_index = min(position, MAX_INDEX - 1) if index is None else index
        text = data.get("cited_text")
        return cls(
            cited_text=decode_entities(text if isinstance(text, str) else ""),
            document_index=document_index,
            cited_text_heading=_decoded(data.get("cited_text_heading")),
            document_title=_decoded(data.get("document_title")),
            document_author=_decoded(data.get("document_author")),
            document_year=_opt_str(data.get("document_year")),
            document_reference=_opt_str(data.get("document_reference")),
            source_url=text_or_none(data.get("source_url")),
            raw=dict(data),
        )


def _decoded(value: Any) -> str | None:
    text = _opt_str(value)
    return decode_entities(text) if text is not None else None


@dataclass(frozen=True, slots=True)
class Reference:
    """A knowledge chunk retrieved for an answer (GPTBots ``correlate_dataset`` item)."""

    content: str
    rank: int
    data_id: str | None = None
    data_name: str | None = None
    source_url: str | None = None
    score: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, rank: int) -> Reference:
        score_value = number_or_none(data.get("score"), strings=True)
        content = data.get("content")
        return cls(
            content=content if isinstance(content, str) else "",
            rank=rank,
            data_id=_opt_str(data.get("data_id")),
            data_name=_opt_str(data.get("data_name")),
            source_url=text_or_none(data.get("source_url")) or None,
            score=score_value,
            raw=dict(data),
        )


@dataclass(frozen=True, slots=True)
class References(Sequence[Reference]):
    """The knowledge chunks behind one GPTBots answer, in the provider's order (rank 1 first)."""

    items: tuple[Reference, ...] = ()
    conversation_id: str | None = None
    question_id: str | None = None
    answer_id: str | None = None
    message_id: str | None = None
    note: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @overload
    def __getitem__(self, index: int) -> Reference: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Reference]: ...
    def __getitem__(self, index: int | slice) -> Reference | Sequence[Reference]:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Reference]:
        return iter(self.items)

    @property
    def sample(self) -> str | None:
        """The ``sample_data`` file this came from, when it is recorded data."""
        return _opt_str(self.raw.get(SAMPLE_FIELD))

    @classmethod
    def from_response(cls, data: Mapping[str, Any], *, message_id: str | None = None) -> References:
        """Build from a ``GET /v1/correlate/dataset`` body."""
        from .errors import ResponseFormatError

        if not isinstance(data, Mapping):
            raise ResponseFormatError(f"gptbots sent references that are {type(data).__name__}")
        items = data.get("correlate_dataset") or []
        if not isinstance(items, list):
            raise ResponseFormatError("gptbots sent a correlate_dataset that is not a list")
        return cls(
            items=tuple(
                Reference.from_dict(item, rank=i + 1)
                for i, item in enumerate(items)
                if isinstance(item, Mapping)
            ),
            conversation_id=_opt_str(data.get("conversation_id")),
            question_id=_opt_str(data.get("question_id")),
            answer_id=_opt_str(data.get("answer_id")),
            message_id=message_id,
            raw=dict(data),
        )

    def to_html(self, *, strict: bool = False) -> str:
        from ..render import references_html

        return references_html(self, strict=strict)

    def to_markdown(self) -> str:
        from ..render import references_markdown

        return references_markdown(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from ..render import mimebundle

        return mimebundle(self, include=include, exclude=exclude)


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
            prompt_tokens=_opt_int(data.get("prompt_tokens")),
            completion_tokens=_opt_int(data.get("completion_tokens")),
            total_tokens=_opt_int(data.get("total_tokens")),
            cached_tokens=_opt_int(cached),
            tools=_tool_usage(data.get("tool_execution_details")),
            raw=dict(data),
        )


def _tool_usage(details: Any) -> dict[str, float] | None:
    """The numbers of a ``tool_execution_details`` object (anything else in it is left out)."""
    if not isinstance(details, Mapping):
        return None
    out: dict[str, float] = {}
    for key, value in details.items():
        number = number_or_none(value)
        if isinstance(key, str) and number is not None:
            out[key] = number
    return out or None


def _opt_int(value: Any) -> int | None:
    # Beyond 2**63 is beyond any real count: not a count.
    return int_or_none(value, lo=1 - 2**63, hi=2**63 - 1, strings=True)


@dataclass(frozen=True, slots=True)
class GeneratedFile:
    """A file the provider made for an answer (Maritaca's code execution: ``generated_files``).

    ``data`` is the file's bytes, decoded from the wire's base64 when the answer is read; when
    that base64 is broken the file is kept with ``data`` ``None`` and a ``note`` saying so.
    ``size_bytes`` is the size the provider declared.

    Examples
    --------
    >>> saved = {
    ...     "choices": [{"message": {"content": "Pronto: o arquivo está anexo."}}],
    ...     "generated_files": [
    ...         {
    ...             "filename": "ola.txt",
    ...             "mime_type": "text/plain",
    ...             "size_bytes": 4,
    ...             "content_base64": "b2zDoQ==",
    ...         }
    ...     ],
    ... }
    >>> f = ck.Answer.from_response(saved, provider="maritaca").files[0]
    >>> f.name, f.mime_type, f.data.decode()
    ('ola.txt', 'text/plain', 'olá')
    >>> import os, tempfile
    >>> path = f.save(tempfile.mkdtemp())  # into a folder: the file keeps its name
    >>> path.name, os.path.getsize(path)
    ('ola.txt', 4)
    """

    name: str
    mime_type: str | None = None
    data: bytes | None = field(default=None, repr=False)
    size_bytes: int | None = None
    note: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_image(self) -> bool:
        """A PNG, JPEG, GIF or WebP image (the kinds an HTML answer shows inline)."""
        return (self.mime_type or "").lower() in IMAGE_TYPES

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, position: int = 0) -> GeneratedFile:
        """Build from ``{filename, mime_type, size_bytes, content_base64}`` (never raises)."""
        name = _opt_str(data.get("filename")) or f"file-{position + 1}"
        content = data.get("content_base64")
        decoded: bytes | None = None
        note = None
        if isinstance(content, str):
            try:
                decoded = base64.b64decode(content, validate=True)
            except (binascii.Error, ValueError):
                note = f"{name}: content_base64 is not valid base64; the file's bytes are lost."
        else:
            note = f"{name}: the provider sent no content_base64; the file has no bytes."
        return cls(
            name=name,
            mime_type=_opt_str(data.get("mime_type")),
            data=decoded,
            size_bytes=_opt_int(data.get("size_bytes")),
            note=note,
            raw=dict(data),
        )

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the file to ``path`` (into it, under ``name``, when ``path`` is a folder or
        ends with a slash: a missing folder is made).

        An existing file with other bytes is left alone (``FileExistsError``) unless
        ``overwrite=True``; one with the same bytes is kept as it is.
        """
        if self.data is None:
            raise ValueError(self.note or f"{self.name} has no bytes to save")
        target = Path(path)
        if target.is_dir() or str(path).endswith(("/", os.sep)):
            target.mkdir(parents=True, exist_ok=True)
            # Only the last part of the provider's name: it never writes outside the folder.
            name = Path(self.name.replace("\\", "/").replace("\x00", "")).name
            target = target / (name if name not in ("", ".", "..") else "file")
        if target.exists():
            if target.is_file() and target.read_bytes() == self.data:
                return target
            if not overwrite:
                raise FileExistsError(
                    f"{target} exists and holds other bytes: pass overwrite=True to replace it, "
                    "or save to another path"
                )
        target.write_bytes(self.data)
        return target


#: The image kinds an answer's HTML shows inline (as a ``data:`` URI).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


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
class Answer:
    """A provider's answer: text, where it came from, and what it cost.

    ``text`` is choice 0; ``choices`` holds all of them when ``n > 1``. ``raw`` keeps the
    provider's JSON with every field, known or not. ``notes`` are messages for the reader
    (a content filter, references that could not be fetched, a recorded sample).

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
    outputs: tuple[str, ...] = ()
    #: Reasoning the provider streamed apart from the text (GPTBots Thought events).
    thoughts: tuple[str, ...] = ()
    files: tuple[GeneratedFile, ...] = ()
    notes: tuple[str, ...] = ()
    partial: bool = False
    cached: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", valid_text(self.text))

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
        return _opt_str(value)

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

    # -- construction from saved data ----------------------------------------------------
    @classmethod
    def from_response(
        cls,
        data: Mapping[str, Any],
        *,
        provider: str,
        question: str | None = None,
    ) -> Answer:
        """Build from a provider's (saved) non-streaming JSON response.

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
        >>> ans = ck.Answer.from_response(saved, provider="magisterium")
        >>> ans.text, ans.created.year, ans.citations[0].marker
        ('Work is for man.[^1]', 2026, 1)

        ``raw`` is the provider's JSON, so a live answer saved with ``json`` comes back equal:

        >>> import json
        >>> live = ck.Magisterium().ask("What is the principle of subsidiarity?")
        >>> text = json.dumps(dict(live.raw))
        >>> again = ck.Answer.from_response(
        ...     json.loads(text), provider="magisterium", question=live.question
        ... )
        >>> again == live
        True

        A body that is not what the provider sends is refused, naming the field:

        >>> ck.Answer.from_response({"choices": [{"index": "zero"}]}, provider="maritaca")
        Traceback (most recent call last):
        ...
        citekit.core.errors.ResponseFormatError: Maritaca sent choices[0].index as a string ...
        """
        from ..wire.parsers import get_spec

        answer: Answer = get_spec(provider).parse_response(data, question=question)
        return answer

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[Mapping[str, Any]],
        *,
        provider: str,
        question: str | None = None,
    ) -> Answer:
        """Build from a (saved) list of decoded stream events, in arrival order
        (``ResponseFormatError`` for an event of the wrong shape, as ``from_response``)."""
        from ..wire.parsers import get_spec

        acc = get_spec(provider).new_accumulator(question=question)
        for chunk in chunks:
            acc.feed(chunk)
        return acc.answer()

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

        >>> ans = ck.Answer.from_response(
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
        from ..render import mimebundle

        return mimebundle(self, include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        # IPython asks this first, for display() and for a cell's result: an answer the live
        # display just showed in this cell is not shown a second time below it.
        from IPython.display import display

        from ..render import shown_live_in_this_cell

        if not shown_live_in_this_cell(self):
            display(self._repr_mimebundle_(), raw=True)  # type: ignore[no-untyped-call]

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Write the answer to ``path`` as Markdown (.md), HTML (.html) or JSON (.json)."""
        from ..data.exports import export_answer

        return export_answer(self, path)

    def __str__(self) -> str:
        return self.text


def parse_created(value: Any) -> datetime | None:
    """A Unix time in seconds or milliseconds (GPTBots uses both) as an aware UTC datetime."""
    number = number_or_none(value, strings=True)
    if number is None:
        if isinstance(value, str) and len(value) <= 64:
            try:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        return None
    # Seconds since 1970 stay below 1e11 until the year 5138; milliseconds are above it.
    if abs(number) >= 1e11:
        number /= 1000.0
    try:
        return datetime.fromtimestamp(number, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


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
