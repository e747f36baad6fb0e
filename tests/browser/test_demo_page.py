"""The page ``citekit demo`` writes, in a real Chromium: nothing wider than a phone, every text
readable (contrast >= 4.5:1) in the light and the dark theme, chart text included; answer
headings below the section headings; the footnote a marker leads to highlighted."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from citekit.cli.demo import run_demo
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import PageEvents

pytestmark = pytest.mark.browser

WIDTHS = {"desktop": 1400, "phone": 400}


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.html"
    assert run_demo(path, out=io.StringIO()) == 0
    return path


def show(pg: Any, path: Path, scheme: str, width: int, fragment: str = "") -> None:
    pg.set_viewport_size({"width": width, "height": 900})
    pg.emulate_media(color_scheme=scheme)
    pg.goto(path.as_uri() + fragment)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", list(WIDTHS.values()), ids=list(WIDTHS))
def test_no_sideways_scroll(
    page: tuple[Any, PageEvents], demo_page: Path, scheme: str, width: int
) -> None:
    pg, events = page
    show(pg, demo_page, scheme, width)
    assert pg.evaluate("document.scrollingElement.scrollWidth") <= pg.evaluate("innerWidth")
    # The charts are on the page and fit it (or scroll inside their own box).
    charts = pg.evaluate(
        "[...document.querySelectorAll('.demo-chart')].map((e) => e.getBoundingClientRect().right)"
    )
    assert len(charts) == 6 and max(charts) <= width
    assert events.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", list(WIDTHS.values()), ids=list(WIDTHS))
def test_every_text_reads_at_4_5_to_1(
    page: tuple[Any, PageEvents], demo_page: Path, scheme: str, width: int
) -> None:
    pg, _ = page
    show(pg, demo_page, scheme, width)
    # Every disclosure open: the passages, chunks and the rest of each table are read too.
    opened = pg.evaluate(
        "() => [...document.querySelectorAll('details')].map((d) => { d.open = true; }).length"
    )
    assert opened > 100
    found = pg.evaluate(CONTRAST_JS, pg.locator("body").element_handle())
    svg_text = [f for f in found if f["tag"] == "text"]
    assert len(found) > 3000 and len(svg_text) > 100  # the charts' text is measured too
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:8]


def test_the_page_follows_the_dark_theme(page: tuple[Any, PageEvents], demo_page: Path) -> None:
    pg, _ = page
    colours = {}
    for scheme in ("light", "dark"):
        show(pg, demo_page, scheme, 1400)
        colours[scheme] = pg.evaluate(
            "() => [getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.querySelector('.demo-chart svg text')).fill]"
        )
    assert colours["light"] == ["rgb(255, 255, 255)", "rgb(0, 0, 0)"]
    background, chart_text = colours["dark"]
    assert background == "rgb(18, 18, 18)" and chart_text == "rgb(227, 227, 227)"


def test_answer_headings_sit_below_section_headings(
    page: tuple[Any, PageEvents], demo_page: Path
) -> None:
    pg, _ = page
    show(pg, demo_page, "light", 1400)
    sizes = pg.evaluate(
        """() => Object.fromEntries(Object.entries({
             section: 'h2#magisterium',
             title: '.demo-answer .citekit-question',
             heading: '.demo-answer .citekit-text h3',
           }).map(([k, s]) => [k, getComputedStyle(document.querySelector(s)).fontSize]))"""
    )
    size = {k: float(v.removesuffix("px")) for k, v in sizes.items()}
    assert size["section"] > size["title"] > size["heading"]


def test_the_footnote_landed_on_is_highlighted(
    page: tuple[Any, PageEvents], demo_page: Path
) -> None:
    pg, _ = page
    for scheme in ("light", "dark"):
        show(pg, demo_page, scheme, 400)
        marker = pg.locator("article.demo-answer a.citekit-marker").first
        target = marker.get_attribute("href")
        assert target and target.startswith("#")
        note = pg.locator(target)
        plain = note.evaluate("(e) => getComputedStyle(e).outlineStyle")
        marker.click()
        pg.wait_for_function(f"location.hash === {target!r}")
        styled = note.evaluate(
            "(e) => [getComputedStyle(e).outlineStyle, getComputedStyle(e).backgroundColor]"
        )
        assert plain == "none" and styled[0] == "solid" and styled[1] != "rgba(0, 0, 0, 0)"
        assert note.is_visible()
        # Highlighted, every text in it still reads at 4.5:1.
        low = [f for f in note.evaluate(CONTRAST_JS) if f["ratio"] < 4.5]
        assert low == [], low[:5]
        # Its backlink lands on the marker, highlighted in turn.
        note.locator("a.citekit-backlink").first.click()
        assert marker.evaluate("(e) => getComputedStyle(e).outlineStyle") == "solid"
