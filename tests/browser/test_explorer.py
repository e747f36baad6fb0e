"""The explorer in a real JupyterLab and Chromium: a click selects a row and shows its passage,
the keys move the selection and keep it in view, typed search reaches Python once, ten rows show
without scrolling, and every text reads at 4.5:1 in the light and dark themes (JupyterLab's own,
and the VS Code, Colab and ``prefers-color-scheme`` rules on a page of the explorer's HTML)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest

import citekit as ck
from citekit.notebook.explorer_html import EXPLORER_CSS
from citekit.testing import ProviderServer
from tests.browser import _notebooks as nbs
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import Lab, PageEvents
from tests.browser.test_notebook_footnotes import NOTEBOOK, cell, open_notebook, run_all_cells

pytestmark = pytest.mark.browser

SHOTS = Path("/work/shots")
KEY = "test-key-0123456789"

#: The notebook: ask the loopback server every recorded Magisterium question that has
#: citations, and explore the answers.
_SETUP = f"""\
import citekit as ck
from citekit.testing import ProviderServer

srv = ProviderServer().start()
mg = ck.Magisterium(api_key={KEY!r}, base_url=srv.base_url("magisterium"))
answers = [mg.ask(s.question) for s in srv.samples("magisterium") if s.response.get("citations")]
ex = ck.explore(answers)
seen = []
ex.search.observe(lambda change: seen.append(change["new"]), names="value")
"""
_PROBE = "print('search values:', seen, 'selected:', ex.selected.value)"
EXPLORER, PROBE = 1, 2


def explorer_notebook() -> Any:
    return nbs._notebook([_SETUP, "ex", _PROBE])


@pytest.fixture(scope="module")
def expected() -> Any:
    """The same explorer built here, to know what each row holds."""
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key=KEY, base_url=srv.base_url("magisterium"))
        cited = [s for s in srv.samples("magisterium") if s.response.get("citations")]
        answers = [mg.ask(s.question) for s in cited]
    return ck.explore(answers, chart=False)


def words(text: str, n: int = 8) -> str:
    """The first ``n`` words of a passage, as the rendered detail shows them (no Markdown)."""
    return " ".join(re.sub(r"[*_`#>\[\]]", "", text).split()[:n])


def settle(pg: Any) -> None:
    """Accept JupyterLab's kernel choice if it asks (it may, when the notebook opens before
    the kernel list has loaded on a busy machine), then close the file browser."""
    dialog = pg.locator(".jp-Dialog", has_text="Select Kernel")
    with contextlib.suppress(Exception):
        dialog.wait_for(state="visible", timeout=3_000)
        dialog.locator("button.jp-mod-accept").click()
        dialog.wait_for(state="hidden", timeout=10_000)
    pg.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").first.click()


def rows_in_view(pg: Any) -> list[int]:
    return pg.evaluate(
        """(sel) => {
          const box = document.querySelector(sel + ' .citekit-ex-scroll');
          const b = box.getBoundingClientRect();
          const head = box.querySelector('thead').getBoundingClientRect().height;
          return [...box.querySelectorAll('tr[data-row]')].filter((tr) => {
            const r = tr.getBoundingClientRect();
            return r.top >= b.top + head - 1 && r.bottom <= b.bottom + 1;
          }).map((tr) => Number(tr.dataset.row));
        }""",
        NOTEBOOK,
    )


def set_theme(pg: Any, theme: str) -> None:
    """Pick ``theme`` in JupyterLab's Settings > Theme menu, as a user does."""
    pg.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    pg.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
    pg.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{theme}$")).click()
    light = "true" if theme == "JupyterLab Light" else "false"
    pg.wait_for_function(
        "(v) => document.body.dataset.jpThemeLight === v", arg=light, timeout=30_000
    )
    pg.wait_for_timeout(800)


def explorer_contrast(pg: Any) -> list[dict[str, Any]]:
    root = pg.locator(f"{NOTEBOOK} .citekit-ex").first.element_handle()
    found = pg.evaluate(CONTRAST_JS, root)
    return [f for f in found if f["tag"].lower() not in _SVG_TAGS]


