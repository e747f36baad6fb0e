"""The wheel, built offline from this checkout, as a user installs it.

- It is the distribution ``pyproject.toml`` names (``citekit`` on PyPI is another project),
  at ``citekit.__version__``, with the ``citekit`` command, and it installs ``import citekit``.
- It carries the recorded samples the loopback server and ``citekit demo`` read (every file of
  ``sample_data/<provider>/``, as ``citekit/_sample_data``), and nothing only a developer needs:
  not sample_data's README, generator, sources or checker, nor the tests, notebooks, benchmarks.
- Installed (``pip install --no-deps --target``, the dependencies are this environment's),
  ``citekit demo`` runs offline from it, with no key and from a folder outside the checkout.

The build runs ``pip wheel --no-build-isolation --no-index`` with hatchling from the test
extras, so it needs no network. It also builds the wheel from the sdist, as pip does when it
installs a source distribution.
"""

from __future__ import annotations

import email.parser
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

import citekit
from citekit.core.names import PROVIDERS

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DISTRIBUTION = PYPROJECT["project"]["name"]
SAMPLES = ROOT / "sample_data"
DATA_IN_WHEEL = PurePosixPath("citekit/_sample_data")

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Wheel:
    path: Path
    names: frozenset[str]
    metadata: email.message.Message
    entry_points: str


def pip(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m pip`` from this environment, never reaching a package index."""
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def build_wheel(source: Path, out: Path) -> Wheel:
    try:
        import hatchling  # noqa: F401
    except ImportError:
        pytest.fail(
            "hatchling is needed to build the wheel offline; it is in the test extras: "
            "pip install -e '.[test]'",
            pytrace=False,
        )
    pip("wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), str(source), cwd=out)
    [path] = out.glob("*.whl")
    with zipfile.ZipFile(path) as archive:
        names = frozenset(archive.namelist())
        info = next(name for name in names if name.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(info).decode("utf-8"))
        points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
        entry_points = archive.read(points).decode("utf-8")
    return Wheel(path, names, metadata, entry_points)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Wheel:
    return build_wheel(ROOT, tmp_path_factory.mktemp("wheel"))


def demo_data() -> set[str]:
    """Every file of each provider's folder of samples, where the wheel puts it."""
    found = set()
    for provider in PROVIDERS:
        folder = SAMPLES / provider
        assert folder.is_dir(), folder
        found.update(
            str(DATA_IN_WHEEL / path.relative_to(SAMPLES).as_posix())
            for path in folder.rglob("*")
            if path.is_file()
        )
    return found


#: Code printing what the loopback server loads from its default samples.
SAMPLE_COUNTS = (
    "from citekit.testing._samples import SampleSet, default_data_dir\n"
    "s = SampleSet.load(default_data_dir())\n"
    "print(default_data_dir(), [len(s[p]) for p in s.by_provider], len(s.searches),"
    " s.models is not None, len(s.skipped))\n"
)


def test_the_distribution_is_named_as_pyproject_says(wheel: Wheel) -> None:
    assert DISTRIBUTION != "citekit", "citekit on PyPI is an unrelated project"
    assert wheel.metadata["Name"] == DISTRIBUTION
    assert wheel.metadata["Version"] == citekit.__version__
    assert wheel.path.name.startswith(f"{DISTRIBUTION.replace('-', '_')}-{citekit.__version__}-")
    assert "[console_scripts]\ncitekit = citekit.__main__:main" in wheel.entry_points
    # The import name is citekit: the one top-level package, beside its metadata.
    tops = {name.split("/", 1)[0] for name in wheel.names}
    assert tops == {"citekit", f"{DISTRIBUTION.replace('-', '_')}-{citekit.__version__}.dist-info"}


def test_the_wheel_carries_the_package_and_the_demo_data(wheel: Wheel) -> None:
    package = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "citekit").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    assert package - wheel.names == set()
    assert {"citekit/py.typed", "citekit/data/identity/aliases.json"} <= wheel.names
    data = demo_data()
    in_wheel = {name for name in wheel.names if name.startswith(f"{DATA_IN_WHEEL}/")}
    assert in_wheel == data, (
        f"missing: {sorted(data - in_wheel)[:5]}; not demo data: {sorted(in_wheel - data)[:5]}"
    )


def test_the_wheel_leaves_out_what_only_a_developer_needs(wheel: Wheel) -> None:
    developer = [
        name
        for name in wheel.names
        if any(
            part in {"_build.py", "_check.py", "_source", "README.md", "tests", "bench"}
            or part.endswith(".ipynb")
            for part in PurePosixPath(name).parts
        )
    ]
    assert developer == []
    assert (SAMPLES / "_build.py").is_file() and (SAMPLES / "_source").is_dir()


def test_a_wheel_built_from_the_sdist_is_the_same(
    wheel: Wheel, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from hatchling.builders.sdist import SdistBuilder

    work = tmp_path_factory.mktemp("sdist")
    [sdist] = [Path(p) for p in SdistBuilder(str(ROOT)).build(directory=str(work))]
    with tarfile.open(sdist) as archive:
        archive.extractall(work / "unpacked", filter="data")
    [source] = (work / "unpacked").iterdir()
    out = work / "wheel"
    out.mkdir()
    assert build_wheel(source, out).names == wheel.names


@pytest.fixture(scope="module")
def installed(wheel: Wheel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    target = tmp_path_factory.mktemp("site")
    pip("install", "--no-deps", "--target", str(target), str(wheel.path), cwd=target)
    yield target


def run_installed(target: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``args`` with the installed wheel first on the path and no provider settings."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("MAGISTERIUM_", "MARITACA_", "GPTBOTS_", "CITEKIT_"))
    }
    env["PYTHONPATH"] = str(target)
    env["CITEKIT_HOME"] = str(cwd / "home")
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_installed_wheel_is_what_runs(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import importlib.metadata as m, citekit\n"
        f"print(citekit.__file__, m.version({DISTRIBUTION!r}))\n" + SAMPLE_COUNTS
    )
    done = run_installed(installed, [sys.executable, "-c", probe], tmp_path)
    assert done.returncode == 0, done.stderr
    first, counts = done.stdout.splitlines()
    assert first == f"{installed / 'citekit' / '__init__.py'} {citekit.__version__}"
    # The samples the server loads from the wheel are the checkout's, every one of them.
    here = subprocess.run(
        [sys.executable, "-c", SAMPLE_COUNTS],
        env={**os.environ, "CITEKIT_SAMPLE_DATA": str(SAMPLES)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert counts == here.replace(str(SAMPLES), str(installed / "citekit" / "_sample_data"))
    assert counts.endswith(" True 0")
    done = run_installed(installed, [str(installed / "bin" / "citekit"), "--version"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"citekit {citekit.__version__}"


@pytest.mark.slow
def test_the_demo_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    """The first of the README's two commands, after its install: ``citekit demo``."""
    done = run_installed(installed, [str(installed / "bin" / "citekit"), "demo"], tmp_path)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "citekit-demo.html"
    assert page.is_file()
    html = page.read_text(encoding="utf-8")
    for provider in PROVIDERS:
        assert f"{provider}/" in html, provider  # answers of each provider, labelled by sample
    assert "recorded sample" in html.lower()
    assert "recorded sample answers (not live)" in done.stdout
