"""Maritaca's Batch API through ``mt.batch``: the input file and create body as documented
(providers.md, "Maritaca AI: Batch API and Files API"), answers in input order matched by
``custom_id``, logged with their ``batch_id``, resumable by id, cancel, expiry, both status
sets and both upload purposes; and the official openai SDK against the loopback server."""

from __future__ import annotations

import http.server
import json
import threading
import time

import httpx
import openai
import pytest

import citekit as ck
from citekit.store import log
from citekit.testing import ProviderServer

QUESTIONS = ["O Brasil tem vulcão?", "Qual é a capital do Brasil?", "O que mudou no Pix?"]
FAST = 0.3  # seconds a batch takes on the scenario clock
POLL = 0.05


def client(server: ProviderServer, **options: object) -> ck.Maritaca:
    url = server.base_url("maritaca", batch_seconds=FAST, **options)  # type: ignore[arg-type]
    return ck.Maritaca(api_key="k", base_url=url)


def file_content(mt: ck.Maritaca, file_id: str) -> bytes:
    response = httpx.get(
        f"{mt.base_url}/files/{file_id}/content", headers={"Authorization": "Key k"}
    )
    response.raise_for_status()
    return response.content


def test_answers_come_in_input_order_with_their_batch_id(server: ProviderServer) -> None:
    mt = client(server)
    inputs: list[object] = [*QUESTIONS, [{"role": "user", "content": "Olá, tudo bem?"}]]
    job = mt.batch(inputs, max_tokens=200)  # type: ignore[arg-type]
    answers = job.wait(poll=POLL).answers()
    # The server writes its output file in reverse (documented: "not in input order").
    assert [a.question if a else None for a in answers] == [*QUESTIONS, "Olá, tudo bem?"]
    assert all(a is not None and a.batch_id == job.id for a in answers)
    assert job.errors() == []
    assert job.status() == "completed"


def test_the_input_file_and_create_body_are_as_documented(server: ProviderServer) -> None:
    mt = client(server)
    job = mt.batch(QUESTIONS[:1], max_tokens=200)
    # "{"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions", "body":
    # {"model": "sabia-4", "messages": [{"role": "user", "content": "O Brasil tem vulcão?"}],
    # "max_tokens": 200}}"
    assert job.info.input_file_id is not None
    line = json.loads(file_content(mt, job.info.input_file_id))
    assert line == {
        "custom_id": "request-1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "sabia-4",
            "messages": [{"role": "user", "content": "O Brasil tem vulcão?"}],
            "max_tokens": 200,
        },
    }
    upload = next(r for r in reversed(server.requests) if r.path.endswith("/api/files"))
    assert b'name="purpose"\r\n\r\nbatch\r\n' in upload.body  # the guide's purpose first
    create = next(r for r in reversed(server.requests) if r.path.endswith("/api/batches"))
    # {"input_file_id":"file-1","endpoint":"/v1/chat/completions","completion_window":"24h"}
    assert create.json == {
        "input_file_id": job.info.input_file_id,
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
    }


def test_answers_are_logged_once_with_their_batch_id(server: ProviderServer) -> None:
    job = client(server).batch(QUESTIONS).wait(poll=POLL)
    job.answers()
    job.answers()  # read again: not logged twice
    log.flush()
    logged = [a for a in log.answers() if a.batch_id == job.id]
    assert sorted(a.question or "" for a in logged) == sorted(QUESTIONS)


def test_batch_job_rebuilds_the_handle_in_a_new_session(server: ProviderServer) -> None:
    job = client(server).batch(QUESTIONS)
    again = client(server).batch_job(job.id)  # another client, as a new session would make
    assert len(again) == len(QUESTIONS)
    answers = again.wait(poll=POLL).answers()
    assert [a.question if a else None for a in answers] == QUESTIONS
    assert answers == job.answers()


