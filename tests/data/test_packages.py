"""citekit.data's shape: a package per idea, no two public functions of one name, no file over
600 lines (the order of the packages is pyproject.toml's import-linter contract)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import citekit.data

DATA = Path(citekit.data.__file__).parent
PACKAGES = {"frames", "identity", "corpus", "io", "charts", "compare"}


def _modules() -> list[Path]:
    return sorted(DATA.rglob("*.py"))


def test_every_module_is_in_a_package() -> None:
    assert {p.name for p in DATA.iterdir() if p.is_dir() and p.name != "__pycache__"} == PACKAGES
    loose = {p.name for p in DATA.glob("*.py")} - {"__init__.py"}
    assert loose == set()
    assert not [p for p in _modules() if p.name.startswith("_") and p.name != "__init__.py"]


def test_no_two_public_functions_share_a_name() -> None:
    where: dict[str, set[str]] = defaultdict(set)
    for path in _modules():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
                where[node.name].add(path.relative_to(DATA).as_posix())
    shared = {name: sorted(files) for name, files in where.items() if len(files) > 1}
    assert shared == {}


def test_no_file_is_over_600_lines() -> None:
    long = {
        path.relative_to(DATA).as_posix(): n
        for path in _modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}
