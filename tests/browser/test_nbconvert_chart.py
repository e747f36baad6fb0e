"""A chart in an nbconvert HTML export (the footnote cases are in test_notebook_footnotes.py):
the notebook that asks the loopback server, run by nbclient, exported with the lab template,
opened in Chromium with nothing allowed off this machine."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from citekit.testing import ProviderServer
from tests.browser import _fronts
from tests.browser import _notebooks as nbs
from tests.browser.conftest import PageEvents

pytestmark = pytest.mark.browser


def test_chart_shows_in_an_nbconvert_export(page: tuple[Any, PageEvents], tmp_path: Path) -> None:
    from nbconvert import HTMLExporter
    from playwright.sync_api import expect

    pg, _ = page
    with ProviderServer() as srv:
        nb = nbs.execute(_fronts.asking_notebook(srv.base_url("magisterium")), tmp_path)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    export = tmp_path / "export.html"
    export.write_text(body, encoding="utf-8")
    outside: list[str] = []

    def refuse(route: Any) -> None:
        outside.append(route.request.url)
        route.abort()

    # The export links MathJax and require.js from a CDN: refused here, the chart must not care.
    pg.route(re.compile(r"^https?://"), refuse)
    pg.goto(export.as_uri(), wait_until="domcontentloaded")
    cells = pg.locator(".jp-Cell")
    expect(cells.nth(_fronts.ANSWER).locator(".citekit-answer .citekit-sources")).to_be_visible()
    # The export keeps the output's script: the chart is drawn live, over its static image.
    live = ".citekit-chart[data-citekit-live] .citekit-chart-live"
    chart = cells.nth(_fronts.CHART).locator(".jp-OutputArea-output").locator(live).first
    expect(chart).to_be_visible()
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 80
    assert "Most cited authors" in chart.evaluate("e => e.textContent")
    assert all("cdn" in url or "unpkg" in url for url in outside), outside
