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
