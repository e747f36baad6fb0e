"""citekit.data.charts.tables: each chart's rows as a plain polars table, and the one renderer
switch (charts.style.drawn)."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
from polars.testing import assert_frame_equal

from citekit import charts, citations_frame, cocitation_frame, references_frame, sources_frame
from citekit.data.charts import tables
from citekit.testing import default_data_dir


def test_each_chart_draws_its_table() -> None:
    src = sources_frame(default_data_dir() / "magisterium")
    assert_frame_equal(charts.authors(src, top=5).data, tables.top_authors(src, top=5).table)
    assert_frame_equal(charts.works(src, top=5).data, tables.top_works(src, top=5).table)
    assert charts.works(src).title.subtitle == tables.top_works(src).subtitle
    cits = citations_frame(default_data_dir() / "magisterium")
    years = tables.cited_years(cits)
    assert_frame_equal(charts.years(cits).data, years.table)
    assert years.period == "century"
    assert_frame_equal(charts.citations_per_answer(cits).data, tables.citation_counts(cits).table)
    refs = references_frame(default_data_dir() / "gptbots")
    strip = charts.scores(refs).layer[0].data
    assert isinstance(strip, pl.DataFrame)
    assert_frame_equal(strip, tables.score_bins(refs).table)
    cells = tables.cocitation_cells(cocitation_frame(src), top=4)
    assert cells is not None and len(cells.order) == 4
    assert_frame_equal(charts.cocitation(src, top=4).layer[0].data, cells.cells)


def test_no_pair_gives_no_cells() -> None:
    assert tables.cocitation_cells([]) is None


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_tables_import_no_altair() -> None:
    _run(
        "import sys\n"
        "import citekit as ck\n"
        "from citekit.data.charts import tables\n"
        "from citekit.testing import default_data_dir\n"
        "src = ck.sources_frame(default_data_dir() / 'magisterium')\n"
        "assert tables.top_authors(src).table.height\n"
        "assert tables.cocitation_cells(src) is not None\n"
        "assert 'altair' not in sys.modules, 'the aggregation imported altair'\n"
    )


def test_a_chart_turns_the_offline_renderer_on_and_a_title_alone_does_not() -> None:
    _run(
        "import altair as alt\n"
        "import citekit as ck\n"
        "from citekit.data.charts.style import chart_title\n"
        "chart_title('A title', 'its subtitle')\n"
        "assert alt.renderers.active == 'default', alt.renderers.active\n"
        "ck.charts.authors([])\n"
        "assert alt.renderers.active == 'citekit', alt.renderers.active\n"
    )
