"""Every Maritaca / Magisterium parameter is checked before any request is sent."""

from __future__ import annotations

from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer

MSG = [{"role": "user", "content": "Qual é a capital do Brasil?"}]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "buscar_cep", "parameters": {"type": "object", "properties": {}}},
    }
]

BAD: list[tuple[dict[str, Any], str]] = [
    ({"temperature": 2.5}, r"temperature=2\.5 is out of range; allowed range \[0, 2\]"),
    ({"temperature": -0.1}, r"temperature=-0\.1 is out of range"),
    ({"temperature": "hot"}, r"temperature='hot' is not a number"),
    ({"temperature": float("nan")}, r"temperature=nan is not a number"),
    ({"top_p": 0}, r"top_p=0 is out of range; allowed range \(0, 1\]"),
    ({"top_p": 1.01}, r"top_p=1\.01 is out of range"),
    (
        {"frequency_penalty": 2.1},
        r"frequency_penalty=2\.1 is out of range; allowed range \[-2, 2\]",
    ),
    ({"presence_penalty": -3}, r"presence_penalty=-3 is out of range; allowed range \[-2, 2\]"),
    ({"n": 0}, r"n=0 is out of range; it must be >= 1"),
    ({"n": 1.5}, r"n=1\.5 must be a whole number >= 1"),
    ({"n": True}, r"n=True must be a whole number"),
    ({"max_tokens": 0}, r"max_tokens=0 is out of range"),
    ({"stop": "\n\n"}, r"stop='\\n\\n' must be a list of non-empty strings"),
    ({"stop": ["ok", 3]}, r"stop=\['ok', 3\] must be a list"),
    ({"stream_options": {"include_usage": True}}, r"stream_options= is only allowed with stream"),
    ({"tool_choice": "always", "tools": TOOLS}, r"tool_choice='always' is not allowed"),
    ({"tool_choice": "required"}, r"tool_choice='required' needs tools="),
    (
        {"tool_choice": {"type": "function", "function": {"name": "nope"}}, "tools": TOOLS},
        r"names the function 'nope', which is not in tools= \(buscar_cep\)",
    ),
    ({"tool_choice": {"type": "tool"}, "tools": TOOLS}, r"tool_choice=.* is not allowed"),
    ({"tools": [{"type": "function"}]}, r"tools\[0\]=.* must look like"),
    ({"model": ""}, r"model='' must be a non-empty model name"),
    (
        {"extra_body": {"web_search": True}, "stream": True},
        r"built-in tools \(web_search\) do not stream: call without stream=True",
    ),
    ({"web_search": True, "stream": True}, r"built-in tools \(web_search\) do not stream"),
    (
        {"data_ocean": True, "code_execution": True, "stream": True},
        r"built-in tools \(data_ocean, code_execution\) do not stream",
    ),
    ({"web_search": "yes"}, r"web_search='yes' must be True or False"),
    ({"service_tier": "turbo"}, r"service_tier='turbo' is not allowed"),
    ({"extra_body": {"service_tier": "turbo"}}, r"service_tier='turbo' is not allowed"),
    ({"extra_body": ["x"]}, r"extra_body=\['x'\] must be a dict"),
]


@pytest.fixture()
def maritaca(server: ProviderServer) -> ck.Maritaca:
    return ck.Maritaca(api_key="test-key", base_url=server.base_url("maritaca"))


@pytest.mark.parametrize(("params", "message"), BAD, ids=[str(p) for p, _ in BAD])
def test_bad_parameter_raises_before_sending(
    server: ProviderServer, maritaca: ck.Maritaca, params: dict[str, Any], message: str
) -> None:
    params = dict(params)
    stream = params.pop("stream", False)
    before = len(server.requests)
    with pytest.raises(ValueError, match=message):
        maritaca.chat(MSG, stream=stream, display=False, **params)
    assert len(server.requests) == before


