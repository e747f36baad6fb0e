"""``citekit models``: what each provider offers, asked of the provider where it lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citekit.cli.main import main
from citekit.core.names import ENTRIES
from citekit.testing import ProviderServer

KEY = "sk-test-cli-models-0123456789"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:
        monkeypatch.setenv(entry.api_key_env, KEY)


def test_models_lists_what_the_provider_serves(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MARITACA_BASE_URL", server.base_url("maritaca"))
    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert server.requests[-1].path.endswith("/models")
    maritaca = [r["model"] for r in rows if r["provider"] == "maritaca"]
    assert "sabia-4" in maritaca and len(maritaca) > 1
    defaults = {r["provider"]: r["model"] for r in rows if r["default"]}
    assert defaults == {"magisterium": "magisterium-1", "maritaca": "sabia-4", "gptbots": None}
    gptbots = [r for r in rows if r["provider"] == "gptbots"]
    assert gptbots == [{"provider": "gptbots", "model": None, "default": True,
                        "note": "the agent picks its model"}]  # fmt: skip
    assert main(["models", "--provider", "Maritaca"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert "maritaca     sabia-4 (default)" in listed and len(listed) == len(maritaca)


def test_models_without_a_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MARITACA_API_KEY")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "maritaca     sabia-4 (default)  to list the models the key can use" in out
    assert "citekit keys set maritaca" in out and "api_key=" not in out
    assert main(["models", "--provider", "maritaca"]) == 2
    assert "MARITACA_API_KEY" in capsys.readouterr().err
