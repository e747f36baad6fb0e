"""One place that turns a provider's name into its client: ``client("maritaca", model=...)``.

The providers themselves are declared in ``citekit.core.names``; each client class names its
entry (``entry = MARITACA``), and this module maps every entry to its class, checking at import
that none is left without one.
"""

from __future__ import annotations

from typing import Any

from ..core.names import ENTRIES, PROVIDERS, get_provider, unknown_provider
from ._client import ProviderClient
from .gptbots import GPTBots
from .magisterium import Magisterium
from .maritaca import Maritaca

__all__ = ["PROVIDERS", "client", "client_class"]


def _classes(*classes: type[ProviderClient]) -> dict[str, type[ProviderClient]]:
    found: dict[str, type[ProviderClient]] = {cls.entry.name: cls for cls in classes}
    missing = [entry.name for entry in ENTRIES if entry.name not in found]
    if missing or len(found) != len(classes):  # pragma: no cover - checked at import
        raise RuntimeError(f"providers without exactly one client class: {missing or classes}")
    return found


#: provider name -> its client class.
_CLASSES = _classes(Magisterium, Maritaca, GPTBots)


def client_class(name: str) -> type[ProviderClient]:
    """The client class of provider ``name``; an unknown name is a ``ValueError``."""
    if not isinstance(name, str):
        raise unknown_provider(name)
    try:
        entry = get_provider(name.strip().lower())
    except ValueError:
        raise unknown_provider(name) from None
    return _CLASSES[entry.name]


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
