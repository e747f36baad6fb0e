"""The providers citekit speaks to: their names and how to show them, in one place."""

from __future__ import annotations

from typing import Literal

__all__ = ["PROVIDERS", "ProviderName", "display_name", "long_name"]

ProviderName = Literal["magisterium", "maritaca", "gptbots"]

#: name -> (short display name, full product name)
_NAMES: dict[str, tuple[str, str]] = {
    "magisterium": ("Magisterium", "Magisterium AI"),
    "maritaca": ("Maritaca", "Maritaca AI"),
    "gptbots": ("GPTBots", "GPTBots"),
}

#: Every provider name, in the order citekit lists them.
PROVIDERS: tuple[ProviderName, ...] = ("magisterium", "maritaca", "gptbots")


def display_name(provider: str) -> str:
    """``"magisterium"`` -> ``"Magisterium"``; an unknown name comes back as it is."""
    return _NAMES.get(provider, (provider, provider))[0]


def long_name(provider: str) -> str:
    """``"magisterium"`` -> ``"Magisterium AI"``; an unknown name comes back as it is."""
    return _NAMES.get(provider, (provider, provider))[1]
