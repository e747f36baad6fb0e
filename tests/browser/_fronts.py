"""A notebook and a marimo app that ask the loopback server and show the answer and a chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from tests.browser._notebooks import KERNELSPEC

KEY = "test-key-0123456789"
QUESTION = "What is the principle of subsidiarity?"
#: Cell indexes in the asking notebook.
ANSWER, CHART = 1, 2

_SETUP = """\
import citekit as ck

mg = ck.Magisterium(api_key={key!r}, base_url={base_url!r})
"""

_ASK = f"""\
answer = mg.ask({QUESTION!r})
answer
"""

# citekit's own altair renderer shows it (a static image, drawn live where scripts run).
_CHART = """\
ck.charts.authors(ck.sources_frame([answer]))
"""


def asking_notebook(base_url: str) -> Any:
    """Set up a client on ``base_url``, ask, show the answer, show a chart of its authors."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    cells = [_SETUP.format(key=KEY, base_url=base_url), _ASK, _CHART]
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


_APP = """\
import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import citekit as ck

    return (ck,)


@app.cell
def _(ck):
    mg = ck.Magisterium(api_key={key!r}, base_url={base_url!r})
    answer = mg.ask({question!r})
    answer
    return (answer,)


@app.cell
def _(answer, ck):
    ck.charts.authors(ck.sources_frame([answer]))
    return


if __name__ == "__main__":
    app.run()
"""


def marimo_app(folder: Path, base_url: str) -> Path:
    """A marimo app that asks ``base_url``, shows the answer and a chart of its authors."""
    path = folder / "asking_app.py"
    # The page follows the browser's colour scheme (marimo's default theme is light).
    (folder / ".marimo.toml").write_text('[display]\ntheme = "system"\n', encoding="utf-8")
    path.write_text(_APP.format(key=KEY, base_url=base_url, question=QUESTION), encoding="utf-8")
    return path


_OBJECTS_APP = """\
import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import citekit as ck

    mg = ck.Magisterium(api_key={key!r}, base_url={magisterium!r})
    gb = ck.GPTBots(api_key={key!r}, base_url={gptbots!r})
    return ck, gb, mg


@app.cell
def _(gb):
    gb.ask("Why was the Great Wall built?", citations=True).references
    return


@app.cell
def _(mg):
    mg.search("subsidiarity")
    return


@app.cell
def _(ck, mg):
    # The same question twice: every work is shared, so the keys (in-page links) show.
    ck.compare({question!r}, [mg, (mg, {{"max_tokens": 500}})], progress=False)
    return


@app.cell
def _(mg):
    mg.ask({question!r}, stream=True)
    return
"""

#: Output indexes in the objects app (the first cell shows nothing).
REFERENCES, SEARCH, COMPARISON, STREAMED = 1, 2, 3, 4


def marimo_objects_app(folder: Path, base_urls: dict[str, str]) -> Path:
    """A marimo app showing a reference list, search results, a comparison, a streamed answer."""
    path = folder / "objects_app.py"
    source = _OBJECTS_APP.format(key=KEY, question=QUESTION, **base_urls)
    path.write_text(source, encoding="utf-8")
    return path
