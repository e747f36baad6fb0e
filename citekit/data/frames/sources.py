"""Reading the sources the frame loaders take into ``Answer`` and ``References`` values.

``iter_items`` walks a source (an ``Answer``, a ``References``, a saved provider response or
sample record as a dict, the path of a ``.json`` or ``.jsonl`` file or of a directory of them,
or an iterable of any of these; ``citekit.data.frames`` lists them) and yields its answers and
bare references in source order (with ``saved=True``, each saved answer as the :class:`Saved`
it was read from, for the column-wise reader). It tells the kind of each JSON body apart
and, when a saved response does not say its provider, reads it from the sample label, the
model name or the body's shape. Nothing here
needs polars; ``citekit.data.frames`` re-exports ``Source`` and ``load_answers``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Literal, NamedTuple, overload

from ...core.errors import warn
from ...core.names import CHAT_PROVIDERS, ENTRIES, GPTBOTS
from ...model import SAMPLE_FIELD, Answer, References
from ...store import Log
from ...store.selection import LogSelection
from ...wire.parsers import parse_response
from .typed import Plain

__all__ = ["BadLine", "Saved", "Source", "iter_items", "load_answers"]

#: What the loaders accept; see ``citekit.data.frames``.
Source = (
    Answer
    | References
    | Log
    | LogSelection
    | Mapping[str, Any]
    | str
    | os.PathLike[str]
    | Iterable["Answer | References | Mapping[str, Any] | str | os.PathLike[str]"]
)

_ACCEPTED = (
    "an Answer, an iterable of Answers, a References, a provider response or sample record "
    "(dict), the path of a .json or .jsonl file or of a directory of them, or the answer log "
    "(ck.log, ck.log.where(...))"
)


def load_answers(source: Source, *, provider: str | None = None) -> list[Answer | References]:
    """Read a source (see ``citekit.data.frames``) into ``Answer`` and ``References`` values.

    Parameters
    ----------
    source
        What to read.
    provider
        The provider of saved responses that do not say it themselves ("magisterium",
        "maritaca" or "gptbots"); recorded samples and most responses say it.

    Returns
    -------
    The answers and bare ``References`` in source order.

    Raises
    ------
    TypeError
        When ``source`` is none of the accepted kinds.
    FileNotFoundError
        When a path names nothing.
    ValueError
        When a saved response does not say its provider and ``provider`` is not given.
    """
    return list(iter_items(source, provider=provider, caller="load_answers"))


@overload
def iter_items(
    source: Any, *, provider: str | None, caller: str, saved: Literal[False] = False
) -> Iterator[Answer | References]: ...
@overload
def iter_items(
    source: Any, *, provider: str | None, caller: str, saved: bool, typed: bool = False
) -> Iterator[Answer | References | Saved | Plain]: ...
def iter_items(
    source: Any, *, provider: str | None, caller: str, saved: bool = False, typed: bool = False
) -> Iterator[Answer | References | Saved | Plain]:
    """The answers and bare references of ``source``, in source order.

    With ``saved``, each saved answer (a response body or a sample record) comes as the
    :class:`Saved` it was read from, not parsed: its provider is told (or the same error
    raised) as for an ``Answer``, and ``Saved.answer()`` builds the ``Answer`` this yields
    without ``saved``. ``citekit.data.frames.columnar`` reads frame columns straight off them.
    With ``typed`` too, a line of a JSON Lines file holding a plain chat completion comes as
    the :class:`~citekit.data.frames.typed.Plain` msgspec decoded it into (any other line as
    before): what a citations frame reads.
    """
    if isinstance(source, Answer | References):
        yield source
    elif isinstance(source, Log | LogSelection):  # the answer log, rebuilt answer by answer
        yield from (source if isinstance(source, LogSelection) else LogSelection(source)).answers()
    elif isinstance(source, Mapping):
        yield from _from_json(source, provider=provider, caller=caller, origin=None, saved=saved)
    elif isinstance(source, str | os.PathLike):
        yield from _from_path(
            Path(source), provider=provider, caller=caller, saved=saved, typed=typed
        )
    elif isinstance(source, Iterable) and not isinstance(source, bytes | bytearray):
        for item in source:
            if isinstance(item, Answer):  # the common case, kept cheap
                yield item
            elif type(item) is dict or isinstance(item, Mapping):  # saved responses: the bulk
                # case, kept cheap too (a dict is told without the Mapping ABC's check, and
                # read without a generator of its own)
                yield _from_object(item, provider=provider, caller=caller, origin=None, saved=saved)
            elif isinstance(item, References | str | os.PathLike):
                yield from iter_items(
                    item, provider=provider, caller=caller, saved=saved, typed=typed
                )
            else:
                raise _type_error(caller, item, inside=True)
    else:
        raise _type_error(caller, source)


def _type_error(caller: str, value: Any, *, inside: bool = False) -> TypeError:
    where = "an item of the iterable" if inside else "the source"
    return TypeError(f"{caller}() takes {_ACCEPTED}; {where} is a {type(value).__name__}")


def _read_json(file: Path, caller: str) -> Any:
    """The JSON value in ``file``; a file that is not JSON (or is nested deeper than Python
    reads) is a ``ValueError`` naming it, never a bare decoder error."""
    try:
        return json.loads(file.read_bytes())
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"{caller}(): {file} is not readable JSON ({_reason(exc)})") from exc


def _reason(exc: Exception) -> str:
    return "nested too deep" if isinstance(exc, RecursionError) else str(exc)


class BadLine(ValueError):
    """A line of a JSON Lines file that is not JSON (the message names the file and line)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _iter_jsonl(
    file: Path,
    caller: str,
    *,
    bad: list[str] | None = None,
    typed: Callable[[bytes], Plain | None] | None = None,
) -> Iterator[tuple[int, Any]]:
    """The JSON values of the lines of ``file`` with their line numbers, one at a time (blank
    lines skipped): a large file is never held whole. A line that is not JSON is a
    ``ValueError`` (:class:`BadLine`) naming the file and the line's number; with ``bad``,
    it is noted there (``"line 3"``) and skipped. With ``typed``, a line it decodes comes as
    its ``Plain``; any other line is read as above."""
    with file.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            if typed is not None and (plain := typed(line)) is not None:
                yield number, plain
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError) as exc:
                if bad is not None:
                    bad.append(f"line {number}")
                    continue
                raise BadLine(
                    f"{caller}(): line {number} of {file} is not readable JSON "
                    f"({_reason(exc)}); each line of a .jsonl file must hold one JSON value",
                    number,
                ) from exc
            yield number, value


