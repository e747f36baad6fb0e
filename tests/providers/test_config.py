"""Where a client sends its requests: ``base_url=``, else ``<PROVIDER>_BASE_URL``, else the
provider's own address (for GPTBots, the ``GPTBOTS_ENDPOINT`` region's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import citekit as ck
from citekit.providers._client import ProviderClient
from citekit.testing import ProviderServer

KEY = "sk-test-config-0123456789"
PROVIDERS = ("magisterium", "maritaca", "gptbots")
QUESTIONS = {
    "magisterium": "What is the principle of subsidiarity?",
    "maritaca": "Como funciona o Pix e por que ele se popularizou tão rápido no Brasil?",
    "gptbots": "Why was the Great Wall built?",
}
CLASSES: dict[str, type[ProviderClient]] = {
    "magisterium": ck.Magisterium,
    "maritaca": ck.Maritaca,
    "gptbots": ck.GPTBots,
}
#: A closed port: a client sent there fails at once instead of reaching the server.
NOWHERE = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    for provider in PROVIDERS:
        monkeypatch.setenv(f"{provider.upper()}_API_KEY", KEY)
        monkeypatch.delenv(f"{provider.upper()}_BASE_URL", raising=False)
    monkeypatch.delenv("GPTBOTS_ENDPOINT", raising=False)
    yield


def env_name(provider: str) -> str:
    return f"{provider.upper()}_BASE_URL"


def ask(client: Any, provider: str) -> ck.Answer:
    answer: ck.Answer = client.ask(QUESTIONS[provider], display=False)
    return answer


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_variable_names_follow_the_provider(provider: str) -> None:
    assert CLASSES[provider].base_url_env == env_name(provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_base_url_variable_is_used_without_base_url(
    provider: str, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.base_url(provider)
    monkeypatch.setenv(env_name(provider), url + "/")
    before = len(server.requests)
    with CLASSES[provider]() as client:
        assert client.base_url == url
        answer = ask(client, provider)
    assert answer.sample is not None and answer.sample.startswith(f"{provider}/")
    sent = server.requests[before:]
    assert sent and all(r.provider == provider and r.scenario is None for r in sent)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_registry_reads_the_variable_too(
    provider: str, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env_name(provider), server.base_url(provider))
    with ck.client(provider) as client:
        assert client.base_url == server.base_url(provider)
        assert ask(client, provider).sample is not None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_explicit_base_url_wins_over_the_variable(
    provider: str, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env_name(provider), NOWHERE)
    url = server.base_url(provider)
    with CLASSES[provider](base_url=url) as client:
        assert client.base_url == url
        assert ask(client, provider).sample is not None
    with CLASSES[provider](max_retries=0) as client:  # the variable is really read
        assert client.base_url == NOWHERE
        with pytest.raises(ck.TransportError):
            ask(client, provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_empty_variable_means_the_provider_address(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env_name(provider), "")
    client = CLASSES[provider]()
    assert client.base_url == CLASSES[provider].default_base_url


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_variable_without_scheme_is_refused(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env_name(provider), "127.0.0.1:8000/api")
    with pytest.raises(ck.ConfigurationError, match="must start with http:// or https://"):
        CLASSES[provider]()


def test_gptbots_base_url_makes_the_endpoint_variable_ignored(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.base_url("gptbots")
    monkeypatch.setenv("GPTBOTS_ENDPOINT", "jp")
    assert ck.GPTBots().base_url == "https://api-jp.gptbots.ai"  # the region alone counts
    monkeypatch.setenv("GPTBOTS_BASE_URL", url)
    with ck.GPTBots() as gb:
        assert gb.base_url == url
        assert gb.endpoint == "sg"  # the default region, not the ignored "jp"
        assert ask(gb, "gptbots").sample == "gptbots/01_great_wall_why"
    # Not even read: a region that does not exist is no error while the URL is set.
    monkeypatch.setenv("GPTBOTS_ENDPOINT", "eu")
    assert ck.GPTBots().base_url == url
    monkeypatch.delenv("GPTBOTS_BASE_URL")
    with pytest.raises(ck.ConfigurationError, match="'eu' is not a GPTBots region"):
        ck.GPTBots()