def shoot(pg: Any, scheme: str) -> None:
    """The explorer at the top of the window, on a desktop and a phone."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width, name in ((1400, "desktop"), (390, "phone")):
        pg.set_viewport_size({"width": width, "height": 1000 if width > 400 else 844})
        pg.wait_for_timeout(600)
        pg.locator(f"{NOTEBOOK} .citekit-ex").first.evaluate(
            "e => e.scrollIntoView({block: 'start'})"
        )
        pg.wait_for_timeout(400)
        pg.screenshot(path=str(SHOTS / f"issue13-explorer-{scheme}-{name}.png"))
        pg.locator(f"{NOTEBOOK} .citekit-ex-scroll").first.evaluate(
            "e => e.scrollIntoView({block: 'start'})"
        )
        pg.wait_for_timeout(400)
        pg.screenshot(path=str(SHOTS / f"issue13-explorer-detail-{scheme}-{name}.png"))
    pg.set_viewport_size({"width": 1400, "height": 1000})
    pg.wait_for_timeout(400)


def selected_row_contrast(pg: Any) -> float:
    """The lowest contrast of the selected row's cells (it was light yellow under white text)."""
    row = pg.locator(f"{NOTEBOOK} .citekit-ex tr.citekit-ex-selected").first.element_handle()
    found = pg.evaluate(CONTRAST_JS, row)
    assert len(found) >= 5, found
    return float(min(f["ratio"] for f in found))


# The chart's SVG text is checked on its own, on the live chart (below).
_SVG_TAGS = {"text", "tspan", "title", "svg", "g"}


def test_click_keys_search_and_theme_in_jupyterlab(
    jupyterlab: Lab, page: tuple[Any, PageEvents], expected: Any
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    pg.set_viewport_size({"width": 1400, "height": 1000})
    nbs.write(explorer_notebook(), jupyterlab.root / "explorer.ipynb")
    open_notebook(pg, jupyterlab, "explorer.ipynb")
    # the file browser closed: the notebook has the window, as on a phone
    settle(pg)
    run_all_cells(pg)
    out = cell(pg, EXPLORER)
    table = out.locator(".citekit-ex-scroll")
    pg.wait_for_selector(f"{NOTEBOOK} .citekit-ex-scroll tr[data-row]", timeout=120_000)
    detail = out.locator(".citekit-ex-detail")
    expect(detail).to_contain_text(words(expected.frame["cited_text"][0]), timeout=30_000)

    # At least ten rows show without scrolling inside the table.
    assert len(rows_in_view(pg)) >= 10, rows_in_view(pg)

    # A click on a row selects it: marked in the table, its passage in the detail, in Python.
    row = 3
    passage = words(expected.frame["cited_text"][row])
    assert passage not in detail.inner_text()
    table.locator(f"tr[data-row='{row}']").click()
    expect(detail).to_contain_text(passage, timeout=30_000)
    expect(table.locator("tr.citekit-ex-selected")).to_have_attribute("data-row", str(row))
    # The row box numbers rows from 1, as the table's # column and the pages do.
    expect(out.locator("input[type='number']").nth(1)).to_have_value(str(row + 1))
    expect(table.locator(f"tr[data-row='{row}'] td").first).to_have_text(str(row + 1))

    # The keys move the selection; going down past the visible rows keeps it in view.
    table.press("ArrowDown")
    expect(detail).to_contain_text(words(expected.frame["cited_text"][row + 1]), timeout=30_000)
    for _ in range(16):
        table.press("ArrowDown")
    target = row + 17
    expect(table.locator("tr.citekit-ex-selected")).to_have_attribute("data-row", str(target))
    expect(detail).to_contain_text(words(expected.frame["cited_text"][target]), timeout=30_000)
    pg.wait_for_timeout(300)
    assert target in rows_in_view(pg)
    # the notebook did not take the keys: still one active cell, the explorer's
    assert "jp-mod-active" in (out.get_attribute("class") or "")

    # Typed search reaches Python once typing pauses, not per keystroke.
    box = out.locator(".citekit-ex-search input")
    box.click()
    box.press_sequentially("wage", delay=60)
    status = out.locator(".citekit-ex-status")
    shown = _matching(expected, "wage")
    expect(status).to_contain_text(f"of {shown} citations", timeout=30_000)
    cell(pg, PROBE).locator(".jp-InputPrompt").click()
    pg.keyboard.press("Shift+Enter")
    probe = cell(pg, PROBE).locator(".jp-OutputArea-output")
    expect(probe).to_contain_text("search values: ['wage'] selected: 0", timeout=30_000)
    box.fill("")
    box.press("Enter")
    expect(status).to_contain_text(f"of {expected.frame.height} citations", timeout=30_000)
    # On a busy machine the unfiltered rows reach the table after the status: click once the
    # whole first page (more rows than "wage" matched) is drawn and its first row selected.
    assert shown < 40 <= expected.frame.height
    expect(table.locator("tr[data-row='39']")).to_have_count(1, timeout=30_000)
    selected = table.locator("tr.citekit-ex-selected")
    expect(selected).to_have_attribute("data-row", "0", timeout=30_000)
    table.locator("tr[data-row='2']").click()
    expect(selected).to_have_attribute("data-row", "2", timeout=30_000)
    shoot(pg, "light")

    # Every text reads at 4.5:1 in JupyterLab's light and dark themes, the selected row too.
    low = [f for f in explorer_contrast(pg) if f["ratio"] < 4.5]
    assert low == [], low[:5]
    assert selected_row_contrast(pg) >= 4.5
    set_theme(pg, "JupyterLab Dark")
    found = explorer_contrast(pg)
    assert len(found) > 30
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:5]
    assert selected_row_contrast(pg) >= 4.5
    # The chart is drawn live (offline) and redrawn in the dark theme's colours.
    expect(out.locator(".citekit-chart[data-citekit-live]")).to_have_count(1, timeout=30_000)
    pg.wait_for_timeout(500)
    live = out.locator(".citekit-chart-live").first.element_handle()
    chart_text = pg.evaluate(CONTRAST_JS, live)
    assert len(chart_text) > 5 and [c for c in chart_text if c["ratio"] < 4.5] == []
    shoot(pg, "dark")
    set_theme(pg, "JupyterLab Light")
    assert events.errors == [], events.errors


