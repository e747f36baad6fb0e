"""``citekit.last_error``: the last failure of a call, explained (type, provider, HTTP status,
message, what to do) in text, Markdown and HTML; a hostile message stays text."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import citekit as ck
from citekit.providers.failure import explain, remember_error
from citekit.testing import ProviderServer
from tests.budget import examples


def _fail(call: object) -> ck.CitekitError:
    try:
        call()  # type: ignore[operator]
    except ck.CitekitError as exc:
        return exc
    raise AssertionError("the call did not fail")


def test_the_last_failure_is_explained(server: ProviderServer) -> None:
    url = server.base_url("magisterium", api_key="the-right-key")
    wrong = ck.Magisterium(api_key="a-wrong-key-0123456789", base_url=url, max_retries=0)
    error = _fail(lambda: wrong.ask("What is grace?"))
    failure = ck.last_error
    assert failure is not None and failure.error is error
    assert (failure.kind, failure.provider, failure.status) == (
        "AuthenticationError",
        "magisterium",
        401,
    )
    text = str(failure)
    assert text.splitlines()[0] == "AuthenticationError from Magisterium (HTTP 401)"
    assert "Message: Incorrect API key provided" in text
    assert "a-wrong-key" not in text + failure._repr_html_() + failure._repr_markdown_()
    bundle = failure._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}

    busy = server.base_url("maritaca", fault="status", status=429, retry_after=30)
    _fail(lambda: ck.Maritaca(api_key="k-0123456789", base_url=busy, max_retries=0).ask("Pix?"))
    assert ck.last_error is not None and ck.last_error.status == 429
    assert "wait 30 s" in ck.last_error.advice

    down = server.base_url("gptbots", fault="status", status=500, times=100)
    _fail(lambda: ck.GPTBots(api_key="k-0123456789", base_url=down, max_retries=0).ask("Wall?"))
    assert ck.last_error is not None and ck.last_error.kind == "ServerError"
    assert ck.last_error.provider == "gptbots" and "ask again later" in ck.last_error.advice

    nowhere = ck.Magisterium(api_key="k-0123456789", base_url="http://127.0.0.1:9", max_retries=0)
    _fail(lambda: nowhere.ask("What is grace?"))
    assert ck.last_error is not None and ck.last_error.status is None
    assert "could not be reached" in ck.last_error.advice and "ck.offline()" in ck.last_error.advice
    # Worded for a shell, the advice names no Python.
    assert "citekit --offline" in explain(ck.last_error.error, shell=True).advice

    # A call that succeeds does not clear it: the last failure stays until the next one.
    ck.Magisterium(api_key="the-right-key", base_url=url).ask("What is grace?")
    assert ck.last_error is not None and ck.last_error.status is None


def test_ctrl_c_is_not_a_failure() -> None:
    remember_error(ValueError("a value the call refused"))
    remember_error(KeyboardInterrupt())
    assert ck.last_error is not None and ck.last_error.kind == "ValueError"
    assert "see the traceback" in ck.last_error.advice


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text += data


@hsettings(max_examples=examples(200))
@given(message=st.text(min_size=1), status=st.one_of(st.none(), st.integers(100, 599)))
def test_a_hostile_message_stays_text(message: str, status: int | None) -> None:
    error = ck.ServerError(message, provider="gptbots", status=status)
    failure = explain(error)
    page = _Text()
    page.feed(failure._repr_html_())
    assert set(page.tags) <= {"div", "dl", "dt", "dd"}
    assert " ".join(message.split()) in html.unescape(failure._repr_html_()) or not message.strip()
    assert str(failure).startswith("ServerError from GPTBots")
