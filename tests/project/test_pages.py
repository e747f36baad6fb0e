"""README.md and every page of docs/ run as written: each page's code blocks, in order,
against the loopback server.

Each fenced block of a page is read by markdown-it; its info string says what it is:

- ``python`` and ``ipython`` blocks are cells of one IPython shell per page, run in the page's
  order as a notebook runs them (top-level ``await``, ``%`` magics, ``{name}`` filled from the
  notebook's variables);
- ``bash`` blocks run in ``bash -e`` in the page's folder, where ``citekit`` is this checkout's
  command;
- a block that must not run here carries a mark after its language, one of ``MARKS``, which
  says why. Every other block runs, and the test fails if one fails.

Each page runs as the docstring examples do (``tests/project/test_docs.py``): the three
providers' keys set, their ``*_BASE_URL`` variables pointing at the loopback server, the answer
log (``CITEKIT_HOME``) and the working directory a fresh temporary folder. Nothing reaches a
provider. A page starts from nothing: it imports what it uses, and asks what it reads back.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec
import pytest
from IPython.core.interactiveshell import InteractiveShell
from markdown_it import MarkdownIt
from traitlets.config import Config

import citekit
from citekit.testing import ProviderServer
from tests.project.test_docs import PROVIDERS, TEST_KEY

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose blocks run: the README and every page of the docs site.
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

#: Languages of the blocks that run.
RUN = ("python", "ipython", "bash")
#: Why a block does not run here; written after its language (```` ```bash network ````).
MARKS = {
    "live": "needs a provider's real API key and the network",
    "network": (
        "installs from the package index; tests/project/test_packaging.py builds the wheel "
        "offline, installs it and runs the demo from it"
    ),
    "spark": (
        "needs Apache Spark (pyspark and a Java runtime) and a SparkSession named spark; "
        "tests/data/io/test_dataset.py reads the same dataset with DuckDB"
    ),
    "suite": "runs the test suite or its checks itself: CI (bash .ci/run) runs them",
}

# No ContentFilteredWarning is let through: a block that warns fails, as a reader would see
# the warning (pyproject.toml turns citekit's warnings into errors). Running the pages is slow;
# reading their blocks is not, and runs in the fast loop.


@dataclass(frozen=True)
class Block:
    page: str  # the page's path from the checkout's root
    language: str
    marks: tuple[str, ...]
    source: str
    line: int  # 1-based line of the opening fence

    def __str__(self) -> str:
        info = " ".join([self.language, *self.marks]) or "no info"
        return f"{self.page}:{self.line} ({info})"


def page_blocks(text: str, page: str = "README.md") -> list[Block]:
    blocks = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "fence" and token.map is not None:
            language, *marks = token.info.split() or [""]
            blocks.append(Block(page, language, tuple(marks), token.content, token.map[0] + 1))
    return blocks


def blocks_of(path: Path) -> list[Block]:
    return page_blocks(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())


BLOCKS = {path.relative_to(ROOT).as_posix(): blocks_of(path) for path in PAGES}
#: The pages with a block that runs, each one test.
RUNNABLE = [page for page, blocks in BLOCKS.items() if any(not b.marks for b in blocks)]


def test_every_block_runs_or_says_why_not() -> None:
    every = [block for blocks in BLOCKS.values() for block in blocks]
    assert BLOCKS["README.md"], "README.md has no code block"
    wrong = [
        str(block)
        for block in every
        if set(block.marks) - set(MARKS) or (block.language not in RUN and not block.marks)
    ]
    assert not wrong, (
        f"each block's info string is one of {RUN}, or carries one of the marks "
        f"{sorted(MARKS)} saying why it does not run: {wrong}"
    )
    assert any(block.language == "python" and not block.marks for block in BLOCKS["README.md"])
    assert {"README.md", "docs/tour.md"} <= set(RUNNABLE)


def test_blocks_are_read_with_their_marks() -> None:
    text = (
        "# t\n\n```python\nx = 1\n```\n\n"
        "```bash network suite\nbash .ci/run\n```\n\n```\nplain\n```\n"
    )
    assert page_blocks(text, "docs/t.md") == [
        Block("docs/t.md", "python", (), "x = 1\n", 3),
        Block("docs/t.md", "bash", ("network", "suite"), "bash .ci/run\n", 7),
        Block("docs/t.md", "", (), "plain\n", 11),
    ]


def test_ci_runs_the_test_command_the_readme_gives() -> None:
    """The README's second command is CI's script, which runs the README's test command."""
    readme = README.read_text(encoding="utf-8")
    command = "HYPOTHESIS_PROFILE=ci .venv/bin/python -m pytest"
    commands = [b.source for b in BLOCKS["README.md"] if b.language == "bash"]
    assert any("bash .ci/run" in source.splitlines() for source in commands)
    assert f"`{command}`" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == command


@pytest.fixture
def page_env(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The folder a page runs in, with the environment of ``tests/project/test_docs.py``."""
    for provider in PROVIDERS:
        prefix = provider.upper()
        monkeypatch.setenv(f"{prefix}_API_KEY", TEST_KEY)
        monkeypatch.setenv(f"{prefix}_BASE_URL", server.base_url(provider))
        monkeypatch.delenv(f"{prefix}_MODEL", raising=False)
    for name in ("GPTBOTS_ENDPOINT", "CITEKIT_LOG", "CITEKIT_CACHE", "CITEKIT_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    try:
        yield work
    finally:
        citekit.log.close()


@pytest.fixture
def shell(page_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    # %%ask keeps the clients it made by provider name for the session; one an earlier test
    # made would send to wherever that test's environment pointed, not to this server.
    monkeypatch.setattr("citekit.notebook.magic._clients", {})
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor"
    ip = InteractiveShell.instance(config=config)
    try:
        yield ip
    finally:
        InteractiveShell.clear_instance()


def command_folder(where: Path) -> Path:
    """A folder holding a ``citekit`` command that runs this checkout's citekit."""
    folder = where / "bin"
    folder.mkdir()
    command = folder / "citekit"
    checkout = Path(citekit.__file__).resolve().parent.parent
    command.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="{checkout}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" '
        '-m citekit "$@"\n',
        encoding="utf-8",
    )
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    return folder


def run_cell(ip: InteractiveShell, block: Block) -> str | None:
    """What went wrong in the cell, or None."""
    result = ip.run_cell(block.source, store_history=True)
    error = result.error_before_exec or result.error_in_exec
    if error is None:
        return None
    return "".join(traceback.format_exception(error))[-4000:]


def run_bash(block: Block, work: Path, commands: Path) -> str | None:
    env = {**os.environ, "PATH": f"{commands}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-e", "-c", block.source],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode == 0:
        return None
    return f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE)
def test_page_runs_as_written(
    page: str, shell: InteractiveShell, page_env: Path, tmp_path: Path
) -> None:
    commands = command_folder(tmp_path)
    ran, failed = [], []
    for block in BLOCKS[page]:
        if block.marks:
            continue
        if block.language == "bash":
            error = run_bash(block, page_env, commands)
        else:
            error = run_cell(shell, block)
        ran.append(str(block))
        if error is not None:
            failed.append(f"{block}:\n{error}")
    assert ran
    assert not failed, "\n\n".join(failed)
    # Run in the checkout, a page's commands leave nothing git would show as new.
    ignored = pathspec.GitIgnoreSpec.from_lines(
        (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    )
    left = [f"{p.name}/" if p.is_dir() else p.name for p in sorted(page_env.iterdir())]
    if page == "README.md":
        assert left, "the README's commands write files"
    assert [name for name in left if not ignored.match_file(name)] == [], ".gitignore them"
