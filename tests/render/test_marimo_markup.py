"""In-page links carry no ``style`` attribute: marimo rebuilds ``<a href="#...">`` as a React
element with the attributes as given, and a ``style`` string there breaks the whole output
("Minified React error #62"; seen in ``tests/browser/test_marimo.py``)."""

from __future__ import annotations

import re

import pytest

import citekit as ck
from citekit.testing import ProviderServer

KEY = "test-key-0123456789"
_HASH_LINK = re.compile(r"<a\b[^>]*\bhref=[\"']#[^>]*>", re.I)


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    with ProviderServer() as srv:
        mg = ck.Magisterium(api_key=KEY, base_url=srv.base_url("magisterium"))
        mt = ck.Maritaca(api_key=KEY, base_url=srv.base_url("maritaca"))
        gb = ck.GPTBots(api_key=KEY, base_url=srv.base_url("gptbots"))
        answers = {
            "magisterium": mg.ask("What is the principle of subsidiarity?"),
            "maritaca": mt.ask("What is subsidiarity?", web_search=True),
            "gptbots": gb.ask("Why was the Great Wall built?", citations=True),
        }
        comparison = ck.compare(
            "What is subsidiarity?", [mg, (gb, {"citations": True})], progress=False
        )
    out = {name: a._repr_mimebundle_()["text/html"] for name, a in answers.items()}
    out |= {f"{name} strict": a.to_html(strict=True) for name, a in answers.items()}
    out["gptbots references"] = answers["gptbots"].references._repr_mimebundle_()["text/html"]
    out["comparison"] = comparison._repr_html_()
    return out


def test_in_page_links_have_no_style_attribute(rendered: dict[str, str]) -> None:
    seen = 0
    for name, html in rendered.items():
        for tag in _HASH_LINK.findall(html):
            seen += 1
            assert not re.search(r"\sstyle=", tag, re.I), (name, tag)
    # The check is not vacuous: markers, backlinks and the comparison's keys are all there.
    assert seen > 20
    assert 'class="citekit-compare-key"' in rendered["comparison"]
    assert 'class="citekit-backlink"' in rendered["magisterium"]


def test_charts_are_left_to_marimo_inside_marimo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside marimo the citekit renderer gives nothing and marimo draws the chart itself
    (tests/browser/test_marimo.py: drawn offline, with its tooltip); elsewhere it gives the
    static image and the live view."""
    import sys
    import types

    from citekit.render import chart

    spec = {"mark": "bar", "data": {"values": [{"a": 1}]}, "encoding": {"x": {"field": "a"}}}
    bundle, _ = chart.renderer(spec)
    assert "image/png" in bundle and "text/html" in bundle
    marimo = types.SimpleNamespace(running_in_notebook=lambda: True)
    monkeypatch.setitem(sys.modules, "marimo", marimo)
    assert chart.renderer(spec) == {}
    marimo.running_in_notebook = lambda: False  # imported, but not running a notebook
    assert "image/png" in chart.renderer(spec)[0]
