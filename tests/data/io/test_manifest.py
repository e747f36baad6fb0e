"""A folder is a dataset only with the manifest citekit wrote; overwriting removes only its own
files (never one of the user's, wherever it lies); one writer at a time, in real processes; a
dataset folder that is a link onto another file system is written in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit import Answer, Citation
from citekit.data.io.manifest import MANIFEST, claim
from tests.budget import examples

ROOT = Path(__file__).resolve().parents[3]


def _answers(*questions: str) -> list[Answer]:
    cits = (Citation(cited_text="P", document_index=0, document_title="Rerum novarum",
                     document_author="Leo XIII", document_year="1891"),)  # fmt: skip
    return [Answer(text="Yes [^1].", provider="magisterium", id=f"id-{q}", question=q,
                   citations=cits) for q in questions]  # fmt: skip


def _questions(folder: Path) -> list[str]:
    return sorted(ck.scan_answers(folder).collect()["question"].to_list())


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


# Where a user might keep files: beside the dataset, inside its tables and partition folders,
# in folders of their own; names with the characters Hive, globs and shells treat specially.
_WHERE = st.sampled_from(
    [
        "",
        "answers",
        "citations/provider=magisterium",
        "answers/provider=magisterium/month=undated",
        "sources",
        "mine",
        "mine/deeper",
        "answers/provider=other/month=2026-01",
    ]
)
_NAME = st.text(
    st.characters(codec="utf-8", exclude_characters="/\\\x00", exclude_categories=("Cs",)),
    min_size=1, max_size=12,
).filter(lambda n: n not in (".", "..", MANIFEST, "answers", "citations", "references",
                             "sources", "mine") and len(n.encode()) < 200)  # fmt: skip
_SUFFIX = st.sampled_from(["", ".parquet", ".txt", ".pdf", ".json"])
_USER_FILES = st.dictionaries(
    st.tuples(_WHERE, _NAME, _SUFFIX).map(lambda t: f"{t[0]}/{t[1]}{t[2]}".lstrip("/")),
    st.binary(max_size=64),
    min_size=1, max_size=6,
)  # fmt: skip


def _place(folder: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    placed = {}
    for name, data in files.items():
        path = folder / name
        if any(p.is_file() for p in [path, *path.parents] if p != folder and folder in p.parents):
            continue  # a file where another one's folder would be
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            continue
        path.write_bytes(data)
        placed[name] = data
    return placed


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(files=_USER_FILES, before=st.booleans())
def test_overwriting_never_removes_a_file_of_the_users(
    files: dict[str, bytes], before: bool
) -> None:
    with tempfile.TemporaryDirectory() as base:
        folder = Path(base) / "study"
        folder.mkdir()
        if before:  # the user's files there first: the folder is no dataset
            placed = _place(folder, files)
            with pytest.raises(FileExistsError, match="only what it wrote"):
                ck.to_parquet(_answers("new"), folder, overwrite=True, progress=False)
            assert _files(folder) == placed
            return
        ck.to_parquet(_answers("old", "older"), folder, progress=False)
        placed = _place(folder, files)
        ck.to_parquet(_answers("new"), folder, overwrite=True, progress=False)
        held = _files(folder)
        assert {name: held.get(name) for name in placed} == placed
        assert _questions(folder) == ["new"]  # the dataset's own files, not the user's
        ck.to_parquet(_answers("newer"), folder, overwrite=True, progress=False)
        theirs = {n: d for n, d in _files(folder).items() if n not in placed}
        parts = json.loads((folder / MANIFEST).read_text())["parts"]
        assert set(theirs) == {MANIFEST} | {p["path"] for p in parts}  # nothing of old ones
        assert _questions(folder) == ["newer"]


def test_the_reported_folder_study_keeps_the_thesis(tmp_path: Path) -> None:
    study = tmp_path / "study"
    (study / "sources").mkdir(parents=True)
    (study / "answers").mkdir()
    (study / "sources/my_thesis_draft.pdf").write_bytes(b"%PDF-1.7 chapter one")
    (study / "answers/notes.txt").write_text("notes")
    with pytest.raises(FileExistsError, match="citekit replaces only what it wrote"):
        ck.to_parquet(_answers("q"), study, overwrite=True, progress=False)
    assert (study / "sources/my_thesis_draft.pdf").read_bytes() == b"%PDF-1.7 chapter one"
    assert (study / "answers/notes.txt").read_text() == "notes"


def test_a_manifest_edited_to_name_other_files_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    ck.to_parquet(_answers("q"), folder, progress=False)
    (tmp_path / "precious.parquet").write_bytes(b"mine")
    body = json.loads((folder / MANIFEST).read_text())
    body["parts"][0]["path"] = "../precious.parquet"
    (folder / MANIFEST).write_text(json.dumps(body))
    with pytest.raises(FileExistsError, match="not a manifest this citekit can read"):
        ck.to_parquet(_answers("r"), folder, overwrite=True, progress=False)
    assert (tmp_path / "precious.parquet").read_bytes() == b"mine"


def test_a_folder_being_written_is_refused_to_a_second_writer(tmp_path: Path) -> None:
    folder = tmp_path / "new"
    folder.mkdir()
    with claim(folder), pytest.raises(FileExistsError, match="being written by another process"):
        ck.to_parquet(_answers("second"), folder, progress=False)
    assert list(folder.iterdir()) == []
    ck.to_parquet(_answers("first"), folder, progress=False)  # the claim ends with its writer
    assert _questions(folder) == ["first"]


_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import citekit as ck
    from citekit.data.frames import load_answers
    from citekit.testing import default_data_dir
    answers = [a for a in load_answers(default_data_dir()) if isinstance(a, ck.Answer)]
    mine = [a for a in answers if a.provider == sys.argv[2]]
    start = Path(sys.argv[3])
    while not start.exists():
        time.sleep(0.001)
    try:
        ck.to_parquet(mine, sys.argv[1], progress=False)
    except FileExistsError as exc:
        print("refused:", exc)
        sys.exit(3)
    print("wrote")
    """
)


