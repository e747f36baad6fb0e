"""Footnotes in a real Chromium: JupyterLab (trusted and untrusted), nbconvert exports, payloads."""

from __future__ import annotations

import contextlib
import html
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.browser import _notebooks as nbs
from tests.browser.conftest import Lab, PageEvents

pytestmark = pytest.mark.browser

# Markup that must never show up as text in a rendered output.
_LITERAL_TAG = re.compile(
    r"</?(sup|details|summary|div|span|a|li|ol|ul|blockquote|strong|em|code|pre|h[1-6]|p|br|table)\b[^>]*>"
)


@pytest.fixture(scope="module")
def executed_two_answers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return nbs.execute(nbs.two_answers_notebook(), tmp_path_factory.mktemp("nbclient"))


@pytest.fixture(scope="module")
def executed_payloads(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return nbs.execute(nbs.payload_notebook(), tmp_path_factory.mktemp("nbclient"))


# -- JupyterLab helpers ---------------------------------------------------------------------------
# The notebook in the current tab (other tabs keep their cells in the DOM, hidden).
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"


def open_notebook(page: Any, lab: Lab, name: str) -> None:
    # ``?reset`` starts from an empty workspace: only this notebook is open.
    page.goto(lab.notebook_url(name) + "?reset", wait_until="domcontentloaded")
    page.wait_for_selector(f"{NOTEBOOK} .jp-Cell", timeout=90_000)


def run_all_cells(page: Any) -> None:
    """Run every cell through JupyterLab's Run menu, once the kernel is connected."""
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    first_prompt = page.locator(f"{NOTEBOOK} .jp-Cell .jp-InputPrompt").first
    for _attempt in range(3):
        # Focus the notebook so the Run menu acts on it.
        first_prompt.click()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        with contextlib.suppress(Exception):
            page.wait_for_function(
                "el => /\\[(\\*|\\d+)\\]/.test(el.textContent)",
                arg=first_prompt.element_handle(),
                timeout=15_000,
            )
            return
    raise AssertionError("JupyterLab did not start running the notebook")


def cell(page: Any, index: int) -> Any:
    return page.locator(f"{NOTEBOOK} .jp-Cell").nth(index)


def wait_for_outputs(page: Any, count: int, selector: str = ".citekit-answer") -> None:
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length >= n",
        arg=[f"{NOTEBOOK} .jp-OutputArea-output {selector}", count],
        timeout=120_000,
    )


def marker(container: Any, number: int) -> Any:
    return container.locator("a.citekit-marker", has_text=f"[{number}]").first


