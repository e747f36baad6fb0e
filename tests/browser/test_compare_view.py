"""ck.compare's view in a real Chromium: columns side by side on a desktop, stacked on a phone,
with or without its scoped style; an error card beside the answers; no id twice; every piece of
text readable (contrast >= 4.5:1) in light and dark."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import PageEvents

pytestmark = pytest.mark.browser

KEY = "test-key-0123456789"
SCHEMES = {"light": ("#fff", "#111"), "dark": ("#111", "#ddd")}

BOXES_JS = """
() => [...document.querySelectorAll('.citekit-compare-column')].map((e) => {
  const r = e.getBoundingClientRect();
  return {x: r.x, y: r.y, w: r.width, bottom: r.bottom};
})
"""


@pytest.fixture(scope="module")
def comparison() -> Any:
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key=KEY, base_url=srv.base_url("magisterium"))
        mt = ck.Maritaca(api_key=KEY, base_url=srv.base_url("maritaca"))
        gb = ck.GPTBots(api_key=KEY, base_url=srv.base_url("gptbots"))
        refused = ck.GPTBots(api_key="wrong-key-000", base_url=srv.base_url("gptbots", api_key=KEY))
        return ck.compare(
            "What is subsidiarity?",
            [mg, (mt, {"web_search": True}), (gb, {"citations": True}), refused],
            progress=False,
        )


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


def without_style(fragment: str) -> str:
    """What an untrusted JupyterLab output keeps: no ``<style>`` element."""
    return re.sub(r"<style>.*?</style>", "", fragment, flags=re.S)


@pytest.mark.parametrize("styled", [True, False], ids=["styled", "inline-only"])
def test_columns_side_by_side_on_a_desktop_stacked_on_a_phone(
    page: tuple[Any, PageEvents], comparison: Any, styled: bool
) -> None:
    pg, events = page
    fragment = comparison._repr_html_()
    fragment = fragment if styled else without_style(fragment)
    show(pg, fragment, "light", 1100)
    boxes = pg.evaluate(BOXES_JS)
    assert len(boxes) == 4
    assert max(b["y"] for b in boxes) - min(b["y"] for b in boxes) < 1  # tops aligned
    assert max(b["w"] for b in boxes) - min(b["w"] for b in boxes) < 2  # equal widths
    assert [b["x"] for b in boxes] == sorted(b["x"] for b in boxes)
    assert boxes[0]["w"] > 200
    show(pg, fragment, "light", 390)
    boxes = pg.evaluate(BOXES_JS)
    assert max(b["x"] for b in boxes) - min(b["x"] for b in boxes) < 1  # one column
    for above, below in itertools.pairwise(boxes):
        assert below["y"] >= above["bottom"]
    assert all(b["w"] > 300 for b in boxes)
    # nothing wider than the phone: long ids and names wrap
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    assert events.errors == [] and events.dialogs == []


def test_the_error_card_sits_beside_the_answers(
    page: tuple[Any, PageEvents], comparison: Any
) -> None:
    pg, _ = page
    show(pg, comparison._repr_html_(), "light", 1100)
    card = pg.locator(".citekit-compare-error")
    assert card.count() == 1 and card.is_visible()
    text = card.inner_text()
    assert "GPTBots did not answer" in text
    assert "AuthenticationError (HTTP 401" in text
    assert "What to do:" in text
    assert pg.locator(".citekit-answer").count() == 3
    ids = pg.evaluate("[...document.querySelectorAll('[id]')].map((e) => e.id)")
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1100, 390], ids=["desktop", "phone"])
def test_every_text_reads_at_4_5_to_1(
    page: tuple[Any, PageEvents], comparison: Any, scheme: str, width: int
) -> None:
    pg, _ = page
    show(pg, comparison._repr_html_(), scheme, width)
    found = pg.evaluate(CONTRAST_JS, pg.locator(".citekit-compare").element_handle())
    assert len(found) > 50
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:5]


def test_the_contrast_check_sees_low_contrast(page: tuple[Any, PageEvents]) -> None:
    """The check above is not vacuous: dim text, and a default blue link on black, fail it."""
    pg, _ = page
    show(
        pg,
        '<div class="citekit-compare"><span style="opacity:0.3">dim</span>'
        '<a href="#x" style="color:#0000ee">link</a><span>fine</span></div>',
        "dark",
        1100,
    )
    found = pg.evaluate(CONTRAST_JS, pg.locator(".citekit-compare").element_handle())
    ratios = {f["text"]: f["ratio"] for f in found}
    assert ratios["dim"] < 4.5 and ratios["link"] < 4.5 and ratios["fine"] > 4.5
