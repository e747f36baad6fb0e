"""JupyterLab's dark theme, switched from its Settings menu as a user does: answers and charts
follow it, and every text citekit draws reads at 4.5:1 or more, before and after the switch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser import _notebooks as nbs
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import Lab, PageEvents
from tests.browser.test_charts_offline import _CHART_CELLS
from tests.browser.test_notebook_footnotes import NOTEBOOK, open_notebook, run_all_cells

pytestmark = pytest.mark.browser


def _switch_theme(pg: Any, name: str) -> None:
    pg.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    pg.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
    pg.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{name}$")).click()


def _low(pg: Any) -> tuple[list[Any], list[Any]]:
    answers = pg.locator(f"{NOTEBOOK} .citekit-answer")
    texts: list[Any] = []
    for i in range(answers.count()):
        texts += pg.evaluate(CONTRAST_JS, answers.nth(i).element_handle())
    live = pg.locator(f"{NOTEBOOK} .citekit-chart-live")
    charts: list[Any] = []
    for i in range(live.count()):
        charts += pg.evaluate(CONTRAST_JS, live.nth(i).element_handle())
    assert len(texts) > 20 and len(charts) > 5
    return [t for t in texts if t["ratio"] < 4.5], [c for c in charts if c["ratio"] < 4.5]


def test_answers_and_charts_follow_jupyterlab_dark_and_stay_readable(
    jupyterlab: Lab, page: tuple[Any, PageEvents], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    cells = [nbs._SETUP, "first", "ranked", *_CHART_CELLS[:2]]
    nbs.write(nbs._notebook(cells), jupyterlab.root / "dark.ipynb")
    open_notebook(pg, jupyterlab, "dark.ipynb")
    run_all_cells(pg)
    expect(pg.locator(f"{NOTEBOOK} .citekit-chart[data-citekit-live]")).to_have_count(
        1, timeout=120_000
    )
    expect(pg.locator(f"{NOTEBOOK} .citekit-answer")).to_have_count(2)
    assert _low(pg) == ([], [])
    light_fill = pg.locator(f"{NOTEBOOK} .citekit-chart-live svg text").first.evaluate(
        "t => getComputedStyle(t).fill"
    )

    _switch_theme(pg, "JupyterLab Dark")
    pg.wait_for_selector("body[data-jp-theme-light='false']", state="attached", timeout=30_000)
    # The chart draws itself again in the new colours.
    pg.wait_for_function(
        "([sel, before]) => { const t = document.querySelector(sel);"
        " return t && getComputedStyle(t).fill !== before; }",
        arg=[f"{NOTEBOOK} .citekit-chart-live svg text", light_fill],
        timeout=30_000,
    )
    pg.locator(f"{NOTEBOOK} .citekit-chart").first.scroll_into_view_if_needed()
    pg.screenshot(path=str(artifacts / "jupyterlab_dark_chart.png"))
    low_text, low_chart = _low(pg)
    assert low_text == [], low_text[:5]
    assert low_chart == [], low_chart[:5]
    _switch_theme(pg, "JupyterLab Light")
    pg.wait_for_selector("body[data-jp-theme-light='true']", state="attached", timeout=30_000)
