"""A clicked footnote marker in a real JupyterLab: the footnote it leads to is scrolled to and
visibly highlighted. JupyterLab handles an in-page link's click itself and leaves the address
alone, so ``:target`` never matches there; the highlight follows the link's focus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import _notebooks as nbs
from tests.browser._contrast import CONTRAST_JS
from tests.browser.conftest import Lab, PageEvents
from tests.browser.test_notebook_footnotes import (
    cell,
    marker,
    open_notebook,
    run_all_cells,
    wait_for_outputs,
)

pytestmark = pytest.mark.browser

_LOOK = "(e) => [getComputedStyle(e).outlineStyle, getComputedStyle(e).backgroundColor]"


def test_a_clicked_footnote_is_highlighted_in_jupyterlab(
    jupyterlab: Lab, page: tuple[Any, PageEvents], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    nbs.write(nbs.two_answers_notebook(), jupyterlab.root / "highlight.ipynb")
    open_notebook(pg, jupyterlab, "highlight.ipynb")
    run_all_cells(pg)
    wait_for_outputs(pg, 4)
    second = cell(pg, nbs.SECOND)
    href = marker(second, 2).get_attribute("href")
    assert href and href.endswith("-fn-2")
    footnote = second.locator(f"li[id='{href[1:]}']")
    assert footnote.evaluate(_LOOK)[0] == "none"

    marker(second, 2).click()
    expect(footnote).to_be_in_viewport(timeout=15_000)
    assert pg.evaluate("location.hash") == ""  # JupyterLab scrolled; the address is unchanged
    outline, background = footnote.evaluate(_LOOK)
    assert outline == "solid" and background != "rgba(0, 0, 0, 0)"
    # Only the footnote clicked: the other footnotes of the answer stay plain.
    others = second.locator("li.citekit-footnote").evaluate_all(
        "(items, id) => items.filter((e) => e.id !== id)"
        ".map((e) => getComputedStyle(e).outlineStyle)",
        href[1:],
    )
    assert others and set(others) == {"none"}
    low = [f for f in footnote.evaluate(CONTRAST_JS) if f["ratio"] < 4.5]
    assert low == [], low[:5]
    pg.screenshot(path=str(artifacts / "jupyterlab_footnote_highlighted.png"))

    # Its backlink leads back to the marker, highlighted in turn.
    footnote.locator("a.citekit-backlink").first.click()
    first_marker = second.locator(f"a.citekit-marker[href='{href}']").first
    assert first_marker.evaluate(_LOOK)[0] == "solid"
    assert not events.dialogs
