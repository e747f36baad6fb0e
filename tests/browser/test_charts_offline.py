"""Charts with no network: live with tooltips where scripts run, a static image where they do not.

A trusted JupyterLab session, the same notebook reopened untrusted, its nbconvert HTML export and
a plain page in light and dark. Every request that would leave 127.0.0.1 is refused and recorded:
the charts must not need one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import _notebooks as nbs
from tests.browser.conftest import Lab, PageEvents, refuse_outside
from tests.browser.test_notebook_footnotes import NOTEBOOK, open_notebook, run_all_cells

pytestmark = pytest.mark.browser

_CHART_CELLS = [
    """\
import polars as pl
import citekit as ck
from citekit.data.frames import CITATIONS_SCHEMA

rows = [
    {"provider": "magisterium", "answer_id": f"a{i % 4}", "document_author": author,
     "document_title": title, "year": year}
    for i, (author, title, year) in enumerate(
        [("Leo XIII", "Rerum novarum", 1891)] * 5
        + [("Pius XI", "Quadragesimo anno", 1931)] * 3
        + [("John Paul II", "Centesimus annus", 1991)] * 2
    )
]
frame = pl.DataFrame(
    [{name: row.get(name) for name in CITATIONS_SCHEMA.names()} for row in rows],
    schema=CITATIONS_SCHEMA,
)
""",
    "ck.charts.authors(frame)",
    "ck.charts.years(frame)",
]


def _hover_first_bar(pg: Any, scope: str) -> str:
    """Hover the first bar of the first live chart in ``scope``; the tooltip's text."""
    bar = pg.locator(f"{scope} .citekit-chart-live .mark-rect path").first
    bar.hover()
    tip = pg.locator(".citekit-chart-tooltip")
    tip.wait_for(state="visible", timeout=15_000)
    return str(tip.inner_text())


def test_trusted_jupyterlab_chart_is_live_with_a_tooltip_and_no_network(
    jupyterlab: Lab, page: tuple[Any, PageEvents], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    left = refuse_outside(pg)
    nbs.write(nbs._notebook(_CHART_CELLS), jupyterlab.root / "charts.ipynb")
    open_notebook(pg, jupyterlab, "charts.ipynb")
    run_all_cells(pg)
    live = pg.locator(f"{NOTEBOOK} .citekit-chart[data-citekit-live]")
    expect(live).to_have_count(2, timeout=120_000)
    # The live view replaced the static image on screen.
    expect(pg.locator(f"{NOTEBOOK} .citekit-chart-static").first).to_be_hidden()
    text = _hover_first_bar(pg, NOTEBOOK)
    assert "Leo XIII" in text and "Citations" in text and "5" in text
    # Counts tick on whole numbers in the live view too.
    ticks = pg.locator(f"{NOTEBOOK} .citekit-chart-live .role-axis-label text").all_text_contents()
    assert {"0", "1", "5"} <= set(ticks) and not [t for t in ticks if t.endswith(".5")], ticks
    pg.screenshot(path=str(artifacts / "jupyterlab_live_chart_tooltip.png"))
    assert left == [], f"charts asked the network for {left}"
    assert not [e for e in events.errors if "citekit" in e.lower()]


@pytest.fixture(scope="module")
def executed_charts(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return nbs.execute(nbs._notebook(_CHART_CELLS), tmp_path_factory.mktemp("charts"))


def test_untrusted_notebook_shows_the_static_chart(
    jupyterlab: Lab, page: tuple[Any, PageEvents], executed_charts: Any, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    left = refuse_outside(pg)
    outputs = [o for c in executed_charts.cells for o in c.get("outputs", [])]
    bundles = [o["data"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(bundles) == 2 and all("image/png" in b for b in bundles)
    nbs.write(executed_charts, jupyterlab.root / "charts_executed.ipynb")
    open_notebook(pg, jupyterlab, "charts_executed.ipynb")
    static = pg.locator(f"{NOTEBOOK} .jp-OutputArea-output img.citekit-chart-static")
    expect(static).to_have_count(2, timeout=120_000)
    for i in range(2):
        expect(static.nth(i)).to_be_visible()
        assert static.nth(i).evaluate("img => img.complete && img.naturalWidth > 300")
    # The sanitizer removed the script: nothing was drawn live.
    expect(pg.locator(f"{NOTEBOOK} .citekit-chart-live")).to_have_count(0)
    pg.screenshot(path=str(artifacts / "jupyterlab_untrusted_static_chart.png"))
    assert left == []


def test_nbconvert_export_draws_the_chart_offline(
    page: tuple[Any, PageEvents], executed_charts: Any, tmp_path: Path, artifacts: Path
) -> None:
    from nbconvert import HTMLExporter
    from playwright.sync_api import expect

    pg, _ = page
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed_charts)
    export = tmp_path / "charts.html"
    export.write_text(body, encoding="utf-8")
    left = refuse_outside(pg)
    pg.goto(export.as_uri(), wait_until="domcontentloaded")
    # The export keeps the scripts, and the first chart carries the runtime: both draw live.
    expect(pg.locator(".citekit-chart[data-citekit-live]")).to_have_count(2, timeout=60_000)
    assert "Leo XIII" in _hover_first_bar(pg, "body")
    pg.screenshot(path=str(artifacts / "nbconvert_live_chart.png"), full_page=True)
    # The export's own CDN links (MathJax, require.js) are refused; none is the chart's.
    assert not [u for u in left if "vega" in u or "jsdelivr" in u]
