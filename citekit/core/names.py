"""The providers citekit speaks to, declared once: one :class:`ProviderEntry` each.

This is the one place that knows the providers (as llm's model registry): their names, how
messages show them, their environment variables, defaults, and what their answers are like.
The floors above look their part up here, by name, never by comparing against a name:
``citekit.wire.parsers`` maps each entry to its parsers, ``citekit.providers.registry`` to its
client class, and both check at import that every entry has one.

>>> from citekit.core.names import get_provider
>>> mt = get_provider("maritaca")
>>> mt.display_name, mt.api_key_env, mt.base_url_env, mt.default_model
('Maritaca', 'MARITACA_API_KEY', 'MARITACA_BASE_URL', 'sabia-4')
>>> get_provider("chatgpt")
Traceback (most recent call last):
...
ValueError: unknown provider 'chatgpt'; use one of magisterium, maritaca, gptbots
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

__all__ = [
    "CHAT_PROVIDERS",
    "DEFAULT_PROVIDER",
    "ENTRIES",
    "GPTBOTS",
    "MAGISTERIUM",
    "MARITACA",
    "PROVIDERS",
    "REFERENCES_PROVIDER",
    "WEB_SOURCE_PROVIDERS",
    "ProviderEntry",
    "ProviderName",
    "check_model_choice",
    "did_you_mean",
    "display_name",
    "find_provider",
    "get_provider",
    "long_name",
    "unknown_provider",
]

ProviderName = Literal["magisterium", "maritaca", "gptbots"]


def _frozen(options: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(options or {}))


@dataclass(frozen=True, slots=True, eq=False)  # one entry per provider: equal means the same
class ProviderEntry:
    """What citekit knows of one provider, as data."""

    #: How code names it: ``"maritaca"`` (``Answer.provider``, ``ck.client(name)``, the log).
    name: ProviderName
    #: How messages name it: ``"Maritaca"``.
    display_name: str
    #: Its full product name, for headings: ``"Maritaca AI"``.
    long_name: str
    #: Where the key is read from when ``api_key=`` is not passed.
    api_key_env: str
    #: Where the address is read from when ``base_url=`` is not passed.
    base_url_env: str
    #: Its own address.
    default_base_url: str
    #: The model asked when none is chosen (``None``: the provider picks it).
    default_model: str | None = None
    #: Where the model is read from when ``model=`` is not passed.
    model_env: str | None = None
    #: Why a model cannot be chosen (``None``: it can), for the message refusing ``--model``.
    no_model_choice: str | None = None
    #: One sentence on what its answers are, for a reader (the demo page's section).
    about: str = ""
    #: Its answers are OpenAI-style chat completions.
    chat_completions: bool = False
    #: Its chat completions carry a ``citations`` array (a saved one without a provider or a
    #: model name is taken for this provider's).
    citation_array: bool = False
    #: Model names that start so are its models (how a saved response shows whose it is).
    model_prefixes: tuple[str, ...] = ()
    #: Its sources are the links of the answer's text (or their annotations) when the body has
    #: no ``citations`` array.
    web_sources: bool = False
    #: Its answers carry ranked knowledge chunks (``References``).
    knowledge_references: bool = False
    #: Client options under which its answers cite their sources.
    citing_client_options: Mapping[str, Any] = field(default_factory=_frozen)
    #: Question options under which an answer has sources to cite.
    citing_ask_options: Mapping[str, Any] = field(default_factory=_frozen)

    @property
    def chooses_model(self) -> bool:
        """Whether a model may be chosen (``model=``, ``--model``)."""
        return self.no_model_choice is None


MAGISTERIUM: Final = ProviderEntry(
    name="magisterium",
    display_name="Magisterium",
    long_name="Magisterium AI",
    api_key_env="MAGISTERIUM_API_KEY",
    base_url_env="MAGISTERIUM_BASE_URL",
    default_base_url="https://www.magisterium.com/api/v1",
    default_model="magisterium-1",
    model_env="MAGISTERIUM_MODEL",
    about="Questions on Catholic teaching; each answer cites passages of Church documents, "
    "with their authors and years.",
    chat_completions=True,
    citation_array=True,
    model_prefixes=("magisterium",),
)
MARITACA: Final = ProviderEntry(
    name="maritaca",
    display_name="Maritaca",
    long_name="Maritaca AI",
    api_key_env="MARITACA_API_KEY",
    base_url_env="MARITACA_BASE_URL",
    default_base_url="https://chat.maritaca.ai/api",
    default_model="sabia-4",
    model_env="MARITACA_MODEL",
    about="Portuguese answers from Sabiá models; with web search, the pages it read are its "
    "sources.",
    chat_completions=True,
    model_prefixes=("sabi",),
    web_sources=True,
    citing_ask_options=_frozen({"web_search": True}),
)
GPTBOTS: Final = ProviderEntry(
    name="gptbots",
    display_name="GPTBots",
    long_name="GPTBots",
    api_key_env="GPTBOTS_API_KEY",
    base_url_env="GPTBOTS_BASE_URL",
    default_base_url="https://api-sg.gptbots.ai",
    no_model_choice="the agent picks its model",
    about="Answers of a GPTBots agent from its knowledge base: corner citations and the "
    "knowledge chunks behind each answer, with their relevance scores.",
    knowledge_references=True,
    # Its answers have footnotes only when corner citations are asked for.
    citing_client_options=_frozen({"citations": True}),
)

#: Every provider, in the order citekit lists them.
ENTRIES: Final[tuple[ProviderEntry, ...]] = (MAGISTERIUM, MARITACA, GPTBOTS)
_BY_NAME: Final[dict[str, ProviderEntry]] = {entry.name: entry for entry in ENTRIES}

#: Every provider name, in the order citekit lists them.
PROVIDERS: Final[tuple[ProviderName, ...]] = tuple(entry.name for entry in ENTRIES)

#: Who answers when nobody is named (``citekit ask``, ``%%ask``).
DEFAULT_PROVIDER: Final[ProviderName] = PROVIDERS[0]


#: The providers whose answers are chat completions.
CHAT_PROVIDERS: Final = tuple(e.name for e in ENTRIES if e.chat_completions)
#: The providers whose sources, without a citation array, are the links of the answer's text.
WEB_SOURCE_PROVIDERS: Final = frozenset(e.name for e in ENTRIES if e.web_sources)


def _the_one(what: str, entries: list[ProviderEntry]) -> ProviderName:
    if len(entries) != 1:  # pragma: no cover - a wrong table fails at import
        raise RuntimeError(f"expected one provider whose answers carry {what}, not {entries}")
    return entries[0].name


#: Whose knowledge chunks a ``References`` saved without its answer holds.
REFERENCES_PROVIDER: Final = _the_one(
    "knowledge references", [e for e in ENTRIES if e.knowledge_references]
)


def unknown_provider(name: object) -> ValueError:
    """The error for a provider name citekit does not know (one message everywhere)."""
    return ValueError(f"unknown provider {name!r}; use one of {', '.join(PROVIDERS)}")


def get_provider(name: str) -> ProviderEntry:
    """The entry of provider ``name``; an unknown name is a ``ValueError`` naming the known."""
    entry = _BY_NAME.get(name) if isinstance(name, str) else None
    if entry is None:
        raise unknown_provider(name)
    return entry


def find_provider(name: object) -> ProviderEntry | None:
    """The entry of provider ``name``, or ``None`` for a name citekit does not know."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def display_name(provider: str) -> str:
    """``"magisterium"`` -> ``"Magisterium"``; an unknown name comes back as it is."""
    entry = find_provider(provider)
    return entry.display_name if entry is not None else provider


def long_name(provider: str) -> str:
    """``"magisterium"`` -> ``"Magisterium AI"``; an unknown name comes back as it is."""
    entry = find_provider(provider)
    return entry.long_name if entry is not None else provider


def check_model_choice(provider: str, option: str = "model=") -> None:
    """A ``ValueError`` when ``provider`` cannot be given a model (through ``option``).

    >>> from citekit.core.names import check_model_choice
    >>> check_model_choice("gptbots", "--model")
    Traceback (most recent call last):
    ...
    ValueError: --model does not apply to GPTBots (the agent picks its model)
    """
    entry = find_provider(provider)
    if entry is not None and entry.no_model_choice is not None:
        raise ValueError(
            f"{option} does not apply to {entry.display_name} ({entry.no_model_choice})"
        )


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the known word closest to ``word`` (case-blind), else ``""``:
    the one suggestion after a mistyped option, command or provider name.

    >>> from citekit.core.names import did_you_mean
    >>> did_you_mean("--provder", ["--provider", "--model"])
    ' (did you mean --provider?)'
    """
    choices = list(known)
    folded = {choice.lower(): choice for choice in choices}
    close = difflib.get_close_matches(word.lower(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]}?)" if close else ""
