"""The live display's last output is the answer's own render.

* Every recorded sample, streamed through the real clients against the loopback server with
  the notebook live display on, ends with exactly the bundle ``answer_bundle(answer)`` gives
  (ids aside, which are drawn per render): once with the display's own timing, once
  re-rendering at every delta so the streamed HTML is what the final render reuses.
* Arbitrary texts streamed in arbitrary pieces (markers, emphasis, code fences, tables and
  links cut anywhere) end with the one-shot render.

The fast Markdown paths it uses are checked against markdown-it in ``tests/text/``.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
import citekit.render.bundle as bundle_module
from citekit.model import Answer, Citation
from citekit.render import NotebookLiveAnswer, answer_bundle
from citekit.render.live import LiveAnswer
from citekit.testing import ProviderServer
from tests.budget import examples
from tests.conftest import SECRET, sample_records
from tests.providers.test_clients import magisterium_options, maritaca_options, streams


def _without_tokens(html: str) -> str:
    return re.sub(r"ck[0-9a-f]{10}", "TOKEN", html)


class _Handle:
    def __init__(self, shown: list[dict[str, str]]) -> None:
        self.shown = shown

    def update(self, obj: dict[str, str], **kw: Any) -> None:
        self.shown.append(obj)


class _Display:
    """``IPython.display.display`` as a kernel's: keeps every bundle it is given."""

    def __init__(self) -> None:
        self.shown: list[dict[str, str]] = []

    def __call__(self, obj: dict[str, str], **kw: Any) -> _Handle:
        self.shown.append(obj)
        return _Handle(self.shown)


class _Clock:
    """A clock that moves a second at every read: the display re-renders at every delta."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture()
def kernel(monkeypatch: pytest.MonkeyPatch) -> _Display:
    """The clients' live display as inside a Jupyter kernel."""
    import IPython
    import IPython.display

    class Shell:
        kernel = object()
        display_pub = None
        execution_count = 1

    display = _Display()
    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    monkeypatch.setattr(IPython.display, "display", display)
    return display


class _Live(NamedTuple):
    display: _Display
    reused: list[bool]  # whether each final render reused the streamed HTML
    settled: bool  # the text was re-rendered at each delta: nearly all of it settled
    # Under "every delta": at each finish, whether most of the text was settled by then.
    most_settled: list[bool]


@pytest.fixture(params=["own timing", "every delta"])
def live_display(
    request: pytest.FixtureRequest, kernel: _Display, monkeypatch: pytest.MonkeyPatch
) -> _Live:
    """The display the clients start, and whether each final render reused streamed HTML.

    Under "every delta" nearly all the text is settled when the stream ends, and the final
    render reuses its HTML; under the display's own timing, a stream that comes faster than
    the re-renders leaves most of it unsettled, and the final render may be a fresh one."""
    reused: list[bool] = []
    original = bundle_module.render_answer_html

    def spy(answer: Answer, *, strict: bool = False, body_html: str | None = None) -> str:
        reused.append(body_html is not None)
        return original(answer, strict=strict, body_html=body_html)

    monkeypatch.setattr(bundle_module, "render_answer_html", spy)
    most_settled: list[bool] = []
    if request.param == "every delta":
        started = LiveAnswer.start.__func__  # type: ignore[attr-defined]

        class Counted(NotebookLiveAnswer):
            def finish(self, answer: Answer) -> None:
                most_settled.append(2 * self._markdown.settled >= len(self.text))
                super().finish(answer)

        def start(cls: type[LiveAnswer], **kw: Any) -> LiveAnswer:
            live = started(cls, **kw)
            assert isinstance(live, NotebookLiveAnswer)
            return Counted(kw["provider"], kw.get("question"), interval=0.0, clock=_Clock())

        monkeypatch.setattr(LiveAnswer, "start", classmethod(start))
    return _Live(kernel, reused, settled=request.param == "every delta", most_settled=most_settled)


def _assert_final_is_the_answers_render(display: _Display, answer: Answer) -> None:
    final = display.shown[-1]
    fresh = answer_bundle(answer)
    assert set(final) == set(fresh)
    assert _without_tokens(final["text/html"]) == _without_tokens(fresh["text/html"])
    assert final["text/plain"] == fresh["text/plain"]
    assert final["text/markdown"] == fresh["text/markdown"]
    assert 'class="citekit-answer"' in final["text/html"]


MAG = sample_records("magisterium")
MAR = [(s, r) for s, r in sample_records("maritaca") if streams(r["request"]) != (False,)]
GB = sample_records("gptbots")


