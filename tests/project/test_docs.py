"""Every docstring example in the package runs, against the loopback server and the samples.

Each docstring with examples is one test, named after what it documents
(``test_examples[citekit.model.answer.Answer]``); a failure shows doctest's own report: the
file and line of the example, what it expected and what it got.

An example runs as a user would type it in a notebook after ``import citekit as ck``: ``ck``
is the only name given (the module's own globals are not, so an example imports what it
uses), the three providers' keys are set, their ``*_BASE_URL`` variables point at the loopback
server, the answer log (``CITEKIT_HOME``) and the working directory are a fresh temporary
folder, and output is compared with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``. Standard output
is doctest's own, never a terminal, so clients show no live display; an example of
``ask_many`` passes ``progress=False``, since the bar follows standard error.

``__main__`` modules are programs: they are never imported here. No module of the package
needs a kernel to be imported (IPython, ipywidgets and altair load inside functions).
"""

from __future__ import annotations

import builtins
import doctest
import importlib
import io
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import citekit
from citekit.testing import ProviderServer

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

PROVIDERS = ("magisterium", "maritaca", "gptbots")
TEST_KEY = "test-key-0123456789"
_ABSENT = object()

#: Docstrings that must keep their examples (a guard against the finder silently missing them).
DOCUMENTED = {
    "citekit",
    "citekit.core.errors.AuthenticationError",
    "citekit.core.errors.ConfigurationError",
    "citekit.model.answer.Answer",
    "citekit.wire.parsers.parse_response",
    "citekit.model.sources.Citation",
    "citekit.data.charts",
    "citekit.notebook.explorer.explore",
    "citekit.notebook.magic.interpolate",
    "citekit.providers.registry.client",
    "citekit.store.answer_log.Log.answers",
    "citekit.store.answer_log.Log.frame",
    "citekit.store.answer_log.Log.where",
    "citekit.store.selection.LogSelection",
}

#: Examples still marked ``+SKIP`` in modules being rewritten elsewhere; each must be made to
#: run and removed from here (a new skipped example fails ``test_no_example_is_skipped``).
KNOWN_SKIPPED: dict[str, int] = {}


def package_modules() -> list[ModuleType]:
    """``citekit`` and every module under it, except the ``__main__`` programs."""
    names = [
        info.name
        for info in pkgutil.walk_packages(citekit.__path__, "citekit.")
        if info.name.rpartition(".")[2] != "__main__"
    ]
    return [citekit, *(importlib.import_module(name) for name in sorted(names))]


def find_doctests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found: list[doctest.DocTest] = []
    for module in package_modules():
        found.extend(
            test for test in finder.find(module, module.__name__, globs={}) if test.examples
        )
    return sorted(found, key=lambda test: test.name)


DOCTESTS = find_doctests()


def skipped_examples(test: doctest.DocTest) -> int:
    return sum(1 for example in test.examples if example.options.get(doctest.SKIP))


@pytest.fixture
def docs_env(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, object]:
    """What a docstring example runs in; returns its globals."""
    for provider in PROVIDERS:
        prefix = provider.upper()
        monkeypatch.setenv(f"{prefix}_API_KEY", TEST_KEY)
        monkeypatch.setenv(f"{prefix}_BASE_URL", server.base_url(provider))
        monkeypatch.delenv(f"{prefix}_MODEL", raising=False)
    for name in ("GPTBOTS_ENDPOINT", "CITEKIT_LOG", "CITEKIT_CACHE", "CITEKIT_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return {"ck": citekit, "__name__": "__doctest__"}


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda test: test.name)
def test_examples(test: doctest.DocTest, docs_env: dict[str, object]) -> None:
    if skipped_examples(test) == len(test.examples):
        pytest.skip(f"{test.name}: every example is marked +SKIP (see KNOWN_SKIPPED)")
    test.globs = dict(docs_env)
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    report = io.StringIO()
    # The interpreter's display hook, which doctest uses, leaves the last value shown in
    # builtins._; IPython shells of later tests would then stop setting their own ``_``.
    underscore = builtins.__dict__.get("_", _ABSENT)
    try:
        result = runner.run(test, out=report.write, clear_globs=True)
    finally:
        citekit.log.close()
        if underscore is _ABSENT:
            builtins.__dict__.pop("_", None)
        else:
            builtins.__dict__["_"] = underscore
    if result.failed:
        pytest.fail(report.getvalue(), pytrace=False)


def test_examples_are_found() -> None:
    names = {test.name for test in DOCTESTS}
    assert not DOCUMENTED - names, f"no examples found in {sorted(DOCUMENTED - names)}"


def test_programs_are_not_imported() -> None:
    modules = {module.__name__ for module in package_modules()}
    assert "citekit.model.answer" in modules
    assert not {name for name in modules if name.endswith("__main__")}


def test_no_example_is_skipped() -> None:
    skipped = {test.name: n for test in DOCTESTS if (n := skipped_examples(test))}
    assert skipped == KNOWN_SKIPPED, (
        "Docstring examples must run, not be skipped with +SKIP: make them work against the "
        "loopback server (see this file's docstring), then update KNOWN_SKIPPED"
    )
