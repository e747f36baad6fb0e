"""Charts whose labels are hostile, and a chart runtime that arrives broken, in a real browser.

A page made of chart outputs as a notebook shows them (the first carries the runtime): a label
full of markup stays text in the tooltip and runs nothing; charts that leave the page let go of
their Vega views; a runtime that does not unpack leaves every chart as its static image.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from citekit import charts
from citekit.render.chart import chart_bundle
from tests.browser.conftest import PageEvents, refuse_outside
from tests.browser.test_charts_offline import _hover_first_bar
from tests.render.test_chart import frame

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=alert(1)></script><b>bold</b>\"'><svg onload=alert(2)>"


def _page(tmp_path: Path, outputs: list[str]) -> str:
    page = tmp_path / "charts.html"
    body = "\n".join(f"<div class='output'>{html}</div>" for html in outputs)
    page.write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")
    return page.as_uri()


def _show(pg: Any, html: str) -> None:
    """Add an output to the page as a notebook does: its HTML, then its script run."""
    pg.evaluate(
        "html => { const d = document.createElement('div'); d.innerHTML = html;"
        " document.body.appendChild(d); const s = document.createElement('script');"
        " s.textContent = d.querySelector('script').textContent; document.body.appendChild(s); }",
        html,
    )


def test_a_hostile_label_is_text_in_the_tooltip_and_runs_nothing(
    page: tuple[Any, PageEvents], tmp_path: Path, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    spec = charts.authors(frame([PAYLOAD, PAYLOAD, "Pius XI"])).to_dict()
    first, _ = chart_bundle(spec, runtime=True)
    second, _ = chart_bundle(spec, runtime=False)
    left = refuse_outside(pg)
    pg.goto(_page(tmp_path, [first["text/html"], second["text/html"]]))
    expect(pg.locator(".citekit-chart[data-citekit-live]")).to_have_count(2, timeout=60_000)
    text = _hover_first_bar(pg, "body")
    assert PAYLOAD in text  # shown whole, as text
    tip = pg.locator(".citekit-chart-tooltip")
    assert tip.locator("img, b, svg, script").count() == 0
    pg.screenshot(path=str(artifacts / "hostile_label_tooltip.png"))
    assert events.dialogs == [] and events.errors == [] and left == []

    # Output cleared (a cell run again) under the pointer: its view is let go at the next
    # chart's mount, and its tooltip does not stay on screen.
    assert pg.evaluate("window.citekitCharts.count()") == 2
    expect(tip).to_be_visible()
    pg.evaluate("document.querySelector('.output').innerHTML = '<div style=height:800px></div>'")
    again, _ = chart_bundle(spec, runtime=False)
    _show(pg, again["text/html"])
    expect(pg.locator(".citekit-chart[data-citekit-live]")).to_have_count(2, timeout=60_000)
    assert pg.evaluate("window.citekitCharts.count()") == 2
    expect(tip).to_be_hidden()


_COUNT_DRAWS = """() => {
  window.draws = 0;
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes)
      if (n.classList && n.classList.contains("citekit-chart-live")) window.draws += 1;
  }).observe(document.body, { childList: true, subtree: true });
}"""


def test_a_theme_change_redraws_each_chart_once_and_nothing_else_redraws(
    page: tuple[Any, PageEvents], tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    spec = charts.authors(frame(["Leo XIII", "Pius XI"])).to_dict()
    outputs = [chart_bundle(spec, runtime=i == 0)[0]["text/html"] for i in range(3)]
    pg.goto(_page(tmp_path, outputs))
    expect(pg.locator(".citekit-chart[data-citekit-live]")).to_have_count(3, timeout=60_000)
    pg.evaluate(_COUNT_DRAWS)
    # A theme's attributes change but not its colours: nothing is drawn again.
    pg.evaluate("document.body.className = 'jp-mod-something'")
    pg.evaluate("document.documentElement.setAttribute('data-jp-theme-name', 'Same')")
    pg.wait_for_timeout(1_500)
    assert pg.evaluate("window.draws") == 0
    # Dark colours: each chart once, in the new colours, and then quiet (no redraw loop).
    pg.evaluate("document.body.style.cssText = 'background:#111;color:#eee'")
    pg.wait_for_function("window.draws >= 3", timeout=30_000)
    pg.wait_for_timeout(2_000)
    assert pg.evaluate("window.draws") == 3
    text = pg.locator(".citekit-chart-live svg text").first
    fill = text.evaluate("t => getComputedStyle(t).fill")
    assert fill == "rgb(238, 238, 238)"
    assert events.errors == []


def test_a_broken_runtime_leaves_every_chart_a_static_image(
    page: tuple[Any, PageEvents], tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    spec = charts.authors(frame(["Leo XIII", "Pius XI"])).to_dict()
    first, _ = chart_bundle(spec, runtime=True)
    second, _ = chart_bundle(spec, runtime=False)
    # What a truncated cache file sent before the cache was checked: half the runtime.
    data = first["text/html"].split('var data = "', 1)[1].split('"', 1)[0]
    half = base64.b64encode(base64.b64decode(data)[: len(data) // 3]).decode()
    broken = first["text/html"].replace(data, half)
    pg.goto(_page(tmp_path, [broken, second["text/html"]]))
    still = pg.locator("img.citekit-chart-static")
    expect(still).to_have_count(2)
    pg.wait_for_timeout(2_000)
    for i in range(2):
        expect(still.nth(i)).to_be_visible()
        assert still.nth(i).evaluate("img => img.complete && img.naturalWidth > 300")
    expect(pg.locator(".citekit-chart-live")).to_have_count(0)
    assert events.dialogs == []
    assert [m for m in events.console if "chart runtime did not load" in m]
    # A later output with a whole runtime (after a kernel restart) draws them all.
    _show(pg, chart_bundle(spec, runtime=True)[0]["text/html"])
    expect(pg.locator(".citekit-chart[data-citekit-live]")).to_have_count(3, timeout=60_000)
