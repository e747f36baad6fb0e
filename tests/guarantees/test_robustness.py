"""Edge cases at the network boundary: odd streams, retries, timeouts, broken references."""

from __future__ import annotations

import asyncio
import json
import pickle
import time
from typing import Any

import httpx
import pytest

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.errors import parse_retry_after
from citekit.wire.openai_compat import ChatAccumulator
from citekit.wire.sse import SSEDecoder
from tests.conftest import sample_records

MAG_Q = sample_records("magisterium")[0][1]["question"]
GB_Q = sample_records("gptbots")[0][1]["question"]


def sse(*events: Any) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)


def gptbots_mock(stream_body: bytes, content_type: str = "text/event-stream") -> ck.GPTBots:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/v1/conversation"):
            return httpx.Response(200, json={"conversation_id": "c1"})
        return httpx.Response(200, content=stream_body, headers={"content-type": content_type})

    return ck.GPTBots(
        api_key="k", base_url="http://gb.test", transport=httpx.MockTransport(handler)
    )


def test_gptbots_stream_without_its_end_event_is_interrupted() -> None:
    body = sse(
        {"code": 11, "message": "MessageInfo", "data": {"message_id": "m1"}},
        {"code": 3, "message": "Text", "data": "The wall was built to"},
    )
    with pytest.raises(ck.StreamInterrupted) as info:
        gptbots_mock(body).ask("Why?", stream=True, display=False, references=False)
    partial = info.value.answer
    assert partial.partial and partial.text == "The wall was built to"
    assert partial.conversation_id == "c1"


def test_gptbots_error_envelope_as_json_to_a_stream_request() -> None:
    body = json.dumps({"code": 40356, "message": "conversation does not exist"}).encode()
    with pytest.raises(ck.NotFoundError, match="40356"):
        gptbots_mock(body, "application/json").ask("Why?", stream=True, display=False)


def test_gptbots_error_envelope_mid_stream_keeps_the_text() -> None:
    body = sse(
        {"code": 11, "message": "MessageInfo", "data": {"message_id": "m1"}},
        {"code": 3, "message": "Text", "data": "Partial text"},
        {"code": 50000, "message": "internal error"},
    )
    with pytest.raises(ck.StreamInterrupted) as info:
        gptbots_mock(body).ask("Why?", stream=True, display=False, references=False)
    assert info.value.answer.text == "Partial text"
    assert isinstance(info.value.__cause__, ck.ServerError)


@pytest.mark.parametrize("stream", [False, True])
def test_broken_references_keep_the_answer(server: ProviderServer, stream: bool) -> None:
    url = server.base_url("gptbots", fault="malformed", endpoint="correlate")
    gb = ck.GPTBots(api_key="k", base_url=url)
    with pytest.warns(ck.CitekitWarning, match="could not be fetched"):
        answer = gb.ask(GB_Q, stream=stream, display=False)
    assert answer.text and answer.references is None


@pytest.mark.parametrize("body", [None, [], {"correlate_dataset": "none"}])
def test_references_of_the_wrong_shape(body: Any) -> None:
    with pytest.raises(ck.ResponseFormatError):
        ck.References.from_response(body)


def test_byte_order_mark_at_stream_start_is_dropped() -> None:
    raw = b'\xef\xbb\xbfdata: {"a": 1}\n\ndata:\n\ndata: {"b": 2}\n\n'
    for step in (1, 2, 4, len(raw)):
        decoder = SSEDecoder()
        out = []
        for i in range(0, len(raw), step):
            out += decoder.feed(raw[i : i + step])
        assert out + decoder.flush() == [b'{"a": 1}', b'{"b": 2}'], step


def chunk(index: int, content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {"id": "c", "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def test_a_stream_is_finished_only_when_every_choice_is() -> None:
    acc = ChatAccumulator(provider="maritaca")
    for c in (chunk(0, "a"), chunk(1, "b"), chunk(0, finish="stop"), chunk(1, "c")):
        acc.feed(c)
    assert not acc.finished
    acc.feed(chunk(1, finish="stop"))
    assert acc.finished


def test_error_chunk_mid_stream_is_reported() -> None:
    acc = ChatAccumulator(provider="magisterium")
    acc.feed(chunk(0, "Grace"))
    with pytest.raises(ck.ResponseFormatError, match="The server is overloaded"):
        acc.feed({"error": {"message": "The server is overloaded"}})


@pytest.mark.parametrize("bad", [{"choices": [None]}, {"choices": [{"delta": "text"}]}])
def test_malformed_chunks_are_format_errors(bad: dict[str, Any]) -> None:
    with pytest.raises(ck.ResponseFormatError):
        ChatAccumulator(provider="magisterium").feed(bad)


def test_content_parts_in_a_delta() -> None:
    acc = ChatAccumulator(provider="maritaca")
    acc.feed({"choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": "Oi"}]}}]})
    acc.feed(chunk(0, finish="stop"))
    assert acc.answer().text == "Oi"


