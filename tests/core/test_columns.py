"""citekit.core.columns: one vocabulary for every table of sources. The frames, the CSV and
Parquet exports and the answer log's tables use its names with its types, and a name holds the
same value in each of them."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import citekit as ck
from citekit.core.columns import CITATION_COLUMNS, COLUMNS, REFERENCE_COLUMNS
from citekit.data.frames import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA
from citekit.data.io.rows import SOURCE_COLUMNS
from citekit.testing import ProviderServer

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

POLARS = {"str": pl.String(), "int": pl.Int32(), "float": pl.Float64(), "bool": pl.Boolean()}
SQLITE = {"str": "TEXT", "int": "INTEGER", "float": "REAL", "bool": "INTEGER"}
#: The log's own columns: they tie a source row to its row of ``answers``.
LOG_KEYS = ("answer", "position")


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    monkeypatch.delenv("CITEKIT_LOG", raising=False)


def log_table(table: str) -> pl.DataFrame:
    """A table of the answer log, rows in the order they were written, typed by SQLite."""
    with sqlite3.connect(ck.log.path) as conn:
        info = conn.execute(f"PRAGMA table_info({table})").fetchall()
        rows = conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    names = [row[1] for row in info]
    schema = {name: POLARS[COLUMNS[name].kind] if name in COLUMNS else pl.Int64() for name in names}
    return pl.DataFrame(rows, schema=schema, orient="row")


def log_columns(table: str) -> dict[str, str]:
    ck.log.connect()  # creates the tables
    with sqlite3.connect(ck.log.path) as conn:
        return {row[1]: row[2] for row in conn.execute(f"PRAGMA table_info({table})")}


def test_the_vocabulary_reads_the_models_fields() -> None:
    citation = {f.name for f in dataclasses.fields(ck.Citation)} | {"marker"}
    reference = {f.name for f in dataclasses.fields(ck.Reference)}
    assert set(CITATION_COLUMNS) <= citation
    assert set(REFERENCE_COLUMNS.values()) <= reference
    assert set(CITATION_COLUMNS) | set(REFERENCE_COLUMNS) <= set(COLUMNS)
    assert all(name == column.name for name, column in COLUMNS.items())


@pytest.mark.parametrize(
    ("place", "schema"),
    [("citations_frame", CITATIONS_SCHEMA), ("references_frame", REFERENCES_SCHEMA)],
)
def test_the_frames_name_and_type_every_column_by_the_vocabulary(
    place: str, schema: pl.Schema
) -> None:
    assert [n for n in schema.names() if n not in COLUMNS] == [], place
    assert {n: schema[n] for n in schema} == {n: POLARS[COLUMNS[n].kind] for n in schema}


def test_the_answers_frame_types_the_columns_it_shares() -> None:
    shared = [name for name in ANSWERS_SCHEMA.names() if name in COLUMNS]
    assert shared == [
        "provider",
        "answer_id",
        "model",
        "question",
        "web_search_calls",
        "page_reads",
        "data_ocean_gb_processed",
        "code_execution_minutes",
    ]
    assert all(ANSWERS_SCHEMA[n] == POLARS[COLUMNS[n].kind] for n in shared)


def test_the_exports_name_and_type_every_column_by_the_vocabulary(tmp_path: Path) -> None:
    assert all(kind == COLUMNS[name].kind for name, kind in SOURCE_COLUMNS)
    written = pl.read_parquet(ck.export_citations([], tmp_path / "empty.parquet"))
    assert dict(written.schema) == {name: POLARS[kind] for name, kind in SOURCE_COLUMNS}
    header = ck.export_citations([], tmp_path / "empty.csv").read_text("utf-8").split()
    assert header == [",".join(name for name, _ in SOURCE_COLUMNS)]


@pytest.mark.parametrize(
    ("table", "fields"),
    [
        ("citations", (*CITATION_COLUMNS, "cited_inline")),  # cited_inline: read when written
        ("knowledge_references", tuple(REFERENCE_COLUMNS)),
    ],
)
def test_the_log_names_and_types_every_column_by_the_vocabulary(
    table: str, fields: tuple[str, ...]
) -> None:
    columns = log_columns(table)
    sources = {name: kind for name, kind in columns.items() if name not in LOG_KEYS}
    assert sorted(sources) == sorted(fields)
    assert sources == {name: SQLITE[COLUMNS[name].kind] for name in sources}


def test_one_name_holds_one_value_everywhere(server: ProviderServer, tmp_path: Path) -> None:
    magisterium = ck.Magisterium(api_key="sk-test", base_url=server.base_url("magisterium"))
    gptbots = ck.GPTBots(api_key="sk-test", base_url=server.base_url("gptbots"))
    answers = [magisterium.ask(s.question) for s in server.samples("magisterium")[:4]]
    answers += [gptbots.ask(s.question) for s in server.samples("gptbots")[:3]]
    assert sum(len(a.citations) for a in answers) and sum(len(a.references or ()) for a in answers)
    exported = pl.read_parquet(
        ck.export_citations(answers, tmp_path / "sources.parquet", include_samples=True)
    )

    references = tuple(REFERENCE_COLUMNS)
    for kind, frame, table, fields in (
        ("citation", ck.citations_frame(answers), "citations", CITATION_COLUMNS),
        ("knowledge chunk", ck.references_frame(answers), "knowledge_references", references),
    ):
        rows = exported.filter(pl.col("kind") == kind)
        logged = log_table(table)
        assert set(fields) <= set(frame.columns) & set(rows.columns) & set(logged.columns)
        shared = [n for n in frame.columns if n in rows.columns]
        assert_frame_equal(rows.select(shared), frame.select(shared))
        assert_frame_equal(logged.select(fields), frame.select(fields))
