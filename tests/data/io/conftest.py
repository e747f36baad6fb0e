"""Fixtures of the dataset tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.data.frames.test_log import every_sample_log


@pytest.fixture(scope="module")
def every_sample_logged(server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with every_sample_log(server, str(tmp_path_factory.mktemp("log-home"))) as log:
        yield log
