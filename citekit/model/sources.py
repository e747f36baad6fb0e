"""The sources of an answer: the passages it cites, the knowledge chunks behind it, the files
it made. Frozen values that do no I/O; the wire layer builds them (``citekit.wire``), the
renderers show them (their ``to_html`` / ``_repr_mimebundle_`` import ``citekit.render``
downward, as polars' ``DataFrame`` imports its ``_html`` module)."""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from ..core.fields import (
    MAX_INDEX,
    count_or_none,
    int_or_none,
    number_or_none,
    opt_text,
    text_or_none,
)
from ..core.files import NAME_BYTES, safe_file_name, write_bytes
from ..core.unicode import decode_entities

__all__ = [
    "IMAGE_TYPES",
    "SAMPLE_FIELD",
    "SAMPLE_MATCHED_FIELD",
    "SAMPLE_QUESTION_FIELD",
    "Citation",
    "GeneratedFile",
    "Reference",
    "References",
]

#: Field an answer carries when it was built from the recorded-format files in ``sample_data/``.
SAMPLE_FIELD = "citekit_sample"
#: Beside it when the sample was served for another question: that sample's question, and false.
SAMPLE_QUESTION_FIELD = "citekit_sample_question"
SAMPLE_MATCHED_FIELD = "citekit_sample_matched"


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
            document_year=opt_text(data.get("document_year")),
            document_reference=opt_text(data.get("document_reference")),
            source_url=text_or_none(data.get("source_url")),
            raw=dict(data),
        )


def _decoded(value: Any) -> str | None:
    text = opt_text(value)
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
            data_id=opt_text(data.get("data_id")),
            data_name=opt_text(data.get("data_name")),
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
        return opt_text(self.raw.get(SAMPLE_FIELD))

    @classmethod
    def from_response(cls, data: Mapping[str, Any], *, message_id: str | None = None) -> References:
        """Build from a ``GET /v1/correlate/dataset`` body."""
        items, conversation_id, question_id, answer_id = cls.read_ids(data)
        return cls(
            items=tuple(
                Reference.from_dict(item, rank=i + 1)
                for i, item in enumerate(items)
                if isinstance(item, Mapping)
            ),
            conversation_id=conversation_id,
            question_id=question_id,
            answer_id=answer_id,
            message_id=message_id,
            raw=dict(data),
        )

    @staticmethod
    def read_ids(data: Any) -> tuple[list[Any], str | None, str | None, str | None]:
        """A ``correlate/dataset`` body's chunk list (as sent) and its conversation, question
        and answer ids, checked as :meth:`from_response` checks them (``ResponseFormatError``
        for a body that is not an object, or whose chunks are not a list): what the log's
        references frame reads, without building the chunks."""
        from ..core.errors import ResponseFormatError

        if not isinstance(data, Mapping):
            raise ResponseFormatError(f"gptbots sent references that are {type(data).__name__}")
        items = data.get("correlate_dataset") or []
        if not isinstance(items, list):
            raise ResponseFormatError("gptbots sent a correlate_dataset that is not a list")
        return (
            items,
            opt_text(data.get("conversation_id")),
            opt_text(data.get("question_id")),
            opt_text(data.get("answer_id")),
        )

    def to_html(self, *, strict: bool = False) -> str:
        from ..render import references_html

        return references_html(self, strict=strict)

    def to_markdown(self) -> str:
        from ..render import references_markdown

        return references_markdown(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from ..render.bundle import references_bundle

        return references_bundle(self, include=include, exclude=exclude)


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
    >>> f = ck.parse_response(saved, provider="maritaca").files[0]
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
        return (self.mime_type or "").strip().lower() in IMAGE_TYPES

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, position: int = 0) -> GeneratedFile:
        """Build from ``{filename, mime_type, size_bytes, content_base64}`` (never raises)."""
        name = opt_text(data.get("filename")) or f"file-{position + 1}"
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
            mime_type=opt_text(data.get("mime_type")),
            data=decoded,
            size_bytes=count_or_none(data.get("size_bytes")),
            note=note,
            raw=dict(data),
        )

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the file to ``path`` (into it, when ``path`` is a folder or ends with a slash:
        a missing folder is made) and return the path written.

        Into a folder the file takes ``name`` made safe and visible (``core.files``: its last
        part only, control and invisible characters as ``_``, shortened to what the file
        system takes with its extension kept). An existing file with other bytes is left
        alone (``FileExistsError``) unless ``overwrite=True``; one with the same bytes is kept
        as it is.
        """
        if self.data is None:
            raise ValueError(self.note or f"{self.name} has no bytes to save")
        target = Path(path)
        if target.is_dir() or str(path).endswith(("/", os.sep)):
            target.mkdir(parents=True, exist_ok=True)
            target = target / safe_file_name(self.name, limit=_name_bytes(target))
        if target.exists():
            if target.is_file() and target.read_bytes() == self.data:
                return target
            if not overwrite:
                raise FileExistsError(
                    f"{target} exists and holds other bytes: pass overwrite=True to replace it, "
                    "or save to another path"
                )
        write_bytes(target, self.data)  # whole or not at all
        return target


def _name_bytes(folder: Path) -> int:
    """The longest file name, in bytes, the file system under ``folder`` takes."""
    try:
        return min(os.pathconf(folder, "PC_NAME_MAX"), NAME_BYTES)
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows), or no answer
        return NAME_BYTES


#: The image kinds an answer's HTML shows inline (as a ``data:`` URI).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
