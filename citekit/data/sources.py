"""Reading the sources the frame loaders take into ``Answer`` and ``References`` values.

``iter_items`` walks a source (an ``Answer``, a ``References``, a saved provider response or
sample record as a dict, the path of a ``.json`` file or of a directory of them, or an iterable
of any of these; ``citekit.data.frames`` lists them) and yields its answers and bare references in
source order. It tells the kind of each JSON body apart and, when a saved response does not say
its provider, reads it from the sample label, the model name or the body's shape. Nothing here
needs polars; ``citekit.data.frames`` re-exports ``Source`` and ``load_answers``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.errors import warn
from ..core.models import SAMPLE_FIELD, Answer, References
from ..store import Log
from ..store.selection import LogSelection

__all__ = ["Source", "iter_items", "load_answers"]

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
    "(dict), the path of a .json file or of a directory of them, or the answer log (ck.log, "
    "ck.log.where(...))"
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


def iter_items(source: Any, *, provider: str | None, caller: str) -> Iterator[Answer | References]:
    if isinstance(source, Answer | References):
        yield source
    elif isinstance(source, Log | LogSelection):  # the answer log, rebuilt answer by answer
        yield from (source if isinstance(source, LogSelection) else LogSelection(source)).answers()
    elif isinstance(source, Mapping):
        yield from _from_json(source, provider=provider, caller=caller, origin=None)
    elif isinstance(source, str | os.PathLike):
        yield from _from_path(Path(source), provider=provider, caller=caller)
    elif isinstance(source, Iterable) and not isinstance(source, bytes | bytearray):
        for item in source:
            if isinstance(item, Answer):  # the common case, kept cheap
                yield item
            elif isinstance(item, References | Mapping | str | os.PathLike):
                yield from iter_items(item, provider=provider, caller=caller)
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
        reason = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise ValueError(f"{caller}(): {file} is not readable JSON ({reason})") from exc


def _from_path(path: Path, *, provider: str | None, caller: str) -> Iterator[Answer | References]:
    if path.is_dir():
        skipped: list[str] = []
        for file in sorted(path.rglob("*.json")):
            if any(part.startswith(("_", ".")) for part in file.relative_to(path).parts):
                continue  # build inputs and hidden folders, not answers
            try:
                data = _read_json(file, caller)
            except ValueError:
                skipped.append(str(file.relative_to(path)))
                continue
            if _kind(data) is not None or (
                isinstance(data, list) and data and all(_kind(item) for item in data)
            ):
                yield from _from_json(data, provider=provider, caller=caller, origin=file)
        if skipped:
            # One broken file does not cost the folder's other answers: named, and skipped.
            shown = ", ".join(skipped[:5]) + (
                f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
            )
            warn(
                f"{caller}(): skipped {len(skipped)} file(s) in {path} that are not "
                f"readable JSON: {shown}"
            )
        return
    if not path.is_file():
        raise FileNotFoundError(f"{caller}(): no file or directory at {path}")
    data = _read_json(path, caller)
    yield from _from_json(data, provider=provider, caller=caller, origin=path)


def _kind(data: Any) -> str | None:
    if not isinstance(data, Mapping):
        return None
    if "response" in data and isinstance(data["response"], Mapping):
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


def _from_json(
    data: Any, *, provider: str | None, caller: str, origin: Path | None
) -> Iterator[Answer | References]:
    if isinstance(data, list):
        for item in data:
            yield from _from_json(item, provider=provider, caller=caller, origin=origin)
        return
    kind = _kind(data)
    where = f" in {origin}" if origin is not None else ""
    if kind is None:
        keys = ", ".join(sorted(map(str, data))[:8]) if isinstance(data, Mapping) else ""
        raise TypeError(
            f"{caller}() takes {_ACCEPTED}; the JSON{where} is none of these"
            + (f" (keys: {keys})" if keys else f" (a {type(data).__name__})")
        )
    question = data.get("question")
    question = question if isinstance(question, str) else None
    if kind == "record":
        response = data["response"]
        name = provider or _provider_of(response) or _provider_of(data)
        yield Answer.from_response(
            response, provider=_known(name, caller, where), question=question
        )
    elif kind == "completion":
        name = provider or _provider_of(data)
        yield Answer.from_response(data, provider=_known(name, caller, where), question=None)
    elif kind == "gptbots_message":
        yield Answer.from_response(data, provider="gptbots", question=None)
    elif kind == "correlate":
        yield References.from_response(data)
    else:  # a GPTBots sample record: the reply and its knowledge chunks
        message = data["message"]
        answer = Answer.from_response(message, provider="gptbots", question=question)
        correlate = data.get("correlate")
        if isinstance(correlate, Mapping):
            refs = References.from_response(correlate, message_id=answer.id)
            answer = replace(answer, references=refs)
        yield answer


def _known(provider: str | None, caller: str, where: str) -> str:
    if provider is None:
        raise ValueError(
            f"{caller}(): cannot tell the provider of the response{where}; "
            "pass provider='magisterium' or 'maritaca'"
        )
    return provider


def _provider_of(data: Mapping[str, Any]) -> str | None:
    label = data.get(SAMPLE_FIELD)
    if isinstance(label, str) and "/" in label:
        return label.split("/", 1)[0]
    model = data.get("model")
    if isinstance(model, str):
        if model.startswith("magisterium"):
            return "magisterium"
        if model.startswith("sabi"):
            return "maritaca"
    if isinstance(data.get("citations"), list):
        return "magisterium"
    return None
