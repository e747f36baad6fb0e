"""Maritaca as it really is: built-in tools, sources from links, tool usage, generated files,
the flex tier, and the model list, against the loopback server."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

import citekit as ck
from citekit.testing import ProviderServer

TOOLS = ("web_search", "data_ocean", "code_execution")
MSG = [{"role": "user", "content": "Qual é a capital do Brasil?"}]


@pytest.fixture()
def mt(server: ProviderServer) -> ck.Maritaca:
    return ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))


# -- 1. built-in tools -------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_built_in_tool_is_sent_as_a_boolean(
    server: ProviderServer, mt: ck.Maritaca, tool: str
) -> None:
    mt.chat(MSG, **{tool: True})  # type: ignore[arg-type]
    body = server.requests[-1].json
    assert body[tool] is True and "stream" not in body
    mt.ask("Qual é a capital do Brasil?", **{tool: False})  # type: ignore[arg-type]
    assert server.requests[-1].json[tool] is False


def test_tools_left_out_are_not_sent(server: ProviderServer, mt: ck.Maritaca) -> None:
    mt.chat(MSG)
    assert not set(TOOLS) & set(server.requests[-1].json)


@pytest.mark.parametrize("tool", TOOLS)
def test_streaming_with_a_tool_is_refused_before_sending(
    server: ProviderServer, mt: ck.Maritaca, tool: str
) -> None:
    before = len(server.requests)
    why = rf"Maritaca's built-in tools \({tool}\) do not stream: call without stream=True"
    with pytest.raises(ValueError, match=why):
        mt.chat(MSG, stream=True, **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.ask("oi", stream=True, **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.stream(MSG, **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.astream("oi", **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.chat(MSG, stream=True, extra_body={tool: True})
    assert len(server.requests) == before


def test_async_streaming_with_a_tool_is_refused(server: ProviderServer, mt: ck.Maritaca) -> None:
    before = len(server.requests)
    with pytest.raises(ValueError, match=r"do not stream"):
        asyncio.run(mt.achat(MSG, stream=True, web_search=True))
    with pytest.raises(ValueError, match=r"do not stream"):
        asyncio.run(mt.aask("oi", stream=True, data_ocean=True))
    assert len(server.requests) == before


def test_a_tool_switched_off_streams(server: ProviderServer, mt: ck.Maritaca) -> None:
    ans = mt.chat(MSG, stream=True, display=False, web_search=False)
    assert ans.provider == "maritaca" and server.requests[-1].json["stream"] is True


def test_magisterium_takes_no_built_in_tool(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    for tool in TOOLS:
        with pytest.raises(TypeError, match=rf"Magisterium does not take {tool}"):
            mg.ask("x", **{tool: True})  # type: ignore[arg-type]


def test_server_refuses_a_streaming_tool_request(server: ProviderServer) -> None:
    body: dict[str, Any] = {"model": "sabia-4", "messages": MSG, "stream": True}
    for tool in TOOLS:
        r = httpx.post(
            server.base_url("maritaca") + "/chat/completions",
            json={**body, tool: True},
            headers={"Authorization": "Bearer k"},
        )
        assert r.status_code == 400 and tool in r.json()["detail"]
