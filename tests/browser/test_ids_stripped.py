"""Footnotes where a front end strips or rewrites ids.

JupyterLab 4.3-4.4 (and Notebook 7.3-7.4) remove ``id`` and ``name`` from untrusted outputs, and
every front end that sanitizes drops ``<style>``: the in-page links then go nowhere, so each
marker must still carry its source in its tooltip (``title``), the source list must be visible in
the same output, and ``<details>`` must still open to the passage. JupyterLab 4.5+ rewrites
``id`` to ``data-jupyter-id`` and resolves links to it: every link must find exactly one target,
its own footnote. The last test runs the real thing: an untrusted notebook in JupyterLab 4.6.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer
from tests.browser import _notebooks as nbs
from tests.browser.conftest import Lab, PageEvents

pytestmark = pytest.mark.browser

KEY = "test-key-0123456789"
_ID = re.compile(r"""\s(id|name)="[^"]*\"""")
_STYLE = re.compile(r"<style\b.*?</style>", re.S | re.I)
_DATA = re.compile(r"""\sdata-[\w-]+="[^"]*\"""")


@pytest.fixture(scope="module")
def answers() -> dict[str, str]:
    """The HTML of cited answers from the loopback server, as a notebook would show them."""
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key=KEY, base_url=srv.base_url("magisterium"))
        gb = ck.GPTBots(api_key=KEY, base_url=srv.base_url("gptbots"))
        asked = {
            "magisterium": mg.ask("What is the principle of subsidiarity?"),
            "gptbots": gb.ask("Why was the Great Wall built?", citations=True),
        }
    out = {name: a._repr_mimebundle_()["text/html"] for name, a in asked.items()}
    # A second display of the same answer: a render of its own, with ids of its own.
    out["magisterium again"] = asked["magisterium"]._repr_mimebundle_()["text/html"]
    return out


def stripped(html: str) -> str:
    """What JupyterLab 4.3-4.4 keep of an untrusted output: no id, name, data-*, <style>."""
    return _DATA.sub("", _ID.sub("", _STYLE.sub("", html)))


def rewritten(html: str) -> str:
    """What JupyterLab 4.5+ keep: ``id`` becomes ``data-jupyter-id``; no name, data-*, <style>."""
    html = _DATA.sub("", _STYLE.sub("", html))
    html = re.sub(r"""\sname="[^"]*\"""", "", html)
    return re.sub(r"""\sid="([^"]*)\"""", r' data-jupyter-id="\1"', html)


def show(pg: Any, fragment: str) -> Any:
    pg.set_content(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head>"
        f"<body style='font-family:sans-serif;margin:16px'><div class='output'>{fragment}</div>"
        "</body></html>"
    )
    return pg.locator(".output .citekit-answer").first


def footnote_texts(answer: Any) -> dict[str, str]:
    """``{"[N]": text of footnote N}`` read from the visible source list."""
    out = {}
    for item in answer.locator(".citekit-sources li.citekit-footnote").all():
        text = item.inner_text()
        out[text.split(" ", 1)[0]] = text
    return out


@pytest.mark.parametrize("provider", ["magisterium", "gptbots"])
def test_with_every_id_stripped_markers_still_name_their_sources(
    page: tuple[Any, PageEvents], answers: dict[str, str], provider: str
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    html = stripped(answers[provider])
    assert ' id="' not in html and "<style" not in html
    answer = show(pg, html)
    assert pg.evaluate("document.querySelectorAll('[id], [name]').length") == 0
    sources = answer.locator(".citekit-sources")
    expect(sources).to_be_visible()
    notes = footnote_texts(answer)
    markers = answer.locator("a.citekit-marker").all()
    assert len(markers) >= 3 and len(notes) >= 2
    for marker in markers:
        number = marker.inner_text()
        title = marker.get_attribute("title") or ""
        # The tooltip is the source as the list shows it: its title, then author, year, place.
        head = title.split(" — ", 1)[0]
        assert head and head in notes[number], (number, title, notes.get(number))
        assert marker.is_visible()
    # Every passage still opens in place.
    for details in answer.locator(".citekit-sources details").all()[:4]:
        passage = details.locator("blockquote")
        expect(passage).to_be_hidden()
        details.locator("summary").click()
        expect(passage).to_be_visible()
        assert passage.inner_text().strip()
    assert not events.errors


def test_with_ids_rewritten_every_link_finds_its_own_footnote(
    page: tuple[Any, PageEvents], answers: dict[str, str]
) -> None:
    """JupyterLab 4.5+: a click on ``#x`` scrolls to ``[data-jupyter-id="x"]``."""
    from playwright.sync_api import expect

    pg, _ = page
    # Two answers in one document, as in one notebook: their links must not cross.
    html = rewritten(answers["magisterium"]) + rewritten(answers["magisterium again"])
    show(pg, html)
    pg.set_viewport_size({"width": 1000, "height": 500})
    links = pg.evaluate(
        """() => [...document.querySelectorAll('a[href^="#"]')].map((a) => {
             const key = decodeURIComponent(a.getAttribute('href').slice(1));
             const targets = [...document.querySelectorAll('[data-jupyter-id]')]
               .filter((t) => t.getAttribute('data-jupyter-id') === key);
             const answer = a.closest('.citekit-answer');
             return {
               cls: a.className, count: targets.length,
               same: targets.length === 1 && targets[0].closest('.citekit-answer') === answer,
               target: targets.length ? targets[0].className : null,
             };
           })"""
    )
    assert len(links) > 20
    assert all(link["count"] == 1 and link["same"] for link in links), links
    assert {link["target"] for link in links if link["cls"] == "citekit-marker"} == {
        "citekit-footnote"
    }
    assert {link["target"] for link in links if link["cls"] == "citekit-backlink"} == {
        "citekit-marker"
    }
    # Resolve a click the way JupyterLab 4.6 does (a click handler that scrolls to the target).
    pg.evaluate(
        """() => document.addEventListener('click', (e) => {
             const a = e.target.closest('a[href^="#"]');
             if (!a) return;
             e.preventDefault();
             const key = a.getAttribute('href').slice(1);
             const answer = a.closest('.citekit-answer');
             answer.querySelector(`[data-jupyter-id="${CSS.escape(key)}"]`).scrollIntoView();
           })"""
    )
    second = pg.locator(".citekit-answer").nth(1)
    marker = second.locator("a.citekit-marker", has_text="[3]").first
    key = (marker.get_attribute("href") or "")[1:]
    footnote = second.locator(f"[data-jupyter-id='{key}']")
    marker.scroll_into_view_if_needed()
    expect(footnote).not_to_be_in_viewport()
    marker.click()
    expect(footnote).to_be_in_viewport()


