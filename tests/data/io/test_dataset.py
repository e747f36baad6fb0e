"""The Parquet dataset: written by ck.to_parquet (of answers, files or the log) / citekit log export
--parquet, read back by ck.scan_* (equal to the eager frames), by the charts lazily, and by
DuckDB; ten million citations charted in bounded memory."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import citekit as ck
from citekit import Answer, Citation, Reference, References
from citekit.cli.main import main
from citekit.data.frames import load_answers
from citekit.data.io.dataset import UNDATED, month_of
from citekit.testing import default_data_dir
from tests.budget import examples
from tests.data.io.conftest import rebuilt_answers

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

ROOT = Path(__file__).resolve().parents[3]
FRAMES = {
    "answers": ck.answers_frame,
    "citations": ck.citations_frame,
    "references": ck.references_frame,
    "sources": ck.sources_frame,
}
SCANS = {
    "answers": ck.scan_answers,
    "citations": ck.scan_citations,
    "references": ck.scan_references,
    "sources": ck.scan_sources,
}


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c, t in frame.schema.items() if not isinstance(t, pl.List)]
    return frame.sort(keys, nulls_last=True)


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ds") / "samples"
    ck.to_parquet(default_data_dir(), folder, progress=False)
    return folder


@pytest.mark.parametrize("table", list(FRAMES))
def test_scans_equal_the_eager_frames_on_every_sample(samples: Path, table: str) -> None:
    eager = FRAMES[table](default_data_dir())
    lazy = SCANS[table](samples)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == pl.Schema({**eager.schema, "month": pl.String()})
    got = lazy.collect()
    assert_frame_equal(_sorted(got.drop("month")), _sorted(eager))


def test_months_come_from_created_and_provider_from_the_folders(samples: Path) -> None:
    answers = [a for a in load_answers(default_data_dir()) if isinstance(a, Answer)]
    expected = sorted((a.provider, a.id, month_of(a)) for a in answers)
    got = ck.scan_answers(samples).select("provider", "answer_id", "month").collect()
    assert sorted(got.rows()) == expected
    # Hive folders; the files hold no provider column (the folder name is the value).
    files = sorted(samples.glob("citations/provider=*/month=*/part-*.parquet"))
    assert {f.parent.parent.name for f in files} == {
        "provider=magisterium",
        "provider=gptbots",
        "provider=maritaca",  # web sources
    }
    assert "provider" not in pl.read_parquet_schema(files[0])
    assert all(len(p.name) == len("month=2026-11") for p in files[0].parent.parent.iterdir())


def _answer(question: str, *, created: datetime | None, provider: str = "magisterium") -> Answer:
    cits = (Citation(cited_text="P", document_index=0, document_title="Rerum novarum",
                     document_author="Leo XIII", document_year="1891"),)  # fmt: skip
    return Answer(text="Yes [^1].", provider=provider, id=f"id-{question}", question=question,
                  created=created, citations=cits)  # fmt: skip


def test_an_answer_without_a_time_and_bare_chunks_are_undated(tmp_path: Path) -> None:
    refs = References(items=(Reference(content="chunk", rank=1, data_name="Manual", score=0.7),))
    dated = _answer("q1", created=datetime(2026, 11, 30, 23, 30, tzinfo=UTC))
    source = [dated, _answer("q2", created=None), refs]
    ck.to_parquet(source, tmp_path / "d", progress=False)
    months = dict(ck.scan_answers(tmp_path / "d").select("question", "month").collect().rows())
    assert months == {"q1": "2026-11", "q2": UNDATED}
    refs_read = ck.scan_references(tmp_path / "d").collect()
    assert refs_read.select("provider", "month").row(0) == ("gptbots", UNDATED)
    assert (tmp_path / "d/citations/provider=magisterium/month=undated").is_dir()


def test_writing_again_is_refused_unless_overwrite(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    first = ck.to_parquet([_answer("q1", created=None)], folder, progress=False)
    assert first.rows == {"answers": 1, "citations": 1, "references": 0, "sources": 1}
    with pytest.raises(FileExistsError, match="pass overwrite=True to replace it"):
        ck.to_parquet([_answer("q2", created=None)], folder, progress=False)
    two = [_answer("q2", created=None), _answer("q3", created=None)]
    again = ck.to_parquet(two, folder, overwrite=True, progress=False)
    assert again.rows["answers"] == 2
    got = ck.scan_answers(folder).collect()["question"].sort().to_list()
    assert got == ["q2", "q3"]  # replaced, not appended
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]  # no staging folder left
    # overwrite replaces the dataset and never a file beside it
    (folder / "notes.txt").write_text("mine")
    ck.to_parquet(two[:1], folder, overwrite=True, progress=False)
    assert (folder / "notes.txt").read_text() == "mine"
    assert ck.scan_answers(folder).collect()["question"].to_list() == ["q2"]
    # a folder without citekit's manifest is no dataset, whatever its folders are called
    (folder / "citekit-dataset.json").unlink()
    with pytest.raises(FileExistsError, match=r"no citekit-dataset\.json.*only what it wrote"):
        ck.to_parquet(two, folder, overwrite=True, progress=False)


def test_a_failure_midway_keeps_the_previous_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "d"
    ck.to_parquet([_answer("old", created=None)], folder, progress=False)
    from citekit.data.io import dataset

    def full_disk(*args: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dataset, "_write_part", full_disk)
    with pytest.raises(OSError, match="No space"):
        ck.to_parquet([_answer("new", created=None)], folder, overwrite=True, progress=False)
    assert ck.scan_answers(folder).collect()["question"].to_list() == ["old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


@pytest.mark.parametrize("failing", [1, 2, 4, 7])
def test_a_write_failing_after_others_leaves_only_the_previous_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    """Parts are written one at a time beside the reads: whichever fails (the first, one
    while the next frame is read, one of the sources), the parts written before it and the
    one in flight go, and the old dataset is all the folder holds."""
    folder = tmp_path / "d"
    ck.to_parquet([_answer("old", created=None)], folder, progress=False)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    from citekit.data.io import dataset

    write_part = dataset._write_part
    calls = []

    def full_disk_at_last(*args: Any) -> Any:
        calls.append(args[2])
        if len(calls) == failing:
            raise OSError(28, "No space left on device")
        return write_part(*args)

    monkeypatch.setattr(dataset, "_write_part", full_disk_at_last)
    months = [datetime(2026, m, 1, tzinfo=UTC) for m in (1, 2, 3)]
    new = [_answer(f"new {i}", created=when) for i, when in enumerate(months)]
    with pytest.raises(OSError, match="No space"):
        ck.to_parquet(new, folder, overwrite=True, progress=False)
    assert len(calls) == failing  # nothing written after the failure was known
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    assert ck.scan_answers(folder).collect()["question"].to_list() == ["old"]


def test_a_read_failing_while_a_part_is_written_leaves_only_the_previous_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "d"
    ck.to_parquet([_answer("old", created=None)], folder, progress=False)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    from citekit.data.io import dataset

    tables = dataset._tables
    groups = []

    def broken_second_month(source: Any) -> Any:
        groups.append(source)
        if len(groups) == 2:  # the first month's citations are being written meanwhile
            raise sqlite3.DatabaseError("database disk image is malformed")
        return tables(source)

    monkeypatch.setattr(dataset, "_tables", broken_second_month)
    months = [datetime(2026, m, 1, tzinfo=UTC) for m in (1, 2)]
    new = [_answer(f"new {i}", created=when) for i, when in enumerate(months)]
    with pytest.raises(sqlite3.DatabaseError):
        ck.to_parquet(new, folder, overwrite=True, progress=False)
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


def test_an_empty_table_scans_typed_and_a_missing_one_says_what_to_do(tmp_path: Path) -> None:
    ck.to_parquet([_answer("q", created=None)], tmp_path / "d", progress=False)
    refs = ck.scan_references(tmp_path / "d").collect()
    assert refs.height == 0 and refs.schema["score"] == pl.Float64
    with pytest.raises(FileNotFoundError, match=r"ck.to_parquet\(source, folder\)"):
        ck.scan_citations(tmp_path / "nothing")


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(provider=st.text(min_size=1, max_size=20))
def test_any_provider_name_round_trips_through_its_folder(provider: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        answer = _answer("q", created=None, provider=provider)
        ck.to_parquet([answer], Path(tmp) / "d", progress=False)
        got = ck.scan_citations(Path(tmp) / "d").select("provider").collect()
        assert got["provider"].to_list() == [ck.citations_frame([answer])["provider"].item()]


# -- the answer log and the command -----------------------------------------------------------


@pytest.fixture
def logged(server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Answer]:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    mg = ck.Magisterium(api_key="sk-test-0123456789", base_url=server.base_url("magisterium"))
    gb = ck.GPTBots(api_key="sk-test-0123456789", base_url=server.base_url("gptbots"))
    return [
        mg.ask("What is the principle of subsidiarity?"),
        mg.ask("How does the Church define the common good?"),
        gb.ask("Why was the Great Wall built?"),
    ]


def test_log_to_parquet_with_filters(logged: list[Answer], tmp_path: Path) -> None:
    written = ck.to_parquet(ck.log, tmp_path / "all", progress=False, include_samples=True)
    assert written.rows["answers"] == 3
    assert_frame_equal(
        _sorted(ck.scan_citations(tmp_path / "all").drop("month").collect()),
        _sorted(ck.citations_frame(ck.log.answers())),
    )
    only = ck.to_parquet(
        ck.log.where(provider="magisterium"), tmp_path / "mg", progress=False, include_samples=True
    )
    assert only.rows["answers"] == 2
    assert not (tmp_path / "mg/answers/provider=gptbots").exists()


def test_log_export_parquet(
    logged: list[Answer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "corpus"
    assert main(["log", "export", str(folder), "--parquet", "--include-samples"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Wrote 3 answers, 15 citations, 8 references, 23 sources in ")
    assert "KB) to " in printed and str(folder) in printed
    assert main(["log", "export", str(folder), "--parquet", "--include-samples"]) == 2
    assert "pass --overwrite to replace it" in capsys.readouterr().err
    assert main(["log", "export", str(folder), "--parquet", "--overwrite",
                 "--provider", "gptbots", "--include-samples"]) == 0  # fmt: skip
    assert ck.scan_answers(folder).collect()["provider"].to_list() == ["gptbots"]


def test_log_export_parquet_with_no_match_writes_nothing(
    logged: list[Answer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "corpus"
    assert main(
        [
            "log",
            "export",
            str(folder),
            "--parquet",
            "--contains",
            "no such question",
            "--include-samples",
        ]
    )  # fmt: skip == 1
    assert "match" in capsys.readouterr().out
    assert not folder.exists()  # so a later export is not refused as over an existing dataset
    assert main(["log", "export", str(folder), "--parquet", "--include-samples"]) == 0


# -- charts from a LazyFrame -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["authors", "works", "documents", "years", "citations_per_answer"])
@pytest.mark.parametrize("table", ["citations", "sources"])
def test_charts_from_a_scan_equal_charts_from_the_frame(
    samples: Path, name: str, table: str
) -> None:
    chart = getattr(ck.charts, name)
    eager = FRAMES[table](default_data_dir())
    from_scan, from_frame = chart(SCANS[table](samples)), chart(eager)
    assert_frame_equal(_unordered(from_scan.data), _unordered(from_frame.data))
    assert from_scan.title.subtitle == from_frame.title.subtitle


def _unordered(table: pl.DataFrame) -> pl.DataFrame:
    """Lists in a tooltip ("titles seen", "providers") follow the order rows were read in,
    which a scan does not keep (and are cut to a length after it): left out."""
    return table.drop([c for c in ("titles", "languages", "providers") if c in table.columns])


def test_scores_and_answers_charts_from_scans(samples: Path) -> None:
    refs = ck.references_frame(default_data_dir())
    lazy, eager = ck.charts.scores(ck.scan_references(samples)), ck.charts.scores(refs)
    assert lazy.title == eager.title
    assert_frame_equal(lazy.layer[0].data, eager.layer[0].data)  # means up to rounding
    answers = ck.answers_frame(default_data_dir())
    lazy_cpa = ck.charts.citations_per_answer(ck.scan_answers(samples))
    assert_frame_equal(lazy_cpa.data, ck.charts.citations_per_answer(answers).data)


def test_a_lazy_frame_lacking_columns_is_named(samples: Path) -> None:
    with pytest.raises(ValueError, match="lacks document_author"):
        ck.charts.authors(ck.scan_citations(samples).drop("document_author", "year"))


# -- DuckDB reads the same dataset -------------------------------------------------------------


def test_duckdb_counts_per_provider_as_polars(samples: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    pattern = str(samples / "citations" / "**" / "*.parquet")
    counted = duckdb.sql(
        "SELECT provider, month, count(*) AS n FROM "
        f"read_parquet('{pattern}', hive_partitioning = true) "
        "GROUP BY provider, month ORDER BY provider, month"
    ).fetchall()
    by_polars = (
        ck.scan_citations(samples)
        .group_by("provider", "month")
        .agg(pl.len().cast(pl.Int64))
        .sort("provider", "month")
        .collect()
        .rows()
    )
    assert counted == by_polars
    assert sum(n for _, _, n in counted) == ck.citations_frame(default_data_dir()).height


# -- ten million citations ---------------------------------------------------------------------


@pytest.mark.slow
def test_ten_million_citations_chart_in_bounded_memory(tmp_path: Path) -> None:
    """Slow on purpose (about a minute and a half): 10M citations are generated into a
    Parquet dataset in chunks, then four charts are drawn from ``scan_citations`` in a fresh
    interpreter whose peak resident memory (VmHWM) must stay under 1.5 GB."""
    folder = tmp_path / "big"
    generate = [
        sys.executable,
        str(ROOT / "tests" / "data" / "io" / "synthetic_dataset.py"),
        str(folder),
    ]
    subprocess.run([*generate, "10000000"], check=True, cwd=ROOT, timeout=600)
    script = textwrap.dedent(
        f"""
        import citekit as ck
        cits = ck.scan_citations({str(folder)!r})
        heights = [
            ck.charts.authors(cits).data.height,
            ck.charts.works(cits).data.height,
            ck.charts.years(cits).data.height,
            ck.charts.citations_per_answer(cits).data.rows(),
        ]
        peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
        print(heights, int(peak[0].split()[1]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT, timeout=900,
                          capture_output=True, text=True)  # fmt: skip
    *_, last = done.stdout.strip().splitlines()
    heights_text, peak_kb = last.rsplit(" ", 1)
    assert heights_text.startswith("[15, 15, ")
    assert "('gptbots', 10, 333333)" in heights_text  # one bar per provider: 1M answers
    assert int(peak_kb) < 1.5 * 1024 * 1024, f"peak {int(peak_kb) / 1024:.0f} MB"


# -- paths are paths -------------------------------------------------------------------------

# Folder names with what globs ("[12]", "*", "?", "{a,b}") and Hive ("key=value") read specially.
_PATHY = st.text(st.sampled_from("ab1[]*?{},=-_ %"), min_size=1, max_size=8).filter(
    lambda n: n.strip() == n
)
_HIVE = st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["month", "provider", "x"]),
                  st.sampled_from(["2026-01", "all", "undated", ""]))  # fmt: skip