def test_cancel_moves_through_cancelling_to_cancelled(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca", batch_seconds=60))
    job = mt.batch(QUESTIONS)
    assert job.status() == "validating"
    assert job.cancel() == "cancelling"
    assert job.wait(poll=POLL).info.status == "cancelled"
    assert job.answers() == [None, None, None]
    assert [(e.index, e.custom_id) for e in job.errors()] == [
        (0, "request-1"),
        (1, "request-2"),
        (2, "request-3"),
    ]


def test_an_expired_batch_keeps_what_was_done(server: ProviderServer) -> None:
    job = client(server, batch_expire=True).batch([*QUESTIONS, "Quatro?"])
    answers = job.wait(poll=POLL).answers()
    assert job.info.status == "expired"
    assert [a is not None for a in answers] == [True, True, False, False]
    # {"code":"batch_expired","message":"This request could not be executed before the
    # completion window expired."}
    assert [(e.index, e.code, e.error) for e in job.errors()] == [
        (
            i,
            "batch_expired",
            "This request could not be executed before the completion window expired.",
        )
        for i in (2, 3)
    ]


def test_the_reference_status_set_is_read(server: ProviderServer) -> None:
    job = client(server, batch_statuses="reference").batch(QUESTIONS)
    assert job.status() in ("queued", "running")
    assert job.wait(poll=POLL).info.status == "succeeded"
    assert all(a is not None for a in job.answers())


def test_upload_falls_back_to_the_reference_purpose(server: ProviderServer) -> None:
    before = len(server.requests)
    job = client(server, batch_purpose="batch_input").batch(QUESTIONS[:1])
    uploads = [r for r in server.requests[before:] if r.path.endswith("/api/files")]
    assert [r.status for r in uploads] == [400, 200]
    assert job.wait(poll=POLL).answers()[0] is not None


def test_progress_prints_the_counts(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client(server).batch(QUESTIONS).wait(poll=POLL, progress=True)
    assert "completed (3/3 requests)" in capsys.readouterr().err


def test_limits_are_checked_before_sending(server: ProviderServer) -> None:
    mt = client(server)
    before = len(server.requests)
    with pytest.raises(ValueError, match="at most 50,000"):
        mt.batch(["q"] * 50_001)
    with pytest.raises(ValueError, match="Chat Completions only"):
        mt.batch(QUESTIONS, api="responses")
    with pytest.raises(ValueError, match="at least one"):
        mt.batch([])
    with pytest.raises(TypeError, match="list of questions"):
        mt.batch("O Brasil tem vulcão?")
    assert len(server.requests) == before


def test_wait_gives_up_at_its_timeout_saying_how_to_resume(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca", batch_seconds=60))
    job = mt.batch(QUESTIONS[:1])
    with pytest.raises(TimeoutError, match=f"mt.batch_job\\('{job.id}'\\)"):
        job.wait(poll=POLL, timeout=0.1)
    job.cancel()


def test_the_openai_sdk_drives_files_and_batches(server: ProviderServer) -> None:
    sdk = openai.OpenAI(api_key="k", base_url=server.base_url("maritaca", batch_seconds=FAST))
    line = {
        "custom_id": "request-1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "sabia-4",
            "messages": [{"role": "user", "content": "O Brasil tem vulcão?"}],
            "max_tokens": 200,
        },
    }
    uploaded = sdk.files.create(file=("in.jsonl", json.dumps(line).encode()), purpose="batch")
    assert (uploaded.object, uploaded.purpose, uploaded.status) == ("file", "batch", "processed")
    batch = sdk.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert batch.status == "validating"
    while batch.status not in ("completed", "failed", "expired", "cancelled"):
        time.sleep(POLL)
        batch = sdk.batches.retrieve(batch.id)
    assert batch.request_counts is not None and batch.request_counts.completed == 1
    assert batch.output_file_id is not None
    out = json.loads(sdk.files.content(batch.output_file_id).text)
    assert out["custom_id"] == "request-1" and out["response"]["status_code"] == 200
    assert out["response"]["body"]["object"] == "chat.completion"
    # And citekit reads the batch the SDK made.
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    answers = mt.batch_job(batch.id).answers()
    assert answers[0] is not None and answers[0].question == "O Brasil tem vulcão?"
    assert sdk.files.delete(uploaded.id).deleted is True


def test_schema_decodes_each_answer_as_ask_does(server: ProviderServer) -> None:
    schema = {"type": "object", "properties": {"cidade": {"type": "string"}}}
    mt = client(server)
    job = mt.batch(QUESTIONS[1:2], schema=schema)
    create = next(r for r in reversed(server.requests) if r.path.endswith("/api/files"))
    assert b'"response_format": {"type": "json_schema"' in create.body
    [answer] = job.wait(poll=POLL).answers()
    assert answer is not None and sorted(answer.parsed) == ["cidade"]
    assert answer == mt.ask(QUESTIONS[1], schema=schema, log=False)
    again = mt.batch_job(job.id, schema=schema).answers()[0]
    assert again is not None and again.parsed == answer.parsed


# -- the documented bodies, served as they are written, through the public API ------------

DOC_INPUT = (
    '{"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions", "body": '
    '{"model": "sabia-4", "messages": [{"role": "user", "content": "O Brasil tem vulcão?"}], '
    '"max_tokens": 200}}\n'
    '{"custom_id": "request-2", "method": "POST", "url": "/v1/chat/completions", "body": '
    '{"model": "sabia-4", "messages": [{"role": "user", "content": "Qual é a capital?"}], '
    '"max_tokens": 200}}\n'
)
DOC_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1736532802,
    "model": "sabia-4",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Brasília."},
            "finish_reason": "stop",
        }
    ],
}
# {"id":"batch_req_1","custom_id":"request1","response":{"status_code":200,"request_id":
# "req_1","body":{chat.completion}},"error":null}
DOC_OUTPUT = json.dumps(
    {
        "id": "batch_req_2",
        "custom_id": "request-2",
        "response": {"status_code": 200, "request_id": "req_1", "body": DOC_COMPLETION},
        "error": None,
    }
)
# {"id":"batch_req_1","custom_id":"request-1","response":null,"error":{"code":"batch_expired",
# "message":"This request could not be executed before the completion window expired."}}
DOC_ERROR = (
    '{"id":"batch_req_1","custom_id":"request-1","response":null,"error":{"code":"batch_expired",'
    '"message":"This request could not be executed before the completion window expired."}}'
)


