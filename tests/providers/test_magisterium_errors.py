"""Magisterium's documented error replies, on chat and search, against the loopback server.

The documented statuses and messages: 400 "Token limit exceeded"; 401 "Incorrect API key
provided", "Invalid billing", "Tier not found"; 429 "Too many requests"; 500 "Internal server
error". The body shape is not documented: the message is read from ``error.message``, then
``message``, then ``detail``, then the raw text.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

import citekit as ck
from citekit.testing import ProviderServer
from tests.conftest import SECRET

CALLS = {
    "ask": lambda mg: mg.ask("What is the principle of subsidiarity?"),
    "search": lambda mg: mg.search("subsidiarity"),
    "asearch": lambda mg: asyncio.run(mg.asearch("subsidiarity")),
}

DOCUMENTED = [
    (400, None, ck.TokenLimitError, "Token limit exceeded", "Shorten the messages"),
    (401, None, ck.AuthenticationError, "Incorrect API key provided", "MAGISTERIUM_API_KEY"),
    (401, "Invalid billing", ck.AuthenticationError, "Invalid billing", "billing"),
    (401, "Tier not found", ck.AuthenticationError, "Tier not found", "plan (tier)"),
    (429, None, ck.RateLimitError, "Too many requests", "lower the request rate"),
    (500, None, ck.ServerError, "Internal server error", ""),
]


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize(
    ("status", "message", "kind", "text", "hint"), DOCUMENTED, ids=lambda v: str(v)[:20]
)
def test_documented_errors(
    server: ProviderServer,
    call: str,
    status: int,
    message: str | None,
    kind: type[ck.ProviderError],
    text: str,
    hint: str,
) -> None:
    scenario = server.add_scenario(fault="status", status=status, message=message)
    url = server.scenario_url(scenario, "magisterium")
    mg = ck.Magisterium(api_key=SECRET, base_url=url, max_retries=0)
    with pytest.raises(kind) as info:
        CALLS[call](mg)
    err = info.value
    assert type(err) is kind
    assert err.status == status and err.provider == "magisterium" and err.request_id
    assert err.message == text and hint in str(err)
    assert SECRET not in str(err)


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b'{"error": {"message": "Invalid billing"}, "message": "x"}', "json", "Invalid billing"),
        (b'{"message": "Invalid billing", "detail": "x"}', "json", "Invalid billing"),
        (b'{"detail": "Tier not found"}', "json", "Tier not found"),
        (b'{"error": "Tier not found"}', "json", "Tier not found"),
        (b"Incorrect API key provided\n", "text/plain", "Incorrect API key provided"),
        (b"", "text/plain", "(empty body)"),
    ],
)
def test_undocumented_body_shapes(body: bytes, content_type: str, expected: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, content=body, headers={"content-type": content_type})

    mg = ck.Magisterium(api_key=SECRET, transport=httpx.MockTransport(handler), max_retries=0)
    with pytest.raises(ck.AuthenticationError) as info:
        mg.search("work")
    assert info.value.message == expected


def test_token_limit_as_raw_text() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text="Token limit exceeded")

    mg = ck.Magisterium(api_key=SECRET, transport=httpx.MockTransport(handler))
    with pytest.raises(ck.TokenLimitError, match="Token limit exceeded"):
        mg.ask("q")


def test_429_and_500_are_retried_then_succeed(server: ProviderServer) -> None:
    for status in (429, 500):
        scenario = server.add_scenario(fault="status", status=status, retry_after=0, times=1)
        url = server.scenario_url(scenario, "magisterium")
        mg = ck.Magisterium(api_key=SECRET, base_url=url, max_retries=1)
        found: Any = mg.search("subsidiarity", num_results=1)
        assert len(found) == 1 and scenario.request_count == 2


def test_401_and_400_are_not_retried(server: ProviderServer) -> None:
    for status in (400, 401):
        scenario = server.add_scenario(fault="status", status=status)
        url = server.scenario_url(scenario, "magisterium")
        mg = ck.Magisterium(api_key=SECRET, base_url=url, max_retries=2)
        with pytest.raises(ck.ProviderError):
            mg.search("subsidiarity")
        assert scenario.request_count == 1