def _from_jsonl(
    file: Path,
    *,
    provider: str | None,
    caller: str,
    saved: bool,
    bad: list[str] | None = None,
    typed: bool = False,
) -> Iterator[Answer | References | Saved | Plain]:
    """The answers of a JSON Lines file, read as they are used, line by line: the one route
    for a file named and for a file in a folder.

    A file named raises at the first line that is not JSON or not an answer. In a folder
    (``bad`` given), such a line is noted in ``bad`` and skipped, the file's other lines read;
    a file whose first value is not an answer (a stream recording) gives nothing. With
    ``typed`` (and ``saved``), plain chat completions come decoded with their types."""
    decode = None
    if typed and saved:
        from .typed import decode_line

        decode = partial(decode_line, provider=provider, provider_of=provider_from)
    first = True
    for number, value in _iter_jsonl(file, caller, bad=bad, typed=decode):
        if decode is not None and isinstance(value, Plain):
            first = False  # an answer: the file is one of answers
            yield value
            continue
        if bad is not None and not _answers_in(value):
            if first:
                return  # not answers: a stream recording, skipped as models.json is
            bad.append(f"line {number}: not an answer")
            continue
        first = False
        yield from _from_json(value, provider=provider, caller=caller, origin=file, saved=saved)


#: The files a directory is read from: one JSON value each, or one per line.
_SUFFIXES = (".json", ".jsonl")


def _answers_in(data: Any) -> bool:
    """Whether a file's JSON holds answers (a folder's other JSON files are skipped)."""
    return _kind(data) is not None or (
        isinstance(data, list) and bool(data) and all(_kind(item) for item in data)
    )


def _from_path(
    path: Path, *, provider: str | None, caller: str, saved: bool = False, typed: bool = False
) -> Iterator[Answer | References | Saved | Plain]:
    if path.is_dir():
        skipped: list[str] = []
        files = (f for f in path.rglob("*") if f.suffix in _SUFFIXES and f.is_file())
        for file in sorted(files):
            if any(part.startswith(("_", ".")) for part in file.relative_to(path).parts):
                continue  # build inputs and hidden folders, not answers
            name = str(file.relative_to(path))
            if file.suffix == ".jsonl":
                bad: list[str] = []
                yield from _from_jsonl(
                    file, provider=provider, caller=caller, saved=saved, bad=bad, typed=typed
                )
                skipped.extend(f"{name} ({where})" for where in bad)
                continue
            try:
                data = _read_json(file, caller)
            except ValueError:
                skipped.append(name)
                continue
            if _answers_in(data):
                yield from _from_json(
                    data, provider=provider, caller=caller, origin=file, saved=saved
                )
        if skipped:
            # One broken file or line does not cost the folder's other answers: named, and
            # skipped.
            shown = ", ".join(skipped[:5]) + (
                f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
            )
            warn(
                f"{caller}(): skipped {len(skipped)} file(s) or line(s) in {path} that are "
                f"not readable JSON answers: {shown}"
            )
        return
    if not path.is_file():
        raise FileNotFoundError(f"{caller}(): no file or directory at {path}")
    if path.suffix == ".jsonl":
        yield from _from_jsonl(path, provider=provider, caller=caller, saved=saved, typed=typed)
        return
    data = _read_json(path, caller)
    yield from _from_json(data, provider=provider, caller=caller, origin=path, saved=saved)


