"""Jupyter Notebook 7 (``python -m notebook``): a notebook that asks the loopback server, run
from the Run menu; the answer renders, a marker click reaches its footnote, a passage opens,
the chart shows; the same notebook saved by nbclient (untrusted) keeps tooltips and sources."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citekit.testing import ProviderServer
from tests.browser import _fronts
from tests.browser import _notebooks as nbs
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import Notebook7, PageEvents, refuse_outside

pytestmark = pytest.mark.browser

SHOTS = Path("/work/shots")
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
OUTPUT = f"{NOTEBOOK} .jp-OutputArea-output"
#: A chart as citekit's renderer shows it: drawn live where scripts run, else the static image.
LIVE = ".citekit-chart[data-citekit-live] .citekit-chart-live"
STATIC = "img.citekit-chart-static"


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderServer]:
    with ProviderServer() as srv:
        yield srv


def open_notebook(pg: Any, server: Notebook7, name: str) -> None:
    pg.goto(server.notebook_url(name), wait_until="domcontentloaded")
    pg.wait_for_selector(f"{NOTEBOOK} .jp-Cell", timeout=90_000)


def run_all(pg: Any) -> None:
    """Run every cell from the Run menu once the kernel is there."""
    first_prompt = pg.locator(f"{NOTEBOOK} .jp-Cell .jp-InputPrompt").first
    # On a busy machine the notebook may open before the kernel list has loaded, and ask.
    dialog = pg.locator(".jp-Dialog", has_text="Select Kernel")
    for _attempt in range(6):
        with contextlib.suppress(Exception):
            dialog.wait_for(state="visible", timeout=2_000)
            dialog.locator("button.jp-mod-accept").click()
            dialog.wait_for(state="hidden", timeout=10_000)
        first_prompt.click(timeout=15_000)
        pg.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        pg.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        with contextlib.suppress(Exception):
            pg.wait_for_function(
                "el => /\\[(\\*|\\d+)\\]/.test(el.textContent)",
                arg=first_prompt.element_handle(),
                timeout=10_000,
            )
            return
    raise AssertionError("Notebook 7 did not start running the notebook")


def cell(pg: Any, index: int) -> Any:
    return pg.locator(f"{NOTEBOOK} .jp-Cell").nth(index)


def test_answer_footnotes_and_chart_in_notebook7(
    notebook7: Notebook7, page: tuple[Any, PageEvents], provider: ProviderServer
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    outside = refuse_outside(pg)
    notebook = _fronts.asking_notebook(provider.base_url("magisterium"))
    nbs.write(notebook, notebook7.root / "ask.ipynb")
    open_notebook(pg, notebook7, "ask.ipynb")
    run_all(pg)
    answer = cell(pg, _fronts.ANSWER).locator(".jp-OutputArea-output .citekit-answer")
    expect(answer).to_have_count(1, timeout=120_000)
    expect(answer.locator(".citekit-sources")).to_be_visible()
    second = answer.locator("a.citekit-marker", has_text="[2]").first
    assert (second.get_attribute("title") or "").startswith("Catechism of the Catholic Church")
    href = second.get_attribute("href")
    assert href and href.endswith("-fn-2")
    footnote = answer.locator(f"li[id='{href[1:]}']")
    second.scroll_into_view_if_needed()
    expect(footnote).not_to_be_in_viewport()
    second.click()
    expect(footnote).to_be_in_viewport(timeout=15_000)
    details = footnote.locator("details").first
    expect(details.locator("blockquote")).to_be_hidden()
    details.locator("summary").click()
    expect(details.locator("blockquote")).to_contain_text("A community of a higher order")

    cell(pg, _fronts.CHART).scroll_into_view_if_needed()
    chart = cell(pg, _fronts.CHART).locator(".jp-OutputArea-output").locator(LIVE).first
    expect(chart).to_be_visible(timeout=120_000)
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 80
    # Drawn live, offline: a bar's tooltip names the author.
    chart.locator(".mark-rect path").first.hover()
    tip = pg.locator(".citekit-chart-tooltip")
    expect(tip).to_be_visible(timeout=15_000)
    expect(tip).to_contain_text("Author")
    expect(pg.get_by_text("Error loading script")).to_have_count(0)
    assert not events.dialogs
    assert outside == [], outside


def test_untrusted_answer_keeps_tooltips_and_sources_in_notebook7(
    notebook7: Notebook7,
    page: tuple[Any, PageEvents],
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    outside = refuse_outside(pg)
    nb = nbs.execute(_fronts.asking_notebook(provider.base_url("magisterium")), tmp_path)
    nbs.write(nb, notebook7.root / "saved.ipynb")
    open_notebook(pg, notebook7, "saved.ipynb")
    answer = cell(pg, _fronts.ANSWER).locator(".jp-OutputArea-output .citekit-answer")
    expect(answer).to_have_count(1, timeout=60_000)
    second = answer.locator("a.citekit-marker", has_text="[2]").first
    assert (second.get_attribute("title") or "").startswith("Catechism of the Catholic Church")
    sources = answer.locator(".citekit-sources")
    expect(sources).to_be_visible()
    expect(sources).to_contain_text("[2] Catechism of the Catholic Church")
    assert outside == [], outside


def test_untrusted_chart_shows_as_an_image_in_notebook7(
    notebook7: Notebook7,
    page: tuple[Any, PageEvents],
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    nb = nbs.execute(_fronts.asking_notebook(provider.base_url("magisterium")), tmp_path)
    nbs.write(nb, notebook7.root / "saved_chart.ipynb")
    open_notebook(pg, notebook7, "saved_chart.ipynb")
    cell(pg, _fronts.CHART).scroll_into_view_if_needed()
    output = cell(pg, _fronts.CHART).locator(".jp-OutputArea-output").first
    expect(output).to_be_visible(timeout=60_000)
    # The static image (the live view needs the script an untrusted output loses).
    expect(output.locator(STATIC)).to_be_visible(timeout=5_000)
    expect(output.locator(LIVE)).to_have_count(0)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_screenshots_and_contrast_of_an_answer_in_notebook7(
    notebook7: Notebook7,
    page: tuple[Any, PageEvents],
    provider: ProviderServer,
    tmp_path: Path,
    scheme: str,
    width: int,
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    pg.emulate_media(color_scheme=scheme)
    pg.set_viewport_size({"width": width, "height": 900})
    name = f"shot_{scheme}_{width}.ipynb"
    nbs.write(_fronts.asking_notebook(provider.base_url("magisterium")), notebook7.root / name)
    open_notebook(pg, notebook7, name)
    run_all(pg)
    answer = cell(pg, _fronts.ANSWER).locator(".jp-OutputArea-output .citekit-answer")
    expect(answer).to_have_count(1, timeout=120_000)
    answer.locator("details").first.locator("summary").click()
    cell(pg, _fronts.CHART).scroll_into_view_if_needed()
    chart = cell(pg, _fronts.CHART).locator(".jp-OutputArea-output").locator(LIVE).first
    expect(chart).to_be_visible(timeout=60_000)
    # The notebook scrolls inside its panel: a window as tall as the notebook shows all of it.
    tall = pg.locator(NOTEBOOK).evaluate("e => e.scrollHeight")
    pg.set_viewport_size({"width": width, "height": min(int(tall) + 200, 6000)})
    pg.locator(NOTEBOOK).evaluate("e => e.scrollTo(0, 0)")
    pg.wait_for_timeout(1_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"issue13-front-notebook7-{scheme}-{width}.png"))
    # Every piece of the answer's text reads at 4.5:1 in the notebook's own theme.
    for details in answer.locator("details").all():
        details.evaluate("e => { e.open = true; }")
    found = pg.evaluate(CONTRAST_JS, answer.element_handle())
    assert len(found) > 50
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:5]
