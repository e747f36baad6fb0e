"""README.md runs as written: every code block, in order, against the loopback server.

Each fenced block of README.md is read by markdown-it; its info string says what it is:

- ``python`` and ``ipython`` blocks are cells of one IPython shell, run in the README's order as
  a notebook runs them (top-level ``await``, ``%`` magics, ``{name}`` filled from the
  notebook's variables);
- ``bash`` blocks run in ``bash -e`` in the same folder, where ``citekit`` is this checkout's
  command;
- a block that must not run here carries a mark after its language, one of ``MARKS``, which
  says why. Every other block runs, and the test fails if one fails.

They run as the docstring examples do (``tests/project/test_docs.py``): the three providers'
keys set, their ``*_BASE_URL`` variables pointing at the loopback server, the answer log
(``CITEKIT_HOME``) and the working directory a fresh temporary folder. Nothing reaches a
provider.
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
README = ROOT / "README.md"

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

# No ContentFilteredWarning is let through: a README block that warns fails, as a reader
# would see the warning (pyproject.toml turns citekit's warnings into errors).
pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Block:
    language: str
    marks: tuple[str, ...]
    source: str
    line: int  # 1-based line of the opening fence

    def __str__(self) -> str:
        return f"README.md:{self.line} ({' '.join([self.language, *self.marks]) or 'no info'})"


def readme_blocks(text: str) -> list[Block]:
    blocks = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "fence" and token.map is not None:
            language, *marks = token.info.split() or [""]
            blocks.append(Block(language, tuple(marks), token.content, token.map[0] + 1))
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_every_block_runs_or_says_why_not() -> None:
    assert BLOCKS, "README.md has no code block"
    wrong = [
        str(block)
        for block in BLOCKS
        if set(block.marks) - set(MARKS) or (block.language not in RUN and not block.marks)
    ]
    assert not wrong, (
        f"each block's info string is one of {RUN}, or carries one of the marks "
        f"{sorted(MARKS)} saying why it does not run: {wrong}"
    )
    assert any(block.language == "python" and not block.marks for block in BLOCKS)


def test_readme_blocks_are_read_with_their_marks() -> None:
    text = (
        "# t\n\n```python\nx = 1\n```\n\n"
        "```bash network suite\nbash .ci/run\n```\n\n```\nplain\n```\n"
    )
    assert readme_blocks(text) == [
        Block("python", (), "x = 1\n", 3),
        Block("bash", ("network", "suite"), "bash .ci/run\n", 7),
        Block("", (), "plain\n", 11),
    ]


@pytest.fixture
def readme_env(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The folder the README runs in, with the environment of ``tests/project/test_docs.py``."""
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
def shell(readme_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
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
def test_the_readme_runs_as_written(
    shell: InteractiveShell, readme_env: Path, tmp_path: Path
) -> None:
    commands = command_folder(tmp_path)
    ran, failed = [], []
    for block in BLOCKS:
        if block.marks:
            continue
        if block.language == "bash":
            error = run_bash(block, readme_env, commands)
        else:
            error = run_cell(shell, block)
        ran.append(str(block))
        if error is not None:
            failed.append(f"{block}:\n{error}")
    assert ran
    assert not failed, "\n\n".join(failed)
    # Run in the checkout, the README's commands leave nothing git would show as new.
    ignored = pathspec.GitIgnoreSpec.from_lines(
        (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    )
    left = [f"{p.name}/" if p.is_dir() else p.name for p in sorted(readme_env.iterdir())]
    assert left, "the README's commands write files"
    assert [name for name in left if not ignored.match_file(name)] == [], ".gitignore them"
