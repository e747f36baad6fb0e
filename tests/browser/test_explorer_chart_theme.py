"""The explorer's chart after a change of chart, in a real Chromium under JupyterLab's dark
theme: the widget draws its chart before the notebook attaches it to the page (ipywidgets
renders a view, then inserts it), and the live chart must still take the theme's colours, not
a detached element's black on white (black text on a black page, a white grid)."""

from __future__ import annotations

from typing import Any

import pytest

import citekit as ck
from citekit.notebook.explorer_html import EXPLORER_CSS
from citekit.testing import ProviderServer
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import PageEvents

pytestmark = pytest.mark.browser

#: JupyterLab Dark's variables and body, as the explorer's style sheet reads them.
_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body[data-jp-theme-light="false"] { --jp-layout-color0: #111111;
  --jp-content-font-color1: rgba(255, 255, 255, 0.87); --jp-border-color2: #424242;
  background: #111111; color: rgba(255, 255, 255, 0.87); font-family: sans-serif; }
%s
</style></head>
<body data-jp-theme-light="false" data-jp-theme-name="JupyterLab Dark">
<div class="citekit-ex" id="host"></div></body></html>"""

#: Render the chart widget's front end as ipywidgets does: the view first, on an element that
#: is not on the page yet, then the element attached.
_RENDER = """async ({esm, value, spec}) => {
  const url = URL.createObjectURL(new Blob([esm], {type: "text/javascript"}));
  const widget = (await import(url)).default;
  const model = {get: (key) => ({value, spec})[key], on: () => {}, off: () => {}};
  const el = document.createElement("div");
  widget.render({model, el});
  await new Promise((resolve) => setTimeout(resolve, 200));
  document.getElementById("host").appendChild(el);
}"""

_GRID = """() => {
  const lines = [...document.querySelectorAll('.citekit-chart-live .role-axis-grid line')];
  return lines.map((l) => getComputedStyle(l).stroke);
}"""


@pytest.fixture(scope="module")
def years_chart() -> Any:
    """The explorer of notebook 05 after ``ex.chart_kind.value = "years"``."""
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key="test-key-0123456789", base_url=srv.base_url("magisterium"))
        answers = [
            mg.ask(s.question) for s in srv.samples("magisterium") if s.response.get("citations")
        ]
    ex = ck.explore(answers)
    ex.chart_kind.value = "years"
    assert ex.chart.spec, "the years chart has a live spec"
    return ex.chart


def _luminance(colour: str) -> float:
    parts = [float(x) for x in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3]]
    return sum(w * v / 255 for w, v in zip((0.2126, 0.7152, 0.0722), parts, strict=True))


def test_the_chart_drawn_before_it_is_attached_takes_the_dark_theme(
    page: tuple[Any, PageEvents], years_chart: Any
) -> None:
    pg, events = page
    pg.set_content(_PAGE % EXPLORER_CSS)
    pg.evaluate(_RENDER, {"esm": years_chart._esm, "value": years_chart.value,
                          "spec": years_chart.spec})  # fmt: skip
    pg.wait_for_selector("#host [data-citekit-live='1'] .citekit-chart-live svg", timeout=30_000)
    pg.wait_for_timeout(300)
    found = pg.evaluate(CONTRAST_JS, pg.locator("#host .citekit-chart-live").element_handle())
    axis_text = [f for f in found if f["tag"] == "text"]
    assert len(axis_text) > 5, found[:5]  # the axis labels and titles are measured
    low = [f for f in axis_text if f["ratio"] < 4.5]
    assert low == [], low[:5]
    # The grid is a dim line on the dark page, not a white one.
    grid = pg.evaluate(_GRID)
    assert grid and max(_luminance(c) for c in grid) < 0.5, grid[:3]
    assert events.errors == []


def test_tooltip_keys_keep_their_line_beside_a_long_value(page: tuple[Any, PageEvents]) -> None:
    """A tooltip of long values (every name an author was cited under) squeezes its key column:
    the keys stay whole words on one line ("Author", not "Autho" over "r")."""
    names = ", ".join(f"Franciscus Pontifex Maximus {i}" for i in range(12))
    cits = ck.citations_frame(
        [ck.Answer(provider="magisterium", text="x[^1]", citations=(
            ck.Citation(cited_text="p", document_index=0, document_title="Laudato si'",
                        document_author=names),
        ))]
    )  # fmt: skip
    ex = ck.explore(cits)
    pg, events = page
    pg.set_viewport_size({"width": 900, "height": 700})
    pg.set_content(_PAGE % EXPLORER_CSS)
    pg.evaluate(_RENDER, {"esm": ex.chart._esm, "value": ex.chart.value, "spec": ex.chart.spec})
    bar = pg.locator("#host .citekit-chart-live .mark-rect path").first
    bar.wait_for(timeout=30_000)
    bar.hover()
    tip = pg.locator(".citekit-chart-tooltip")
    tip.wait_for(state="visible", timeout=15_000)
    keys = pg.evaluate(
        """() => [...document.querySelectorAll('.citekit-chart-tooltip th')].map((th) => {
             const range = document.createRange();
             range.selectNodeContents(th);
             const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
             return [th.textContent, tops.size === 1];
           })"""
    )
    assert [k for k, _ in keys][:2] == ["Author", "Names seen"]
    assert all(one_line for _, one_line in keys), keys
    assert events.errors == []