def _declarations(styles: list[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for style in styles:
        for declaration in style.split(";"):
            prop, _, value = declaration.partition(":")
            if prop.strip():
                out[f"{prop.strip().lower()}:{' '.join(value.split()).replace(', ', ',')}"] += 1
    return out


# -- tests ----------------------------------------------------------------------------------------
def test_jupyterlab_marker_jumps_to_footnote_of_its_own_answer(
    jupyterlab: Lab, page: tuple[Any, PageEvents], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    nbs.write(nbs.two_answers_notebook(), jupyterlab.root / "two_answers.ipynb")
    open_notebook(pg, jupyterlab, "two_answers.ipynb")
    run_all_cells(pg)
    wait_for_outputs(pg, 4)
    pg.wait_for_selector(f"{NOTEBOOK} .jp-OutputArea-output .citekit-probe", timeout=60_000)

    first, second = cell(pg, nbs.FIRST), cell(pg, nbs.SECOND)
    first_href = marker(first, 2).get_attribute("href")
    href = marker(second, 2).get_attribute("href")
    assert first_href and href and first_href != href and href.endswith("-fn-2")
    footnote = second.locator(f"li[id='{href[1:]}']")
    other = first.locator(f"li[id='{first_href[1:]}']")
    expect(footnote).to_have_count(1)
    expect(footnote).not_to_be_in_viewport()

    marker(second, 2).click()
    expect(footnote).to_be_in_viewport(timeout=15_000)
    expect(other).not_to_be_in_viewport()

    details = footnote.locator("details").first
    expect(details.locator("blockquote")).to_be_hidden()
    details.locator("summary").click()
    expect(details).to_have_attribute("open", "")
    expect(details.get_by_text("The cited passage of answer B, document two.")).to_be_visible()
    link = footnote.locator("a[target='_blank']").first
    assert link.get_attribute("href") == "https://example.org/B/2"
    assert link.get_attribute("target") == "_blank"
    # JupyterLab sets rel="noopener" on external links itself; ours says noopener noreferrer.
    assert "noopener" in (link.get_attribute("rel") or "").split()
    assert link.inner_text() == "Second source B"
    pg.screenshot(path=str(artifacts / "jupyterlab_second_answer_footnote_2.png"))

    # Trusted output: the probe's data-* attribute is kept (the untrusted test expects it gone).
    expect(pg.locator(f"{NOTEBOOK} .jp-OutputArea-output [data-probe]")).to_have_count(1)
    # The streamed cell ends as one output: the full render with footnotes, nothing left over.
    streamed = cell(pg, nbs.STREAMED).locator(".jp-OutputArea-output")
    expect(streamed).to_have_count(1)
    expect(streamed.locator(".citekit-footnote")).to_have_count(2)
    expect(streamed.locator(".citekit-streaming")).to_have_count(0)
    assert not events.dialogs


def test_untrusted_notebook_keeps_tooltips_sources_and_styles(
    jupyterlab: Lab, page: tuple[Any, PageEvents], executed_two_answers: Any, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    nb = executed_two_answers
    streamed_outputs = nb.cells[nbs.STREAMED].outputs
    assert (
        len(streamed_outputs) == 1 and "citekit-footnote" in streamed_outputs[0].data["text/html"]
    )
    nbs.write(nb, jupyterlab.root / "executed.ipynb")
    open_notebook(pg, jupyterlab, "executed.ipynb")
    wait_for_outputs(pg, 4)
    pg.wait_for_selector(f"{NOTEBOOK} .jp-OutputArea-output .citekit-probe", timeout=60_000)

    # Sanitized: data-* attributes are gone (the trusted test sees the probe's).
    expect(pg.locator(f"{NOTEBOOK} .jp-OutputArea-output [data-probe]")).to_have_count(0)
    second = cell(pg, nbs.SECOND)
    assert marker(second, 2).get_attribute("title") == "Second source B — Pius XI · 1931 · no. 79"
    assert marker(second, 1).get_attribute("title") == "First source B"
    sources = second.locator(".citekit-sources")
    expect(sources).to_be_visible()
    expect(sources).to_contain_text("[2] Second source B — Pius XI · 1931 · no. 79")
    link = sources.locator("a[href='https://example.org/B/2']")
    expect(link).to_have_count(1)

    for index in (nbs.FIRST, nbs.SECOND, nbs.RANKED, nbs.STREAMED):
        text = cell(pg, index).locator(".jp-OutputArea-output").first.inner_text()
        assert not _LITERAL_TAG.search(text), _LITERAL_TAG.search(text)
        assert "&lt;" not in text and "&gt;" not in text

    # Every inline style declaration survived the sanitizer.
    expected: list[str] = []
    for index in (nbs.FIRST, nbs.SECOND, nbs.RANKED):
        source = nb.cells[index].outputs[0].data["text/html"]
        expected += [html.unescape(s) for s in re.findall(r'style="([^"]*)"', source)]
    actual: list[str] = []
    for index in (nbs.FIRST, nbs.SECOND, nbs.RANKED):
        actual += (
            cell(pg, index)
            .locator(".jp-OutputArea-output [style]")
            .evaluate_all("els => els.map(e => e.getAttribute('style'))")
        )
    assert _declarations(actual) == _declarations(expected)
    bar = cell(pg, nbs.RANKED).locator(".citekit-score-bar span").first
    box = bar.bounding_box()
    assert box is not None and box["width"] > 10
    sources.scroll_into_view_if_needed()
    expect(sources).to_be_in_viewport()
    pg.wait_for_timeout(500)  # let the windowed notebook paint the cells around it
    pg.screenshot(path=str(artifacts / "jupyterlab_untrusted.png"))


def _open_export(page: Any, path: Path) -> None:
    # The export links to CDN scripts (MathJax, require.js); nothing may leave this machine.
    page.route(re.compile(r"^https?://"), lambda route: route.abort())
    page.goto(path.as_uri(), wait_until="domcontentloaded")


def test_nbconvert_export_marker_moves_hash_to_footnote(
    page: tuple[Any, PageEvents], executed_two_answers: Any, tmp_path: Path, artifacts: Path
) -> None:
    from nbconvert import HTMLExporter
    from playwright.sync_api import expect

    pg, _ = page
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed_two_answers)
    export = tmp_path / "export.html"
    export.write_text(body, encoding="utf-8")
    _open_export(pg, export)
    second = pg.locator(".jp-Cell").nth(nbs.SECOND)
    href = marker(second, 2).get_attribute("href")
    assert href
    footnote = pg.locator(f"[id='{href[1:]}']")
    expect(footnote).not_to_be_in_viewport()
    marker(second, 2).click()
    pg.wait_for_function("h => location.hash === h", arg=href, timeout=15_000)
    expect(footnote).to_be_in_viewport()
    back = footnote.locator("a.citekit-backlink").first
    back.click()
    pg.wait_for_function("h => location.hash === h", arg=f"#{href[1:-5]}-m-2-1", timeout=15_000)
    expect(marker(second, 2)).to_be_in_viewport()
    pg.screenshot(path=str(artifacts / "nbconvert_export.png"))


def test_strict_html_in_a_sanitized_nbconvert_export(
    page: tuple[Any, PageEvents], tmp_path: Path
) -> None:
    import nbformat
    from nbconvert import HTMLExporter
    from playwright.sync_api import expect

    from citekit import Answer, Citation

    answer = Answer(
        provider="magisterium",
        text="# Heading\n\nA claim[^1] with *emphasis*.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        citations=(
            Citation(
                cited_text="The passage.",
                document_index=0,
                document_title="Doc",
                source_url="https://example.org/doc",
            ),
        ),
        raw={"citekit_sample": "magisterium/strict"},
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("answer")]
    nb.cells[0].outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/html": answer.to_html(strict=True), "text/plain": "answer"},
        )
    ]
    exporter = HTMLExporter(template_name="lab", sanitize_html=True)
    body, _ = exporter.from_notebook_node(nb)
    export = tmp_path / "sanitized.html"
    export.write_text(body, encoding="utf-8")
    _open_export(pg := page[0], export)
    output = pg.locator(".jp-OutputArea-output").first
    text = output.inner_text()
    assert not _LITERAL_TAG.search(text), _LITERAL_TAG.search(text)
    assert "The passage." in text and "[recorded sample · magisterium/strict]" in text
    link = output.locator("a.citekit-marker")
    assert link.get_attribute("title") == "Doc"
    link.click()
    href = link.get_attribute("href")
    pg.wait_for_function("h => location.hash === h", arg=href, timeout=15_000)
    expect(pg.locator(f"[id='{href[1:]}']")).to_be_in_viewport()