@pytest.mark.parametrize("shape", ["guide", "reference"])
def test_the_documented_objects_and_lines_through_batch_job(shape: str) -> None:
    unset = None if shape == "guide" else 0
    batch = {
        "id": "batch_1",
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": None if shape == "guide" else [],
        "input_file_id": "file-1",
        "completion_window": "24h",
        "status": "expired",
        "output_file_id": "file-2",
        "error_file_id": "file-3",
        "created_at": 1714508499,
        "in_progress_at": 1714508500,
        "finalizing_at": unset,
        "completed_at": unset,
        "failed_at": unset,
        "expires_at": 1714594899,
        "cancelling_at": unset,
        "cancelled_at": unset,
        "expired_at": 1714594899,
        "request_counts": {"total": 2, "completed": 1, "failed": 1},
        "metadata": None,
    }
    routes = {
        "/api/batches/batch_1": json.dumps(batch).encode(),
        "/api/files/file-1/content": DOC_INPUT.encode(),
        "/api/files/file-2/content": (DOC_OUTPUT + "\n").encode(),
        "/api/files/file-3/content": (DOC_ERROR + "\n").encode(),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = routes.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            return

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}/api"
        job = ck.Maritaca(api_key="k", base_url=base, max_retries=0).batch_job("batch_1")
        assert (job.status(), len(job)) == ("expired", 2)
        answers = job.answers()
        assert answers[0] is None
        assert answers[1] is not None
        assert (answers[1].text, answers[1].question) == ("Brasília.", "Qual é a capital?")
        assert [(e.index, e.custom_id, e.code) for e in job.errors()] == [
            (0, "request-1", "batch_expired")
        ]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_handle_is_ck_batch_job(server: ProviderServer) -> None:
    job = client(server).batch(QUESTIONS[:1])
    assert isinstance(job, ck.BatchJob) and repr(job).startswith(f"BatchJob(id='{job.id}'")
