"""``ck.show_support`` in a real Chromium: each sentence tinted by its verdict, each marker's
tooltip with its score and passage, the shared words marked; no horizontal scroll on a phone;
every text readable (4.5:1) in light and dark; the same without the scoped style (an untrusted
JupyterLab output)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import PageEvents

pytestmark = pytest.mark.browser

KEY = "test-key-0123456789"
SCHEMES = {"light": ("#fff", "#111"), "dark": ("#111", "#ddd")}


@pytest.fixture(scope="module")
def view() -> ck.SupportView:
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key=KEY, base_url=srv.base_url("magisterium"))
        answer = mg.ask("What does the Church teach about Sunday rest?")
    return ck.show_support(answer)


def show(pg: Any, fragment: str, scheme: str, width: int) -> None:
    bg, fg = SCHEMES[scheme]
    pg.set_viewport_size({"width": width, "height": 900})
    pg.emulate_media(color_scheme=scheme)
    pg.set_content(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width'></head>"
        f"<body style='background:{bg};color:{fg};font-family:sans-serif;margin:16px'>"
        f"{fragment}</body></html>"
    )


TINTS_JS = """
() => [...document.querySelectorAll('.citekit-sentence')].map((e) => ({
  cls: e.className, bg: getComputedStyle(e).backgroundColor, glyph:
  e.querySelector('.citekit-verdict').textContent}))
"""


@pytest.mark.parametrize("styled", [True, False], ids=["styled", "untrusted"])
def test_sentences_are_tinted_and_markers_carry_score_and_passage(
    page: tuple[Any, PageEvents], view: ck.SupportView, styled: bool
) -> None:
    pg, events = page
    fragment = view.to_html()
    if not styled:  # what an untrusted JupyterLab output keeps: no <style>, no id
        fragment = re.sub(r"<style>.*?</style>", "", fragment, flags=re.S)
        fragment = re.sub(r'\sid="[^"]*"', "", fragment)
    show(pg, fragment, "light", 1400)
    tints = pg.evaluate(TINTS_JS)
    assert [t["glyph"] for t in tints] == ["∅", "✓", "✗", "◐", "✓", "✓", "∅", "∅"]
    by_verdict = {re.search(r"citekit-(\w+)$", t["cls"]).group(1): t["bg"] for t in tints}
    assert by_verdict["supported"].startswith("rgba(46, 160, 67")
    assert by_verdict["unsupported"].startswith("rgba(220, 50, 50")
    assert by_verdict["uncited"] == "rgba(0, 0, 0, 0)"
    markers = pg.locator(".citekit-sentence a.citekit-marker")
    assert markers.count() == 5
    title = markers.nth(0).get_attribute("title")
    assert title.startswith("[1] Catechism of the Catholic Church — supported, support 1.00")
    assert "best passage: “On Sundays and other holy days" in title
    wrong = markers.nth(2).get_attribute("title")
    assert "[1] fits this sentence better" in wrong
    assert pg.locator(".citekit-misattributed").first.is_visible()
    # A passage opens with its shared words marked.
    pg.locator(".citekit-support-entry summary").first.click()
    marks = pg.locator(".citekit-support-entry mark")
    assert marks.first.is_visible() and marks.first.inner_text() in {"On", "Sundays"}
    summary = pg.locator(".citekit-support-summary").inner_text()
    assert summary == "3 of 8 sentences supported; 1 citation fits another source better"
    assert events.errors == [] and events.dialogs == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_readable_and_no_horizontal_scroll(
    page: tuple[Any, PageEvents], view: ck.SupportView, scheme: str, width: int, artifacts: Path
) -> None:
    pg, _ = page
    show(pg, view.to_html(), scheme, width)
    for summary in pg.locator(".citekit-support-entry summary").all():
        summary.click()  # every passage open: the widest the view gets
    assert pg.evaluate("document.documentElement.scrollWidth") <= width
    found = pg.evaluate(CONTRAST_JS, pg.locator(".citekit-support").element_handle())
    assert len(found) > 40
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:5]
    pg.screenshot(path=str(artifacts / f"support_view_{scheme}_{width}.png"), full_page=True)