def _matching(ex: Any, needle: str) -> int:
    ex.search.value = needle
    try:
        return int(ex.filtered.height)
    finally:
        ex.search.value = ""


# -- the explorer's HTML under each front end's theme, on a page of its own --------------------

_VSCODE_DARK = (
    "--vscode-editor-background:#1f1f1f;--vscode-editor-foreground:#cccccc;"
    "--vscode-textLink-foreground:#4daafc;--vscode-descriptionForeground:rgba(204,204,204,0.7);"
    "--vscode-panel-border:#2b2b2b;--vscode-list-inactiveSelectionBackground:#37373d;"
    "--vscode-list-inactiveSelectionForeground:#cccccc"
)
_VSCODE_LIGHT = (
    "--vscode-editor-background:#ffffff;--vscode-editor-foreground:#3b3b3b;"
    "--vscode-textLink-foreground:#005fb8;--vscode-descriptionForeground:#3b3b3b;"
    "--vscode-panel-border:#e5e5e5;--vscode-list-inactiveSelectionBackground:#e4e6f1"
)
#: (html attributes, body attributes, body colours, the system's colour scheme)
FRONTS = {
    "bare-light": ("", "", "background:#fff;color:#111", "light"),
    "bare-prefers-dark": ("", "", "background:#111;color:#ddd", "dark"),
    "vscode-dark": (
        "",
        "class='vscode-dark'",
        f"{_VSCODE_DARK};background:#1f1f1f;color:#ccc",
        "light",
    ),
    "vscode-light-on-dark-system": (
        "",
        "class='vscode-light'",
        f"{_VSCODE_LIGHT};background:#fff;color:#3b3b3b",
        "dark",
    ),
    "colab-dark": ("theme='dark'", "", "background:#383838;color:#e3e3e3", "light"),
    "jupyterlab-light-on-dark-system": (
        "",
        "data-jp-theme-light='true'",
        "background:#fff;color:#111",
        "dark",
    ),
}


