"""Offline mode: the loopback server of ``citekit.testing`` for this session, the clients on it.

``offline()`` starts the server (once per process) and points every provider's client at it
by setting, in this process only, each provider's base-URL and key variables
(``MAGISTERIUM_BASE_URL``, ``MAGISTERIUM_API_KEY``, ...): nothing to export. As a context
manager it puts the variables back and stops the server on exit; as a plain call it lasts
until ``stop()`` or the end of the process::

    with ck.offline():
        ck.Magisterium().ask("What is subsidiarity?")

A question that is no recorded sample's own gets the closest sample, and the answer says so
(``answer.sample_question``, a notice on top of every rendering).
"""

from __future__ import annotations

import os
import threading
from types import TracebackType
from typing import TYPE_CHECKING, cast

from ..core.names import ENTRIES

if TYPE_CHECKING:
    from ..testing import ProviderServer
    from ..testing._samples import ProviderName

__all__ = ["OFFLINE_KEY", "Offline", "offline"]

#: The key sent offline (the loopback server takes any non-empty key).
OFFLINE_KEY = "offline"

_lock = threading.Lock()
_current: Offline | None = None


class Offline:
    """The running offline session: its server and the variables it set."""

    def __init__(self, server: ProviderServer, saved: dict[str, str | None]) -> None:
        self.server = server
        self._saved = saved
        self.running = True

    def base_url(self, provider: str) -> str:
        """The loopback address ``provider``'s client is sent to."""
        return self.server.base_url(cast("ProviderName", provider))

    def stop(self) -> None:
        """Put the variables back as they were and stop the server (again: nothing)."""
        global _current
        with _lock:
            if not self.running:
                return
            self.running = False
            for name, value in self._saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if _current is self:
                _current = None
        self.server.stop()

    def __enter__(self) -> Offline:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<citekit offline: recorded samples at {self.server.url} ({state})>"


def offline() -> Offline:
    """Start offline mode for this process (or return the session already running)."""
    global _current
    from ..testing import ProviderServer

    with _lock:
        if _current is not None and _current.running:
            return _current
        server = ProviderServer().start()
        saved: dict[str, str | None] = {}
        for entry in ENTRIES:
            for name, value in (
                (entry.base_url_env, server.base_url(entry.name)),
                (entry.api_key_env, OFFLINE_KEY),
            ):
                saved[name] = os.environ.get(name)
                os.environ[name] = value
        _current = Offline(server, saved)
        return _current


def current() -> Offline | None:
    """The offline session running in this process, if any."""
    return _current if _current is not None and _current.running else None
