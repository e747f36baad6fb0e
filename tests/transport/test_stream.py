"""``client.stream()`` / ``client.astream()``: iterable, context manager, ``close()`` frees the
connection, ``.answer`` once consumed (the partial answer after ``StreamInterrupted``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

import citekit as ck
from citekit import AsyncStream, Stream
from citekit.model import TextRead, first_text
from citekit.testing import ProviderServer
from tests.conftest import sample_records

MAG_Q = sample_records("magisterium")[1][1]["question"]
GB_Q = sample_records("gptbots")[0][1]["question"]


def wait_until_served(server: ProviderServer, url: str, count: int) -> None:
    """Until the server has finished ``count`` requests of ``url``'s scenario."""
    sid = server.scenario(url).id
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        done = [r for r in server.requests if r.scenario == sid and r.end is not None]
        if len(done) >= count:
            return
        time.sleep(0.01)
    raise AssertionError("the server still serves a stream the client closed")


def test_iterates_events_then_the_answer(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    stream = mg.stream(MAG_Q)
    assert isinstance(stream, Stream) and stream.answer is None
    events = list(stream)
    assert isinstance(events[-1], ck.Answer) and stream.answer is events[-1]
    assert not any(isinstance(e, ck.Answer) for e in events[:-1])
    text = "".join(e.text for e in events if isinstance(e, ck.TextDelta))
    assert text == stream.answer.text and stream.answer.citations
    assert list(stream) == []  # consumed once


def test_batches_hand_on_the_same_events_a_read_at_a_time(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium", chunks=2000))
    events = list(mg.stream(MAG_Q, cache=False))
    with mg.stream(MAG_Q, cache=False) as stream:
        batches = list(stream.batches())
    assert all(isinstance(b, list) and b for b in batches)
    # The key's scrub joined each read's text already: a read carries it for the display.
    assert any(type(b) is TextRead for b in batches)
    assert all(first_text(b) == "".join(e.text for e in b) for b in batches)
    assert 1 < len(batches) < len(events)  # several reads, several events in a read
    assert [e for b in batches for e in b] == events[:-1]  # the answer is not among them
    assert stream.answer is not None and stream.answer.text == events[-1].text
    assert first_text([e for b in batches for e in b]) == stream.answer.text


def test_with_block_and_text_deltas(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    with mt.stream([{"role": "user", "content": "O que é o Pix?"}]) as stream:
        pieces = list(stream.text_deltas())
    assert stream.answer is not None and "".join(pieces) == stream.answer.text


def test_next_and_same_signature_on_every_provider(server: ProviderServer) -> None:
    gb = ck.GPTBots(api_key="k", base_url=server.base_url("gptbots"))
    conversation = gb.new_conversation()
    with gb.stream(GB_Q, conversation_id=conversation) as stream:
        first = next(stream)
        assert isinstance(first, ck.TextDelta)
        rest = list(stream)
    assert stream.answer is rest[-1]
    assert stream.answer.conversation_id == conversation
    assert stream.answer.references is not None


def test_close_mid_stream_frees_the_connection(server: ProviderServer) -> None:
    url = server.base_url("magisterium", chunks=5000, delay=0.005)
    mg = ck.Magisterium(api_key="k", base_url=url)
    for served in (1, 2):
        stream = mg.stream(MAG_Q)
        for _, event in zip(range(3), stream, strict=False):
            assert isinstance(event, ck.TextDelta)
        stream.close()
        stream.close()  # again: nothing happens
        wait_until_served(server, url, served)
        assert stream.answer is None and list(stream) == []
    assert server.scenario(url).max_concurrent == 1  # the first was gone when the second came


def test_leaving_the_block_early_gives_the_connection_back(server: ProviderServer) -> None:
    # One connection in the pool and half a second to get it: a stream left open would block
    # the next request with a pool timeout.
    url = server.base_url("magisterium", chunks=5000, delay=0.005)
    limits = httpx.Limits(max_connections=1)
    with httpx.Client(limits=limits, timeout=httpx.Timeout(10, pool=0.5)) as own:
        mg = ck.Magisterium(api_key="k", base_url=url, http_client=own)
        for _ in range(3):
            with mg.stream(MAG_Q, log=False) as stream:
                assert isinstance(next(stream), ck.TextDelta)
            assert stream.answer is None
        assert mg.ask(MAG_Q, log=False).text


def test_interrupted_stream_holds_the_partial_answer(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="reset", after=5)
    mg = ck.Magisterium(api_key="k", base_url=url)
    stream = mg.stream(MAG_Q)
    with pytest.raises(ck.StreamInterrupted) as info, stream:
        for _ in stream:
            pass
    assert stream.answer is info.value.answer
    assert stream.answer is not None and stream.answer.partial and stream.answer.text


def test_a_cached_stream_holds_the_cached_answer(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    first = mg.ask(MAG_Q + " (stream cache)", stream=True, display=False)
    with mg.stream(MAG_Q + " (stream cache)", cache=True) as stream:
        events = list(stream)
    assert stream.answer is not None and stream.answer.cached
    assert stream.answer.text == first.text == events[0].text


def test_arguments_are_checked_when_the_stream_is_made(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    sent = len(server.requests)
    with pytest.raises(ValueError, match="temperature"):
        mg.stream(MAG_Q, temperature=-5)
    stream = mg.stream(MAG_Q)
    stream.close()  # never iterated: nothing was sent
    assert len(server.requests) == sent and stream.answer is None


# -- async ------------------------------------------------------------------------------------
def test_async_stream(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))

    async def run() -> tuple[AsyncStream, list[Any], str]:
        async with mg.astream(MAG_Q) as stream:
            assert stream.answer is None
            events = [event async for event in stream]
        async with mg.astream(MAG_Q) as again:
            text = "".join([piece async for piece in again.text_deltas()])
        await mg.aclose()
        return stream, events, text

    stream, events, text = asyncio.run(run())
    assert isinstance(stream, AsyncStream) and stream.answer is events[-1]
    assert text == stream.answer.text == mg.ask(MAG_Q).text


def test_async_close_mid_stream_frees_the_connection(server: ProviderServer) -> None:
    url = server.base_url("magisterium", chunks=5000, delay=0.005)
    gb_url = server.base_url("gptbots", delay=0.05)
    mg = ck.Magisterium(api_key="k", base_url=url)
    gb = ck.GPTBots(api_key="k", base_url=gb_url)

    async def run() -> None:
        for served in (1, 2):
            stream = mg.astream(MAG_Q)
            assert isinstance(await anext(stream), ck.TextDelta)
            await stream.close()
            await asyncio.to_thread(wait_until_served, server, url, served)
            assert stream.answer is None
        async with gb.astream(GB_Q) as gb_stream:
            async for _ in gb_stream:
                break
        await mg.aclose()
        await gb.aclose()

    asyncio.run(run())
    assert server.scenario(url).max_concurrent == 1


def test_async_interrupted_stream_holds_the_partial_answer(server: ProviderServer) -> None:
    url = server.base_url("gptbots", fault="reset", after=4, endpoint="message")
    gb = ck.GPTBots(api_key="k", base_url=url)

    async def run() -> tuple[AsyncStream, ck.StreamInterrupted]:
        stream = gb.astream(GB_Q)
        try:
            async with stream:
                async for _ in stream:
                    pass
        except ck.StreamInterrupted as exc:
            return stream, exc
        raise AssertionError("the stream did not break")

    stream, exc = asyncio.run(run())
    assert stream.answer is exc.answer and stream.answer is not None
    assert stream.answer.partial and stream.answer.conversation_id