@pytest.fixture(scope="module")
def fragment(expected: Any) -> str:
    from citekit.notebook.explorer_html import empty_html, row_html, status_html, table_html

    page = expected.frame.head(12)
    table = table_html(page, "citations", first=0).replace(
        "<tr data-row='2'", "<tr class='citekit-ex-selected' data-row='2'"
    )
    linked = next(r for r in expected.frame.iter_rows(named=True) if r["source_url"])
    return (
        f"<style>{EXPLORER_CSS}</style><div class='citekit-ex'>"
        f"{status_html('1–50 of 130 citations (filtered from 200)')}"
        f"<div class='citekit-ex-scroll'>{table}</div>{empty_html('citations')}"
        f"<div class='citekit-ex-detail'>{row_html(linked, 'citations')}</div></div>"
    )


@pytest.mark.parametrize("front", list(FRONTS))
def test_every_text_reads_at_4_5_to_1_in_each_front_ends_theme(
    page: tuple[Any, PageEvents], fragment: str, front: str
) -> None:
    pg, _ = page
    html_attrs, body_attrs, body_style, scheme = FRONTS[front]
    pg.emulate_media(color_scheme=scheme)
    pg.set_content(
        f"<!DOCTYPE html><html {html_attrs}><head><meta charset='utf-8'></head>"
        f"<body {body_attrs} style='{body_style};font-family:sans-serif;margin:16px'>"
        f"{fragment}</body></html>"
    )
    found = pg.evaluate(CONTRAST_JS, pg.locator(".citekit-ex").element_handle())
    assert len(found) > 60
    low = [f for f in found if f["ratio"] < 4.5]
    assert low == [], low[:5]
    selected = pg.evaluate(CONTRAST_JS, pg.locator("tr.citekit-ex-selected").element_handle())
    assert min(f["ratio"] for f in selected) >= 4.5
    link = pg.locator(".citekit-ex-detail a").first
    assert link.evaluate("a => getComputedStyle(a).textDecorationLine") == "underline"


_REFERENCES = """\
import citekit as ck
from citekit.testing import default_data_dir

rex = ck.explore(default_data_dir(), kind="references")
rex
"""


def test_min_score_moves_the_charts_threshold_in_jupyterlab(
    jupyterlab: Lab, page: tuple[Any, PageEvents]
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    pg.set_viewport_size({"width": 1400, "height": 1000})
    nbs.write(nbs._notebook([_REFERENCES]), jupyterlab.root / "references.ipynb")
    open_notebook(pg, jupyterlab, "references.ipynb")
    settle(pg)
    run_all_cells(pg)
    out = cell(pg, 0)
    pg.wait_for_selector(f"{NOTEBOOK} .citekit-ex-scroll tr[data-row]", timeout=120_000)
    chart = out.locator("svg.marks").first
    expect(chart).to_contain_text("at or above 0", timeout=30_000)
    before = out.locator(".citekit-ex-status").inner_text()
    # The slider's readout is editable: type a minimum score, as a user can.
    readout = out.locator(".widget-readout").first
    readout.click()
    pg.keyboard.press("Control+a")
    pg.keyboard.type("0.8")
    pg.keyboard.press("Enter")
    expect(chart).to_contain_text("at or above 0.8", timeout=30_000)
    # Each new threshold draws a new chart: the views of the ones it replaced are let go.
    for value in ["0.3", "0.6", "0.8"]:
        readout.click()
        pg.keyboard.press("Control+a")
        pg.keyboard.type(value)
        pg.keyboard.press("Enter")
        expect(chart).to_contain_text(f"at or above {value}", timeout=30_000)
    expect(out.locator(".citekit-chart[data-citekit-live]")).to_have_count(1, timeout=30_000)
    assert pg.evaluate("window.citekitCharts.count()") <= 2
    expect(out.locator(".citekit-ex-status")).not_to_have_text(before)
    expect(out.locator(".citekit-ex-status")).to_contain_text("filtered from")
    SHOTS.mkdir(parents=True, exist_ok=True)
    out.locator(".citekit-ex").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    pg.wait_for_timeout(400)
    pg.screenshot(path=str(SHOTS / "issue13-explorer-scores-light-desktop.png"))
    assert events.errors == [], events.errors
