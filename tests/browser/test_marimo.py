"""A marimo app (``marimo run``) that asks the loopback server: the answer renders, a marker
click reaches its footnote, a passage opens, the chart draws (marimo's own bundled Vega: no
network) with its tooltip, in light and dark."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citekit.testing import ProviderServer
from tests.browser import _fronts
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import PageEvents, refuse_outside

pytestmark = pytest.mark.browser

SHOTS = Path("/work/shots")
OUTPUT = ".marimo-cell .output-area"


@pytest.fixture(scope="module")
def app_url(marimo_run: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ProviderServer() as srv:
        app = _fronts.marimo_app(tmp_path_factory.mktemp("app"), srv.base_url("magisterium"))
        yield marimo_run(app)


def open_app(pg: Any, url: str, outside: list[str]) -> Any:
    """Open the app with every request off this machine refused (and noted)."""
    refuse_outside(pg, outside)
    pg.goto(url, wait_until="domcontentloaded")
    pg.wait_for_selector(f"{OUTPUT} .citekit-answer", timeout=120_000)
    return pg.locator(f"{OUTPUT} .citekit-answer").first


def test_answer_footnotes_and_passages_work_in_marimo(
    page: tuple[Any, PageEvents], app_url: str
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    outside: list[str] = []
    answer = open_app(pg, app_url, outside)
    expect(pg.get_by_text("Something went wrong")).to_have_count(0)
    expect(answer.locator(".citekit-sources")).to_be_visible()
    markers = answer.locator("a.citekit-marker")
    assert markers.count() >= 5
    second = answer.locator("a.citekit-marker", has_text="[2]").first
    assert second.get_attribute("title", timeout=5_000).startswith("Catechism of the Catholic")
    href = second.get_attribute("href")
    assert href and href.endswith("-fn-2")
    footnote = answer.locator(f"li[id='{href[1:]}']")
    expect(footnote).to_have_count(1)
    pg.set_viewport_size({"width": 1280, "height": 500})
    second.scroll_into_view_if_needed()
    expect(footnote).not_to_be_in_viewport()
    second.click()
    expect(footnote).to_be_in_viewport(timeout=15_000)
    # marimo handles in-page links itself: the hash moves too.
    pg.wait_for_function("h => location.hash === h", arg=href, timeout=15_000)
    back = footnote.locator("a.citekit-backlink").first
    back.click()
    expect(answer.locator(f"a[id='{back.get_attribute('href')[1:]}']")).to_be_in_viewport()

    details = footnote.locator("details").first
    expect(details.locator("blockquote")).to_be_hidden()
    details.locator("summary").click()
    expect(details.locator("blockquote")).to_be_visible()
    expect(details.locator("blockquote")).to_contain_text("A community of a higher order")
    # A numbered list in the text keeps its numbers (marimo's page resets list markers).
    listed = answer.locator(".citekit-text ol").first
    assert listed.evaluate("e => getComputedStyle(e).listStyleType") == "decimal"
    assert not events.errors, events.errors
    assert not events.dialogs
    assert outside == [], outside


def test_chart_draws_offline_with_a_tooltip_in_marimo(
    page: tuple[Any, PageEvents], app_url: str
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    outside: list[str] = []
    open_app(pg, app_url, outside)
    chart = pg.locator(f"{OUTPUT} .vega-embed").first
    expect(chart).to_be_visible(timeout=60_000)
    drawn = chart.locator("canvas, svg.marks").first
    expect(drawn).to_be_visible()
    drawn.scroll_into_view_if_needed()
    box = drawn.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 80
    expect(pg.get_by_text("Error loading script")).to_have_count(0)
    # Hover the first bar: Vega's tooltip names the author and the count.
    tooltip = pg.locator("#vg-tooltip-element")
    for dy in range(20, int(box["height"]) - 20, 6):
        pg.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + dy)
        pg.wait_for_timeout(80)
        if tooltip.count() and tooltip.first.is_visible():
            break
    expect(tooltip.first).to_be_visible()
    expect(tooltip.first).to_contain_text(re.compile(r"\w"))
    assert not events.errors, events.errors
    assert outside == [], outside


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390])
def test_screenshots_of_an_answer_in_marimo(
    page: tuple[Any, PageEvents], app_url: str, scheme: str, width: int
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    pg.emulate_media(color_scheme=scheme)
    pg.set_viewport_size({"width": width, "height": 900})
    answer = open_app(pg, app_url, [])
    expect(pg.locator(f"{OUTPUT} .vega-embed").first).to_be_visible(timeout=60_000)
    answer.locator("details").first.locator("summary").click()
    # Nothing wider than the window (a phone does not scroll sideways).
    assert pg.evaluate("document.documentElement.scrollWidth") <= width + 1
    # marimo scrolls inside its own container: a window as tall as the app shows all of it.
    tall = pg.evaluate("Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))")
    pg.set_viewport_size({"width": width, "height": min(int(tall) + 100, 6000)})
    pg.evaluate("document.querySelectorAll('*').forEach((e) => { e.scrollTop = 0; })")
    pg.wait_for_timeout(800)
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"issue13-front-marimo-{scheme}-{width}.png"))


@pytest.fixture(scope="module")
def objects_url(marimo_run: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ProviderServer() as srv:
        urls = {p: srv.base_url(p) for p in ("magisterium", "gptbots")}
        yield marimo_run(_fronts.marimo_objects_app(tmp_path_factory.mktemp("objects"), urls))


def test_references_search_comparison_and_a_stream_render_in_marimo(
    page: tuple[Any, PageEvents], objects_url: str
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    pg.set_viewport_size({"width": 1400, "height": 900})
    outside = refuse_outside(pg)
    pg.goto(objects_url, wait_until="domcontentloaded")
    cells = pg.locator(".marimo-cell")
    pg.wait_for_function(
        "sel => document.querySelectorAll(sel).length >= 2",
        arg=f"{OUTPUT} .citekit-answer .citekit-sources",
        timeout=120_000,
    )
    expect(pg.get_by_text("Something went wrong")).to_have_count(0)
    references = cells.nth(_fronts.REFERENCES).locator(".output-area")
    expect(references).to_contain_text("Sources (ranked by relevance)")
    expect(references.locator("li.citekit-reference").first).to_be_visible()
    search = cells.nth(_fronts.SEARCH).locator(".output-area")
    expect(search).to_contain_text("results for")
    comparison = cells.nth(_fronts.COMPARISON).locator(".output-area")
    expect(comparison.locator(".citekit-compare-column")).to_have_count(2)
    # The comparison's keys are in-page links too: a click moves to the column it names.
    key = comparison.locator("a.citekit-compare-key").last
    expect(key).to_be_visible()
    href = key.get_attribute("href")
    key.click()
    pg.wait_for_function("h => location.hash === h", arg=href, timeout=15_000)
    streamed = cells.nth(_fronts.STREAMED).locator(".output-area")
    # A streamed answer shows once, whole, with its footnotes.
    expect(streamed.locator(".citekit-answer")).to_have_count(1)
    expect(streamed.locator(".citekit-footnote")).to_have_count(5)
    assert not events.errors, events.errors
    assert outside == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_of_the_answer_reads_at_4_5_to_1_in_marimo(
    page: tuple[Any, PageEvents], app_url: str, scheme: str
) -> None:
    pg, _ = page
    pg.emulate_media(color_scheme=scheme)
    answer = open_app(pg, app_url, [])
    for details in answer.locator("details").all():
        details.evaluate("e => { e.open = true; }")
    found = pg.evaluate(CONTRAST_JS, answer.element_handle())
    assert len(found) > 50
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:5]
