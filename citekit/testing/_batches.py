"""Maritaca's Files and Batch APIs (providers.md, "Maritaca AI: Batch API and Files API").

Rules followed, each from that part:

- Endpoints (API reference): ``GET/POST /api/files``, ``GET/DELETE /api/files/{id}``,
  ``GET /api/files/{id}/content``, ``GET/POST /api/batches``, ``GET /api/batches/{id}``,
  ``POST /api/batches/{id}/cancel``. The guide's ``GET /batches/{id}/status`` and
  ``/results`` are answered too (the docs contradict each other: both readings are accepted).
- Upload ``purpose``: the guide says ``"batch"``, the reference ``"batch_input"``; both are
  accepted (a scenario's ``batch_purpose`` accepts only the one it names, to test a client's
  fallback).
- ``completion_window``: "fixed at 24h" (guide) or ``24h`` / ``1h`` (reference): both taken.
- Input JSONL: one ``{"custom_id", "method", "url", "body"}`` per line, at most 50,000 lines and
  200 MB, one model per file.
- Batch object: the guide's shape (``errors: null``, unreached timestamps ``null``, statuses
  ``validating`` > ``in_progress`` > ``finalizing`` > ``completed``) or, with the scenario's
  ``batch_statuses="reference"``, the reference's (``errors: []``, timestamps ``0``, statuses
  ``queued`` > ``running`` > ``finalizing`` > ``succeeded``).
- Output file: one line per successful request, NOT in input order (written here in reverse),
  ``{"id", "custom_id", "response": {"status_code": 200, "request_id", "body"}, "error": null}``;
  failed and expired requests go to ``error_file_id``, ``{"id", "custom_id", "response": null,
  "error": {"code", "message"}}`` (``batch_expired``: "This request could not be executed before
  the completion window expired.").
- Cancel returns the Batch object, ``cancelling`` and then ``cancelled``.

The clock is the scenario's: a batch completes ``batch_seconds`` (default 2) after it was
created; ``batch_expire=True`` makes it expire there instead, half of its requests done.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._errors import error_body
from ._replies import Reply, json_reply
from ._scenario import Scenario

__all__ = ["BatchStore"]

MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024
PURPOSES = ("batch", "batch_input")
WINDOWS = ("24h", "1h")
EXPIRED = "This request could not be executed before the completion window expired."
_FILE = re.compile(r"^/api/files(?:/(?P<id>[^/]+)(?P<content>/content)?)?$")
_BATCH = re.compile(r"^/api/batches(?:/(?P<id>[^/]+)(?:/(?P<action>cancel|status|results))?)?$")

#: The two documented status sets: the guide's and the reference's.
_STATES = {
    "guide": ("validating", "in_progress", "finalizing", "completed"),
    "reference": ("queued", "running", "finalizing", "succeeded"),
}

Chat = Callable[[dict[str, Any]], Reply]


def _error(status: int, message: str) -> Reply:
    return json_reply(status, error_body("maritaca", status, message))


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int

    def obj(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "expires_at": None,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
        }


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: Any
    lines: list[dict[str, Any]]
    scenario: Scenario
    started: float
    created_at: int
    status: str = ""
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    stamps: dict[str, int] = field(default_factory=dict)
    cancel_at: float | None = None


class BatchStore:
    """The files and batches of one server (every scenario shares them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, _File] = {}
        self._batches: dict[str, _Batch] = {}

    def handle(
        self,
        method: str,
        path: str,
        raw: bytes,
        headers: dict[str, str],
        scenario: Scenario,
        chat: Chat,
    ) -> Reply:
        with self._lock:
            found = _FILE.match(path)
            if found:
                return self._files_route(method, found, raw, headers, scenario)
            found = _BATCH.match(path)
            if found:
                return self._batches_route(method, found, raw, scenario, chat)
            return _error(404, f"No route {path}")

    # files ---------------------------------------------------------------------------------
    def _files_route(
        self,
        method: str,
        found: re.Match[str],
        raw: bytes,
        headers: dict[str, str],
        scenario: Scenario,
    ) -> Reply:
        file_id = found["id"]
        if file_id is None:
            if method == "GET":
                return json_reply(
                    200, {"object": "list", "data": [f.obj() for f in self._files.values()]}
                )
            if method == "POST":
                return self._upload(raw, headers.get("content-type", ""), scenario)
            return _error(405, "Method Not Allowed")
        file = self._files.get(file_id)
        if file is None:
            return _error(404, f"File {file_id} not found")
        if found["content"]:
            return (
                Reply(200, file.content, "application/octet-stream")
                if method == "GET"
                else _error(405, "Method Not Allowed")
            )
        if method == "DELETE":
            del self._files[file_id]
            return json_reply(200, {"id": file_id, "object": "file", "deleted": True})
        return json_reply(200, file.obj()) if method == "GET" else _error(405, "Method Not Allowed")

    def _upload(self, raw: bytes, content_type: str, scenario: Scenario) -> Reply:
        if not content_type.startswith("multipart/form-data"):
            return _error(400, "Upload the file as multipart/form-data with 'file' and 'purpose'")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = (part.get_filename(), payload)
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        accepted = (scenario.batch_purpose,) if scenario.batch_purpose else PURPOSES
        if purpose not in accepted:
            return _error(
                400, f"Invalid purpose {purpose!r}: only {' or '.join(accepted)} is supported"
            )
        if "file" not in fields:
            return _error(400, "The 'file' field is missing")
        filename, content = fields["file"]
        if len(content) > MAX_BYTES:
            return _error(400, "The file is larger than 200 MB")
        file = _File(
            f"file-{uuid.uuid4().hex[:24]}",
            filename or "batch.jsonl",
            purpose,
            content,
            int(time.time()),
        )
        self._files[file.id] = file
        return json_reply(200, file.obj())

    def _output(self, name: str, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        content = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        file = _File(
            f"file-{uuid.uuid4().hex[:24]}", name, "batch_output", content, int(time.time())
        )
        self._files[file.id] = file
        return file.id

    # batches -------------------------------------------------------------------------------
    def _batches_route(
        self, method: str, found: re.Match[str], raw: bytes, scenario: Scenario, chat: Chat
    ) -> Reply:
        batch_id, action = found["id"], found["action"]
        if batch_id is None:
            if method == "GET":
                data = [self._object(b, chat) for b in self._batches.values()]
                return json_reply(200, {"object": "list", "data": data, "has_more": False})
            if method == "POST":
                return self._create(raw, scenario)
            return _error(405, "Method Not Allowed")
        batch = self._batches.get(batch_id)
        if batch is None:
            return _error(404, f"Batch {batch_id} not found")
        if action == "cancel":
            if method != "POST":
                return _error(405, "Method Not Allowed")
            self._advance(batch, chat)
            if batch.status not in ("completed", "succeeded", "failed", "expired", "cancelled"):
                batch.cancel_at = time.monotonic()
                batch.stamps["cancelling_at"] = int(time.time())
                batch.status = "cancelling"
            return json_reply(200, self._object(batch, chat, advance=False))
        if method != "GET":
            return _error(405, "Method Not Allowed")
        obj = self._object(batch, chat)
        if action == "results":  # the guide's route: the output file's lines
            file = self._files.get(batch.output_file_id or "")
            return Reply(200, file.content if file else b"", "application/jsonl")
        return json_reply(200, obj)

    def _create(self, raw: bytes, scenario: Scenario) -> Reply:
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "Request body is not a valid JSON object")
        if not isinstance(body, dict):
            return _error(400, "Request body is not a valid JSON object")
        file = self._files.get(str(body.get("input_file_id")))
        if file is None:
            return _error(
                400, f"input_file_id {body.get('input_file_id')!r} is not an uploaded file"
            )
        endpoint = body.get("endpoint", "/v1/chat/completions")
        if endpoint not in ("/v1/chat/completions", "/chat/completions"):
            return _error(400, f"endpoint {endpoint!r} is not supported: use /v1/chat/completions")
        window = body.get("completion_window", "24h")
        if window not in WINDOWS:
            return _error(400, f"completion_window {window!r} must be 24h")
        lines, problem = _input_lines(file.content)
        if problem:
            return _error(400, problem)
        batch = _Batch(
            id=f"batch_{uuid.uuid4().hex[:24]}",
            input_file_id=file.id,
            endpoint=endpoint,
            completion_window=window,
            metadata=body.get("metadata"),
            lines=lines,
            scenario=scenario,
            started=time.monotonic(),
            created_at=int(time.time()),
        )
        self._batches[batch.id] = batch
        return json_reply(200, self._object(batch, lambda b: _error(500, "unused")))

    def _advance(self, batch: _Batch, chat: Chat) -> None:
        """Move ``batch`` along the scenario's clock; run its requests when it reaches the end."""
        states = _STATES[batch.scenario.batch_statuses]
        if batch.status in ("cancelled", states[3], "expired", "failed"):
            return
        now = time.monotonic()
        if batch.cancel_at is not None:
            batch.status = "cancelled"
            batch.stamps["cancelled_at"] = int(time.time())
            batch.counts = {"total": len(batch.lines), "completed": 0, "failed": 0}
            return
        span = max(batch.scenario.batch_seconds, 0.0)
        elapsed = now - batch.started
        if elapsed < span * 0.2:
            batch.status = states[0]
        elif elapsed < span * 0.7:
            batch.status = states[1]
            batch.stamps.setdefault("in_progress_at", int(time.time()))
        elif elapsed < span:
            batch.status = states[2]
            batch.stamps.setdefault("in_progress_at", int(time.time()))
            batch.stamps.setdefault("finalizing_at", int(time.time()))
        else:
            self._finish(batch, chat)

    def _finish(self, batch: _Batch, chat: Chat) -> None:
        expire = batch.scenario.batch_expire
        done, failed = [], []
        for index, line in enumerate(batch.lines):
            number = f"batch_req_{index + 1}"
            if expire and index >= len(batch.lines) // 2:
                failed.append(_failed(number, line, "batch_expired", EXPIRED))
                continue
            problem = line.get("problem")
            if problem:
                failed.append(_failed(number, line, "invalid_request", problem))
                continue
            reply = chat(line["body"])
            body = json.loads(reply.body)
            if reply.status == 200:
                response = {
                    "status_code": 200,
                    "request_id": f"req_{uuid.uuid4().hex[:12]}",
                    "body": body,
                }
                done.append(
                    {
                        "id": number,
                        "custom_id": line["custom_id"],
                        "response": response,
                        "error": None,
                    }
                )
            else:
                message = body.get("detail") if isinstance(body, dict) else None
                failed.append(
                    _failed(number, line, "invalid_request", str(message or reply.status))
                )
        done.reverse()  # "not in input order; match on custom_id"
        batch.output_file_id = self._output("batch_output.jsonl", done)
        batch.error_file_id = self._output("batch_errors.jsonl", failed)
        batch.counts = {"total": len(batch.lines), "completed": len(done), "failed": len(failed)}
        stamp = int(time.time())
        batch.stamps.setdefault("in_progress_at", stamp)
        batch.stamps.setdefault("finalizing_at", stamp)
        if expire:
            batch.status = "expired"
            batch.stamps["expired_at"] = stamp
        else:
            batch.status = _STATES[batch.scenario.batch_statuses][3]
            batch.stamps["completed_at"] = stamp

    def _object(self, batch: _Batch, chat: Chat, *, advance: bool = True) -> dict[str, Any]:
        if advance:
            self._advance(batch, chat)
        reference = batch.scenario.batch_statuses == "reference"
        unset: int | None = 0 if reference else None
        names = (
            "in_progress_at",
            "finalizing_at",
            "completed_at",
            "failed_at",
            "cancelling_at",
            "cancelled_at",
            "expired_at",
        )
        counts = batch.counts or {"total": len(batch.lines), "completed": 0, "failed": 0}
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": [] if reference else None,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.completion_window,
            "status": batch.status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": batch.created_at,
            **{name: batch.stamps.get(name, unset) for name in names},
            "expires_at": batch.created_at + (3600 if batch.completion_window == "1h" else 86400),
            "request_counts": counts,
            "metadata": batch.metadata,
        }


def _failed(number: str, line: dict[str, Any], code: str, message: str) -> dict[str, Any]:
    error = {"code": code, "message": message}
    return {"id": number, "custom_id": line.get("custom_id"), "response": None, "error": error}


def _input_lines(content: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """The requests of an input file; a line that is not a request fails on its own (its
    ``problem``), a file over the limits or with two models fails whole."""
    lines: list[dict[str, Any]] = []
    models: set[str] = set()
    for number, text in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            line = None
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            return [], f"Line {number} of the input file is not a request with a custom_id"
        body = line.get("body")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            line = {**line, "problem": f"Line {number}: 'body' needs a 'messages' list"}
        else:
            models.add(str(body.get("model")))
        lines.append(line)
    if not lines:
        return [], "The input file holds no requests"
    if len(lines) > MAX_LINES:
        return [], f"The input file holds {len(lines)} requests; at most {MAX_LINES} are allowed"
    if len(models) > 1:
        return [], f"One model per file: this one names {', '.join(sorted(models))}"
    return lines, None
