"""``ProviderServer``: the loopback server's public face, started and stopped as a context."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Unpack

from ._handler import LoopbackHTTPServer, ServerState
from ._replies import Responder
from ._samples import PROVIDERS, ProviderName, Sample, SampleSet, default_data_dir
from ._scenario import RecordedRequest, Scenario, ScenarioOptions

__all__ = ["ProviderServer", "serve"]

_PREFIXES: dict[ProviderName, str] = {
    "magisterium": "/magisterium/api/v1",
    "maritaca": "/maritaca/api",
    "gptbots": "/gptbots",
}


class ProviderServer:
    """A real HTTP server on 127.0.0.1 that answers like Magisterium, Maritaca and GPTBots.

    Answers come from the recorded-format samples in ``data_dir`` (default: the project's
    ``sample_data``). Use it as a context manager; it listens from ``__enter__`` (or ``start``)
    to ``__exit__`` (or ``stop``).

    Parameters
    ----------
    data_dir
        Directory laid out as ``sample_data/README.md`` describes.
    delay
        Default seconds between stream events.
    latency
        Default seconds from a request's arrival to its response's first byte (the reply is
        made meanwhile).
    port
        Port to listen on; 0 picks a free one.
    host
        Interface to listen on.

    Examples
    --------
    A base URL can carry a fault: here the first request gets a 429, and the client's retry
    gets the recorded answer.

    >>> import citekit as ck
    >>> from citekit.testing import ProviderServer
    >>> with ProviderServer() as srv:
    ...     url = srv.base_url("magisterium", fault="status", status=429, times=1)
    ...     mg = ck.Magisterium(api_key="sk-test", base_url=url)
    ...     ans = mg.ask("What is the principle of subsidiarity?")
    >>> ans.sample, ans.citations[0].document_author
    ('...', 'Pius XI')
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        delay: float = 0.0,
        latency: float = 0.0,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        root = Path(data_dir) if data_dir is not None else default_data_dir()
        if data_dir is not None and not root.is_dir():
            raise FileNotFoundError(f"No sample directory at {root}")
        self.data_dir = root
        self._sample_set = SampleSet.load(root)
        self._state = ServerState(
            Responder(self._sample_set), Scenario("default", delay=delay, latency=latency)
        )
        self._address = (host, port)
        self._ids = itertools.count(1)
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle ------------------------------------------------------------------------------

    def start(self) -> ProviderServer:
        """Bind and serve on a background thread (idempotent)."""
        if self._httpd is None:
            self._httpd = LoopbackHTTPServer(self._address, self._state)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.02},
                name=f"citekit-testing:{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 1.0) -> None:
        """Stop accepting, end stalled and idle connections, and join the threads."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        deadline = time.monotonic() + timeout
        state = self._state
        state.stopping.set()
        httpd.shutdown()
        with state.lock:
            connections = list(state.connections)
            threads = list(state.threads)
        for connection in connections:
            with suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        for thread in [self._thread, *threads]:
            if thread is not None and thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Serve on the calling thread until ``stop`` is called or Ctrl-C."""
        self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(0.2)
        finally:
            self.stop()

    # addresses -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("The server is not running: use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self._address[0]}:{self.port}"

    def base_url(self, provider: ProviderName, **options: Unpack[ScenarioOptions]) -> str:
        """The base URL to give ``provider``'s client.

        With no options it is the plain URL (normal service, the server's delay and latency).
        Any option registers a new scenario and returns ``{url}/s/{id}/...``; see
        ``add_scenario`` for the options.
        """
        if provider not in _PREFIXES:
            raise ValueError(f"Unknown provider {provider!r}; choose one of {PROVIDERS}")
        if not options:
            return self.url + _PREFIXES[provider]
        return self.scenario_url(self.add_scenario(**options), provider)

    def scenario_url(self, scenario: Scenario | str, provider: ProviderName) -> str:
        """``provider``'s base URL inside ``scenario``."""
        sid = scenario.id if isinstance(scenario, Scenario) else scenario
        return f"{self.url}/s/{sid}{_PREFIXES[provider]}"

    def add_scenario(self, **options: Unpack[ScenarioOptions]) -> Scenario:
        """Register a scenario; it serves every provider under ``/s/<id>/``.

        Options: ``fault`` ("status", "reset", "malformed", "html", "stall", "gptbots_code",
        "drip", "keepalive"), ``status``, ``message``, ``retry_after``, ``retry_after_ms``,
        ``should_retry``, ``after``, ``stall``, ``interval``, ``code``, ``endpoint``, ``times``,
        ``delay``, ``latency``, ``chunks``, ``api_key``, ``correlate_empty``, ``framing``
        ("lines" or "sse", for GPTBots streams); see ``Scenario``. ``delay`` and ``latency``
        default to the server's.
        """
        default = self._state.default
        settings: ScenarioOptions = {"delay": default.delay, "latency": default.latency}
        settings.update(options)
        scenario = Scenario(f"s{next(self._ids)}", **settings)
        with self._state.lock:
            self._state.scenarios[scenario.id] = scenario
        return scenario

    def scenario(self, key: str) -> Scenario:
        """A registered scenario, by id or by any URL that contains ``/s/<id>/``."""
        sid = key.split("/s/", 1)[1].split("/", 1)[0] if "/s/" in key else key
        with self._state.lock:
            found = self._state.scenarios.get(sid)
        if found is None:
            raise KeyError(f"No scenario {sid!r}")
        return found

    # what happened ---------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def max_concurrent(self) -> int:
        """The most requests in flight at once, over all scenarios."""
        with self._state.lock:
            return self._state.max_concurrent

    def clear_requests(self) -> None:
        """Forget the recorded requests (the concurrency high-water mark stays)."""
        with self._state.lock:
            self._state.requests.clear()

    def samples(self, provider: ProviderName) -> tuple[Sample, ...]:
        """The samples loaded for ``provider``, in file-name order."""
        if provider not in _PREFIXES:
            raise ValueError(f"Unknown provider {provider!r}; choose one of {PROVIDERS}")
        return self._sample_set[provider]

    @property
    def sample_set(self) -> SampleSet:
        """Every loaded sample, the Maritaca models body, and files that were skipped."""
        return self._sample_set


@contextmanager
def serve(
    data_dir: str | Path | None = None,
    delay: float = 0.0,
    latency: float = 0.0,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
) -> Iterator[ProviderServer]:
    """``with serve() as srv:`` runs a ``ProviderServer`` for the block."""
    with ProviderServer(data_dir, delay, latency, port=port, host=host) as server:
        yield server
