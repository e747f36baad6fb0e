"""The one translation of httpx's errors, and the pool sized from the concurrency asked for."""

from __future__ import annotations

import httpx
import pytest

from citekit.transport.http import (
    DEFAULT_CONNECTIONS,
    HttpConfig,
    connections,
    wanted_connections,
)

CONFIG = HttpConfig(provider="maritaca", base_url="http://127.0.0.1:9", api_key="k")


@pytest.mark.parametrize(
    ("exc", "never_sent"),
    [
        (httpx.PoolTimeout("no free connection"), True),
        (httpx.ConnectTimeout("slow connect"), True),
        (httpx.ConnectError("refused"), True),
        (httpx.ReadTimeout("slow answer"), False),  # the server may have started the work
        (httpx.ReadError("reset"), False),
        (httpx.WriteError("broken pipe"), False),
    ],
)
def test_a_request_never_sent_is_marked_so(exc: httpx.HTTPError, never_sent: bool) -> None:
    """``connect`` (what the retry policy reads as "safe to send again") is True exactly for
    the failures that happen before the request leaves."""
    assert getattr(CONFIG.transport_error(exc), "connect", False) is never_sent


def test_connections_scope_only_grows_the_pool() -> None:
    assert wanted_connections() == DEFAULT_CONNECTIONS
    with connections(DEFAULT_CONNECTIONS + 20):
        assert wanted_connections() == DEFAULT_CONNECTIONS + 20
        with connections(3):  # an inner, smaller batch never shrinks it
            assert wanted_connections() == DEFAULT_CONNECTIONS + 20
    assert wanted_connections() == DEFAULT_CONNECTIONS
