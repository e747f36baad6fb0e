"""Answers as the log's rows: one call as its ``answers`` row and its ``citations`` and
``knowledge_references`` rows (the sources' columns named as in ``citekit.core.columns``).

What a table holds is stored once: a response's citations and knowledge chunks are left out of
its JSON (``stored_once``; ``decode.put_back`` puts them back), and so is the text of a
``chat.completion`` body. Large JSON is stored compressed (``pack``; ``decode.unpack``): zlib
takes the JSON to about a quarter of its size, so that a logged answer costs about what its
response did (``bench/log.py`` measures it)."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from ..core.columns import CITATION_COLUMNS, REFERENCE_COLUMNS
from ..core.errors import ProviderError
from ..core.fields import utc_micros as micros
from ..core.unicode import valid_text
from ..model import Answer
from ..text.reader import numbers
from .keys import dumps, question_of, redacted, request_key
from .query import REFERENCE_FIELDS, TABLE_FIELDS

_CITATION_VALUES = attrgetter(*CITATION_COLUMNS)
_REFERENCE_VALUES = attrgetter(*REFERENCE_COLUMNS.values())
_INSERT_CITATION = (
    f"INSERT INTO citations (answer, position, {', '.join(CITATION_COLUMNS)}, cited_inline) "
    f"VALUES (?, ?{', ?' * len(CITATION_COLUMNS)}, ?)"
)
_INSERT_REFERENCE = (
    f"INSERT INTO knowledge_references (answer, {', '.join(REFERENCE_COLUMNS)}) "
    f"VALUES (?{', ?' * len(REFERENCE_COLUMNS)})"
)


#: JSON shorter than this is stored as text (compressing it saves too little to pay).
PACK_FROM = 512


def stored_once(
    saved: Any, held: Sequence[Any], fields: Sequence[str]
) -> tuple[list[Any], Any] | None:
    """How a response's list of objects (citations, knowledge chunks) is stored once, in its
    table: the objects' keys (a list of keys when every object has the same ones in the same
    order, else one such list per object; each key a field of ``held``, the values the table
    holds) and what the JSON keeps of them: each value the table holds as it was sent is left
    out (None when that is all of them, else one object per item with the values the table
    holds otherwise, such as a text whose HTML entities the table holds decoded). None when the
    list cannot be stored so (it stays in the JSON)."""
    if type(saved) is not list or not saved or len(saved) != len(held):
        return None
    allowed = set(fields)
    keys: list[list[str]] = []
    patches: list[dict[str, Any]] = []
    getters: dict[tuple[str, ...], Callable[[Any], Any]] = {}
    for item, value in zip(saved, held, strict=True):
        if type(item) is not dict or not allowed.issuperset(item):
            return None
        names = tuple(item)
        keys.append(list(names))
        getter = getters.get(names)
        if getter is None:
            getter = getters[names] = _getter(names)
        sent, kept = tuple(item.values()), getter(value)
        if sent == kept and tuple(map(type, sent)) == tuple(map(type, kept)):
            patches.append({})  # the common case: every value as the table holds it
            continue
        patches.append(
            {
                name: a
                for name, a, b in zip(names, sent, kept, strict=True)
                if type(a) is not type(b) or a != b
            }
        )
    same = all(k == keys[0] for k in keys)
    return (keys[0] if same else keys), (patches if any(patches) else None)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of fields ``names`` of an object, as a tuple (also for one or none)."""
    if not names:
        return lambda _: ()
    get = attrgetter(*names)
    return (lambda value: (get(value),)) if len(names) == 1 else get


def _elide_text(saved: dict[str, Any], text: str | None) -> bool:
    """Leave the text out of a ``chat.completion`` body when it is the ``text`` column's."""
    choices = saved.get("choices")
    if text is None or type(choices) is not list or not choices or type(choices[0]) is not dict:
        return False
    message = choices[0].get("message")
    if type(message) is not dict or message.get("content") != text:
        return False
    saved["choices"] = [{**choices[0], "message": {**message, "content": None}}, *choices[1:]]
    return True


def pack(text: str | None) -> str | bytes | None:
    """JSON text as stored: compressed by zlib (a BLOB) when it is long and that is smaller."""
    if text is None or len(text) < PACK_FROM:
        return text
    data = valid_text(text).encode()
    packed = zlib.compress(data, 6)
    return packed if len(packed) < len(data) else text


def tools_json(answer: Answer) -> str | None:
    """``Usage.tools`` of ``answer`` as JSON text, None when it has none."""
    tools = answer.usage.tools if answer.usage is not None else None
    return json.dumps(dict(tools)) if tools else None


