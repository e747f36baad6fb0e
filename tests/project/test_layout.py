"""The package's shape: layers kept by the import-linter contract, no import-time cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import citekit

PACKAGE = Path(citekit.__file__).parent


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["citekit", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_time_imports(
    module: str, path: Path, modules: dict[str, Path], *, inside_functions: bool = False
) -> set[str]:
    """Modules of citekit that ``module`` imports while it is being imported: the statements
    at module level, outside ``if TYPE_CHECKING:``; imports inside functions run later, and
    count too with ``inside_functions``."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    targets: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and not _is_type_checking(node):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                if inside_functions:
                    for handler in node.handlers:
                        visit(handler.body)
                    visit(node.orelse)
                    visit(node.finalbody)
            elif inside_functions and isinstance(
                node,
                ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.With | ast.For,
            ):
                visit(node.body)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith("citekit"))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                if not source.startswith("citekit"):
                    continue
                targets.add(source)
                targets.update(
                    f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in modules
                )

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {t for t in targets if t in modules and t != module}


def _graph(*, inside_functions: bool) -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: _import_time_imports(name, path, modules, inside_functions=inside_functions)
        for name, path in modules.items()
    }


def _find_cycle(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import-time cycle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name)


def test_no_import_time_cycle() -> None:
    graph = _graph(inside_functions=False)
    _find_cycle(graph)
    assert len(graph) > 50  # the walk saw the whole package
    assert "citekit.core.errors" in graph["citekit.core.secrets"]  # and the edges between modules


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    # A package's __init__ gathers its modules; a module importing a sibling through the
    # package is an edge to the sibling, not a circle through the package.
    graph = _graph(inside_functions=True)
    _find_cycle(graph)
    assert "citekit.render.bundle" in graph["citekit.model.answer"]  # function-level, seen


def _layers() -> list[str]:
    """The floors of the import-linter contract in pyproject.toml, top floor first."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c for c in contracts if c["type"] == "layers" and c.get("containers") is None]
    assert "ignore_imports" not in layers, "the layer contract has exceptions"
    return list(layers["layers"])


def test_no_import_runs_up_a_floor() -> None:
    """No module imports a floor above its own, at module level or inside a function
    (``if TYPE_CHECKING:`` imports aside): the contract's rule, without import-linter's
    exceptions and for the imports it does not see run."""
    layers = _layers()

    def floor(module: str) -> int | None:
        for index, layer in enumerate(layers):
            if module == layer or module.startswith(layer + "."):
                return len(layers) - index
        return None

    upward = sorted(
        f"{source} -> {target}"
        for source, targets in _graph(inside_functions=True).items()
        for target in targets
        if (low := floor(source)) is not None and (high := floor(target)) is not None and high > low
    )
    assert upward == []


def test_layers_contract_holds() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    root = PACKAGE.parent
    result = subprocess.run(
        [str(lint)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout or "broken" not in result.stdout


def test_facade_is_sorted_and_complete() -> None:
    assert citekit.__all__ == sorted(citekit.__all__)
    for name in citekit.__all__:
        assert getattr(citekit, name) is not None


#: What ``import citekit`` must not load: each is loaded by the first call that needs it (the
#: clients bring httpx, and httpx's own command line brings rich and click when installed).
HEAVY_AT_IMPORT = (
    "altair",
    "anywidget",
    "click",
    "duckdb",
    "httpx",
    "IPython",
    "ipywidgets",
    "markdown_it",
    "msgspec",
    "pandas",
    "polars",
    "pyarrow",
    "rapidfuzz",
    "rich",
    "vl_convert",
)
#: Nor these, which cost more than the rest of ``import citekit`` together: the values and
#: errors (loaded with the first name of the facade that needs them) and the standard modules
#: only they need (dataclasses brings inspect; the scrubber json, html and urllib; the file
#: helpers secrets, hmac and hashlib; the provider names difflib).
LAZY_AT_IMPORT = (
    "citekit.core.errors",
    "citekit.core.secrets",
    "citekit.model",
    "citekit.text.reader",
    "dataclasses",
    "datetime",
    "difflib",
    "hmac",
    "inspect",
    "json",
    "secrets",
    "urllib.parse",
)


def test_import_citekit_loads_nothing_heavy() -> None:
    watched = HEAVY_AT_IMPORT + LAZY_AT_IMPORT
    code = (
        "import sys, citekit\n"
        f"print(','.join(m for m in {watched!r} if m in sys.modules))\n"
        # every name of the facade is there all the same, and is what its module defines
        "from citekit import *\n"
        "from citekit.model import Answer\n"
        "from citekit.core.errors import ProviderError\n"
        "assert citekit.Answer is Answer and citekit.ProviderError is ProviderError\n"
        # the clients, loaded on first use, are the classes the providers' modules define
        "from citekit.providers.magisterium import Magisterium\n"
        "assert citekit.Magisterium is Magisterium\n"
        "assert citekit.client('gptbots', api_key='k').name == 'gptbots'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""
