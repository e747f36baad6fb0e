"""citekit.data.frames.sources: the one reading route from a source to answers. A JSON Lines
file is read line by line wherever it is met, named or inside a folder (the frames built on
this route: test_columnar.py, test_loaders.py)."""

from __future__ import annotations

import json
import tracemalloc
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit.data.frames.sources import Saved, iter_items, load_answers
from tests.budget import examples
from tests.data.frames.test_columnar import _bulk


def write_lines(file: Path, n: int) -> int:
    """``n`` saved Magisterium answers as JSON Lines (each about 2 KB); the file's size."""
    with file.open("w", encoding="utf-8") as out:
        for i in range(0, n, 50):
            out.writelines(json.dumps(r) + "\n" for r in _bulk(min(50, n - i)))
    return file.stat().st_size


def peak_reading(source: Path) -> tuple[int, int]:
    """The answers read from ``source`` one at a time (each dropped once seen), and the most
    memory held at once while reading them."""
    tracemalloc.start()
    try:
        n = sum(1 for item in iter_items(source, provider=None, caller="t", saved=True)
                if isinstance(item, Saved))  # fmt: skip
        return n, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_jsonl_file_in_a_folder_is_read_line_by_line_as_the_file_itself(tmp_path: Path) -> None:
    """Reading a folder holds one line at a time: the peak does not grow with the file (8x the
    lines, same peak), and is the peak of reading the file named."""
    peaks = {}
    for n in (250, 2_000):
        folder = tmp_path / f"corpus{n}"
        folder.mkdir()
        size = write_lines(folder / "answers.jsonl", n)
        read, peak = peak_reading(folder)
        assert read == n
        direct, direct_peak = peak_reading(folder / "answers.jsonl")
        assert direct == n
        assert peak < 2 * direct_peak + 64 * 1024  # the same bounded buffer
        peaks[n] = (peak, size)
    (small, _), (big, big_size) = peaks[250], peaks[2_000]
    assert big < 2 * small  # not 8x
    assert big < big_size / 20


LINE = st.one_of(
    st.sampled_from(["answer", "answer", "answer", "blank"]),
    st.sampled_from(["broken", "not an answer", "list"]),
)


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(LINE, max_size=12))
def test_a_folder_keeps_every_readable_answer_and_names_each_other_line(
    tmp_path: Path, kinds: list[str]
) -> None:
    """Any mix of answer lines, blank lines, broken JSON, values that are no answer and lists
    of answers: a folder reads every answer in order and names every other line; a file whose
    first value is no answer (a stream recording) is skipped whole and silently."""
    records = iter(_bulk(2 * len(kinds)))
    lines, expected, named = [], [], []
    for number, kind in enumerate(kinds, 1):
        if kind == "answer":
            record = next(records)
            lines.append(json.dumps(record))
            expected.append(record["response"]["id"])
        elif kind == "list":
            pair = [next(records), next(records)]
            lines.append(json.dumps(pair))
            expected += [r["response"]["id"] for r in pair]
        elif kind == "blank":
            lines.append("   ")
        elif kind == "broken":
            lines.append('{"question": "Q", "response": {')
            named.append(f"line {number}")
        else:
            lines.append('{"code": 3, "message": "Text"}')
            named.append(f"line {number}: not an answer")
    values = [k for k in kinds if k != "blank"]
    first = next((k for k in values if k != "broken"), None)
    if first == "not an answer":  # a stream recording: nothing of it, no warning for it
        expected = []
        named = [n for n in named[: values.index("not an answer")] if "not an" not in n]
    folder = tmp_path / "f"
    folder.mkdir(exist_ok=True)
    (folder / "a.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [a.id for a in load_answers(folder)]
    assert got == expected
    message = " ".join(str(w.message) for w in caught)
    # The warning names the first five places and counts the rest ("and 2 more").
    for where in named[:5]:
        assert f"a.jsonl ({where})" in message
    if len(named) > 5:
        assert f"and {len(named) - 5} more" in message
    assert bool(caught) == bool(named)
