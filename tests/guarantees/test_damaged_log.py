"""One damaged row of the answer log never hides the others, on any read path: a cell of any
table and column given a wrong type, JSON that does not parse, text that is not UTF-8 or a
number past its column's integers (a real SQLite file, damaged as a disk or another program
would), then every read (``count``, ``answers``, ``get``, ``rows``, ``frame``, the frames of the
log and ``citekit log list/show``) still gives every other row as it was."""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import citekit as ck
from citekit.cli.main import main
from citekit.store import Log, LogWarning
from citekit.testing import ProviderServer
from tests.budget import examples
from tests.conftest import SECRET, sample_records
from tests.providers.test_clients import ask_magisterium, maritaca_options

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

FRAMES = (ck.citations_frame, ck.references_frame, ck.answers_frame, ck.sources_frame)
DATASET = (ck.scan_answers, ck.scan_citations, ck.scan_references, ck.scan_sources)
TABLES = ("answers", "citations", "knowledge_references")
#: Columns whose damage would be a change of what the row is, not of what it holds.
KEYS = {("answers", "id")}
_COPY = itertools.count()


@pytest.fixture(scope="module")
def base(server: ProviderServer) -> Iterator[Path]:
    """A log of a Magisterium answer (citations), a Maritaca one (tools), a GPTBots one
    (knowledge references) and a failed call."""
    folder = Path(tempfile.mkdtemp(prefix="citekit-damaged-"))
    home = folder / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEKIT_HOME", str(home))
        mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))
        ask_magisterium(mg, sample_records("magisterium")[0][1])
        mar = dict(sample_records("maritaca"))["08_pix_web_search"]["request"]
        mt = ck.Maritaca(api_key=SECRET, base_url=server.base_url("maritaca"))
        mt.chat(mar["messages"], **maritaca_options(mar))
        gb = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
        gb.ask(sample_records("gptbots")[0][1]["question"])
        ck.log.record(None, provider="maritaca", error=RuntimeError("the call failed"))
        ck.log.close()
    shutil.copy(home / "log.sqlite3", folder / "base.sqlite3")
    yield folder / "base.sqlite3"
    shutil.rmtree(folder, ignore_errors=True)


