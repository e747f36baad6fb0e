"""The providers are declared once (``citekit.core.names``); every other place asks the entry."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import citekit as ck
from citekit.core.names import (
    ENTRIES,
    PROVIDERS,
    ProviderEntry,
    check_model_choice,
    display_name,
    get_provider,
    long_name,
)
from citekit.core.secrets import KEY_ENVS
from citekit.providers.registry import client_class
from citekit.wire.parsers import get_spec

PACKAGE = Path(ck.__file__).parent
UNKNOWN = "unknown provider 'chatgpt'; use one of magisterium, maritaca, gptbots"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_provider_has_a_client_a_parser_env_vars_and_names(entry: ProviderEntry) -> None:
    cls = client_class(entry.name)
    assert cls.entry is entry and cls.name == entry.name
    assert (cls.api_key_env, cls.base_url_env, cls.default_base_url, cls.default_model) == (
        entry.api_key_env,
        entry.base_url_env,
        entry.default_base_url,
        entry.default_model,
    )
    assert cls.display_name == display_name(entry.name) == entry.display_name
    assert long_name(entry.name) == entry.long_name
    assert get_spec(entry.name).name == entry.name
    assert entry.api_key_env in KEY_ENVS  # its key is scrubbed from everything shown
    for env in (entry.api_key_env, entry.base_url_env):
        assert env.isupper() and env.startswith(entry.name.upper() + "_")
    assert entry.default_base_url.startswith("https://")


def test_the_providers_are_listed_once_in_one_order() -> None:
    assert PROVIDERS == ("magisterium", "maritaca", "gptbots")
    assert len({e.api_key_env for e in ENTRIES}) == len({e.base_url_env for e in ENTRIES}) == 3
    assert ck.Magisterium.entry.name == "magisterium" and ck.GPTBots.entry.name == "gptbots"


def test_an_unknown_name_gets_the_same_message_everywhere() -> None:
    for ask in (ck.client, client_class, get_spec, get_provider):
        with pytest.raises(ValueError) as info:
            ask("chatgpt")
        assert str(info.value) == UNKNOWN
    with pytest.raises(ValueError) as info:
        ck.parse_response({}, provider="chatgpt")  # through wire.parsers.get_spec
    assert str(info.value) == UNKNOWN


def test_a_client_reads_the_variables_its_entry_names(monkeypatch: pytest.MonkeyPatch) -> None:
    for entry in ENTRIES:
        monkeypatch.delenv(entry.api_key_env, raising=False)
        with pytest.raises(ck.ConfigurationError) as info:
            ck.client(entry.name)
        assert str(info.value) == (
            f"No API key for {entry.display_name}: set {entry.api_key_env} or pass api_key="
        )
        monkeypatch.setenv(entry.api_key_env, "sk-registry-test-key")
        monkeypatch.setenv(entry.base_url_env, "https://user:pw@example.test")
        with pytest.raises(ck.ConfigurationError, match=entry.base_url_env):
            ck.client(entry.name)  # the address came from the entry's variable, and says so
        monkeypatch.delenv(entry.base_url_env)


def test_a_model_is_refused_only_where_the_entry_says_so() -> None:
    for entry in ENTRIES:
        if entry.chooses_model:
            assert ck.client(entry.name, model="m-1", api_key="sk-registry-key").model == "m-1"
            check_model_choice(entry.name, "--model")
    with pytest.raises(ValueError, match=r"^--model does not apply to GPTBots \(the agent"):
        check_model_choice("gptbots", "--model")
    check_model_choice("not-a-provider", "--model")  # an unknown name is refused elsewhere


# -- no other place compares against the names ---------------------------------------------------
#: Where a provider's name may be written: the registry, each provider's own modules, and the
#: loopback server (which imports nothing of citekit on purpose).
def _allowed(relative: str) -> bool:
    if relative == "core/names.py" or relative.startswith(("testing/", "wire/gptbots/")):
        return True
    return any(
        relative == f"providers/{name}.py" or relative.startswith(f"wire/{name}")
        for name in PROVIDERS
    )


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _name_literals(path: Path, words: frozenset[str]) -> list[str]:
    """``file:line: 'literal'`` for each string in the code of ``path`` (not its docstrings
    or comments) that is one of ``words``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [
        f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in words and id(node) not in docs
    ]


#: The names, and the variables the entries name.
WORDS = frozenset(
    [*PROVIDERS]
    + [e.api_key_env for e in ENTRIES]
    + [e.base_url_env for e in ENTRIES]
    + [e.model_env for e in ENTRIES if e.model_env]
)


def test_no_module_outside_the_registry_writes_a_provider_name() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not _allowed(path.relative_to(PACKAGE).as_posix()):
            found += _name_literals(path, WORDS)
    assert found == [], "ask citekit.core.names instead:\n" + "\n".join(found)


def test_the_search_for_names_finds_them_where_they_are() -> None:
    in_registry = _name_literals(PACKAGE / "core" / "names.py", WORDS)
    assert {line.rsplit(": ", 1)[1].strip("'") for line in in_registry} >= set(WORDS)
    assert _name_literals(PACKAGE / "providers" / "registry.py", WORDS) == []  # docstrings only
