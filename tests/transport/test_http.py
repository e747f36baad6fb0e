"""The one translation of httpx's errors, and the pool sized from the concurrency asked for."""

from __future__ import annotations

import httpx
import pytest

from citekit.transport.http import (
    DEFAULT_CONNECTIONS,
    HttpConfig,
    connections,
    make_timeout,
    wanted_connections,
)
from citekit.wire.flow import RequestSpec

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


@pytest.mark.parametrize("stream", [False, True])
def test_a_prepared_request_is_the_one_httpx_builds(stream: bool) -> None:
    """A request made from the URL and headers prepared once per client is the request
    ``client.build_request`` makes: method, URL, headers in order, body, timeouts; with a
    cookie a server set, too."""
    config = HttpConfig(
        provider="magisterium",
        base_url="http://127.0.0.1:9/magisterium/v1",
        api_key="sk-prepared-0123456789",
        headers={"X-Extra": "1"},
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "Qué é a graça? \u2028"}]}
    spec = RequestSpec("POST", "/chat/completions", json=body, stream=stream)
    with httpx.Client(timeout=make_timeout(None)) as client:
        for _ in range(2):  # prepared the first time, reused the second
            for within in (None, 3.5):
                fast = config.build(client, spec, within=within, owned=True)
                built = config.build(client, spec, within=within)
                assert fast.method == built.method and fast.url == built.url
                assert fast.headers.multi_items() == built.headers.multi_items()
                assert fast.read() == built.read()
                assert fast.extensions == built.extensions
            client.cookies.set("session", "abc", domain="127.0.0.1")
        fast = config.build(client, spec, owned=True)
        assert fast.headers.get("cookie") == "session=abc"
