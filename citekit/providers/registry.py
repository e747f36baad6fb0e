"""One place that turns a provider's name into its client: ``client("maritaca", model=...)``."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..core.names import PROVIDERS

if TYPE_CHECKING:
    from ._client import ProviderClient

__all__ = ["PROVIDERS", "client", "client_class"]

#: name -> (module, class); modules load on first use.
_CLASSES = {
    "magisterium": (".magisterium", "Magisterium"),
    "maritaca": (".maritaca", "Maritaca"),
    "gptbots": (".gptbots", "GPTBots"),
}


def client_class(name: str) -> type[ProviderClient]:
    """The client class of provider ``name``; an unknown name is a ``ValueError``."""
    if not isinstance(name, str) or name.strip().lower() not in _CLASSES:
        raise ValueError(f"unknown provider {name!r}; use one of {', '.join(PROVIDERS)}")
    module, attr = _CLASSES[name.strip().lower()]
    cls: type[ProviderClient] = getattr(importlib.import_module(module, __package__), attr)
    return cls


def client(name: str, **options: Any) -> ProviderClient:
    """A client of provider ``name`` ("magisterium", "maritaca" or "gptbots").

    ``options`` go to the client's constructor (``api_key=``, ``base_url=``, ``model=``, ...);
    the key is read from the provider's environment variable when ``api_key`` is not given.

    >>> import citekit as ck
    >>> mt = ck.client("maritaca", model="sabia-3")  # the key from MARITACA_API_KEY
    >>> type(mt).__name__, mt.model
    ('Maritaca', 'sabia-3')
    >>> ck.client("chatgpt")
    Traceback (most recent call last):
    ...
    ValueError: unknown provider 'chatgpt'; use one of magisterium, maritaca, gptbots
    """
    return client_class(name)(**options)
