"""The page ``citekit demo`` writes, in a real Chromium: every chart fits its column (no box
scrolls sideways, no legend or label cut by the chart's edge, a bar for every label) at 1400,
800 and 390 px; nothing wider than a phone; every text readable (contrast >= 4.5:1) in the
light and the dark theme, chart text included; a short page that opens with what citekit does
and one answer per provider, the others folded; a table of contents whose links show one
section at a time; the footnote a marker leads to highlighted."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from citekit.cli.demo import SECTIONS, run_demo
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import PageEvents

pytestmark = pytest.mark.browser

WIDTHS = {"desktop": 1400, "tablet": 800, "phone": 390}

#: What each chart on the page shows, measured where the reader sees it: its box, the box's
#: scroll width, the SVG's box, every text's box, and the bars of the bar charts with labels.
CHARTS_JS = """
() => [...document.querySelectorAll('.demo-figure')].map((figure) => {
  const shown = [...figure.querySelectorAll('.demo-chart')].filter((c) => c.offsetParent);
  const box = shown[0];
  if (shown.length !== 1) return {name: figure.dataset.chart, shown: shown.length};
  const drawing = box.querySelector('svg');
  const svg = drawing.getBoundingClientRect();
  const column = document.body.getBoundingClientRect();
  const style = getComputedStyle(document.body);
  const inner = column.right - parseFloat(style.paddingRight);
  const texts = [...box.querySelectorAll('text')].filter((t) => t.getClientRects().length
      && getComputedStyle(t).opacity !== '0' && t.textContent.trim());
  const outside = texts.filter((t) => {
    const r = t.getBoundingClientRect();
    return r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5
      || r.bottom > svg.bottom + 0.5;
  }).map((t) => t.textContent.trim());
  const cut = texts.filter((t) => t.closest('.role-legend') && t.textContent.includes('\u2026'))
      .map((t) => t.textContent.trim());
  const labels = [...box.querySelectorAll('.role-axis')].filter((a) =>
      (a.getAttribute('aria-label') || '').startsWith('Y-axis for a discrete'))
    .flatMap((a) => [...a.querySelectorAll('.role-axis-label text')]);
  const bars = [...box.querySelectorAll('.role-mark [aria-roledescription="bar"]')]
    .map((b) => b.getBoundingClientRect())
    .filter((r) => r.width >= 1 && r.height >= 1 && r.right <= svg.right + 0.5);
  return {
    name: figure.dataset.chart, shown: 1,
    scrolls: box.scrollWidth > box.clientWidth + 1,
    svgRight: svg.right, boxRight: box.getBoundingClientRect().right, column: inner,
    svgScale: svg.width / drawing.width.baseVal.value,
    outside, cut, labels: labels.length, bars: bars.length,
  };
})
"""


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.html"
    assert run_demo(path, out=io.StringIO()) == 0
    return path


def show(pg: Any, path: Path, scheme: str, width: int, fragment: str = "") -> None:
    pg.set_viewport_size({"width": width, "height": 900})
    pg.emulate_media(color_scheme=scheme)
    pg.goto(path.as_uri() + fragment)


@pytest.mark.parametrize("width", list(WIDTHS.values()), ids=list(WIDTHS))
def test_every_chart_fits_its_column(
    page: tuple[Any, PageEvents], demo_page: Path, width: int
) -> None:
    pg, events = page
    show(pg, demo_page, "light", width)
    assert pg.evaluate("document.scrollingElement.scrollWidth") <= pg.evaluate("innerWidth")
    charts = pg.evaluate(CHARTS_JS)
    names = [c["name"] for c in charts]
    assert names == ["authors", "works", "years", "citations_per_answer", "scores", "cocitation"]
    for chart in charts:
        name = chart["name"]
        assert chart["shown"] == 1, name  # one drawing of each chart, the one for this width
        assert not chart["scrolls"], name  # no box scrolls sideways
        assert chart["svgRight"] <= chart["boxRight"] + 0.5 <= chart["column"] + 1, chart
        assert chart["svgScale"] > 0.9, chart  # drawn for the column, not shrunk to fit it
        assert chart["outside"] == [], (name, chart["outside"][:5])  # no text past the edge
        assert chart["cut"] == [], (name, chart["cut"])  # legends whole
        if name in ("authors", "works"):
            assert chart["labels"] >= 10 and chart["bars"] == chart["labels"], chart
    assert events.errors == []


def test_a_long_label_is_cut_on_the_axis_and_whole_in_the_tooltip(
    page: tuple[Any, PageEvents], demo_page: Path
) -> None:
    pg, _ = page
    show(pg, demo_page, "light", 390)
    figure = pg.locator('.demo-figure[data-chart="works"] .demo-chart:visible')
    labels = figure.locator(".role-axis-label text").all_text_contents()
    assert any(label.endswith("\u2026") for label in labels)
    titles = figure.locator(".role-mark title").all_text_contents()
    assert any(t.startswith("Citations: ") and "Work: Catechism of the Catholic Church" in t
               for t in titles)  # fmt: skip


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_every_text_reads_at_4_5_to_1(
    page: tuple[Any, PageEvents], demo_page: Path, scheme: str, width: int
) -> None:
    pg, _ = page
    show(pg, demo_page, scheme, width)
    # Every disclosure open: the other answers, the passages, chunks and the rest of each table.
    opened = pg.evaluate(
        "() => [...document.querySelectorAll('details')].map((d) => { d.open = true; }).length"
    )
    assert opened > 100
    found = pg.evaluate(CONTRAST_JS, pg.locator("body").element_handle())
    svg_text = [f for f in found if f["tag"] == "text"]
    assert len(found) > 3000 and len(svg_text) > 100  # the charts' text is measured too
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:8]


def test_a_short_page_that_opens_with_what_citekit_does(
    page: tuple[Any, PageEvents], demo_page: Path
) -> None:
    pg, _ = page
    show(pg, demo_page, "light", 1400)
    first = pg.locator("body > p").first.inner_text()
    assert first.startswith("citekit asks Magisterium AI, Maritaca AI and GPTBots")
    # One answer per provider open on the page, every other answer folded.
    shown = pg.locator("#answers article.demo-answer")
    assert shown.count() == 3
    assert all(shown.nth(i).is_visible() for i in range(3))
    folded = pg.locator("#more details.demo-more")
    assert folded.count() >= 30
    opened = "[...document.querySelectorAll('#more details.demo-more')].some((d) => d.open)"
    assert pg.evaluate(opened) is False
    assert pg.locator("article.demo-answer:visible").count() == 3
    # Shorter than a fifth of the 52,558 px the page was with every answer open.
    assert pg.evaluate("document.scrollingElement.scrollHeight") < 20_000


def test_the_contents_show_one_section_at_a_time(
    page: tuple[Any, PageEvents], demo_page: Path
) -> None:
    pg, _ = page
    show(pg, demo_page, "light", 1400)
    anchors = [s.anchor for s in SECTIONS]
    links = pg.locator("nav.demo-contents a[href^='#']")
    assert [links.nth(i).get_attribute("href") for i in range(len(anchors))] == [
        f"#{a}" for a in anchors
    ]
    visible = (
        "() => [...document.querySelectorAll('.demo-section')]"
        ".filter((s) => s.offsetParent).map((s) => s.id)"
    )
    assert pg.evaluate(visible) == anchors  # no section chosen: the whole page
    for i, anchor in enumerate(anchors):
        pg.locator(f"nav.demo-contents a[href='#{anchor}']").click()
        pg.wait_for_function(f"location.hash === '#{anchor}'")
        assert pg.evaluate(visible) == [anchor]
        # Its pager leads to the next section, shown alone in turn.
        if i + 1 < len(anchors):
            pg.locator(f"#{anchor} nav.demo-pager a", has_text="Next:").click()
            assert pg.evaluate(visible) == [anchors[i + 1]]
        pg.locator(f"#{anchors[min(i + 1, len(anchors) - 1)]} nav.demo-pager a",
                   has_text="Contents").click()  # fmt: skip
        assert pg.evaluate(visible) == anchors


def test_the_page_follows_the_dark_theme(page: tuple[Any, PageEvents], demo_page: Path) -> None:
    pg, _ = page
    colours = {}
    for scheme in ("light", "dark"):
        show(pg, demo_page, scheme, 1400)
        colours[scheme] = pg.evaluate(
            "() => [getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.querySelector('.demo-chart.demo-w0 svg text')).fill]"
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
             section: 'section#answers h2',
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
        show(pg, demo_page, scheme, 390)
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