def test_untrusted_marker_click_reaches_its_footnote_in_jupyterlab(
    jupyterlab: Lab, page: tuple[Any, PageEvents], tmp_path: Any
) -> None:
    """The real JupyterLab (4.6 here) on a notebook saved by nbclient (untrusted)."""
    from playwright.sync_api import expect

    pg, _ = page
    nb = nbs.execute(nbs.two_answers_notebook(), tmp_path)
    nbs.write(nb, jupyterlab.root / "untrusted_click.ipynb")
    pg.goto(jupyterlab.notebook_url("untrusted_click.ipynb") + "?reset")
    notebook = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
    pg.wait_for_selector(f"{notebook} .jp-OutputArea-output .citekit-answer", timeout=90_000)
    second = pg.locator(f"{notebook} .jp-Cell").nth(nbs.SECOND)
    marker = second.locator("a.citekit-marker", has_text="[2]").first
    expect(marker).to_be_visible()
    href = marker.get_attribute("href") or ""
    # The sanitizer took the id away (4.3-4.4) or moved it to data-jupyter-id (4.5+).
    assert second.locator(f"[id='{href[1:]}']").count() == 0
    footnote = second.locator("li.citekit-footnote").nth(1)
    expect(footnote).not_to_be_in_viewport()
    rewritten_ids = second.locator(f"[data-jupyter-id='{href[1:]}']").count()
    if _lab_version() >= (4, 5):
        assert rewritten_ids == 1
    marker.click()
    if rewritten_ids:  # 4.5+: the link resolves
        expect(footnote).to_be_in_viewport(timeout=15_000)
    # Either way the tooltip and the visible list carry the source.
    assert marker.get_attribute("title") == "Second source B — Pius XI · 1931 · no. 79"
    expect(second.locator(".citekit-sources")).to_contain_text("Second source B")


def _lab_version() -> tuple[int, int]:
    from jupyterlab import __version__

    major, minor = __version__.split(".")[:2]
    return int(major), int(minor)
