"""Every store test has a log of its own: ``ck.log`` writes to a fresh ``CITEKIT_HOME``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    monkeypatch.delenv("CITEKIT_LOG", raising=False)
    monkeypatch.delenv("CITEKIT_CACHE", raising=False)