def test_retry_after_is_honoured_on_503(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="status", status=503, retry_after_ms=400, times=1)
    mg = ck.Magisterium(api_key="k", base_url=server.scenario_url(scenario, "magisterium"))
    start = time.monotonic()
    assert mg.ask(MAG_Q).text
    assert time.monotonic() - start >= 0.35
    assert scenario.request_count == 2


def test_in_band_and_http_retries_share_one_budget(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="gptbots_code", code=50000, endpoint="message")
    gb = ck.GPTBots(api_key="k", base_url=server.scenario_url(scenario, "gptbots"), max_retries=2)
    with pytest.raises(ck.ServerError):
        gb.ask(GB_Q, references=False)
    assert scenario.faults_served == 3  # max_retries + 1 requests, not (max_retries + 1) ** 2


@pytest.mark.parametrize("value", ["NaN", "inf", "-inf", "soon"])
def test_unusable_retry_after_is_ignored(value: str) -> None:
    assert parse_retry_after(value) is None


def test_retry_after_survives_pickling() -> None:
    err = ck.RateLimitError("slow down", provider="maritaca", status=429, retry_after=30.0)
    assert pickle.loads(pickle.dumps(err)).retry_after == 30.0


def test_own_http_client_keeps_its_timeout(server: ProviderServer) -> None:
    url = server.base_url("magisterium", fault="stall", stall=10)
    with httpx.Client(timeout=0.3) as own:
        mg = ck.Magisterium(api_key="k", base_url=url, http_client=own, max_retries=0)
        start = time.monotonic()
        with pytest.raises(ck.TimeoutError):
            mg.ask(MAG_Q)
    assert time.monotonic() - start < 5


def test_each_event_loop_gets_its_own_connections(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))

    async def ask_and_close() -> str:
        answer = await mg.aask(MAG_Q)
        await mg.aclose()
        return answer.text

    first = asyncio.run(ask_and_close())
    second = asyncio.run(ask_and_close())  # a fresh loop: no client of the closed one is reused
    assert first == second and first


