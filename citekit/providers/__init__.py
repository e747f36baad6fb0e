"""Provider clients: Magisterium, Maritaca and GPTBots over one shared shell, and
``client(name)``, the one place that knows them by name.

Each client class names its provider's entry in ``citekit.core.names`` (``entry = MARITACA``)
and has ``name``, ``default_base_url``, ``api_key_env`` and its default model from it as class
attributes; building requests and parsing answers is pure code in ``citekit.wire``, and
sending is ``citekit.transport``'s.
"""

from __future__ import annotations

from .registry import PROVIDERS, client, client_class

__all__ = ["PROVIDERS", "client", "client_class"]
