"""``citekit.model.sources``: a provider's generated file saved into a folder under a name that
is safe and visible, whatever name the provider sent."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit.model.sources import GeneratedFile
from tests.budget import examples


def _visible(name: str) -> bool:
    return (
        bool(name.strip())
        and not name.startswith((".", " "))
        and not name.endswith(" ")
        and all(c == " " or unicodedata.category(c)[0] not in "CZ" for c in name)
    )


_NAMES = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=200, max_size=400),
    st.sampled_from(["   ", "\n", "\t\r", ".", "..", "...", "../x", "a\x00b", "\u200b"]),
    st.builds(lambda n, ext: "é" * n + ext, st.integers(100, 300), st.sampled_from([".png", ""])),
)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_NAMES, data=st.binary(max_size=8))
def test_save_into_a_folder_writes_a_visible_file_there_and_returns_its_path(
    name: str, data: bytes, tmp_path: Path
) -> None:
    """Any name: the file is written inside the folder (never Errno 36, never outside), under a
    visible name within the file system's limit, and the path returned holds the bytes."""
    folder = tmp_path / "out"
    saved = GeneratedFile(name=name, data=data).save(f"{folder}/", overwrite=True)
    assert saved.parent == folder and saved.read_bytes() == data
    assert _visible(saved.name), repr(saved.name)
    assert len(os.fsencode(saved.name)) <= os.pathconf(folder, "PC_NAME_MAX")
    assert saved.name in os.listdir(folder)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("   ", "file"),
        ("\n", "_"),
        ("a\nb.csv", "a_b.csv"),
        (".env", "_env"),
        ("../../x.png", "x.png"),
        (" grafico.png ", "grafico.png"),
    ],
)
def test_names_are_made_visible(name: str, expected: str, tmp_path: Path) -> None:
    assert GeneratedFile(name=name, data=b"x").save(tmp_path).name == expected


def test_a_long_name_is_shortened_keeping_its_extension(tmp_path: Path) -> None:
    saved = GeneratedFile(name="relatorio-" * 30 + ".parquet", data=b"x").save(tmp_path)
    assert saved.suffix == ".parquet" and saved.name.startswith("relatorio-relatorio")
    assert len(os.fsencode(saved.name)) <= 255


def test_names_that_collide_never_replace_each_other(tmp_path: Path) -> None:
    """Two names that become one ("a\\nb" and "a\\tb"), or differ only in case on a file system
    that folds case: the second, with other bytes, is refused; nothing is lost."""
    first = GeneratedFile(name="a\nb.txt", data=b"first").save(tmp_path)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        GeneratedFile(name="a\tb.txt", data=b"second").save(tmp_path)
    assert first.read_bytes() == b"first"
    assert GeneratedFile(name="a\rb.txt", data=b"first").save(tmp_path) == first
    upper = GeneratedFile(name="A_B.txt", data=b"other").save(tmp_path)
    assert upper.read_bytes() == b"other" and first.read_bytes() == b"first"