# Elements that can run script or load content; none may come out of a citekit render.
_ACTIVE = "script, img, iframe, svg, object, embed, form, input, [onload], [onerror]"


def _expect_nothing_active(output: Any) -> None:
    """No active element in ``output``; a ``<style>`` only as each answer's own scoped style
    (constants and the answer's id token)."""
    from playwright.sync_api import expect

    from citekit.render.html import target_style
    from citekit.text.escape import STYLE

    expect(output.locator(_ACTIVE)).to_have_count(0)
    styles = output.evaluate_all(
        "(outs) => outs.flatMap((o) => [...o.querySelectorAll('style')].map((s) =>"
        " [s.textContent, s.closest('.citekit-answer, .citekit-references')?.id ?? '']))"
    )
    for text, token in styles:
        assert token, text
        if f"<style>{text}</style>" == target_style(token):
            continue
        # the highlight of the footnote a focused link points to: the token and numbers only
        target = f"{token}-(?:fn-\\d+|m-\\d+-\\d+)"
        rule = f'#{token}:has\\(a\\[href="#{target}"\\]:focus\\) \\[id="{target}"\\]'
        assert re.fullmatch(f"{rule}(?:, {rule})*{re.escape('{' + STYLE.TARGET + '}')}", text)


def _poke_everything(page: Any, scope: Any) -> None:
    """Hover and click what a reader would: markers, summaries, links (popups are blocked)."""
    for element in scope.locator("a.citekit-marker, summary, .citekit-answer a").all()[:60]:
        try:
            element.hover(timeout=2_000)
            if element.evaluate("e => e.tagName") == "SUMMARY" or (
                (element.get_attribute("href") or "").startswith("#")
            ):
                element.click(timeout=2_000)
        except Exception:
            pass  # hidden or detached elements do not matter here
    page.wait_for_timeout(500)


def _assert_no_script_ran(events: PageEvents) -> None:
    assert not events.dialogs, events.dialogs
    ran = [m for m in events.console + events.errors if "XSS" in m]
    assert not ran, ran


def test_payloads_in_every_field_run_no_script_in_jupyterlab(
    jupyterlab: Lab, page: tuple[Any, PageEvents]
) -> None:
    from playwright.sync_api import expect

    pg, events = page
    # Trusted, executed in the browser: JupyterLab inserts the HTML as-is and runs scripts.
    nbs.write(nbs.payload_notebook(), jupyterlab.root / "payloads.ipynb")
    open_notebook(pg, jupyterlab, "payloads.ipynb")
    run_all_cells(pg)
    wait_for_outputs(pg, 2)
    pg.wait_for_function(
        "sel => document.querySelectorAll(sel).length >= 3",
        arg=f"{NOTEBOOK} .jp-OutputArea-output",
        timeout=60_000,
    )
    pg.wait_for_timeout(1_000)
    assert any("CONTROL-SCRIPT-RAN" in m for m in events.console), "control script did not run"
    evil = cell(pg, 1)
    expect(evil.locator(".citekit-answer")).to_have_count(1)
    _expect_nothing_active(evil.locator(".jp-OutputArea-output"))
    _poke_everything(pg, pg.locator(NOTEBOOK))
    _assert_no_script_ran(events)


def test_payloads_in_every_field_run_no_script_in_an_nbconvert_export(
    page: tuple[Any, PageEvents], executed_payloads: Any, tmp_path: Path
) -> None:
    from nbconvert import HTMLExporter

    pg, events = page
    # The export is not sanitized: the control script runs, the payloads must not.
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed_payloads)
    export = tmp_path / "payloads.html"
    export.write_text(body, encoding="utf-8")
    _open_export(pg, export)
    pg.wait_for_timeout(500)
    assert any("CONTROL-SCRIPT-RAN" in m for m in events.console), "control script did not run"
    _expect_nothing_active(pg.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output"))
    _poke_everything(pg, pg.locator("body"))
    _assert_no_script_ran(events)
