"""Every file citekit writes goes through one path (``citekit.core.files``): written beside the
target and renamed over it, so a disk that fills midway leaves the previous file whole, says so
in citekit's message, and leaves no part behind; new files follow the umask."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import citekit as ck
from citekit.core.files import DiskFullError, replacing, write_bytes

ROOT = Path(__file__).resolve().parents[3]

# The child runs every writer under a real file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: the
# kernel refuses the write with EFBIG, as a full disk refuses it with ENOSPC), at several
# points of the file, and prints one line per case that went wrong.
_CHILD = textwrap.dedent(
    """
    import contextlib, hashlib, io, os, resource, signal, sys
    from pathlib import Path
    os.environ["CITEKIT_HOME"] = sys.argv[2]
    import polars as pl
    import citekit as ck
    from citekit import Answer, Citation
    from citekit.cli.main import main
    from citekit.core.files import DiskFullError
    from citekit.model.sources import GeneratedFile

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    folder = Path(sys.argv[1])
    def noise(seed, n):  # text no compression makes small
        return " ".join(hashlib.sha256(f"{seed}-{j}".encode()).hexdigest() for j in range(n))
    def answer(i, n):
        cits = tuple(Citation(cited_text=noise((i, k), 20), document_index=k,
                              document_title=f"Work {i} {k} " + noise(k, 2),
                              document_author="Leo XIII", document_year="1891")
                     for k in range(n))
        text = " ".join(f"{noise((i, k, 'x'), 40)} [^{k + 1}]." for k in range(n))
        return Answer(text=text, provider="magisterium", id=f"id-{i}",
                      question=noise(i, 600), citations=cits,
                      raw={"choices": [{"message": {"content": text}}]})
    small, big = [answer(0, 1)], [answer(i, 20) for i in range(8)]
    for a in big:
        ck.log.record(a)
    ck.log.close()

    def cli(path, what):
        argv = ["log", "export", str(path), "--rows"]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
        said = err.getvalue()
        if code == 1 and said.startswith("citekit: DiskFullError: No room to write"):
            raise DiskFullError(28, said)  # the command said it, in one line, no traceback
        if code != 0:
            raise RuntimeError(said)
    writers = {}
    for suffix in (".md", ".html", ".json"):
        writers["answer" + suffix] = lambda p, s: ck.export_answer(small[0] if s else big[3], p)
    for suffix in (".csv", ".parquet", ".bib", ".json"):
        writers["citations" + suffix] = lambda p, s: ck.export_citations(
            small if s else big, p, include_samples=True
        )
    for suffix in (".jsonl", ".json", ".parquet", ".csv"):
        writers["rows" + suffix] = lambda p, s: (
            pl.DataFrame({"x": [1]}).write_ndjson(p) if s else cli(p, "rows"))
    writers["file.bin"] = lambda p, s: GeneratedFile(
        name="f", data=b"small" if s else b"x" * 300_000).save(p, overwrite=True)

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    for name, write in writers.items():
        target = folder / name.replace(".", "-") / ("out." + name.split(".", 1)[1])
        target.parent.mkdir()
        write(target, True)
        good = target.read_bytes()
        scratch = folder / "scratch" / target.name
        scratch.parent.mkdir(exist_ok=True)
        write(scratch, False)
        size = scratch.stat().st_size
        # the command reads the log: cut past its shared memory file (32 KiB)
        least = 70_000 if name.startswith("rows") else 1
        if size < 2 * least or size < 16:
            print(name, "too small to cut:", size)
        for cut in (max(least, size // 3), size * 2 // 3):
            resource.setrlimit(resource.RLIMIT_FSIZE, (cut, limit))
            try:
                write(target, False)
                print(name, cut, "written whole under the limit?")
            except DiskFullError as exc:
                if "No room to write" not in str(exc) or str(target) not in str(exc):
                    print(name, cut, "message:", exc)
            except BaseException as exc:
                print(name, cut, "raw:", type(exc).__name__, str(exc)[:300])
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            if target.read_bytes() != good:
                print(name, cut, "the good file was replaced")
            left = sorted(p.name for p in target.parent.iterdir())
            if left != [target.name]:
                print(name, cut, "left behind:", left)
    def tree(root):
        return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    def export_parquet(path):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["log", "export", str(path), "--parquet", "--overwrite"])
        said = err.getvalue()
        if code == 1 and said.startswith("citekit: DiskFullError: No room to write"):
            raise DiskFullError(28, said)
        raise RuntimeError(f"{code} {said}")
    datasets = {
        "to_parquet": lambda p: ck.to_parquet(big, p, overwrite=True, progress=False),
        "log export --parquet": export_parquet,
    }
    for name, write in datasets.items():
        target = folder / name.replace(" ", "_")
        ck.to_parquet(small, target, progress=False)
        good = tree(target)
        for cut in (70_000, 100_000):
            resource.setrlimit(resource.RLIMIT_FSIZE, (cut, limit))
            try:
                write(target)
                print(name, cut, "written whole under the limit?")
            except DiskFullError as exc:
                if "No room to write" not in str(exc):
                    print(name, cut, "message:", exc)
            except BaseException as exc:
                print(name, cut, "raw:", type(exc).__name__, str(exc)[:300])
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            if tree(target) != good:
                print(name, cut, "the dataset changed")
    print("done")
    """
)


@pytest.mark.slow  # a child process importing polars, 4 s
def test_a_disk_that_fills_midway_leaves_every_file_whole(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "out"), str(tmp_path / "home")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["done"], run.stdout


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077, 0o027])
def test_new_files_follow_the_umask_and_replaced_ones_keep_their_mode(
    tmp_path: Path, mask: int
) -> None:
    answer = ck.Answer(provider="magisterium", text="Yes.", question="q")
    old = os.umask(mask)
    try:
        written = [
            write_bytes(tmp_path / "a.bin", b"x"),
            ck.export_answer(answer, tmp_path / "a.md"),
            ck.export_citations([answer], tmp_path / "c.csv", include_samples=True),
            ck.export_citations([answer], tmp_path / "c.parquet", include_samples=True),
        ]
        ck.to_parquet([answer], tmp_path / "ds", progress=False)
        written += [p for p in (tmp_path / "ds").rglob("*") if p.is_file()]
        for path in written:
            assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path
        os.chmod(written[1], 0o640)
        ck.export_answer(answer, written[1])
        assert stat.S_IMODE(written[1].stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_an_error_midway_leaves_the_previous_file_and_no_part(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("good")
    with pytest.raises(KeyboardInterrupt), replacing(target) as temporary:
        temporary.write_text("ha")
        raise KeyboardInterrupt
    assert target.read_text() == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_a_full_disk_is_one_citekit_error_whichever_writer_met_it(tmp_path: Path) -> None:
    target = tmp_path / "t.parquet"
    target.write_bytes(b"good")
    met = [
        OSError(28, "No space left on device"),
        OSError(122, "Disk quota exceeded"),
        RuntimeError("parquet: underlying IO error: File too large (os error 27)"),
    ]
    for cause in met:
        with pytest.raises(DiskFullError) as caught, replacing(target):
            raise cause
        assert isinstance(caught.value, ck.CitekitError) and isinstance(caught.value, OSError)
        assert str(caught.value).startswith(f"No room to write {target}")
        assert caught.value.__cause__ is cause
    with pytest.raises(RuntimeError, match="other"), replacing(target):
        raise RuntimeError("other")  # not every error is a full disk
    assert target.read_bytes() == b"good"
