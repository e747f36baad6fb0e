"""Fixtures of the dataset tests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.data.frames.test_log import every_sample_log


@pytest.fixture(scope="module")
def every_sample_logged(server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with every_sample_log(server, str(tmp_path_factory.mktemp("log-home"))) as log:
        yield log


@contextlib.contextmanager
def rebuilt_answers() -> Iterator[list[int]]:
    """How many answers each read rebuilds from their saved JSON (``Reader.answers``) while the
    block runs: an export from the log's tables should rebuild none."""
    from citekit.store.read import Reader

    counts: list[int] = []
    whole = Reader.answers

    def counted(self: Reader, selection: Any) -> Any:
        found = whole(self, selection)
        counts.append(len(found))
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Reader, "answers", counted)
        yield counts