def test_extra_body_cannot_bypass_the_checks(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    with pytest.raises(ValueError, match="extra_body= may not set stream, temperature"):
        mt.chat([{"role": "user", "content": "Oi"}], extra_body={"temperature": 9, "stream": True})


def test_magisterium_has_no_tool_calling(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    tools = [{"type": "function", "function": {"name": "f"}}]
    with pytest.raises(ValueError, match="no tool calling"):
        mg.ask(MAG_Q, tools=tools)


def test_region_variable_is_ignored_with_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPTBOTS_ENDPOINT", "us")
    assert ck.GPTBots(api_key="k", base_url="http://127.0.0.1:9").base_url == "http://127.0.0.1:9"
    with pytest.raises(ck.ConfigurationError, match="endpoint='us'"):
        ck.GPTBots(api_key="k")


@pytest.mark.parametrize("stream", [False, True])
def test_retryable_error_event_before_any_text_is_retried(
    server: ProviderServer, stream: bool
) -> None:
    scenario = server.add_scenario(fault="gptbots_code", code=50000, endpoint="message", times=1)
    gb = ck.GPTBots(api_key="k", base_url=server.scenario_url(scenario, "gptbots"))
    answer = gb.ask(GB_Q, stream=stream, display=False, references=False)
    assert answer.text and not answer.partial
    assert scenario.faults_served == 1


def test_markdown_closes_a_code_fence_a_cut_stream_left_open() -> None:
    from markdown_it import MarkdownIt

    answer = ck.Answer(
        provider="magisterium",
        text="Here is the code [^1]:\n\n```python\nprint('hi')  # see [^2]",
        citations=(ck.Citation("p1", 0, document_title="T0"), ck.Citation("p2", 1)),
        partial=True,
    )
    tokens = MarkdownIt().parse(answer.to_markdown())
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1 and "[^1]:" not in fences[0].content
    assert "Sources not cited inline" not in fences[0].content


def test_markdown_reference_quotes_stay_in_their_item_past_rank_nine() -> None:
    from markdown_it import MarkdownIt

    refs = ck.References(
        items=tuple(ck.Reference(f"chunk {i}", rank=i, data_name=f"d{i}") for i in range(1, 13))
    )
    top = [t.type for t in MarkdownIt().parse(refs.to_markdown()) if t.level == 0]
    assert top.count("ordered_list_open") == 1


def test_charts_stay_under_altairs_row_limit() -> None:
    import polars as pl

    from citekit import charts
    from citekit.data.frames import CITATIONS_SCHEMA

    n = 6000
    rows = {name: [None] * n for name in CITATIONS_SCHEMA.names()}
    rows.update(
        provider=["magisterium"] * n,
        answer_id=[f"a{i}" for i in range(n)],
        marker=[1] * n,
        document_index=[0] * n,
        cited_text=["x"] * n,
        document_author=[f"author {i}" for i in range(n)],
        document_title=[f"title {i}" for i in range(n)],
        cited_inline=[True] * n,
    )
    frame = pl.DataFrame(rows, schema=CITATIONS_SCHEMA)
    for chart in (charts.authors(frame, top=10_000), charts.documents(frame, top=10_000)):
        assert len(chart.to_dict()["datasets"].popitem()[1]) <= 5000


def test_wire_nonsense_numbers_do_not_break_frames() -> None:
    body = {
        "id": "c",
        "model": "magisterium-1",
        "choices": [{"index": 0, "message": {"content": "x [^1]"}, "finish_reason": "stop"}],
        "citations": [{"cited_text": "a", "document_index": 2**31}],
        "usage": {"prompt_tokens": 2**70, "completion_tokens": 3},
    }
    answer = ck.parse_response(body, provider="magisterium")
    assert answer.citations[0].document_index == 0
    assert answer.usage is not None and answer.usage.prompt_tokens is None
    assert ck.citations_frame(answer)["marker"].to_list() == [1]
    assert ck.answers_frame(answer).height == 1


def test_definition_lines_inside_code_are_kept() -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="```markdown\nText[^1]\n[^1]: a footnote\n```\nAnd [^2].",
        citations=(ck.Citation("p1", 0), ck.Citation("p2", 1)),
    )
    assert "[^1]: a footnote" in answer.to_markdown()
    assert "[^1]: a footnote" in answer.to_html()


@pytest.mark.parametrize(
    "body",
    [
        "See [click][r] [^1].\n\n> [r]: javascript:alert(1)",
        "- [r]: javascript:alert(1)\n\n[click][r]",
        "[r\ns]: javascript:alert(1)\n\n[click][r s]",
    ],
)
def test_markdown_output_has_no_script_links_for_permissive_renderers(body: str) -> None:
    from markdown_it import MarkdownIt

    permissive = MarkdownIt("commonmark")
    permissive.validateLink = lambda url: True  # as a renderer without a URL filter would
    answer = ck.Answer(provider="magisterium", text=body, citations=(ck.Citation("p", 0),))
    assert 'href="javascript' not in permissive.render(answer.to_markdown())


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Intro [1].\n\n    x = a[2]\n\nEnd.", "    x = a[2]"),
        ("<https://x.com/[1]> and [2]", "<https://x.com/[1]>"),
        ("[x](https://x.com/a[1]b) [2]", "(https://x.com/a[1]b)"),
    ],
)
def test_markdown_leaves_markers_in_code_and_urls_alone(text: str, kept: str) -> None:
    answer = ck.Answer(
        provider="magisterium", text=text, citations=(ck.Citation("p", 0), ck.Citation("q", 1))
    )
    assert kept in answer.to_markdown()


def test_a_marker_inside_link_text_keeps_the_link() -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="[see [1]](https://x.com) and [2].",
        citations=(ck.Citation("p", 0), ck.Citation("q", 1)),
    )
    html = answer.to_html()
    assert '<a href="https://x.com" target="_blank" rel="noopener noreferrer">see [1]</a>' in html
    assert "](https://x.com)" not in html