def _glob_twin(name: str) -> str:
    """A folder name the glob ``name`` matches (``data[12]`` -> ``data1``)."""
    import re

    return re.sub(r"\[([^\]])[^\]]*\]", r"\1", name).replace("*", "").replace("?", "a") or "b"


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(above=st.lists(_PATHY | _HIVE, max_size=2), name=_PATHY | _HIVE, manifest=st.booleans())
def test_scans_read_the_datasets_own_files_wherever_it_lies(
    above: list[str], name: str, manifest: bool
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as base:
        parent = Path(base, *above)
        for decoy in {_glob_twin(name), "ab", "1"} - {name}:
            ck.to_parquet([_answer("decoy", created=None)] * 2, parent / decoy, progress=False)
        created = datetime(2026, 3, 4, tzinfo=UTC)
        folder = parent / name
        ck.to_parquet([_answer("mine", created=created)], folder, progress=False)
        if not manifest:  # as a dataset written before manifests: the files listed
            (folder / "citekit-dataset.json").unlink()
        got = ck.scan_answers(folder).select("question", "provider", "month").collect()
        assert got.rows() == [("mine", "magisterium", "2026-03")]
        assert ck.scan_citations(folder).collect().height == 1
        assert ck.scan_sources(folder).collect()["month"].to_list() == ["2026-03"]
        assert ck.scan_references(folder).collect().height == 0


def test_the_reported_paths_scan_right(tmp_path: Path) -> None:
    for twin in ["data1", "data2"]:  # what the glob data[12] would match
        ck.to_parquet([_answer(twin, created=None)], tmp_path / twin, progress=False)
    for where in ["data[12]", "runs/month=2026-01/corpus", "by/provider=all/corpus"]:
        ck.to_parquet([_answer(where, created=None)], tmp_path / where, progress=False)
        assert ck.scan_answers(tmp_path / where).collect()["question"].to_list() == [where]
        filtered = ck.scan_citations(tmp_path / where).filter(pl.col("month") == UNDATED)
        assert filtered.collect().height == 1


def test_a_filter_on_the_partitions_reads_only_their_files(tmp_path: Path) -> None:
    dated = [_answer(f"q{m}", created=datetime(2026, m, 2, tzinfo=UTC)) for m in (1, 2, 3)]
    ck.to_parquet(dated, tmp_path / "runs/month=2025-12/d", progress=False)
    lazy = ck.scan_answers(tmp_path / "runs/month=2025-12/d").filter(pl.col("month") >= "2026-02")
    plan = lazy.explain()
    assert "month=2026-01" not in plan and "month=2026-03" in plan  # January's file unread
    assert sorted(lazy.collect()["question"].to_list()) == ["q2", "q3"]


# -- the log's dataset from SQL equals the dataset of its answers -------------------------------


def _dataset(folder: Path) -> dict[tuple[str, str, str], pl.DataFrame]:
    """Each file of a dataset by its table and partition, as written, and the manifest's rows."""
    manifest = json.loads((folder / "citekit-dataset.json").read_text(encoding="utf-8"))
    files = {}
    for part in manifest["parts"]:
        key = (part["table"], part["provider"], part["month"])
        assert key not in files, "one file per table and partition"
        frame = pl.read_parquet(folder / part["path"])
        assert frame.height == part["rows"]
        files[key] = frame
    return files


@pytest.mark.parametrize(
    "filters",
    [{}, {"provider": "maritaca"}, {"limit": 7}, {"question_contains": "the"}],
    ids=["whole", "provider", "limit", "question"],
)
def test_the_log_dataset_from_sql_equals_the_dataset_of_its_answers(
    every_sample_logged: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    filters: dict[str, Any],
) -> None:
    """Every recorded sample logged (blocking and streamed): the same files per table and
    partition, the same rows, columns and types, the same manifest counts, by both routes;
    no answer of any provider is rebuilt (their sources are SQL columns, the texts' markers
    and the stored bodies' web sources and data ids)."""
    import citekit.data.io.log_tables as log_tables

    source = ck.log.where(**filters) if filters else ck.log
    answers = ck.log.answers(ck.log.where(**filters)) if filters else ck.log.answers()
    assert answers
    monkeypatch.setattr(log_tables, "ROWS_BATCH", 3)  # the partitions' rows read in parts
    with rebuilt_answers() as rebuilt:
        from_sql = ck.to_parquet(source, tmp_path / "sql", progress=False, include_samples=True)
    assert sum(rebuilt) == 0
    from_answers = ck.to_parquet(answers, tmp_path / "answers", progress=False)
    assert from_sql.rows == from_answers.rows and from_sql.files == from_answers.files
    sql, kept = _dataset(tmp_path / "sql"), _dataset(tmp_path / "answers")
    assert sql.keys() == kept.keys()
    for key, frame in kept.items():
        assert_frame_equal(sql[key], frame)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    created=st.lists(
        st.datetimes(
            min_value=datetime(1900, 1, 1),
            max_value=datetime(2200, 12, 31, 23, 59, 59, 999999),
            timezones=st.just(UTC),
        )
        | st.none(),
        min_size=1,
        max_size=8,
    )
)
def test_the_log_partitions_are_the_months_of_the_answers(created: list[datetime | None]) -> None:
    """The month SQL reads off ``created_us`` is ``month_of`` the answer, at every instant
    (month ends to the microsecond, before 1970, undated)."""
    import tempfile

    from citekit.store import Log
    from citekit.store.query import partitions_sql
    from citekit.store.selection import LogSelection

    with tempfile.TemporaryDirectory() as folder:
        log = Log(Path(folder) / "log.sqlite")
        try:
            answers = [
                Answer(provider="magisterium", text=f"answer {i}", created=when)
                for i, when in enumerate(created)
            ]
            for i, answer in enumerate(answers):
                log.record(answer, request={"q": i})
            log.flush()
            sql, params = partitions_sql(LogSelection(log))
            found = {(p, m): n for p, m, _, _, n in log.fetch(sql, params)}
        finally:
            log.close()
    expected: dict[tuple[str, str], int] = {}
    for answer in answers:
        key = ("magisterium", month_of(answer))
        expected[key] = expected.get(key, 0) + 1
    assert found == expected
