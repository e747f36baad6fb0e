"""The real Magisterium and Maritaca clients against the loopback server.

Every recorded sample is asked blocking, streamed, and async; all must give the answer the
recorded JSON gives. Faults are retried or raised as typed errors, never hang, keep partial
text, and never show the API key.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import warnings
from typing import Any

import pytest

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.sse import SSEDecoder
from tests.conftest import SECRET, sample_records, sample_stream

MAG = sample_records("magisterium")
MAR = sample_records("maritaca")


def core(answer: ck.Answer) -> tuple[Any, ...]:
    """What a reader sees of an answer (usage is compared separately)."""
    return (
        answer.provider,
        answer.text,
        answer.model,
        answer.id,
        answer.created,
        answer.finish_reason,
        answer.citations,
        answer.related_questions,
        answer.tool_calls,
        answer.choices,
        answer.question,
        answer.notes,
        answer.sample,
    )


def chunks_of(provider: str, stem: str) -> list[Any]:
    decoder = SSEDecoder()
    raw = sample_stream(provider, stem)
    return [json.loads(d) for d in decoder.feed(raw) + decoder.flush() if d != b"[DONE]"]


def magisterium_options(request: dict[str, Any]) -> dict[str, Any]:
    options = {}
    if "safety_settings" in request:
        options["safety_settings"] = request["safety_settings"]
    if not request.get("return_related_questions"):
        options["return_related_questions"] = False
    return options


CHAT_PARAMS = [
    "temperature",
    "top_p",
    "max_tokens",
    "n",
    "stop",
    "frequency_penalty",
    "presence_penalty",
    "tools",
    "tool_choice",
    "web_search",
    "data_ocean",
    "code_execution",
    "service_tier",
]
#: Maritaca's built-in tools need stream: false; their samples are asked blocking only.
BUILT_IN_TOOLS = ("web_search", "data_ocean", "code_execution")


def streams(request: dict[str, Any]) -> tuple[bool, ...]:
    """How a Maritaca sample can be asked: blocking, and streamed unless it uses a built-in tool."""
    return (False,) if any(request.get(t) for t in BUILT_IN_TOOLS) else (False, True)


def maritaca_options(request: dict[str, Any]) -> dict[str, Any]:
    options = {k: request[k] for k in CHAT_PARAMS if k in request}
    options["model"] = request["model"]
    return options


def ask_magisterium(client: ck.Magisterium, rec: dict[str, Any], **kw: Any) -> ck.Answer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ck.ContentFilteredWarning)
        return client.ask(rec["question"], **magisterium_options(rec["request"]), **kw)


@pytest.fixture()
def mg(server: ProviderServer) -> ck.Magisterium:
    return ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))


@pytest.fixture()
def mt(server: ProviderServer) -> ck.Maritaca:
    return ck.Maritaca(api_key=SECRET, base_url=server.base_url("maritaca"))


# -- every sample: blocking == streamed == saved JSON == saved chunks == async -----------------
@pytest.mark.parametrize(("stem", "rec"), MAG, ids=[s for s, _ in MAG])
def test_magisterium_sample(mg: ck.Magisterium, stem: str, rec: dict[str, Any]) -> None:
    expected = ck.parse_response(rec["response"], provider="magisterium", question=rec["question"])
    blocking = ask_magisterium(mg, rec)
    streamed = ask_magisterium(mg, rec, stream=True, display=False)
    saved_chunks = ck.parse_chunks(
        chunks_of("magisterium", stem), provider="magisterium", question=rec["question"]
    )
    assert core(blocking) == core(expected)
    assert core(streamed) == core(expected)
    assert core(saved_chunks) == core(expected)
    assert blocking.usage == expected.usage
    assert blocking.sample == f"magisterium/{stem}"
    assert blocking.citations == tuple(
        ck.Citation.from_dict(c, position=i) for i, c in enumerate(rec["response"]["citations"])
    )
    if blocking.finish_reason != "content_filter":
        assert blocking.text and blocking.citations


@pytest.mark.parametrize(("stem", "rec"), MAR, ids=[s for s, _ in MAR])
def test_maritaca_sample(mt: ck.Maritaca, stem: str, rec: dict[str, Any]) -> None:
    expected = ck.parse_response(rec["response"], provider="maritaca", question=rec["question"])
    options = maritaca_options(rec["request"])
    messages = rec["request"]["messages"]
    blocking = mt.chat(messages, **options)
    assert core(blocking) == core(expected) and blocking.files == expected.files
    assert blocking.usage == expected.usage
    if streams(rec["request"]) == (False,):
        with pytest.raises(ValueError, match="do not stream"):
            mt.chat(messages, stream=True, display=False, **options)
        assert blocking.usage is not None and blocking.usage.tools
        return
    streamed = mt.chat(
        messages,
        stream=True,
        display=False,
        stream_options={"include_usage": True},
        **options,
    )
    assert core(streamed) == core(expected)
    assert streamed.usage is not None and blocking.usage is not None
    assert (streamed.usage.prompt_tokens, streamed.usage.completion_tokens) == (
        blocking.usage.prompt_tokens,
        blocking.usage.completion_tokens,
    )
    for call in blocking.tool_calls:
        assert isinstance(call.parsed_arguments(), dict)
    if rec["request"].get("n", 1) > 1:
        assert len(blocking.choices) == rec["request"]["n"]
        assert blocking.text == blocking.choices[0].text != blocking.choices[1].text


def test_sync_and_async_give_the_same_answers(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))

    async def run_all() -> list[ck.Answer]:
        out = []
        for _, rec in MAG:
            for stream in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ck.ContentFilteredWarning)
                    out.append(
                        await mg.aask(
                            rec["question"],
                            stream=stream,
                            display=False,
                            **magisterium_options(rec["request"]),
                        )
                    )
        for _, rec in MAR:
            options = maritaca_options(rec["request"])
            for stream in streams(rec["request"]):
                out.append(
                    await mt.achat(
                        rec["request"]["messages"], stream=stream, display=False, **options
                    )
                )
        await mg.aclose()
        await mt.aclose()
        return out

    async_answers = asyncio.run(run_all())
    sync_answers = []
    for _, rec in MAG:
        for stream in (False, True):
            sync_answers.append(ask_magisterium(mg, rec, stream=stream, display=False))
    for _, rec in MAR:
        for stream in streams(rec["request"]):
            sync_answers.append(
                mt.chat(
                    rec["request"]["messages"],
                    stream=stream,
                    display=False,
                    **maritaca_options(rec["request"]),
                )
            )
    assert [core(a) for a in async_answers] == [core(a) for a in sync_answers]
    assert [a.files for a in async_answers] == [a.files for a in sync_answers]
    expected = 2 * len(MAG) + sum(len(streams(rec["request"])) for _, rec in MAR)
    assert len(sync_answers) == expected > 0


def test_stream_events_arrive_in_order(mg: ck.Magisterium) -> None:
    _, rec = MAG[0]
    events = list(mg.stream(rec["question"]))
    deltas = [e for e in events if isinstance(e, ck.TextDelta)]
    final = events[-1]
    assert isinstance(final, ck.Answer)
    assert len(deltas) > 3 and all(not isinstance(e, ck.Answer) for e in events[:-1])
    assert "".join(d.text for d in deltas) == final.text


def test_async_stream_events(mg: ck.Magisterium) -> None:
    _, rec = MAG[1]

    async def collect() -> list[Any]:
        return [e async for e in mg.astream(rec["question"])]

    events = asyncio.run(collect())
    assert "".join(e.text for e in events if isinstance(e, ck.TextDelta)) == events[-1].text


def test_tool_call_deltas_assemble_to_the_arguments(mt: ck.Maritaca) -> None:
    recs = [r for _, r in MAR if r["request"].get("tools")]
    assert recs, "a Maritaca sample with tools is needed"
    rec = recs[0]
    events = list(mt.stream(rec["request"]["messages"], **maritaca_options(rec["request"])))
    final = events[-1]
    assert isinstance(final, ck.Answer) and final.tool_calls
    for call in final.tool_calls:
        pieces = [
            e.arguments for e in events if isinstance(e, ck.ToolCallDelta) and e.index == call.index
        ]
        assert "".join(pieces) == call.arguments
        assert call.name and call.id
    assert final.finish_reason == "tool_calls"


def test_content_filter_is_reported(mg: ck.Magisterium) -> None:
    recs = [r for _, r in MAG if r["response"]["choices"][0]["finish_reason"] == "content_filter"]
    assert recs
    rec = recs[0]
    with pytest.warns(ck.ContentFilteredWarning, match="withheld the answer"):
        answer = mg.ask(rec["question"], **magisterium_options(rec["request"]))
    assert answer.content_filtered and answer.text == ""
    assert any("content filter" in note for note in answer.notes)


def test_models(mt: ck.Maritaca) -> None:
    models = mt.models()
    ids = [m.id for m in models]
    assert "sabia-4" in ids and len(ids) >= 3
    assert all(m.created is None or m.created.tzinfo is not None for m in models)
    assert asyncio.run(mt.amodels()) == models


def test_sample_label_only_on_recorded_answers() -> None:
    _, rec = MAG[0]
    response = dict(rec["response"])
    response.pop("citekit_sample")
    assert ck.parse_response(response, provider="magisterium").sample is None


# -- faults -----------------------------------------------------------------------------------
def question() -> str:
    return str(MAG[0][1]["question"])


def client_for(
    server: ProviderServer, provider: str = "magisterium", **options: Any
) -> tuple[Any, Any]:
    client_options = {k: options.pop(k) for k in ("max_retries", "timeout") if k in options}
    scenario = server.add_scenario(**options)
    url = server.scenario_url(scenario, provider)  # type: ignore[arg-type]
    cls = ck.Magisterium if provider == "magisterium" else ck.Maritaca
    return cls(api_key=SECRET, base_url=url, **client_options), scenario


def assert_no_secret(*objects: Any) -> None:
    for obj in objects:
        for text in (str(obj), repr(obj)):
            assert SECRET not in text
            assert SECRET[-12:] not in text


def test_retry_after_is_honoured_then_success(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="status", status=429, retry_after_ms=300, times=2)
    start = time.monotonic()
    answer = mg.ask(question())
    assert answer.text
    assert scenario.request_count == 3
    assert time.monotonic() - start >= 0.55


@pytest.mark.parametrize(
    ("options", "requests"),
    [
        ({"status": 409}, 2),  # retried, as the openai SDK does
        ({"status": 520}, 2),  # every 5xx
        ({"status": 400, "should_retry": True}, 2),  # the server's word forces it, a 4xx too
        ({"status": 503, "should_retry": False}, 1),  # and forbids it
    ],
)
def test_retries_follow_the_sdks_rules(
    server: ProviderServer, options: dict[str, Any], requests: int
) -> None:
    mg, scenario = client_for(server, fault="status", retry_after_ms=0, times=1, **options)
    if requests == 2:
        assert mg.ask(question()).text
    else:
        with pytest.raises(ck.ProviderError) as info:
            mg.ask(question())
        assert info.value.should_retry is False
    assert scenario.request_count == requests


def test_rate_limit_error_after_retries(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="status", status=429, retry_after=0, max_retries=1)
    with pytest.raises(ck.RateLimitError) as info:
        mg.ask(question())
    err = info.value
    assert scenario.request_count == 2
    assert err.status == 429 and err.retry_after == 0 and err.provider == "magisterium"
    assert "Too many requests" in str(err) and err.request_id
    assert_no_secret(err, mg)


@pytest.mark.parametrize(
    ("status", "error", "text"),
    [
        (400, ck.TokenLimitError, "Token limit exceeded"),
        (401, ck.AuthenticationError, "MAGISTERIUM_API_KEY"),
        (404, ck.NotFoundError, "base_url"),
    ],
)
def test_client_errors_are_not_retried(
    server: ProviderServer, status: int, error: type[Exception], text: str
) -> None:
    mg, scenario = client_for(server, fault="status", status=status)
    with pytest.raises(error, match=text) as info:
        mg.ask(question())
    assert scenario.request_count == 1
    assert_no_secret(info.value)


@pytest.mark.parametrize("status", [408, 500, 502, 503, 504])
def test_server_errors_are_retried(server: ProviderServer, status: int) -> None:
    mg, scenario = client_for(server, fault="status", status=status, times=1)
    assert mg.ask(question()).text
    assert scenario.request_count == 2


def test_server_error_after_retries(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="status", status=500, max_retries=2)
    with pytest.raises(ck.ServerError, match="HTTP 500") as info:
        mg.ask(question(), stream=True, display=False)
    assert scenario.request_count == 3
    assert_no_secret(info.value)


def test_maritaca_detail_body(server: ProviderServer) -> None:
    mt, _ = client_for(
        server, "maritaca", fault="status", status=429, message="Fila flex cheia", max_retries=0
    )
    with pytest.raises(ck.RateLimitError, match="Fila flex cheia"):
        mt.chat([{"role": "user", "content": "Oi"}])


def test_html_error_page(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="html", max_retries=1)
    with pytest.raises(ck.ServerError, match="an HTML page instead of an API response"):
        mg.ask(question())
    assert scenario.request_count == 2


def test_reset_mid_stream_keeps_the_partial_answer(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="reset", after=6)
    with pytest.raises(ck.StreamInterrupted) as info:
        mg.ask(question(), stream=True, display=False)
    partial = info.value.answer
    assert partial.partial and partial.text and partial.finish_reason is None
    reference = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    full = reference.ask(question())
    assert full.text.startswith(partial.text) and len(partial.text) < len(full.text)
    assert isinstance(info.value.__cause__, ck.TransportError)
    assert "partial answer" in str(info.value)
    assert_no_secret(info.value, partial)
    assert scenario.request_count == 1


def test_async_reset_mid_stream(server: ProviderServer) -> None:
    mg, _ = client_for(server, fault="reset", after=4)
    with pytest.raises(ck.StreamInterrupted) as info:
        asyncio.run(mg.aask(question(), stream=True, display=False))
    assert info.value.answer.partial and info.value.answer.text


def test_reset_before_body(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="reset")
    with pytest.raises(ck.TransportError):
        mg.ask(question())
    assert scenario.request_count == 1


def test_malformed_json_body(server: ProviderServer) -> None:
    mg, _ = client_for(server, fault="malformed")
    with pytest.raises(ck.ResponseFormatError, match="not JSON"):
        mg.ask(question())


def test_malformed_stream_event(server: ProviderServer) -> None:
    mg, _ = client_for(server, fault="malformed", after=5)
    with pytest.raises(ck.StreamInterrupted) as info:
        mg.ask(question(), stream=True, display=False)
    assert isinstance(info.value.__cause__, ck.ResponseFormatError)
    assert info.value.answer.text


def test_stall_before_headers_times_out(server: ProviderServer) -> None:
    mg, _ = client_for(server, fault="stall", stall=20, timeout=0.5, max_retries=0)
    start = time.monotonic()
    with pytest.raises(ck.TimeoutError, match="raise timeout="):
        mg.ask(question())
    assert time.monotonic() - start < 5


def test_stall_mid_stream_keeps_text(server: ProviderServer) -> None:
    mg, _ = client_for(server, fault="stall", stall=20, after=5, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(ck.StreamInterrupted) as info:
        mg.ask(question(), stream=True, display=False)
    assert isinstance(info.value.__cause__, ck.TimeoutError)
    assert info.value.answer.text
    assert time.monotonic() - start < 5


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    mg = ck.Magisterium(api_key=SECRET, base_url=f"http://127.0.0.1:{port}/api/v1", max_retries=1)
    with pytest.raises(ck.TransportError, match="Could not reach magisterium") as info:
        mg.ask("hello")
    assert_no_secret(info.value)


def test_wrong_key_for_scenario(server: ProviderServer) -> None:
    mg, _ = client_for(server, api_key="the-right-key")
    with pytest.raises(ck.AuthenticationError) as info:
        mg.ask(question())
    assert_no_secret(info.value, mg)
    assert "***" in repr(mg)