@pytest.mark.parametrize(("stem", "rec"), MAG, ids=[s for s, _ in MAG])
def test_magisterium_sample_live_ends_with_its_render(
    server: ProviderServer,
    live_display: _Live,
    stem: str,
    rec: dict[str, Any],
) -> None:
    display, reused, _, _ = live_display
    mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ck.ContentFilteredWarning)
        answer = mg.ask(
            rec["question"], stream=True, display=True, **magisterium_options(rec["request"])
        )
    assert answer.sample == f"magisterium/{stem}"
    _assert_final_is_the_answers_render(display, answer)
    # Reused where most of the text was settled (never a second render).
    assert len(reused) <= 1


@pytest.mark.parametrize(("stem", "rec"), MAR, ids=[s for s, _ in MAR])
def test_maritaca_sample_live_ends_with_its_render(
    server: ProviderServer,
    live_display: _Live,
    stem: str,
    rec: dict[str, Any],
) -> None:
    display = live_display.display
    mt = ck.Maritaca(api_key=SECRET, base_url=server.base_url("maritaca"))
    answer = mt.chat(
        rec["request"]["messages"],
        stream=True,
        display=True,
        **maritaca_options(rec["request"]),
    )
    assert answer.sample == f"maritaca/{stem}"
    _assert_final_is_the_answers_render(display, answer)


@pytest.mark.parametrize(("stem", "rec"), GB, ids=[s for s, _ in GB])
def test_gptbots_sample_live_ends_with_its_render(
    server: ProviderServer,
    live_display: _Live,
    stem: str,
    rec: dict[str, Any],
) -> None:
    display = live_display.display
    gb = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
    cited = "citations" in rec["message"]
    answer = gb.ask(rec["question"], stream=True, display=True, citations=cited)
    assert answer.sample == f"gptbots/{stem}"
    _assert_final_is_the_answers_render(display, answer)


def test_a_long_stream_in_thousands_of_chunks_ends_with_its_render(
    server: ProviderServer, live_display: _Live
) -> None:
    display, reused, settled, most_settled = live_display
    mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium", chunks=3000))
    answer = mg.ask(MAG[0][1]["question"], stream=True, display=True)
    assert len(answer.text) > 10_000
    _assert_final_is_the_answers_render(display, answer)
    assert len(reused) <= 1
    # The display is given a socket read's text at a time: on a loaded machine a few reads
    # may hold the whole stream, and then little was settled and the render is a fresh one.
    if settled and most_settled == [True]:
        assert reused == [True]


# -- arbitrary streamed texts, cut anywhere -----------------------------------------------------
_PIECES = [
    "Work has dignity",
    " and value",
    "[^1]",
    "[2]",
    "$[3]$",
    "[^1][^2]",
    "*em*",
    "**strong**",
    "*",
    "**",
    "_u_",
    " ",
    "  ",
    "\n",
    "\n\n",
    "## ",
    "# Title",
    "- ",
    "1. ",
    "> ",
    "    ",
    "```",
    "```\ncode [1]\n",
    "~~~",
    "`span [2]`",
    "| a | b |\n|---|---|\n| 1 [^1] | 2 |\n",
    "[link [1]](https://example.org/a)",
    "[1](https://example.org)",
    "<https://example.org/[2]>",
    "[ref]: https://example.org\n",
    "[^1]: a definition line\n",
    "&amp; <b>x</b> \\*",
    '"quoted" (aside), — «x»',
    "é",
    "\t",
    "\r\n",
    "!",
    ":",
]


def _answer(text: str) -> Answer:
    citations = tuple(
        Citation(
            cited_text=f"Passage {i} *quoted*.",
            document_index=i,
            document_title=f"Document {i}",
            source_url=f"https://example.org/doc/{i}",
        )
        for i in range(3)
    )
    return Answer(provider="magisterium", model="m", text=text, citations=citations)


@settings(
    max_examples=examples(250),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=30),
    cuts=st.lists(st.integers(1, 40), max_size=40),
)
def test_any_text_streamed_in_any_pieces_ends_with_the_one_shot_render(
    pieces: list[str], cuts: list[int]
) -> None:
    text = "".join(pieces)
    answer = _answer(text)
    display = _Display()
    live = NotebookLiveAnswer("magisterium", None, display=display, clock=_Clock(), interval=0.0)
    pos = 0
    for step in cuts:
        if pos >= len(text):
            break
        live.add(text[pos : pos + step])
        pos += step
    if pos < len(text):
        live.add(text[pos:])
    live.finish(answer)
    _assert_final_is_the_answers_render(display, answer)
