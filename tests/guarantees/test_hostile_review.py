"""The seams between issue 11's parts, attacked together.

Each test here is a defect a hostile review found where two parts met (the key scrubber and
Ctrl-C's partial answer, the scrubber and ``citekit.last_answer``, ...), fixed at the shared
mechanism and kept as a class of inputs.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import citekit as ck
from citekit import Citation
from citekit.cli.main import main as cli_main
from citekit.data.io.exports import markdown_document as export_markdown
from tests.conftest import SECRET, sample_records
from tests.guarantees.test_hostile_injection import RENDERERS, assert_harmless
from tests.guarantees.test_hostile_secrets import (
    ENCODINGS,
    JSON,
    SETTINGS,
    SSE,
    _chunk,
    _sse,
    _url,
    assert_no_key,
    encodings,
    everything_shown,
    fresh_home,
    hostile,
    keys,
    log_bytes,
)
from tests.guarantees.test_hostile_wire import App, Reply, json_reply, raw_server

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"

__all__ = ["hostile"]  # the server fixture, shared with the secrets tests

ENDINGS = ["complete", "broken", "ctrl-c", "cancelled"]


def _echoing_stream(echo: str, *, complete: bool) -> bytes:
    """A stream whose text holds ``echo`` split over three deltas, finished or cut off."""
    third = max(1, len(echo) // 3)
    parts = [echo[:third], echo[third : 2 * third], echo[2 * third :]]
    events: list[Any] = [_chunk("Your key "), *(_chunk(p) for p in parts), _chunk(" ok")]
    if complete:
        events += [_chunk("", finish="stop"), "[DONE]"]
    return _sse(events)


def _outcome(client: Any, ending: str) -> Any:
    """How the call ends: its answer, or the exception it raised."""
    question = "What is the dignity of work?"
    if ending == "cancelled":

        async def consume() -> Any:
            text = ""
            try:
                async with client.astream(question) as events:
                    async for event in events:
                        text += getattr(event, "text", "")
                        if text.endswith(" ok"):  # the text has come, not the stream's end
                            raise asyncio.CancelledError
            except asyncio.CancelledError as exc:
                return exc

        return asyncio.run(consume())
    text = ""
    try:
        with client.stream(question) as events:
            for event in events:
                text += getattr(event, "text", "")
                if ending == "ctrl-c" and text.endswith(" ok"):
                    raise KeyboardInterrupt  # pressed in the loop over the stream
        return events.answer
    except (ck.CitekitError, KeyboardInterrupt) as exc:
        return exc


@SETTINGS
@given(
    key=keys,
    encoding=encodings,
    provider=st.sampled_from(["magisterium", "maritaca"]),
    ending=st.sampled_from(ENDINGS),
)
def test_no_ending_of_a_stream_keeps_an_echoed_key(
    hostile: ThreadingHTTPServer, key: str, encoding: str, provider: str, ending: str
) -> None:
    """Whole, broken, stopped by Ctrl-C or cancelled: the answer the call ends with (on the
    exception, in ``citekit.last_answer``, in the log) holds no key the server echoed."""
    echo = ENCODINGS[encoding](key)
    body = _echoing_stream(echo, complete=ending != "broken")
    hostile.routes = {"/chat/completions": (200, SSE, body)}  # type: ignore[attr-defined]
    client = ck.client(
        provider,  # type: ignore[arg-type]
        api_key=key,
        base_url=_url(hostile),
        max_retries=0,
        http_client=hostile.http,  # type: ignore[attr-defined]
    )
    with fresh_home() as folder:
        outcome = _outcome(client, ending)
        kept = outcome if isinstance(outcome, ck.Answer) else getattr(outcome, "answer", None)
        assert isinstance(kept, ck.Answer), outcome
        assert kept.partial == (ending != "complete")
        last = ck.last_answer
        assert last is not None and last.text == kept.text
        # What the messages count is the text the caller gets, not the echo's length.
        counted = f"{len(kept.text)} characters"
        if ending == "broken":
            assert counted in str(outcome), outcome
        if ending == "ctrl-c":
            assert counted in outcome.__notes__[0], outcome.__notes__
        texts = [*everything_shown(outcome, folder), *everything_shown(last, folder)]
        if ending != "cancelled":  # the partial answer of a cancelled task is kept, not logged
            texts.append(log_bytes())
    assert_no_key(key, *texts)


@pytest.mark.parametrize("make", [KeyboardInterrupt, asyncio.CancelledError])
def test_an_interrupt_carrying_an_answer_is_scrubbed(make: Callable[[], BaseException]) -> None:
    """``scrub_error`` takes the key out of the partial answer any interrupt carries."""
    from citekit.core.secrets import scrub_error

    key = "sk-review-0123456789"
    stop = make()
    stop.answer = ck.Answer(provider="magisterium", text=f"echo {key}")  # type: ignore[attr-defined]
    scrub_error(stop, [key])
    assert key not in stop.answer.text  # type: ignore[attr-defined]


# -- the CLI's error line: provider text that opens an escape sequence and never ends it ------
_CONTROLS = st.characters(codec="utf-8", categories=["Cc"])
_PROSE = st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"])


_OPENERS = st.sampled_from(["\x1b]", "\x1b["])


@SETTINGS
@given(message=st.lists(st.one_of(_CONTROLS, _PROSE, _OPENERS)).map("".join))
def test_an_error_line_ends_with_its_advice_whatever_the_server_wrote(
    hostile: ThreadingHTTPServer, message: str
) -> None:
    """The CLI's error goes through the terminal cleaning like its answers do, and is written
    whole: text after an unterminated OSC/CSI from the server is not swallowed with the advice
    that follows it (the held-back rest of stderr is written at the end, as stdout's is)."""
    body = json.dumps({"error": {"message": message}}).encode()
    hostile.routes = {"/chat/completions": (401, JSON, body)}  # type: ignore[attr-defined]
    argv = ["ask", "What is work?", "--base-url", _url(hostile), "--no-stream"]
    out, err = io.StringIO(), io.StringIO()
    key = {"MAGISTERIUM_API_KEY": "sk-cli-review-0123456789"}
    env = mock.patch.dict(os.environ, key)
    with env, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert cli_main(argv) == 1
    shown = err.getvalue()
    assert shown.endswith("run `citekit keys set magisterium`\n"), shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown), shown


