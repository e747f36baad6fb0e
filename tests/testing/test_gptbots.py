"""The loopback server's GPTBots knowledge search and history endpoints, as documented."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from citekit.testing import ProviderServer

AUTH = {"Authorization": "Bearer test-key"}


@pytest.fixture()
def client() -> Any:
    with httpx.Client(headers=AUTH, timeout=10) as c:
        yield c


@pytest.mark.parametrize(
    "body",
    [
        {"top_k": 3},
        {"prompt": "wall", "top_k": 0},
        {"prompt": "wall", "top_k": 51},
        {"prompt": "wall", "top_k": 3, "embedding_rate": 2},
        {"prompt": "wall", "top_k": 3, "doc_correlation": 0.99},
        {"prompt": "wall", "top_k": 3, "rerank_version": "other"},
        {"prompt": "wall", "top_k": 3, "data_ids": "x"},
    ],
)
def test_vector_match_refuses_what_the_docs_rule_out(
    server: ProviderServer, client: httpx.Client, body: dict[str, Any]
) -> None:
    r = client.post(server.base_url("gptbots") + "/v1/vector/match", json=body)
    assert r.status_code == 400 and r.json()["code"] == 40000


def test_vector_match_in_the_documented_shape(server: ProviderServer, client: httpx.Client) -> None:
    url = server.base_url("gptbots") + "/v1/vector/match"
    body = client.post(url, json={"prompt": "Great Wall", "top_k": 2}).json()
    assert set(body) == {"total", "list"} and len(body["list"]) == body["total"] == 2
    assert all(set(i) == {"content", "data_id", "document_name", "score"} for i in body["list"])
    some = body["list"][0]["data_id"]
    only = client.post(url, json={"prompt": "Great Wall", "top_k": 5, "data_ids": [some]}).json()
    assert {i["data_id"] for i in only["list"]} == {some}
    none = client.post(url, json={"prompt": "Great Wall", "top_k": 5, "data_ids": []}).json()
    assert none == {"total": 0, "list": []}  # [] searches nothing, as documented


def test_conversation_page_and_messages(server: ProviderServer, client: httpx.Client) -> None:
    base = server.base_url("gptbots")
    cid = client.post(base + "/v1/conversation", json={"user_id": "u1"}).json()["conversation_id"]
    message = {
        "conversation_id": cid,
        "response_mode": "blocking",
        "messages": [{"role": "user", "content": "Why was the Great Wall built?"}],
    }
    reply = client.post(base + "/v2/conversation/message", json=message).json()
    params = {
        "conversation_type": "ALL",
        "start_time": "0",
        "end_time": str(2**41),
        "user_id": "u1",
    }
    page = client.get(base + "/v1/bot/conversation/page", params=params).json()
    (row,) = page["list"]
    assert page["total"] == 1 and row["conversation_id"] == cid and row["message_count"] == 2
    missing = client.get(base + "/v1/bot/conversation/page", params={"conversation_type": "ALL"})
    assert missing.status_code == 400 and missing.json()["code"] == 40000
    got = client.get(base + "/v2/messages", params={"conversation_id": cid}).json()
    user, assistant = got["conversation_content"]
    assert (user["role"], assistant["role"]) == ("user", "assistant")
    assert "from_component_branch" not in user["content"][0]  # empty for user messages
    assert assistant["message_id"] == reply["message_id"]
    assert assistant["parent_message_id"] == user["message_id"]
    beyond = client.get(base + "/v2/messages", params={"conversation_id": cid, "page": "2"})
    assert beyond.status_code == 400 and beyond.json()["code"] == 40005
    unknown = client.get(base + "/v2/messages", params={"conversation_id": "nope"})
    assert unknown.json()["code"] == 40356