BAD_MESSAGES: list[tuple[Any, str]] = [
    ([], r"messages must be a non-empty list"),
    ("Olá", r"messages must be a non-empty list.*use ask\(question\)"),
    ([{"role": "robot", "content": "x"}], r"messages\[0\]\['role'\]='robot' is not allowed"),
    ([{"role": "user"}], r"messages\[0\] \(user\) has no 'content'"),
    ([{"role": "user", "content": 3}], r"must be a string or a list of content parts"),
    ([{"role": "tool", "content": "42"}], r"needs the 'tool_call_id'"),
    (["oi"], r"messages\[0\]='oi' must be a dict"),
]


@pytest.mark.parametrize(("messages", "message"), BAD_MESSAGES)
def test_bad_messages(maritaca: ck.Maritaca, messages: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        maritaca.chat(messages)


def test_every_good_parameter_reaches_the_server(
    server: ProviderServer, maritaca: ck.Maritaca
) -> None:
    params: dict[str, Any] = {
        "temperature": 0.2,
        "top_p": 0.95,
        "max_tokens": 300,
        "n": 2,
        "stop": ["\n\n"],
        "frequency_penalty": -2,
        "presence_penalty": 2,
        "tools": TOOLS,
        "tool_choice": {"type": "function", "function": {"name": "buscar_cep"}},
        "extra_body": {"service_tier": "flex", "web_search": True},
    }
    msgs = [{"role": "system", "content": "Responda em português."}, *MSG]
    maritaca.chat(msgs, **params)
    body = server.requests[-1].json
    assert body["model"] == "sabia-4"
    assert body["messages"] == msgs
    for name in ("temperature", "top_p", "max_tokens", "n", "stop", "tool_choice"):
        assert body[name] == params[name]
    assert body["frequency_penalty"] == -2.0 and body["presence_penalty"] == 2.0
    assert body["tools"][0]["function"]["name"] == "buscar_cep"
    assert body["service_tier"] == "flex" and body["web_search"] is True
    assert "stream" not in body


def test_stream_options_sent_with_stream(server: ProviderServer, maritaca: ck.Maritaca) -> None:
    maritaca.chat(MSG, stream=True, display=False, stream_options={"include_usage": True})
    body = server.requests[-1].json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_default_model_from_environment(
    monkeypatch: pytest.MonkeyPatch, server: ProviderServer
) -> None:
    monkeypatch.setenv("MARITACA_MODEL", "sabiazinho-4")
    monkeypatch.setenv("MARITACA_API_KEY", "env-key")
    client = ck.Maritaca(base_url=server.base_url("maritaca"))
    assert client.model == "sabiazinho-4"
    client.chat(MSG)
    assert server.requests[-1].json["model"] == "sabiazinho-4"
    assert server.requests[-1].headers["authorization"] == "Bearer env-key"


def test_magisterium_options(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    with pytest.raises(ValueError, match=r"'threshold'\]='SOME' is not allowed"):
        mg.ask("x", safety_settings={"CATEGORY_NON_CATHOLIC": {"threshold": "SOME"}})
    with pytest.raises(ValueError, match=r"return_related_questions='yes' must be True or False"):
        mg.ask("x", return_related_questions="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Magisterium does not take web_search"):
        mg.ask("x", web_search=True)  # type: ignore[call-arg]
    mg.ask(
        "What is subsidiarity?",
        safety_settings={"CATEGORY_NON_CATHOLIC": {"threshold": "OFF", "response": True}},
    )
    body = server.requests[-1].json
    assert body["return_related_questions"] is True
    assert body["safety_settings"] == {
        "CATEGORY_NON_CATHOLIC": {"threshold": "OFF", "response": True}
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"api_key": ""}, r"No API key for Maritaca: set MARITACA_API_KEY or pass api_key="),
        ({"api_key": "k", "base_url": "ftp://x"}, r"base_url='ftp://x' must start with http"),
        ({"api_key": "k", "max_retries": -1}, r"max_retries=-1 must be a whole number >= 0"),
    ],
)
def test_bad_client_configuration(
    monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any], message: str
) -> None:
    monkeypatch.delenv("MARITACA_API_KEY", raising=False)
    with pytest.raises(ck.ConfigurationError, match=message):
        ck.Maritaca(**kwargs)