# -- Markdown: a "<" that opens no tag still opens an autolink ---------------------------------
AUTOLINK_PIECES = st.sampled_from(
    ["<", ">", "[r]", "\n", "\t", " ", "@", "x", "e.org", "1", "&lt;", "\\", "mailto:", ":", "."]
)
AUTOLINK_TEXT = st.lists(AUTOLINK_PIECES, max_size=14).map("".join)


@SETTINGS
@given(text=AUTOLINK_TEXT, quote=AUTOLINK_TEXT, title=AUTOLINK_TEXT)
def test_no_text_makes_an_autolink_in_any_renderer(text: str, quote: str, title: str) -> None:
    """Pieces of e-mail autolinks in the answer, a passage and a title: markdown-it (HTML on),
    mistune and python-markdown (attr_list) make no link the provider did not write as one
    (python-markdown's e-mail rule once took ``<[r]\\n&lt;x@e.org>`` across a passage's lines
    and an escaped ``<``, giving an ``href`` with a newline in it)."""
    citation = Citation(cited_text=quote, document_index=0, document_title=title)
    answer = ck.Answer(provider="magisterium", text=f"{text}[^1]{text}", citations=(citation,))
    for markdown in (export_markdown(answer), answer.to_markdown()):
        assert_harmless(markdown)
        for render in RENDERERS.values():
            assert "mailto:" not in render(markdown) or "mailto:" in text + quote + title


def test_the_autolink_found_across_a_passage() -> None:
    citation = Citation(cited_text="<[r]\n<x@e.org>", document_index=0, document_title="<")
    answer = ck.Answer(provider="magisterium", text="[^1]", citations=(citation,))
    assert_harmless(answer.to_markdown())


# -- GPTBots: Ctrl-C after the answer came, while its references are fetched -------------------
def _gptbots_app(interrupt: Callable[[], None]) -> App:
    record = sample_records("gptbots")[0][1]
    lines = (SAMPLES / "gptbots" / "01_great_wall_why.jsonl").read_bytes()

    def app(method: str, path: str, body: bytes) -> Reply:
        if "/v1/conversation" in path and "message" not in path:
            return json_reply({"conversation_id": "c-1"})
        if "/v2/conversation/message" in path:
            if json.loads(body).get("response_mode") == "streaming":
                return 200, {"Content-Type": "application/x-ndjson"}, [lines]
            return json_reply(record["message"])
        interrupt()  # the references (or next questions) request: the user stops here

        def late() -> Iterator[bytes]:
            time.sleep(5)
            yield b"{}"

        return 200, {"Content-Type": "application/json"}, late()

    return app


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("how", ["ctrl-c", "cancelled"])
def test_stopping_a_gptbots_ask_while_its_references_come_keeps_the_answer(
    stream: bool, how: str
) -> None:
    """The answer had arrived whole: Ctrl-C (or a cancellation) during the references request
    keeps it on the exception, in ``citekit.last_answer`` and in the log, with a note."""
    main = threading.main_thread().ident
    task: list[asyncio.Task[Any]] = []

    def interrupt() -> None:
        if how == "ctrl-c":
            assert main is not None
            signal.pthread_kill(main, signal.SIGINT)
        else:
            task[0].get_loop().call_soon_threadsafe(task[0].cancel)

    with raw_server(_gptbots_app(interrupt)) as srv, fresh_home():
        gb = ck.GPTBots(api_key=SECRET, base_url=srv.url, max_retries=0)
        stopped: BaseException | None = None
        if how == "ctrl-c":
            try:
                gb.ask("Why was the Great Wall built?", stream=stream, display=False)
            except KeyboardInterrupt as exc:
                stopped = exc
        else:

            async def ask() -> None:
                task.append(asyncio.current_task())  # type: ignore[arg-type]
                await gb.aask("Why was the Great Wall built?", stream=stream, display=False)

            try:
                asyncio.run(ask())
            except asyncio.CancelledError as exc:
                stopped = exc
        assert stopped is not None, "the call was not stopped"
        kept = getattr(stopped, "answer", None)
        assert isinstance(kept, ck.Answer) and kept.text.startswith("The Great Wall")
        assert kept.references is None and "not included" in kept.notes[-1]
        assert ck.last_answer is kept
        ck.log.flush()
        [row] = ck.log.rows()
        assert row["text"] == kept.text and row["error_type"] == type(stopped).__name__


