"""Calls as flows: the retry loop, streams and GPTBots' three requests written once
(``citekit.wire.flow``), run by a scripted driver (no network) and by the sync and async
drivers of ``citekit.transport.driver`` against the loopback server, with equal results."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer
from citekit.transport.driver import AsyncDriver, Run, SyncDriver
from citekit.transport.http import HttpConfig
from citekit.wire import gptbots
from citekit.wire.flow import CLOSE, READ, Flow, RequestSpec, Send, Sleep, fetch_json
from citekit.wire.openai_compat import ChatAccumulator, chat_flow
from citekit.wire.response import Wire
from citekit.wire.retry import RetryPolicy
from tests.conftest import SECRET, sample_records

MAG = sample_records("magisterium")
MAR = sample_records("maritaca")
GB = sample_records("gptbots")

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")


# -- a scripted driver: the flows alone, no network -------------------------------------------
@dataclass
class Reply:
    """A canned response: its status, headers and body in reads (an exception breaks a read)."""

    status_code: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    reads: list[bytes | Exception] = field(default_factory=list)


def json_reply(status: int, body: Any, **headers: str) -> Reply:
    return Reply(
        status, {"content-type": "application/json", **headers}, [json.dumps(body).encode()]
    )


def sse_reply(*reads: bytes | Exception) -> Reply:
    return Reply(200, {"content-type": "text/event-stream"}, list(reads))


def sse(*events: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


class Scripted:
    """Runs a flow against canned replies (an exception in place of a reply: sending failed)."""

    def __init__(self, *replies: Reply | Exception) -> None:
        self.replies = list(replies)
        self.ops: list[Any] = []
        self.events: list[Any] = []

    def run(self, flow: Flow[Any]) -> Any:
        value: Any = None
        error: BaseException | None = None
        reads: Iterator[bytes | Exception] = iter(())
        while True:
            try:
                op = flow.send(value) if error is None else flow.throw(error)
            except StopIteration as stop:
                return stop.value
            value = error = None
            self.ops.append(op if not isinstance(op, list) else "events")
            if isinstance(op, list):
                self.events += op
            elif isinstance(op, Send):
                reply = self.replies.pop(0)
                if isinstance(reply, Exception):
                    error = reply
                else:
                    value, reads = reply, iter(reply.reads)
            elif op is READ:
                item = next(reads, None)
                error, value = (item, None) if isinstance(item, Exception) else (None, item)
            elif op is CLOSE:
                reads = iter(())


WIRE = Wire(provider="magisterium", secrets=(SECRET,), retry=RetryPolicy(max_retries=2))
GB_WIRE = Wire(
    provider="gptbots",
    secrets=(SECRET,),
    classify=gptbots.classify,
    check_body=gptbots.check_body,
)
SPEC = RequestSpec("POST", "/chat/completions", json={"model": "m"})
STREAM = RequestSpec("POST", "/chat/completions", json={"model": "m"}, stream=True)


def chunk(text: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": text} if text is not None else {}
    return {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sleeps(driver: Scripted) -> list[float]:
    return [op.seconds for op in driver.ops if isinstance(op, Sleep)]


def sends(driver: Scripted) -> int:
    return sum(isinstance(op, Send) for op in driver.ops)


def test_fetch_json_retries_with_retry_after_then_parses() -> None:
    driver = Scripted(
        json_reply(503, {"error": {"message": "busy"}}, **{"retry-after": "0.7"}),
        json_reply(429, {"message": "Too many requests"}, **{"retry-after": "0"}),
        json_reply(200, {"ok": 1}),
    )
    assert driver.run(fetch_json(WIRE, SPEC, lambda data: data["ok"])) == 1
    assert sleeps(driver) == [0.7, 0.0]
    assert sends(driver) == 3


def test_fetch_json_raises_when_the_budget_is_spent() -> None:
    driver = Scripted(*[json_reply(500, {"message": "down"}) for _ in range(3)])
    with pytest.raises(ck.ServerError, match="down"):
        driver.run(fetch_json(WIRE, SPEC))
    assert sends(driver) == 3 and len(sleeps(driver)) == 2


def test_fetch_json_one_budget_for_http_and_in_band_errors() -> None:
    driver = Scripted(
        json_reply(502, {"message": "bad gateway"}),
        json_reply(200, {"code": 50000, "message": "internal error"}),
        json_reply(200, {"code": 50000, "message": "internal error"}),
        json_reply(200, {"conversation_id": "c1"}),
    )
    with pytest.raises(ck.ServerError, match="50000"):
        driver.run(gptbots.new_conversation(GB_WIRE, "u"))
    assert sends(driver) == 3  # max_retries + 1, whatever the kinds


def test_connect_errors_are_retried_read_errors_are_not() -> None:
    refused = ck.TransportError("refused", connect=True)
    driver = Scripted(refused, json_reply(200, {"ok": 1}))
    assert driver.run(fetch_json(WIRE, SPEC)) == {"ok": 1}
    cut = Reply(200, {"content-type": "application/json"}, [ck.TransportError("reset")])
    driver = Scripted(cut, json_reply(200, {"ok": 1}))
    with pytest.raises(ck.TransportError, match="reset"):
        driver.run(fetch_json(WIRE, SPEC))
    assert sends(driver) == 1


def test_an_echoed_key_is_scrubbed_from_in_band_errors() -> None:
    driver = Scripted(json_reply(200, {"code": 40356, "message": f"bad key {SECRET}"}))
    with pytest.raises(ck.NotFoundError) as info:
        driver.run(gptbots.new_conversation(GB_WIRE, "u"))
    assert SECRET not in str(info.value) and "***" in str(info.value)


def stream_flow(wire: Wire = WIRE) -> Flow[ck.Answer]:
    return chat_flow(wire, STREAM, question="Why?")


def test_stream_hands_on_events_per_read_then_returns_the_answer() -> None:
    driver = Scripted(
        sse_reply(
            sse(chunk("Grace "), chunk("is ")),
            sse(chunk("a gift."), chunk(finish="stop")) + b"data: [DONE]\n\n",
        )
    )
    answer = driver.run(stream_flow())
    assert answer.text == "Grace is a gift." and answer.finish_reason == "stop"
    assert [e.text for e in driver.events] == ["Grace ", "is ", "a gift."]
    assert driver.ops.count("events") == 2  # one hand-over per read, not per event


def test_a_retryable_in_band_error_as_the_first_event_is_retried() -> None:
    first = {"code": 50000, "message": "internal error"}
    ok = [
        {"code": 11, "data": {"message_id": "m1"}},
        {"code": 3, "data": "Hi"},
        {"code": 0, "data": None},
    ]
    driver = Scripted(sse_reply(sse(first)), sse_reply(sse(*ok)))
    acc = gptbots.GPTBotsAccumulator(question="q", conversation_id="c1")
    spec = gptbots.message_spec("c1", "q", stream=True)
    from citekit.wire.flow import stream_answer

    answer = driver.run(stream_answer(GB_WIRE, spec, acc, unfinished="no End"))
    assert answer.text == "Hi" and answer.conversation_id == "c1"
    assert sends(driver) == 2 and len(sleeps(driver)) == 1


def test_an_error_after_events_in_the_same_read_keeps_them() -> None:
    driver = Scripted(
        sse_reply(sse(chunk("Partial "), chunk("text")) + b"data: {not json\n\n"),
        sse_reply(sse(chunk("never"), chunk(finish="stop"))),
    )
    with pytest.raises(ck.StreamInterrupted) as info:
        driver.run(stream_flow())
    assert [e.text for e in driver.events] == ["Partial ", "text"]
    assert info.value.answer.text == "Partial text" and info.value.answer.partial
    assert isinstance(info.value.__cause__, ck.ResponseFormatError)
    assert sends(driver) == 1  # not after the stream began


def test_a_broken_read_after_events_is_an_interruption() -> None:
    driver = Scripted(sse_reply(sse(chunk("Partial")), ck.TransportError("reset")))
    with pytest.raises(ck.StreamInterrupted) as info:
        driver.run(stream_flow())
    assert info.value.answer.text == "Partial"
    assert isinstance(info.value.__cause__, ck.TransportError)


def test_a_broken_read_before_any_event_is_raised_as_it_is() -> None:
    driver = Scripted(sse_reply(ck.TransportError("reset")))
    with pytest.raises(ck.TransportError, match="reset"):
        driver.run(stream_flow())
    assert sends(driver) == 1


def test_a_stream_without_its_last_chunk_is_an_interruption() -> None:
    driver = Scripted(sse_reply(sse(chunk("Cut"))))
    with pytest.raises(ck.StreamInterrupted, match="last chunk") as info:
        driver.run(stream_flow())
    assert info.value.answer.text == "Cut"


def test_gptbots_reference_failures_do_not_fail_the_ask() -> None:
    message = {"message_id": "m1", "output": [{"content": {"text": "Answer"}}]}
    driver = Scripted(
        json_reply(200, message),
        json_reply(200, {"code": 200222, "message": "not supported"}),
    )
    flow = gptbots.ask_flow(
        GB_WIRE, "q", conversation_id="c1", user_id="u", stream=False, references=True
    )
    answer = driver.run(flow)
    assert answer.text == "Answer" and answer.conversation_id == "c1"
    assert answer.references is not None and len(answer.references) == 0
    assert any("200222" in note for note in answer.notes)


# -- the sync and async drivers against the loopback server -----------------------------------
def drivers(server: ProviderServer, provider: str) -> tuple[HttpConfig, Wire]:
    config = HttpConfig(provider=provider, base_url=server.base_url(provider), api_key="k")
    wire = GB_WIRE if provider == "gptbots" else Wire(provider=provider, secrets=("k",))
    return config, wire


def run_both(config: HttpConfig, flows: list[Any]) -> tuple[list[Any], list[Any]]:
    """Each flow (made by a factory) run by the sync driver and by the async one, with the
    events it handed on."""

    def sync() -> list[Any]:
        driver = SyncDriver(config)
        out = []
        for make in flows:
            run = Run(make(), config)
            # The events, whatever reads they came in (the two clients cut a body alike or not).
            events = [e for batch in driver.drive(run) for e in batch]
            out.append((run.result, events))
        driver.close()
        return out

    async def async_() -> list[Any]:
        driver = AsyncDriver(config)
        out = []
        for make in flows:
            run = Run(make(), config)
            events = [e async for batch in driver.drive(run) for e in batch]
            out.append((run.result, events))
        await driver.aclose()
        return out

    return sync(), asyncio.run(async_())


@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
def test_chat_flows_give_equal_answers_sync_and_async(
    server: ProviderServer, provider: str
) -> None:
    config, wire = drivers(server, provider)
    records = MAG if provider == "magisterium" else MAR
    tools = ("web_search", "data_ocean", "code_execution")
    # Maritaca's built-in tools need stream: false: those samples are asked blocking, at the end.
    blocking_only = [r for r in records if any(r[1]["request"].get(t) for t in tools)]
    records = [r for r in records if r not in blocking_only]
    flows = []
    for _, rec in records:
        for stream in (False, True):
            body = {**rec["request"], **({"stream": True} if stream else {})}
            spec = RequestSpec("POST", "/chat/completions", json=body, stream=stream)
            flows.append(lambda spec=spec, q=rec["question"]: chat_flow(wire, spec, question=q))
    for _, rec in blocking_only:
        spec = RequestSpec("POST", "/chat/completions", json=rec["request"])
        flows.append(lambda spec=spec, q=rec["question"]: chat_flow(wire, spec, question=q))
    sync, async_ = run_both(config, flows)
    assert sync == async_
    for answer, events in sync[2 * len(records) :]:
        assert events == [] and answer.usage.tools and answer.citations
    paired = sync[: 2 * len(records)]
    for (blocking, none), (streamed, events) in zip(paired[::2], paired[1::2], strict=True):
        assert none == [] and blocking.text == streamed.text
        assert "".join(e.text for e in events if isinstance(e, ck.TextDelta) and not e.choice) == (
            streamed.text
        )
        assert blocking.citations == streamed.citations


def test_gptbots_flows_give_equal_answers_sync_and_async(server: ProviderServer) -> None:
    config, wire = drivers(server, "gptbots")
    cid = SyncDriver(config).run(gptbots.new_conversation(wire, "u"))
    flows = []
    for _, rec in GB:
        for stream in (False, True):
            flows.append(
                lambda q=rec["question"], s=stream: gptbots.ask_flow(
                    wire, q, conversation_id=cid, user_id="u", stream=s, references=True
                )
            )
    flows.append(lambda: gptbots.references_flow(wire, GB[0][1]["message"]["message_id"]))
    sync, async_ = run_both(config, flows)
    assert sync == async_
    for (answer, _), (_, rec) in zip(sync[:-1:2], GB, strict=True):
        assert answer.references == ck.References.from_response(
            rec["correlate"], message_id=rec["message"]["message_id"]
        )
    assert sync[-1][0] == sync[0][0].references


def test_ask_flow_opens_a_conversation_when_none_is_given(server: ProviderServer) -> None:
    config, wire = drivers(server, "gptbots")
    flow = gptbots.ask_flow(
        wire, GB[0][1]["question"], conversation_id=None, user_id="u-7", stream=True,
        references=False,
    )  # fmt: skip
    answer = SyncDriver(config).run(flow)
    assert answer.conversation_id and answer.references is None
    sent = [r for r in server.requests if r.endpoint == "conversation"][-1]
    assert sent.json == {"user_id": "u-7"}


def test_the_driver_closes_the_flow_and_the_response_when_stopped(server: ProviderServer) -> None:
    url = server.base_url("magisterium", chunks=2000, delay=0.002)
    config = HttpConfig(provider="magisterium", base_url=url, api_key="k")
    body = {"model": "magisterium-1", "messages": [{"role": "user", "content": "q"}]}
    spec = RequestSpec("POST", "/chat/completions", json={**body, "stream": True}, stream=True)
    closed = []

    def flow() -> Flow[ck.Answer]:
        try:
            return (yield from chat_flow(Wire(provider="magisterium"), spec))
        finally:
            closed.append(True)

    run = Run(flow(), config)
    events = SyncDriver(config).drive(run)
    assert isinstance(next(events)[0], ck.TextDelta)  # the first read's events
    assert run.response is not None and not run.response.is_closed
    response = run.response
    events.close()
    assert closed == [True] and response.is_closed and run.result is None


def test_an_accumulator_error_on_the_first_event_is_an_interruption() -> None:
    acc = ChatAccumulator(provider="magisterium")
    driver = Scripted(sse_reply(sse({"error": {"message": "overloaded"}})))
    from citekit.wire.flow import stream_answer

    with pytest.raises(ck.StreamInterrupted, match="overloaded"):
        driver.run(stream_answer(WIRE, STREAM, acc, unfinished="x"))
