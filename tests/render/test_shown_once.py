"""A streamed answer as a cell's last line is shown once: by the live display, not again as
the cell's result (a real IPython shell; its display publisher records what a front end gets)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from citekit import Answer, Citation
from citekit.render import NotebookLiveAnswer


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    ip = InteractiveShell.instance(config=config)
    ip.display_pub = CapturingDisplayPublisher()
    yield ip
    InteractiveShell.clear_instance()


def shown(ip: InteractiveShell, marker: str) -> int:
    """How many outputs carry the answer's HTML."""
    outputs = ip.display_pub.outputs  # type: ignore[attr-defined]
    return sum(marker in str(o.get("data", {}).get("text/html", "")) for o in outputs)


def test_a_streamed_answer_is_shown_once_then_again_when_asked(shell: InteractiveShell) -> None:
    answer = Answer(
        provider="magisterium",
        text="Work is for man [^1] (marker-7c1e).",
        citations=(Citation(cited_text="p", document_index=0, document_title="LE"),),
    )
    shell.user_ns.update(answer=answer, NotebookLiveAnswer=NotebookLiveAnswer)
    result = shell.run_cell(
        "live = NotebookLiveAnswer('magisterium', 'q')\nlive.finish(answer)\nanswer",
        store_history=True,
    )
    assert result.success and result.result is answer
    assert shown(shell, "marker-7c1e") == 1  # the live display's, not a second one
    # In a later cell the answer shows as usual.
    assert shell.run_cell("answer", store_history=True).success
    assert shown(shell, "marker-7c1e") == 2
    # An answer that was not streamed shows as a cell's result.
    other = Answer(provider="magisterium", text="Plain (marker-90ab).")
    shell.user_ns["other"] = other
    assert shell.run_cell("other", store_history=True).success
    assert shown(shell, "marker-90ab") == 1