def _kind(data: Any) -> str | None:
    if type(data) is not dict and not isinstance(data, Mapping):
        return None
    response = data.get("response")
    if type(response) is dict or ("response" in data and isinstance(response, Mapping)):
        return "record"
    if "message" in data and isinstance(data["message"], Mapping):
        return "gptbots_record"
    if isinstance(data.get("choices"), list):
        return "completion"
    if "correlate_dataset" in data:
        return "correlate"
    if data.get("message_id") and "output" in data:
        return "gptbots_message"
    return None


class Saved(NamedTuple):
    """One saved answer as read from its source, not yet parsed: the provider's response
    body, whose provider it is, the question asked and (GPTBots sample records) the
    ``correlate/dataset`` body of its knowledge chunks."""

    body: Mapping[str, Any]
    provider: str
    question: str | None = None
    correlate: Any = None

    def answer(self) -> Answer:
        """The ``Answer`` (``parse_response``, its references attached)."""
        answer = parse_response(self.body, provider=self.provider, question=self.question)
        if isinstance(self.correlate, Mapping):
            refs = References.from_response(self.correlate, message_id=answer.id)
            answer = replace(answer, references=refs)
        return answer


def _from_json(
    data: Any, *, provider: str | None, caller: str, origin: Path | None, saved: bool = False
) -> Iterator[Answer | References | Saved]:
    if isinstance(data, list):
        for item in data:
            yield from _from_json(
                item, provider=provider, caller=caller, origin=origin, saved=saved
            )
        return
    yield _from_object(data, provider=provider, caller=caller, origin=origin, saved=saved)


def _from_object(
    data: Any, *, provider: str | None, caller: str, origin: Path | None, saved: bool = False
) -> Answer | References | Saved:
    """The answer (or bare references) of one JSON value that is not a list."""
    kind = _kind(data)
    where = f" in {origin}" if origin is not None else ""
    if kind is None:
        keys = ", ".join(sorted(map(str, data))[:8]) if isinstance(data, Mapping) else ""
        raise TypeError(
            f"{caller}() takes {_ACCEPTED}; the JSON{where} is none of these"
            + (f" (keys: {keys})" if keys else f" (a {type(data).__name__})")
        )
    if kind == "correlate":
        return References.from_response(data)
    question = data.get("question")
    question = question if isinstance(question, str) else None
    if kind == "record":
        response = data["response"]
        name = provider or _provider_of(response) or _provider_of(data)
        unit = Saved(response, _known(name, caller, where), question)
    elif kind == "completion":
        name = provider or _provider_of(data)
        unit = Saved(data, _known(name, caller, where))
    elif kind == "gptbots_message":
        unit = Saved(data, GPTBOTS.name)
    else:  # a GPTBots sample record: the reply and its knowledge chunks
        unit = Saved(data["message"], GPTBOTS.name, question, data.get("correlate"))
    return unit if saved else unit.answer()


def _known(provider: str | None, caller: str, where: str) -> str:
    if provider is None:
        raise ValueError(
            f"{caller}(): cannot tell the provider of the response{where}; "
            f"pass provider={' or '.join(map(repr, CHAT_PROVIDERS))}"
        )
    return provider


def _provider_of(data: Mapping[str, Any]) -> str | None:
    return provider_from(data.get(SAMPLE_FIELD), data.get("model"), data.get("citations"))


def provider_from(label: Any, model: Any, citations: Any) -> str | None:
    """The provider a response's sample label, model name or citation array tells (the
    label's ``provider/`` prefix first), None when none does."""
    if isinstance(label, str) and "/" in label:
        return label.split("/", 1)[0]
    if isinstance(model, str):
        for entry in ENTRIES:
            if model.startswith(entry.model_prefixes):
                return entry.name
    if isinstance(citations, list):
        return next((e.name for e in ENTRIES if e.citation_array), None)
    return None
