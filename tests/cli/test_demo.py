"""``citekit.cli``: its modules import one way (``main`` runs the demo; the demo needs nothing
of ``main``), counting the imports inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import citekit

CLI = Path(citekit.__file__).parent / "cli"


def _imports(path: Path) -> set[str]:
    """The ``citekit.cli`` modules ``path`` imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # from .x import y
            found.add(node.module or "")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("citekit.cli."):
            found.add((node.module or "").removeprefix("citekit.cli."))
    return found


def test_the_demo_imports_nothing_of_the_command() -> None:
    assert "demo" in _imports(CLI / "main.py")
    assert _imports(CLI / "demo.py") == set()


def test_no_import_circle_in_the_cli() -> None:
    graph = {p.stem: _imports(p) for p in CLI.glob("*.py") if p.stem != "__init__"}
    for module, imported in graph.items():
        for other in imported:
            assert module not in graph.get(other, set()), f"{module} <-> {other}"
