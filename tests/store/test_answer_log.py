"""The log's front and its parts: ``Log`` composes the file's life cycle, the write path and
the read path; the store imports nothing above it, not even inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import citekit.store
from citekit import log
from citekit.store import Log

from ..test_store import body, chat_answer

STORE = Path(citekit.store.__file__).parent


def _imports(tree: ast.AST, package: str) -> set[str]:
    """Every module imported anywhere in ``tree`` (functions too), ``TYPE_CHECKING`` aside."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                found.add(".".join([*base, *([node.module] if node.module else [])]))
            elif node.module:
                found.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_the_store_imports_only_the_core_and_itself() -> None:
    for path in sorted(STORE.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        above = {
            name
            for name in _imports(tree, "citekit.store")
            if name.startswith("citekit") and not name.startswith(("citekit.core", "citekit.store"))
        }
        assert not above, f"{path.name} imports {sorted(above)}"


def test_the_import_reader_sees_relative_and_late_imports() -> None:
    tree = ast.parse("from ..data import dataset\ndef f():\n    from .read import Reader\n")
    assert _imports(tree, "citekit.store") == {"citekit.data", "citekit.store.read"}


def test_no_module_of_the_store_is_over_400_lines() -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in STORE.glob("*.py")}
    assert max(sizes.values()) <= 400, sizes


def test_a_log_of_its_own_writes_and_reads_its_own_file(tmp_path: Path) -> None:
    own = Log(tmp_path / "own" / "log.sqlite3")
    row_id = own.record(chat_answer("What is subsidiarity?"), request=body("a"))
    assert row_id == 1 and own.count() == 1 and log.count() == 0
    assert own.get(1).question == "What is subsidiarity?"
    assert own.fetch("SELECT count(*) FROM citations") == [(1,)]
    assert own.size() > 0 and own.flush() is True
    before, after = own.vacuum()
    assert after <= before and own.count() == 1
    own.close()
