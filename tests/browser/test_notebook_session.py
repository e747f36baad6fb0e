"""A notebook session in a real JupyterLab: a streamed answer shows once, ``%%ask --help`` and
``%ask ...?`` work, and Kernel > Interrupt during a stream prints one line and keeps the answer.

The kernel asks citekit's loopback server (started in the first cell; nothing leaves the
machine). The interrupt goes through JupyterLab's own Kernel menu, as a user sends it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser import _notebooks as nbs
from tests.browser.conftest import Lab, PageEvents
from tests.browser.test_notebook_footnotes import NOTEBOOK, cell, open_notebook, run_all_cells

pytestmark = pytest.mark.browser

QUESTION = "What is the principle of subsidiarity?"

_SETUP = f"""\
import os
import citekit as ck
from citekit.testing import ProviderServer

quick = ProviderServer().start()
os.environ["MAGISTERIUM_API_KEY"] = "sk-test-browser-0123456789"
os.environ["MAGISTERIUM_BASE_URL"] = quick.base_url("magisterium")
mg = ck.Magisterium()
# A long synthetic stream, a tenth of a second between events: about five minutes.
mg_slow = ck.Magisterium(base_url=quick.base_url("magisterium", chunks=3000, delay=0.1))
%load_ext citekit
QUESTION = {QUESTION!r}
"""

# Cell indexes.
STREAMED, HELP, LINE, INTERRUPTED, AFTER = 1, 2, 3, 4, 5
_CELLS = [
    _SETUP,
    "mg.ask(QUESTION, stream=True)",
    "%%ask --help\n",
    f"%ask {QUESTION}",
    "mg_slow.ask(QUESTION, stream=True)",
    "print('kept', len(ck.last_answer.text), 'characters;', ck.last_answer.finish_reason)",
]


def _outputs(pg: Any, index: int) -> Any:
    return cell(pg, index).locator(".jp-OutputArea-output")


def test_stream_help_line_magic_and_interrupt_in_jupyterlab(
    jupyterlab: Lab, page: tuple[Any, PageEvents], artifacts: Path
) -> None:
    from playwright.sync_api import expect

    pg, _ = page
    nbs.write(nbs._notebook(_CELLS), jupyterlab.root / "session.ipynb")
    open_notebook(pg, jupyterlab, "session.ipynb")
    run_all_cells(pg)

    # The streamed answer, last line of its cell: one answer with its footnotes, not two.
    streamed = _outputs(pg, STREAMED)
    expect(streamed.locator(".citekit-footnote").first).to_be_visible(timeout=120_000)
    expect(streamed.locator(".citekit-answer")).to_have_count(1)
    expect(streamed.locator(".citekit-streaming")).to_have_count(0)

    # %%ask --help prints its options (it used to fail with "unrecognized arguments").
    help_text = _outputs(pg, HELP)
    expect(help_text).to_contain_text("--stream", timeout=60_000)
    expect(help_text).to_contain_text("usage")

    # %ask with a trailing "?" asks; IPython's help transform does not take it.
    expect(_outputs(pg, LINE).locator(".citekit-answer")).to_have_count(1, timeout=60_000)
    pg.screenshot(path=str(artifacts / "jupyterlab_session.png"))

    # A slow stream (Run All reached it), interrupted from the Kernel menu once text arrived.
    interrupted = _outputs(pg, INTERRUPTED)
    expect(interrupted.locator(".citekit-answer")).to_have_count(1, timeout=60_000)
    pg.wait_for_function(
        "c => (c.querySelector('.citekit-answer')?.textContent.length ?? 0) > 80",
        arg=cell(pg, INTERRUPTED).element_handle(),
        timeout=60_000,
    )
    pg.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
    pg.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Interrupt Kernel$")).click()
    error = cell(pg, INTERRUPTED).locator(".jp-OutputArea-output[data-mime-type*='stderr']")
    expect(error).to_contain_text("Interrupted: citekit kept the partial answer", timeout=60_000)
    message = (error.text_content() or "").strip()
    assert len(message.splitlines()) == 1 and "httpx" not in message, message
    assert "citekit.last_answer" in message and "logged as partial" in message
    pg.locator(f"{NOTEBOOK} .jp-Cell").nth(INTERRUPTED).scroll_into_view_if_needed()
    pg.screenshot(path=str(artifacts / "jupyterlab_interrupted_stream.png"))

    # The partial answer is reachable from the next cell (Run All stopped at the interrupt).
    expect(_outputs(pg, AFTER)).to_have_count(0)
    cell(pg, AFTER).locator(".cm-content").click()
    pg.keyboard.press("Shift+Enter")
    expect(_outputs(pg, AFTER)).to_contain_text(re.compile(r"kept \d+ characters;"))