# -- a redirect whose Location httpx cannot read ------------------------------------------------
#: What HTTP/1.1 lets a header value hold (h11 refuses NUL and the other whitespace controls).
LOCATIONS = st.text(st.characters(codec="latin-1", exclude_characters="\x00\r\n\x0b\x0c"))


@SETTINGS
@given(location=LOCATIONS, status=st.sampled_from([301, 302, 307, 308]))
def test_any_redirect_is_named_a_redirect_never_an_unreachable_server(
    location: str, status: int
) -> None:
    """Whatever a 3xx's Location holds (control characters, spaces, the key), the error says
    the server answered with a redirect; it never reads "Could not reach" (which a Location
    httpx cannot parse gave), is never retried, and never shows the key."""
    where = location.replace("KEY", SECRET)
    headers = {"Location": where, "Content-Length": "0"}
    with raw_server(lambda method, path, body: (status, headers, [b""])) as srv:
        client = ck.Magisterium(api_key=SECRET, base_url=srv.url, max_retries=2)
        with pytest.raises(ck.CitekitError) as caught:
            client.ask("q", display=False, log=False)
        assert len(srv.seen) == 1
    error = caught.value
    assert isinstance(error, ck.ProviderError | ck.ResponseFormatError), error
    assert "redirect" in str(error) and "base_url=" in str(error)
    assert "Could not reach" not in str(error) and SECRET not in str(error)


def test_a_location_with_a_control_character() -> None:
    headers = {"Location": f"http://evil.example/\x1b]0;x\x07?k={SECRET}", "Content-Length": "0"}
    with raw_server(lambda method, path, body: (302, headers, [b""])) as srv:
        client = ck.Magisterium(api_key=SECRET, base_url=srv.url, max_retries=0)
        with pytest.raises(ck.ResponseFormatError, match="redirect whose Location"):
            client.ask("q", display=False, log=False)


# -- citekit ask: Ctrl-C while the answer is printed ------------------------------------------
class _StoppedWhilePrinting(io.StringIO):
    """A terminal where Ctrl-C is pressed as the second piece of text is printed."""

    def write(self, text: str) -> int:
        if "second" in text:
            raise KeyboardInterrupt
        return super().write(text)


def test_ctrl_c_while_citekit_ask_prints_keeps_the_partial_answer(
    hostile: ThreadingHTTPServer,
) -> None:
    body = _sse([_chunk("first part "), _chunk("second part "), _chunk("third")])
    hostile.routes = {"/chat/completions": (200, SSE, body)}  # type: ignore[attr-defined]
    out, err = _StoppedWhilePrinting(), io.StringIO()
    key = {"MAGISTERIUM_API_KEY": "sk-cli-review-0123456789"}
    argv = ["ask", "What is work?", "--base-url", _url(hostile)]
    with fresh_home(), mock.patch.dict(os.environ, key):
        printing = contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)
        with printing[0], printing[1]:
            assert cli_main(argv) == 130
        ck.log.flush()
        [row] = ck.log.rows()
    assert out.getvalue() == "first part " and "interrupted" in err.getvalue()
    assert row["partial"] and row["error_type"] == "KeyboardInterrupt"
    assert row["text"].startswith("first part second part")


def test_a_location_httpx_cannot_join_is_named_a_redirect() -> None:
    """httpx raises InvalidURL (not an HTTPError) building the redirect it will not follow."""
    headers = {"Location": "A:0", "Content-Length": "0"}
    with raw_server(lambda method, path, body: (301, headers, [b""])) as srv:
        client = ck.Magisterium(api_key=SECRET, base_url=srv.url, max_retries=2)
        with pytest.raises(ck.ResponseFormatError, match="redirect whose Location"):
            client.ask("q", display=False, log=False)
        assert len(srv.seen) == 1