def _columns(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return [
            (table, row[1])
            for table in TABLES
            for row in conn.execute(f"PRAGMA table_info({table})")
            if (table, row[1]) not in KEYS
        ]


class _Bad:
    """Text that is not UTF-8, stored as TEXT."""

    def __init__(self, data: bytes) -> None:
        self.data = data


DAMAGE = st.one_of(
    st.sampled_from(["{bad", "abc", "[1, 2]", '{"web_search_calls": "x"}', "null", "", "5"]),
    st.text(max_size=20),
    st.binary(max_size=20),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([2**63 - 1, -(2**63), 2**31, 10**18]),
    st.floats(),
    st.builds(_Bad, st.sampled_from([b"\xff\xfe bad", b"caf\xe9", b"\x80"])),
)


def _reads(log: Log, home: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """What every read path gives, keyed by path."""
    out: dict[str, Any] = {
        "count": log.count(),
        "answers": log.answers(),
        "rows": log.rows(),
        "frame": log.frame(),
    }
    for frame in FRAMES:
        out[frame.__name__] = frame(log)
    # the Parquet dataset, read from the tables partition by partition
    folder = Path(tempfile.mkdtemp(prefix="citekit-damaged-ds-")) / "ds"
    ck.to_parquet(log, folder, progress=False, include_samples=True)
    for scan in DATASET:
        out[scan.__name__] = scan(folder).drop("month").collect().sort(pl.all())
    shutil.rmtree(folder.parent, ignore_errors=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEKIT_HOME", str(home))
        capsys.readouterr()
        assert main(["log", "list"]) == 0
        listing = capsys.readouterr()
        assert "Traceback" not in listing.err
        out["list"] = listing.out.splitlines()
        for row in out["rows"]:
            code = main(["log", "show", str(row["id"])])
            shown = capsys.readouterr()
            assert "Traceback" not in shown.err, shown.err
            out[f"show {row['id']}"] = (code, shown.out)
    return out


@settings(
    max_examples=examples(150),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), value=DAMAGE)
def test_one_damaged_cell_never_hides_the_other_rows(
    base: Path, data: st.DataObject, value: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    table, column = data.draw(st.sampled_from(_columns(base)), label="column")
    home = base.parent / f"copy-{next(_COPY)}"
    home.mkdir()
    path = home / "log.sqlite3"
    shutil.copy(base, path)
    with sqlite3.connect(path) as conn:
        owner_of = "id" if table == "answers" else "answer"
        rows = conn.execute(f"SELECT rowid, {owner_of} FROM {table}").fetchall()
        assume(rows)
        rowid, owner = data.draw(st.sampled_from(rows), label="row")
        ids = [r[0] for r in conn.execute("SELECT id FROM answers")]
        assume(not (column == "answer" and value in ids))  # another answer's: not damage
        if isinstance(value, _Bad):
            sql, param = (
                f"UPDATE {table} SET {column} = CAST(? AS TEXT) WHERE rowid = ?",
                value.data,
            )
        else:
            sql, param = f"UPDATE {table} SET {column} = ? WHERE rowid = ?", value
        try:
            conn.execute(sql, (param, rowid))
        except sqlite3.IntegrityError:  # NOT NULL, CHECK: SQLite itself refuses this damage
            assume(False)
    fresh = home.parent / f"{home.name}-fresh"
    fresh.mkdir()
    shutil.copy(base, fresh / "log.sqlite3")
    expected_log, damaged_log = Log(fresh / "log.sqlite3"), Log(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LogWarning)
            expected = _reads(expected_log, fresh, capsys)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LogWarning)
            got = _reads(damaged_log, home, capsys)
        _same_but_the_owner(expected, got, owner)
        for each in caught:  # each warning names the damaged row (by its answer's id)
            if issubclass(each.category, LogWarning) and "damaged" in str(each.message):
                assert str(owner) in str(each.message) or column == "answer", each.message
    finally:
        expected_log.close()
        damaged_log.close()


def _same_but_the_owner(expected: dict[str, Any], got: dict[str, Any], owner: int) -> None:
    assert got["count"] == expected["count"]
    assert [r["id"] for r in got["rows"]] == [r["id"] for r in expected["rows"]]
    others = [r for r in expected["rows"] if r["id"] != owner]
    assert [r for r in got["rows"] if r["id"] != owner] == others
    assert (
        got["frame"]
        .filter(pl.col("id") != owner)
        .equals(expected["frame"].filter(pl.col("id") != owner))
    )
    owner_row = next(r for r in expected["rows"] if r["id"] == owner)
    # The answers of the other rows, each as it was (the owner's is kept, or left out).
    for answer in expected["answers"]:
        if answer.question != owner_row["question"] or answer.id != owner_row["answer_id"]:
            assert answer in got["answers"]
    assert len(got["answers"]) >= len(expected["answers"]) - 1
    aid, question = owner_row["answer_id"], owner_row["question"]
    for name in [f.__name__ for f in FRAMES] + [s.__name__ for s in DATASET]:
        want, have = expected[name], got[name]
        assert have.schema == want.schema
        keep = pl.col("answer_id").ne_missing(aid)
        if "question" in want.columns:
            keep &= pl.col("question").ne_missing(question)
        if "answer_id" in want.columns:
            assert_frame_equal(
                have.filter(keep & pl.col("answer_id").is_not_null()),
                want.filter(keep & pl.col("answer_id").is_not_null()),
            )
    assert len(got["list"]) == len(expected["list"])
    for row in others:
        assert got[f"show {row['id']}"] == expected[f"show {row['id']}"]