def call_row(
    answer: Answer | None,
    provider: str,
    request: Mapping[str, Any] | None,
    base_url: str | None,
    elapsed: float | None,
    error: BaseException | None,
    stream: bool,
    secrets: Sequence[str],
    ts: float,
    pid: int,
) -> dict[str, Any]:
    """The columns of one call's ``answers`` row that are not its answer's
    (``answer_columns``): the request, the error, when, with the secrets taken out; read at
    once, while the caller's request is as it was sent."""
    row: dict[str, Any] = {
        "ts": ts,
        "provider": provider,
        "base_url": base_url,
        "request_key": request_key(provider, request, base_url) if request is not None else None,
        "request_json": dumps(request, secrets, request=True),
        "stream": int(stream),
        "elapsed": elapsed,
        "pid": pid,
    }
    if answer is None and request is not None:
        row["question"] = redacted(question_of(request), secrets)
    if error is not None:
        row.update(
            error_type=type(error).__name__,
            error_message=redacted(str(error), secrets, tokens=True),
            error_status=getattr(error, "status", None)
            if isinstance(error, ProviderError)
            else None,
            error_code=(
                redacted(str(error.code), secrets)
                if isinstance(error, ProviderError) and error.code is not None
                else None
            ),
        )
    return row


def answer_columns(answer: Answer, secrets: Sequence[str]) -> dict[str, Any]:
    """The columns of a row that an answer fills (an answer is immutable: made whenever)."""
    usage = answer.usage
    # What the tables hold is left out of the JSON (decode.answer_from_row puts it back).
    text = redacted(answer.text, secrets)
    saved = dict(answer.raw)
    keys = refs_keys = None
    once = stored_once(saved.get("citations"), answer.citations, TABLE_FIELDS)
    if once is not None:
        keys, saved["citations"] = once
    elided = _elide_text(saved, text)
    refs_saved = dict(answer.references.raw) if answer.references is not None else None
    if refs_saved is not None and answer.references is not None:
        once = stored_once(
            refs_saved.get("correlate_dataset"), answer.references.items, REFERENCE_FIELDS
        )
        if once is not None:
            refs_keys, refs_saved["correlate_dataset"] = once
    return {
        "question": redacted(answer.question, secrets),
        "model": answer.model,
        "answer_id": answer.id,
        "conversation_id": answer.conversation_id,
        "finish_reason": answer.finish_reason,
        "text": text,
        "response_json": pack(dumps(saved, secrets)),
        "citation_keys": json.dumps(keys) if keys is not None else None,
        "text_elided": int(elided),
        "references_json": pack(dumps(refs_saved, secrets)) if answer.references else None,
        "reference_keys": json.dumps(refs_keys) if refs_keys is not None else None,
        "notes_json": json.dumps([redacted(n, secrets) for n in answer.notes], ensure_ascii=False),
        "partial": int(answer.partial),
        "n_citations": len(answer.citations),
        "n_references": len(answer.references or ()),
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "total_tokens": usage.total_tokens if usage else None,
        "sample": answer.sample,
        "created_us": micros(answer.created),
        "tools_json": tools_json(answer),
    }


def insert_many(
    conn: sqlite3.Connection, calls: Sequence[tuple[Mapping[str, Any], Answer | None]]
) -> list[int]:
    """Write each call's ``answers`` row, citations and references (in the caller's
    transaction: one for many calls is what makes writing many fast); their ids."""
    ids: list[int] = []
    citations: list[list[Any]] = []
    references: list[list[Any]] = []
    for row, answer in calls:
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        values = _valid([*row.values()])
        cur = conn.execute(f"INSERT INTO answers ({columns}) VALUES ({marks})", values)
        row_id = int(cur.lastrowid or 0)
        ids.append(row_id)
        if answer is not None and answer.citations:
            citations += citation_rows(row_id, row.get("text"), answer)
        if answer is not None and answer.references:
            references += [_valid([row_id, *_REFERENCE_VALUES(r)]) for r in answer.references]
    if citations:
        conn.executemany(_INSERT_CITATION, citations)
    if references:
        conn.executemany(_INSERT_REFERENCE, references)
    return ids


def citation_rows(row_id: int, text: str | None, answer: Answer) -> list[list[Any]]:
    """The ``citations`` rows of ``answer``: ``cited_inline`` says whether a citation's marker is
    read in ``text`` (the logged text, which the rebuilt answer has: ``Answer.cited_markers``)."""
    cited = numbers(text) if text else frozenset()
    return [
        _valid([row_id, i, *_CITATION_VALUES(c), int(c.document_index + 1 in cited)])
        for i, c in enumerate(answer.citations)
    ]


def _valid(values: list[Any]) -> list[Any]:
    """Every text value as valid Unicode (SQLite stores UTF-8: a lone surrogate cannot go)."""
    return [valid_text(v) if type(v) is str and not v.isascii() else v for v in values]
