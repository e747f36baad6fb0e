"""Fixtures of the dataset tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import citekit as ck
from tests.data.frames.test_log import MAG, ask_every_sample


@pytest.fixture(scope="module")
def every_sample_logged(server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home = tmp_path_factory.mktemp("log-home")
    before = os.environ.get("CITEKIT_HOME")
    os.environ["CITEKIT_HOME"] = str(home)
    try:
        ask_every_sample(server)
        failed = ck.parse_response(MAG[0][1]["response"], provider="magisterium")
        ck.log.record(failed, request={"q": "failed"}, error=RuntimeError("the call failed"))
        ck.log.flush()
        yield ck.log
    finally:
        ck.log.close()
        if before is None:
            os.environ.pop("CITEKIT_HOME", None)
        else:
            os.environ["CITEKIT_HOME"] = before
