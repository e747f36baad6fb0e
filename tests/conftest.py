"""Shared fixtures: one loopback provider server per test session, and sample records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citekit.testing import ProviderServer
from tests import budget as budget  # loads the hypothesis profile

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


def sample_answers() -> list[tuple[str, Any]]:
    """Every recorded sample as ``("provider/name", Answer)``, GPTBots' with its knowledge
    chunks."""
    import dataclasses

    from citekit.model.sources import References
    from citekit.wire.parsers import parse_response

    out: list[tuple[str, Any]] = []
    for provider in ("magisterium", "maritaca", "gptbots"):
        for path in sorted((SAMPLES / provider).glob("[0-9]*.json")):
            record = json.loads(path.read_text(encoding="utf-8"))
            if provider == "gptbots":
                answer = parse_response(record["message"], provider=provider)
                if record.get("correlate"):
                    refs = References.from_response(record["correlate"])
                    answer = dataclasses.replace(answer, references=refs)
            else:
                answer = parse_response(record["response"], provider=provider)
            out.append((f"{provider}/{path.stem}", answer))
    return out


SECRET = "sk-live-SECRET-0123456789abcdef"


def sample_records(provider: str) -> list[tuple[str, dict[str, Any]]]:
    """``(stem, record)`` for every ``.json`` sample of ``provider`` (not models.json)."""
    folder = SAMPLES / provider
    out = []
    for path in sorted(folder.glob("[0-9]*.json")):
        out.append((path.stem, json.loads(path.read_text(encoding="utf-8"))))
    return out


def sample_stream(provider: str, stem: str) -> bytes:
    return (SAMPLES / provider / f"{stem}.sse").read_bytes()


@pytest.fixture(scope="session")
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as srv:
        yield srv


def pytest_configure(config: pytest.Config) -> None:
    # The answer log is on by default; tests must never write into the user's data dir.
    import os
    import tempfile

    os.environ["CITEKIT_HOME"] = tempfile.mkdtemp(prefix="citekit-test-home-")
