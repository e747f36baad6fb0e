"""The loopback server's Files and Batch APIs (``citekit/testing/_batches.py``), spoken with
plain httpx as providers.md documents them: the status clock, both documented shapes, the
guide's extra routes, the error file, limits and deletion."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from citekit.testing import ProviderServer

AUTH = {"Authorization": "Key k"}


def line(custom_id: str, content: str = "O Brasil tem vulcão?", **body: Any) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "sabia-4", "messages": [{"role": "user", "content": content}], **body},
    }


def upload(api: str, lines: list[Any], purpose: str = "batch") -> httpx.Response:
    content = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    files = {"file": ("in.jsonl", content.encode(), "application/jsonl")}
    return httpx.post(f"{api}/files", files=files, data={"purpose": purpose}, headers=AUTH)


def create(api: str, file_id: str, **extra: Any) -> httpx.Response:
    body = {"input_file_id": file_id, "endpoint": "/v1/chat/completions", **extra}
    return httpx.post(f"{api}/batches", json={"completion_window": "24h", **body}, headers=AUTH)


def poll(api: str, batch_id: str) -> list[str]:
    seen: list[str] = []
    while not seen or seen[-1] not in ("completed", "succeeded", "expired", "cancelled"):
        status = httpx.get(f"{api}/batches/{batch_id}", headers=AUTH).json()["status"]
        if not seen or seen[-1] != status:
            seen.append(status)
        time.sleep(0.02)
    return seen


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ("guide", ["validating", "in_progress", "finalizing", "completed"]),
        ("reference", ["queued", "running", "finalizing", "succeeded"]),
    ],
)
def test_status_moves_through_the_documented_states(
    server: ProviderServer, statuses: str, expected: list[str]
) -> None:
    api = server.base_url("maritaca", batch_seconds=0.4, batch_statuses=statuses)  # type: ignore[arg-type]
    file_id = upload(api, [line("request-1")]).json()["id"]
    batch = create(api, file_id).json()
    assert batch["status"] == expected[0]
    seen = poll(api, batch["id"])
    # In order, never skipping back; a slow poll may miss a short-lived state.
    assert seen == [s for s in expected if s in seen] and seen[-1] == expected[-1]
    final = httpx.get(f"{api}/batches/{batch['id']}", headers=AUTH).json()
    if statuses == "guide":  # `errors: null`, timestamps not reached `null`
        assert final["errors"] is None and final["failed_at"] is None
    else:  # `errors: []`, timestamps `0`
        assert final["errors"] == [] and final["failed_at"] == 0
    assert final["request_counts"] == {"total": 1, "completed": 1, "failed": 0}


@pytest.mark.parametrize("purpose", ["batch", "batch_input"])
def test_both_documented_purposes_are_accepted(server: ProviderServer, purpose: str) -> None:
    file = upload(server.base_url("maritaca"), [line("request-1")], purpose).json()
    assert (file["object"], file["purpose"], file["status"]) == ("file", purpose, "processed")
    assert set(file) == {
        "id", "bytes", "created_at", "expires_at", "filename", "object", "purpose", "status",
        "status_details",
    }  # fmt: skip


def test_a_scenario_accepts_one_purpose_only(server: ProviderServer) -> None:
    api = server.base_url("maritaca", batch_purpose="batch_input")
    refused = upload(api, [line("request-1")], "batch")
    assert refused.status_code == 400 and "batch_input" in refused.json()["detail"]


def test_output_out_of_order_and_failures_in_the_error_file(server: ProviderServer) -> None:
    api = server.base_url("maritaca", batch_seconds=0.1)
    lines = [line("a"), {"custom_id": "b", "method": "POST", "body": {}}, line("c")]
    file_id = upload(api, lines).json()["id"]
    batch = create(api, file_id).json()
    poll(api, batch["id"])
    done = httpx.get(f"{api}/batches/{batch['id']}", headers=AUTH).json()
    out = httpx.get(f"{api}/files/{done['output_file_id']}/content", headers=AUTH).text
    errors = httpx.get(f"{api}/files/{done['error_file_id']}/content", headers=AUTH).text
    assert [json.loads(x)["custom_id"] for x in out.splitlines()] == ["c", "a"]
    failed = [json.loads(x) for x in errors.splitlines()]
    assert [(x["custom_id"], x["response"], x["error"]["code"]) for x in failed] == [
        ("b", None, "invalid_request")
    ]
    # The guide's GET /batches/{id}/results and /status routes answer too.
    results = httpx.get(f"{api}/batches/{batch['id']}/results", headers=AUTH).text
    assert results == out
    status = httpx.get(f"{api}/batches/{batch['id']}/status", headers=AUTH).json()
    assert status["status"] == "completed"


def test_expiry_puts_the_rest_in_the_error_file(server: ProviderServer) -> None:
    api = server.base_url("maritaca", batch_seconds=0.1, batch_expire=True)
    file_id = upload(api, [line(f"r{i}") for i in range(4)]).json()["id"]
    batch = create(api, file_id).json()
    assert poll(api, batch["id"])[-1] == "expired"
    done = httpx.get(f"{api}/batches/{batch['id']}", headers=AUTH).json()
    assert done["request_counts"] == {"total": 4, "completed": 2, "failed": 2}
    assert done["expired_at"] is not None


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["not json"], "not a request with a custom_id"),
        ([line("a"), line("b", model="sabiazinho-4")], "One model per file"),
        ([], "no requests"),
    ],
)
def test_a_bad_input_file_is_refused(
    server: ProviderServer, lines: list[Any], message: str
) -> None:
    api = server.base_url("maritaca")
    file_id = upload(api, lines).json()["id"]
    refused = create(api, file_id)
    assert refused.status_code == 400 and message in refused.json()["detail"]


def test_files_list_get_and_delete(server: ProviderServer) -> None:
    api = server.base_url("maritaca")
    file_id = upload(api, [line("request-1")]).json()["id"]
    assert file_id in [f["id"] for f in httpx.get(f"{api}/files", headers=AUTH).json()["data"]]
    assert httpx.get(f"{api}/files/{file_id}", headers=AUTH).json()["id"] == file_id
    deleted = httpx.delete(f"{api}/files/{file_id}", headers=AUTH).json()
    assert deleted == {"id": file_id, "object": "file", "deleted": True}
    assert httpx.get(f"{api}/files/{file_id}", headers=AUTH).status_code == 404


def test_files_and_batches_need_the_key(server: ProviderServer) -> None:
    api = server.base_url("maritaca", api_key="right")
    assert httpx.get(f"{api}/batches", headers=AUTH).status_code == 401
