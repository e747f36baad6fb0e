"""Maritaca's Batch and Files APIs, without I/O: the input JSONL, the Batch object, and the
output and error files read back into answers in input order.

providers.md ("Maritaca AI: Batch API and Files API"): one ``{"custom_id", "method", "url",
"body"}`` per input line, at most 50,000 lines and 200 MB per file, one model per file; the
output file holds one line per successful request, not in input order, matched on
``custom_id``; failed and expired requests are in the error file. The guide and the reference
name two sets of statuses: both are read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import ResponseFormatError
from ..model import Answer
from .openai_compat import parse_chat_completion

__all__ = [
    "BATCH_ENDPOINT",
    "DONE",
    "MAX_FILE_BYTES",
    "MAX_REQUESTS",
    "TERMINAL",
    "BatchInfo",
    "BatchRequest",
    "BatchRequestError",
    "check_size",
    "custom_id",
    "input_jsonl",
    "parse_batch",
    "parse_file_id",
    "parse_input",
    "read_results",
]

BATCH_ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
MAX_REQUESTS = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
#: The guide's ``completed`` and the reference's ``succeeded``.
DONE = frozenset({"completed", "succeeded"})
TERMINAL = DONE | {"failed", "expired", "cancelled"}
PROVIDER = "maritaca"


@dataclass(frozen=True, slots=True)
class BatchRequest:
    """One line of the input file: its ``custom_id``, the chat body and the question."""

    custom_id: str
    body: Mapping[str, Any]
    question: str | None = None


@dataclass(frozen=True, slots=True)
class BatchRequestError:
    """Why a request of a batch has no answer: ``index`` in the input (None for a line of the
    output that matches no request), its ``custom_id``, the provider's ``code`` and message."""

    index: int | None
    custom_id: str | None
    error: str
    code: str | None = None


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """A Batch object: ``status`` as the provider sent it; unset timestamps (``null`` or ``0``)
    read as None."""

    id: str
    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int | None = None
    completed: int | None = None
    failed: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_batch(data: Any) -> BatchInfo:
    """A ``BatchInfo`` from a Batch object (either documented shape)."""
    if not isinstance(data, Mapping) or not _text(data.get("id")) or not _text(data.get("status")):
        raise ResponseFormatError(f"{PROVIDER} sent a batch without an 'id' and a 'status'")
    counts = data.get("request_counts")
    counts = counts if isinstance(counts, Mapping) else {}
    return BatchInfo(
        id=data["id"],
        status=data["status"],
        input_file_id=_text(data.get("input_file_id")),
        output_file_id=_text(data.get("output_file_id")),
        error_file_id=_text(data.get("error_file_id")),
        total=_count(counts.get("total")),
        completed=_count(counts.get("completed")),
        failed=_count(counts.get("failed")),
        raw=dict(data),
    )


def parse_file_id(data: Any) -> str:
    """The ``id`` of a File object."""
    file_id = _text(data.get("id")) if isinstance(data, Mapping) else None
    if file_id is None:
        raise ResponseFormatError(f"{PROVIDER} sent a file object without an 'id'")
    return file_id


def custom_id(index: int) -> str:
    """The ``custom_id`` of the request at ``index`` (0-based) of the input: ``request-1``, ..."""
    return f"request-{index + 1}"


def check_size(count: int) -> None:
    """Refuse an empty batch, or one over the documented 50,000 requests, before building it."""
    if count < 1:
        raise ValueError("a batch needs at least one question")
    if count > MAX_REQUESTS:
        raise ValueError(
            f"{count:,} requests: a Maritaca batch holds at most {MAX_REQUESTS:,}; "
            "split them into several batches"
        )