@pytest.mark.slow  # two child processes importing polars, 3 s
def test_two_processes_writing_one_new_folder_one_is_refused(tmp_path: Path) -> None:
    folder, start = tmp_path / "corpus", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    providers = ["magisterium", "gptbots"]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(folder), p, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for p in providers
    ]
    time.sleep(1.5)  # both imported and waiting
    start.touch()
    outcomes = [(child.wait(timeout=120), *child.communicate()) for child in children]
    codes = sorted(code for code, _, _ in outcomes)
    assert codes == [0, 3], outcomes
    winner = providers[[code for code, _, _ in outcomes].index(0)]
    loser = next(out for code, out, _ in outcomes if code == 3)
    assert "being written by another process" in loser or "already holds" in loser
    assert set(ck.scan_answers(folder).collect()["provider"].to_list()) == {winner}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "go"]


_SHM = Path("/dev/shm")
_OTHER_FS = _SHM.is_dir() and _SHM.stat().st_dev != Path(tempfile.gettempdir()).stat().st_dev


@pytest.mark.skipif(not _OTHER_FS, reason="needs /dev/shm on another file system than /tmp")
def test_a_dataset_folder_linked_onto_another_file_system(tmp_path: Path) -> None:
    with tempfile.TemporaryDirectory(dir="/dev/shm") as elsewhere:
        link = tmp_path / "corpus"
        link.symlink_to(elsewhere, target_is_directory=True)
        ck.to_parquet(_answers("one"), link, progress=False)
        ck.to_parquet(_answers("two"), link, overwrite=True, progress=False)
        assert _questions(link) == ["two"]
        assert link.is_symlink()  # written through the link, not replacing it
        assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]  # nothing stray
        assert not [p for p in Path(elsewhere).parent.iterdir() if ".old-" in p.name]
        assert sorted(p.name for p in Path(elsewhere).iterdir()) == [
            "answers", "citations", MANIFEST, "references", "sources"]  # fmt: skip
