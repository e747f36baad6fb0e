"""A real Chromium (Debian's package, driven by playwright) and a real JupyterLab server.

Every test here is marked ``browser``. Without ``/usr/bin/chromium`` the tests skip with the
reason; anything else missing (playwright, JupyterLab) is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
REPO = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    in_browser = [here in Path(str(item.fspath)).resolve().parents for item in items]
    # Browser tests run last: sync playwright drives an event loop on the main thread while
    # it is open, and asyncio.run() in other tests must not meet it.
    items[:] = [i for i, b in zip(items, in_browser, strict=True) if not b] + [
        i for i, b in zip(items, in_browser, strict=True) if b
    ]
    for item, is_browser in zip(items, sorted(in_browser), strict=True):
        if is_browser:
            item.add_marker(pytest.mark.browser)
            if not CHROMIUM.exists():
                item.add_marker(
                    pytest.mark.skip(
                        reason=f"{CHROMIUM} is absent: install Debian's chromium package "
                        "(apt-get install -y chromium) to run the browser tests"
                    )
                )


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000
        )
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class PageEvents:
    """What a page said on its console and which dialogs it tried to open."""

    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


#: A request that would leave this machine: any address but 127.0.0.1's (files stay allowed).
_OUTSIDE = re.compile(r"^(?!(?:https?|wss?)://127\.0\.0\.1[:/])(?!file://)[a-z][a-z0-9+.-]*://")


def refuse_outside(pg: Any, outside: list[str] | None = None) -> list[str]:
    """Refuse every request of ``pg`` that would leave this machine, noting its address in
    ``outside`` (a new list when none is given), which is returned."""
    noted: list[str] = [] if outside is None else outside

    def refuse(route: Any) -> None:
        noted.append(route.request.url)
        route.abort()

    pg.route(_OUTSIDE, refuse)
    return noted


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[tuple[Any, PageEvents]]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(60_000)
    events = PageEvents()
    pg = context.new_page()
    pg.on("console", lambda msg: events.console.append(msg.text))
    pg.on("pageerror", lambda exc: events.errors.append(str(exc)))

    def on_dialog(dialog: Any) -> None:
        events.dialogs.append(dialog.message)
        with contextlib.suppress(Exception):
            dialog.dismiss()

    pg.on("dialog", on_dialog)
    try:
        yield pg, events
    finally:
        if request.node.stash.get(_FAILED, False):
            # What the browser showed when the test failed, next to the other artifacts.
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(Exception):
                pg.screenshot(path=str(ARTIFACTS / f"failed_{request.node.name}.png"))
        context.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ensure_venv_kernel() -> None:
    spec = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    if not spec.exists():
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix"],
            check=True,
            capture_output=True,
            timeout=120,
        )


@dataclass
class Lab:
    url: str
    root: Path
    log: Path

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}"


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab on 127.0.0.1 without token, password or XSRF check, in a temp root."""
    _ensure_venv_kernel()
    base = tmp_path_factory.mktemp("jupyterlab")
    root, config, runtime, settings, workspaces = (
        base / name for name in ("root", "config", "runtime", "settings", "workspaces")
    )
    for folder in (root, config, runtime, settings, workspaces):
        folder.mkdir()
    # No news prompt: it would cover part of the notebook.
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port = _free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    log = base / "jupyterlab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={workspaces}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--ServerApp.terminals_enabled=False",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI runners
        command.append("--allow-root")
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited early:\n{log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.25)
        yield Lab(url=url, root=root, log=log)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop JupyterLab and the kernels it started (its own process group)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


# -- other front ends: Notebook 7 and marimo ------------------------------------------------------
def _serve(
    command: list[str], *, cwd: Path, log: Path, ready: str, name: str, env: dict[str, str]
) -> Any:
    """Start ``command`` in its own process group, wait until ``ready`` answers 200."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **env,
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )
    deadline = time.monotonic() + 90
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited early:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(ready, timeout=2) as response:
                if response.status == 200:
                    return process
        except OSError:
            pass
        if time.monotonic() > deadline:
            _stop(process)
            raise RuntimeError(f"{name} did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.25)


@dataclass
class Notebook7:
    url: str
    root: Path
    log: Path

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/notebooks/{name}"


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Notebook7]:
    """Jupyter Notebook 7 on 127.0.0.1 without token, password or XSRF check, in a temp root."""
    _ensure_venv_kernel()
    base = tmp_path_factory.mktemp("notebook7")
    root, config, runtime, settings, workspaces = (
        base / name for name in ("root", "config", "runtime", "settings", "workspaces")
    )
    for folder in (root, config, runtime, settings, workspaces):
        folder.mkdir()
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # The theme follows the browser's colour scheme, so a test can ask for light or dark.
    themes = news.parent / "themes.jupyterlab-settings"
    themes.write_text(json.dumps({"adaptive-theme": True}))
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "notebook",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        # Both server extensions (notebook and jupyterlab) serve settings: one folder for both.
        f"--LabServerApp.user_settings_dir={settings}",
        f"--LabServerApp.workspaces_dir={workspaces}",
        "--ServerApp.terminals_enabled=False",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    env = {
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    log = base / "notebook.log"
    url = f"http://127.0.0.1:{port}"
    ready = f"{url}/api/status"
    process = _serve(command, cwd=root, log=log, ready=ready, name="Notebook 7", env=env)
    try:
        yield Notebook7(url=url, root=root, log=log)
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def marimo_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``marimo_run(app_path)``: serve a marimo app (``marimo run --headless``), return its URL."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(app: Path) -> str:
        port = _free_port()
        command = [
            sys.executable,
            "-m",
            "marimo",
            "run",
            str(app),
            "--headless",
            "--host=127.0.0.1",
            f"--port={port}",
            "--no-token",
            "--no-sandbox",
            "--no-skew-protection",
        ]
        url = f"http://127.0.0.1:{port}"
        home = tmp_path_factory.mktemp("marimo")
        log = home / "marimo.log"
        processes.append(
            _serve(
                command,
                cwd=app.parent,
                log=log,
                ready=f"{url}/health",
                name="marimo",
                # No update check; the user's own marimo settings stay out of the test.
                env={"MARIMO_SKIP_UPDATE_CHECK": "1", "XDG_CONFIG_HOME": str(home)},
            )
        )
        return url

    try:
        yield start
    finally:
        for process in processes:
            _stop(process)


@pytest.fixture(scope="package", autouse=True)
def _kernels_import_this_checkout() -> Iterator[None]:
    """Kernels that nbclient starts import the citekit under test (this checkout), not the one
    the virtual environment was installed from (another checkout, when tests run in a worktree)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(
            "PYTHONPATH",
            os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        )
        yield