def input_jsonl(requests: Sequence[BatchRequest]) -> bytes:
    """The input file: one request per line, as documented."""
    check_size(len(requests))
    models = {str(r.body.get("model")) for r in requests}
    if len(models) > 1:
        raise ValueError(f"a Maritaca batch takes one model per file, not {sorted(models)}")
    lines = [
        json.dumps(
            {"custom_id": r.custom_id, "method": "POST", "url": BATCH_ENDPOINT, "body": r.body},
            ensure_ascii=False,
        )
        for r in requests
    ]
    content = ("\n".join(lines) + "\n").encode()
    if len(content) > MAX_FILE_BYTES:
        raise ValueError(
            f"the batch file would be {len(content):,} bytes; Maritaca takes at most 200 MB: "
            "split the questions into several batches"
        )
    return content


def _last_user(body: Mapping[str, Any]) -> str | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def parse_input(content: bytes) -> list[BatchRequest]:
    """The requests of an input file, in its order (lines that are not requests skipped)."""
    requests = []
    for line in content.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, Mapping) or not _text(item.get("custom_id")):
            continue
        body = item.get("body")
        body = body if isinstance(body, Mapping) else {}
        requests.append(BatchRequest(item["custom_id"], body, _last_user(body)))
    return requests


def _error_text(error: Any) -> tuple[str, str | None]:
    if isinstance(error, Mapping):
        message, code = error.get("message"), error.get("code")
        return (
            message if isinstance(message, str) and message else "the request failed",
            code if isinstance(code, str) else None,
        )
    return (error if isinstance(error, str) and error else "the request failed"), None


def read_results(
    requests: Sequence[BatchRequest], output: bytes, errors: bytes, *, batch_id: str
) -> tuple[list[Answer | None], list[BatchRequestError]]:
    """Answers in input order (None where a request failed) and the errors, from the output
    and error files. Never raises on what the files hold: a line that is not JSON, names no
    request or repeats one becomes an error with ``index`` None; a request with no line at
    all, an error saying so."""
    where = {r.custom_id: i for i, r in enumerate(requests)}
    answers: list[Answer | None] = [None] * len(requests)
    failed: dict[int, BatchRequestError] = {}
    stray: list[BatchRequestError] = []
    for name, content in (("output", output), ("error", errors)):
        for number, line in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            here = f"line {number} of the {name} file"
            try:
                item = json.loads(line)
            except ValueError:
                stray.append(BatchRequestError(None, None, f"{here} is not JSON", "invalid_line"))
                continue
            cid = item.get("custom_id") if isinstance(item, Mapping) else None
            if not isinstance(cid, str) or cid not in where:
                shown = cid if isinstance(cid, str) else None
                what = f"{here} names no request of this batch (custom_id {cid!r})"
                stray.append(BatchRequestError(None, shown, what, "unknown_custom_id"))
                continue
            index = where[cid]
            if answers[index] is not None or index in failed:
                what = f"{here} repeats {cid}, whose result was read already; ignored"
                stray.append(BatchRequestError(None, cid, what, "duplicate"))
                continue
            result = _result(item, requests[index], batch_id, here)
            if isinstance(result, Answer):
                answers[index] = result
            else:
                failed[index] = BatchRequestError(index, cid, *result)
    for index, request in enumerate(requests):
        if answers[index] is None and index not in failed:
            what = f"no result for {request.custom_id} in the batch's output or error file"
            failed[index] = BatchRequestError(index, request.custom_id, what, "missing")
    return answers, [failed[i] for i in sorted(failed)] + stray


def _result(
    item: Mapping[str, Any], request: BatchRequest, batch_id: str, here: str
) -> Answer | tuple[str, str | None]:
    response = item.get("response")
    if item.get("error") or not isinstance(response, Mapping):
        return _error_text(item.get("error"))
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        message, code = _error_text(body.get("error") if isinstance(body, Mapping) else None)
        return f"HTTP {status}: {message}", code or str(status)
    if not isinstance(body, Mapping):
        return f"{here} has no chat completion body", "invalid_response"
    try:
        answer = parse_chat_completion(body, provider=PROVIDER, question=request.question)
    except ResponseFormatError as exc:
        return f"{here}: {exc}", "invalid_response"
    raw = {**answer.raw, "batch_id": batch_id, "custom_id": request.custom_id}
    return replace(answer, raw=raw)
