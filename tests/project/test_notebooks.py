"""The demo notebooks: built by notebooks/_build.py, committed without outputs, and each one
runs from top to bottom without an error, offline, against the loopback server."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = [
    "01_tour.ipynb",
    "02_magisterium.ipynb",
    "03_maritaca.ipynb",
    "04_gptbots.ipynb",
    "05_where_answers_come_from.ipynb",
]
#: Set in the environment, these would send the notebooks to the real services.
KEYS = ("MAGISTERIUM_API_KEY", "MARITACA_API_KEY", "GPTBOTS_API_KEY", "GPTBOTS_ENDPOINT")


def _kernel_runs_this_python(argv: list[str]) -> bool:
    command = argv[0] if argv else ""
    if command in ("python", "python3"):  # jupyter_client substitutes sys.executable
        return True
    found = shutil.which(command)
    return found is not None and Path(found).resolve() == Path(sys.executable).resolve()


@pytest.fixture(scope="session")
def kernel_name() -> str:
    """``python3``, registered into this environment when it is missing or foreign."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        ready = _kernel_runs_this_python(spec.argv)
    except NoSuchKernel:
        ready = False
    if not ready:
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix"],
            check=True,
            capture_output=True,
        )
    return "python3"


def test_every_notebook_is_present_and_built_by_the_script() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == NAMES
    done = subprocess.run(
        [sys.executable, str(NOTEBOOKS / "_build.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_valid_without_outputs_and_says_offline_means_samples(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    notes = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert any("recorded sample" in text and "not live answers" in text for text in notes)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_offline(
    name: str, kernel_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=120,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError on the first cell that fails
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    shown = "".join(str(out.get("data", {}).get("text/plain", "")) for out in outputs)
    assert "recorded sample" in shown  # the answers say where they come from
