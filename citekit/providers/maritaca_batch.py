"""``mt.batch(...)``: a study's questions sent through Maritaca's Batch API as one file.

The handle, ``BatchJob``, polls the batch, cancels it, and reads its output and error files
back into answers in input order (``citekit.wire.maritaca_batch``), each logged like any answer
and carrying ``batch_id``. ``mt.batch_job(id)`` rebuilds it in a new session from the batch's
input file.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.errors import ProviderError
from ..model import Answer
from ..wire.flow import RequestSpec, fetch_bytes, fetch_json
from ..wire.maritaca_batch import (
    BATCH_ENDPOINT,
    COMPLETION_WINDOW,
    DONE,
    BatchInfo,
    BatchRequest,
    BatchRequestError,
    input_jsonl,
    parse_batch,
    parse_file_id,
    parse_input,
    read_results,
)
from ..wire.schema import Schema, decode

if TYPE_CHECKING:
    from ._client import ProviderClient

__all__ = ["BatchJob", "BatchRequestError", "start_batch", "with_parsed"]

#: The guide's upload purpose, then the reference's (providers.md: the docs contradict each
#: other; send "batch", and "batch_input" after a 4xx).
_PURPOSES = ("batch", "batch_input")


def with_parsed(answer: Answer, schema: Schema | None) -> Answer:
    """``answer`` with ``parsed`` decoded from its text for ``schema=`` (a note saying why
    when it is not valid); unchanged without a schema."""
    if schema is None:
        return answer
    value, note = decode(answer.text, schema)
    notes = answer.notes if note is None else (*answer.notes, note)
    return replace(answer, parsed=value, notes=notes)


def start_batch(
    client: ProviderClient,
    requests: list[BatchRequest],
    metadata: dict[str, str] | None,
    schema: Schema | None = None,
) -> BatchJob:
    """Upload ``requests`` as the input file, create the batch, return its handle."""
    content = input_jsonl(requests)
    file_id = None
    for purpose in _PURPOSES:
        spec = RequestSpec(
            "POST",
            "/files",
            files={"file": ("citekit_batch.jsonl", content, "application/jsonl")},
            data={"purpose": purpose},
        )
        try:
            file_id = client._run(fetch_json(client._wire, spec, parse_file_id))
            break
        except ProviderError as exc:
            if purpose == _PURPOSES[-1] or exc.status not in (400, 422):
                raise
    body: dict[str, Any] = {
        "input_file_id": file_id,
        "endpoint": BATCH_ENDPOINT,
        "completion_window": COMPLETION_WINDOW,
    }
    if metadata:
        body["metadata"] = dict(metadata)
    info = client._run(
        fetch_json(client._wire, RequestSpec("POST", "/batches", json=body), parse_batch)
    )
    return BatchJob(client, info, requests, schema)


class BatchJob:
    """A Maritaca batch: ``mt.batch(questions)`` made it, ``mt.batch_job(id)`` finds it again.

    ``status()`` asks the provider (its own word: ``validating``, ``in_progress``,
    ``completed``, ... or ``queued``, ``running``, ``succeeded``, ...); ``wait()`` polls until
    the batch has ended; ``answers()`` gives one ``Answer`` per input in input order, None where
    that request failed, and ``errors()`` says why (``index``, ``custom_id``, ``error``).
    Not to be confused with ``ask_many``'s ``BatchResult``.
    """

    def __init__(
        self,
        client: ProviderClient,
        info: BatchInfo,
        requests: list[BatchRequest],
        schema: Schema | None = None,
    ) -> None:
        self._client = client
        self._schema = schema
        self.info = info
        self.requests = requests
        self._results: tuple[list[Answer | None], list[BatchRequestError]] | None = None

    @property
    def id(self) -> str:
        return self.info.id

    def __repr__(self) -> str:
        return (
            f"BatchJob(id={self.id!r}, status={self.info.status!r}, requests={len(self.requests)})"
        )

    def __len__(self) -> int:
        return len(self.requests)

    @classmethod
    def find(cls, client: ProviderClient, batch_id: str, schema: Schema | None = None) -> BatchJob:
        """The batch ``batch_id``, its requests read back from its input file."""
        if not isinstance(batch_id, str) or not batch_id.strip():
            raise ValueError(
                "batch_job() needs the batch's id, e.g. job.id of an earlier mt.batch()"
            )
        info = cls._retrieve(client, batch_id)
        requests: list[BatchRequest] = []
        if info.input_file_id:
            content = client._run(fetch_bytes(client._wire, _content(info.input_file_id)))
            requests = parse_input(content)
        return cls(client, info, requests, schema)

    @staticmethod
    def _retrieve(client: ProviderClient, batch_id: str) -> BatchInfo:
        spec = RequestSpec("GET", f"/batches/{batch_id}")
        return client._run(fetch_json(client._wire, spec, parse_batch))

    def refresh(self) -> BatchInfo:
        """The Batch object as the provider has it now."""
        self.info = self._retrieve(self._client, self.id)
        return self.info

    def status(self) -> str:
        """The batch's status now, as the provider names it."""
        return self.refresh().status

    def wait(
        self,
        *,
        poll: float = 5.0,
        progress: bool = False,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> BatchJob:
        """Poll every ``poll`` seconds until the batch has ended (completed, failed, expired or
        cancelled); ``progress=True`` prints its request counts as they move. Past
        ``timeout`` seconds, ``TimeoutError`` (the batch goes on: wait again later)."""
        if not poll > 0:
            raise ValueError(f"poll={poll!r} must be a number of seconds > 0")
        started = time.monotonic()
        info = self.info if self.info.finished else self.refresh()
        while not info.finished:
            if progress:
                _show(info)
            if timeout is not None and time.monotonic() - started + poll > timeout:
                raise TimeoutError(
                    f"batch {self.id} is still {info.status!r} after {timeout} s; it goes on at "
                    "Maritaca: call .wait() again later, or "
                    f"mt.batch_job({self.id!r}) in a new session"
                )
            sleep(poll)
            info = self.refresh()
        if progress:
            _show(info, end="\n")
        return self

    def cancel(self) -> str:
        """Ask Maritaca to cancel the batch; the status it moved to (``cancelling``)."""
        spec = RequestSpec("POST", f"/batches/{self.id}/cancel")
        self.info = self._client._run(fetch_json(self._client._wire, spec, parse_batch))
        return self.info.status

    def _read(self) -> tuple[list[Answer | None], list[BatchRequestError]]:
        if self._results is not None:
            return self._results
        if not self.info.finished:
            self.wait()
        wire = self._client._wire
        files = []
        for file_id in (self.info.output_file_id, self.info.error_file_id):
            files.append(
                self._client._run(fetch_bytes(wire, _content(file_id))) if file_id else b""
            )
        answers, errors = read_results(self.requests, files[0], files[1], batch_id=self.id)
        answers = [None if a is None else with_parsed(a, self._schema) for a in answers]
        if self.info.status not in DONE and not errors:
            errors = [
                BatchRequestError(
                    None, None, f"the batch ended {self.info.status!r}", self.info.status
                )
            ]
        self._log(answers)
        self._results = (answers, errors)
        return self._results

    def _log(self, answers: list[Answer | None]) -> None:
        from ..store import log as answer_log

        client = self._client
        for request, answer in zip(self.requests, answers, strict=True):
            if answer is not None:
                answer_log.record(
                    answer, request=request.body, base_url=client.base_url, secrets=client._secrets
                )

    def answers(self) -> list[Answer | None]:
        """One answer per input, in input order; None where that request failed (see
        ``errors()``). Waits for the batch to end first; each answer is logged once."""
        return list(self._read()[0])

    def errors(self) -> list[BatchRequestError]:
        """Why requests have no answer (``index``, ``custom_id``, ``error``), in input order;
        lines of the output that match no request come last, with ``index`` None."""
        return list(self._read()[1])


def _content(file_id: str | None) -> RequestSpec:
    return RequestSpec("GET", f"/files/{file_id}/content")


def _show(info: BatchInfo, end: str = "") -> None:
    done = (info.completed or 0) + (info.failed or 0)
    total = "?" if info.total is None else str(info.total)
    print(
        f"\rbatch {info.id}: {info.status} ({done}/{total} requests)",
        end=end,
        file=sys.stderr,
        flush=True,
    )
