"""The real GPTBots client against the loopback server: the whole flow and every error code."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.gptbots import error_from_code
from citekit.wire.sse import SSEDecoder
from tests.conftest import SECRET, sample_records, sample_stream

GB = sample_records("gptbots")


@pytest.fixture()
def gb(server: ProviderServer) -> ck.GPTBots:
    return ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))


def expected_references(rec: dict[str, Any]) -> ck.References:
    return ck.References.from_response(rec["correlate"], message_id=rec["message"]["message_id"])


def view(answer: ck.Answer) -> tuple[Any, ...]:
    """What a blocking and a streamed answer share: not ``outputs``, which are the components'
    outputs (the blocking ``output[]`` items; in a stream, FlowOutput's "User Input" echo)."""
    return (
        answer.text,
        answer.id,
        answer.question,
        answer.sample,
        answer.citations,
        answer.usage,
    )


@pytest.mark.parametrize(("stem", "rec"), GB, ids=[s for s, _ in GB])
def test_sample_blocking_and_streaming(gb: ck.GPTBots, stem: str, rec: dict[str, Any]) -> None:
    cited = "citations" in rec["message"]  # recorded with conversation_config.corner_citation
    blocking = gb.ask(rec["question"], citations=cited)
    streamed = gb.ask(rec["question"], stream=True, display=False, citations=cited)
    expected = ck.parse_response(rec["message"], provider="gptbots", question=rec["question"])
    assert view(blocking) == view(streamed) == view(expected)
    rebuilt = ck.parse_response(streamed.raw, provider="gptbots", question=rec["question"])
    assert view(rebuilt) == view(streamed) and rebuilt.thoughts == streamed.thoughts
    assert rebuilt.outputs == streamed.outputs
    assert blocking.outputs == expected.outputs
    assert blocking.sample == f"gptbots/{stem}"
    assert blocking.conversation_id and streamed.conversation_id
    assert blocking.conversation_id != streamed.conversation_id  # a new conversation each
    refs = expected_references(rec)
    assert blocking.references is not None and streamed.references is not None
    assert list(blocking.references) == list(streamed.references) == list(refs)
    assert [r.rank for r in blocking.references] == list(range(1, len(refs) + 1))
    assert all(r.score is None or 0 <= r.score <= 1 for r in blocking.references)
    assert blocking.created is not None and blocking.created.tzinfo is UTC
    assert datetime(2020, 1, 1, tzinfo=UTC) < blocking.created < datetime(2030, 1, 1, tzinfo=UTC)


def test_saved_stream_equals_saved_reply() -> None:
    for stem, rec in GB:
        decoder = SSEDecoder()
        raw = sample_stream("gptbots", stem)
        events = [json.loads(d) for d in decoder.feed(raw) + decoder.flush()]
        streamed = ck.parse_chunks(events, provider="gptbots", question=rec["question"])
        saved = ck.parse_response(rec["message"], provider="gptbots", question=rec["question"])
        assert (streamed.text, streamed.id, streamed.citations) == (
            saved.text,
            saved.id,
            saved.citations,
        )
        # A saved streamed answer rebuilds equal to itself, FlowOutput items and all.
        again = ck.parse_response(streamed.raw, provider="gptbots", question=rec["question"])
        assert again == streamed
        assert ck.parse_response(saved.raw, provider="gptbots", question=rec["question"]) == saved
        # The documented text stream: FlowOutput is "User Input" echoing the question.
        voice = any(c.audio for c in saved.outputs)
        echo = ck.ComponentOutput(name="User Input", branch=None, content=rec["question"])
        assert voice or streamed.outputs == (echo,)


def test_several_output_branches_are_kept_in_order(gb: ck.GPTBots) -> None:
    recs = [r for _, r in GB if len(r["message"]["output"]) > 1]
    assert recs, "a sample with several flow branches is needed"
    rec = recs[0]
    answer = gb.ask(rec["question"])
    texts = [o["content"]["text"] for o in rec["message"]["output"]]
    assert [o.content for o in answer.outputs] == texts
    names = [
        (o["from_component_name"], o["from_component_branch"]) for o in rec["message"]["output"]
    ]
    assert [(o.name, o.branch) for o in answer.outputs] == names
    assert answer.text == "\n\n".join(texts)


def test_follow_up_in_the_same_conversation(server: ProviderServer, gb: ck.GPTBots) -> None:
    first = gb.ask(GB[0][1]["question"])
    second = gb.ask(
        GB[1][1]["question"], conversation_id=first.conversation_id, stream=True, display=False
    )
    assert second.conversation_id == first.conversation_id
    sent = [r.json for r in server.requests if r.endpoint == "message"][-1]
    assert sent["conversation_id"] == first.conversation_id
    assert sent["messages"] == [{"role": "user", "content": GB[1][1]["question"]}]
    assert sent["response_mode"] == "streaming"


def test_references_from_a_message_id_alone(gb: ck.GPTBots) -> None:
    rec = GB[0][1]
    refs = gb.references(rec["message"]["message_id"])
    assert list(refs) == list(expected_references(rec))
    assert refs.answer_id == rec["correlate"]["answer_id"]
    assert refs.conversation_id == rec["correlate"]["conversation_id"]
    assert refs.question_id == rec["correlate"]["question_id"]
    assert asyncio.run(gb.areferences(rec["message"]["message_id"])) == refs
    with pytest.raises(ValueError, match="message_id"):
        gb.references("  ")


def test_empty_correlate_dataset(server: ProviderServer) -> None:
    gb = ck.GPTBots(api_key="k", base_url=server.base_url("gptbots", correlate_empty=True))
    answer = gb.ask(GB[0][1]["question"])
    assert answer.references is not None and len(answer.references) == 0
    assert answer.text


def test_async_flow(gb: ck.GPTBots) -> None:
    rec = GB[0][1]

    async def run() -> tuple[ck.Answer, ck.Answer]:
        a = await gb.aask(rec["question"])
        b = await gb.aask(rec["question"], stream=True, display=False)
        await gb.aclose()
        return a, b

    a, b = asyncio.run(run())
    assert view(a) == view(b) == view(gb.ask(rec["question"]))
    assert a.references == b.references


def test_no_references_feature_gives_a_note(server: ProviderServer) -> None:
    url = server.base_url("gptbots", fault="gptbots_code", code=200222, endpoint="correlate")
    gb = ck.GPTBots(api_key="k", base_url=url)
    for answer in (
        gb.ask(GB[0][1]["question"]),
        gb.ask(GB[0][1]["question"], stream=True, display=False),
    ):
        assert answer.text
        assert answer.references is not None and len(answer.references) == 0
        assert any("200222" in note for note in answer.notes)


def test_other_reference_errors_keep_the_answer(server: ProviderServer) -> None:
    url = server.base_url("gptbots", fault="gptbots_code", code=40379, endpoint="correlate")
    gb = ck.GPTBots(api_key="k", base_url=url)
    with pytest.warns(ck.CitekitWarning, match="could not be fetched"):
        answer = gb.ask(GB[0][1]["question"])
    assert answer.text and answer.references is None
    assert any("40379" in note for note in answer.notes)


CODES = [
    (40000, "correlate", ck.BadRequestError),
    (40379, "correlate", ck.InsufficientCreditsError),
    (200222, "correlate", ck.UnsupportedFeatureError),
    (40378, "correlate", ck.NotFoundError),
    (20055, "correlate", ck.UnsupportedFeatureError),
    (40127, "correlate", ck.AuthenticationError),
    (40356, "message", ck.NotFoundError),
    (40358, "message", ck.NotFoundError),
    (40364, "message", ck.UnsupportedFeatureError),
    (20040, "message", ck.TokenLimitError),
    (20022, "message", ck.InsufficientCreditsError),
    (50000, "message", ck.ServerError),
]


@pytest.mark.parametrize("http_status", [200, 400])
@pytest.mark.parametrize(("code", "endpoint", "error"), CODES)
def test_every_error_code(
    server: ProviderServer, code: int, endpoint: str, error: type[Exception], http_status: int
) -> None:
    url = server.base_url(
        "gptbots",
        fault="gptbots_code",
        code=code,
        endpoint=endpoint,  # type: ignore[arg-type]
        status=http_status,
    )
    gb = ck.GPTBots(api_key=SECRET, base_url=url, max_retries=0)
    rec = GB[0][1]
    with pytest.raises(error) as info:
        if endpoint == "correlate":
            gb.references(rec["message"]["message_id"])
        else:
            gb.ask(rec["question"])
    err = info.value
    assert isinstance(err, ck.ProviderError)
    assert err.code == code and err.provider == "gptbots"
    assert f"code {code}" in str(err)
    assert SECRET not in str(err) and SECRET not in repr(err)


def test_streaming_error_code(server: ProviderServer) -> None:
    url = server.base_url("gptbots", fault="gptbots_code", code=20040, endpoint="message")
    gb = ck.GPTBots(api_key="k", base_url=url)
    with pytest.raises(ck.TokenLimitError):
        gb.ask(GB[0][1]["question"], stream=True, display=False)


def test_server_error_code_is_retried(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="gptbots_code", code=50000, endpoint="message", times=1)
    gb = ck.GPTBots(api_key="k", base_url=server.scenario_url(scenario, "gptbots"))
    assert gb.ask(GB[0][1]["question"], references=False).text
    assert scenario.faults_served == 1


def test_rate_limit_is_retried(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="status", status=429, retry_after=0, times=2)
    gb = ck.GPTBots(api_key="k", base_url=server.scenario_url(scenario, "gptbots"))
    assert gb.ask(GB[0][1]["question"]).text


def test_rate_code_in_body_is_a_rate_limit() -> None:
    err = error_from_code(42900, "Request too frequent", status=200, request_id=None)
    assert isinstance(err, ck.RateLimitError)


def test_reset_mid_stream(server: ProviderServer) -> None:
    gb = ck.GPTBots(
        api_key="k", base_url=server.base_url("gptbots", fault="reset", after=4, endpoint="message")
    )
    with pytest.raises(ck.StreamInterrupted) as info:
        gb.ask(GB[0][1]["question"], stream=True, display=False)
    assert info.value.answer.partial and info.value.answer.conversation_id


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"endpoint": "us"}, r"endpoint='us' is not a GPTBots region; use one of sg, jp, th"),
        ({"user_id": "x" * 33}, r"at most 32 characters"),
    ],
)
def test_bad_configuration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ck.GPTBots(api_key="k", **kwargs)


@pytest.mark.parametrize("region", ["sg", "jp", "th"])
def test_regions(region: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPTBOTS_ENDPOINT", region)
    assert ck.GPTBots(api_key="k").base_url == f"https://api-{region}.gptbots.ai"


def test_user_id_is_sent(server: ProviderServer) -> None:
    gb = ck.GPTBots(api_key="k", base_url=server.base_url("gptbots"), user_id="reader-7")
    gb.new_conversation()
    assert [r.json for r in server.requests if r.endpoint == "conversation"][-1] == {
        "user_id": "reader-7"
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1709000000, datetime(2024, 2, 27, 2, 13, 20, tzinfo=UTC)),
        (1709000000000, datetime(2024, 2, 27, 2, 13, 20, tzinfo=UTC)),
        (1709000000123, datetime(2024, 2, 27, 2, 13, 20, 123000, tzinfo=UTC)),
        ("2024-02-27T02:13:20Z", datetime(2024, 2, 27, 2, 13, 20, tzinfo=UTC)),
        (None, None),
        ("soon", None),
    ],
)
def test_create_time_normalised(value: Any, expected: datetime | None) -> None:
    reply = {"message_id": "m1", "create_time": value, "output": []}
    assert ck.parse_response(reply, provider="gptbots").created == expected


@pytest.mark.parametrize(("stem", "rec"), GB, ids=[s for s, _ in GB])
def test_sample_sync_equals_async(gb: ck.GPTBots, stem: str, rec: dict[str, Any]) -> None:
    options: dict[str, Any] = {
        "citations": "citations" in rec["message"],
        "related_questions": "next_question" in rec,
    }

    def full(answer: ck.Answer) -> tuple[Any, ...]:
        return (*view(answer), answer.thoughts, answer.related_questions, answer.references)

    async def run() -> list[ck.Answer]:
        blocking = await gb.aask(rec["question"], **options)
        streamed = await gb.aask(rec["question"], stream=True, display=False, **options)
        async with gb.astream(rec["question"], **options) as s:
            async for _ in s:
                pass
        await gb.aclose()
        assert s.answer is not None
        return [blocking, streamed, s.answer]

    a_blocking, a_streamed, a_stream = asyncio.run(run())
    blocking = gb.ask(rec["question"], **options)
    streamed = gb.ask(rec["question"], stream=True, display=False, **options)
    assert full(a_blocking) == full(blocking)
    assert full(a_streamed) == full(a_stream) == full(streamed)
    assert view(streamed) == view(blocking)


# -- knowledge search and conversation history (providers.md, "GPTBots: more endpoints") ------
# The documented conversation list body.
CONVERSATION_PAGE = {
    "list": [
        {
            "conversation_id": "AaACmo05Yrqb6bOSTbsg",
            "user_id": "3",
            "recent_chat_time": 1694572952383,
            "subject": "2+3=?",
            "conversation_type": "API",
            "message_count": 2,
            "cost_credit": 0.01,
            "bot_id": "64b902a84f1ff25d1c60c10b",
        }
    ],
    "total": 2,
}


def test_search_over_the_knowledge_base(server: ProviderServer, gb: ck.GPTBots) -> None:
    found = gb.search("Why was the Great Wall built?", top_k=3, rerank="BGE-Rerank")
    sent = [r.json for r in server.requests if r.endpoint == "vector_match"][-1]
    assert sent == {
        "prompt": "Why was the Great Wall built?",
        "top_k": 3,
        "rerank_version": "BGE-Rerank",
    }
    assert 1 <= len(found) <= 3 and found.provider == "gptbots"
    scores = [r.score for r in found]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    known = {c["content"] for _, rec in GB for c in rec["correlate"]["correlate_dataset"]}
    assert all(r.text in known and r.title for r in found)
    assert found.frame().height == len(found)
    assert (
        asyncio.run(gb.asearch("Why was the Great Wall built?", top_k=3, rerank="BGE-Rerank"))
        == found
    )


def test_search_inputs_are_checked_before_any_request(
    server: ProviderServer, gb: ck.GPTBots
) -> None:
    before = len(server.requests)
    for bad in ({"top_k": 0}, {"rerank": "nope"}, {"min_score": 1.0}):
        with pytest.raises(ValueError):
            gb.search("q", **bad)
    assert len(server.requests) == before


def test_the_documented_conversation_page_goes_through_every_page() -> None:
    pages: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        pages.append(dict(request.url.params))
        row = dict(CONVERSATION_PAGE["list"][0])  # type: ignore[index]
        row["conversation_id"] += request.url.params["page"]
        return httpx.Response(200, json={**CONVERSATION_PAGE, "list": [row]})

    gb = ck.GPTBots(api_key="k", base_url="http://gb.test", transport=httpx.MockTransport(handler))
    found = gb.conversations(
        since="2023-08-13T16:00:00+00:00", until=date(2023, 9, 30), user_id="3"
    )
    assert [c["conversation_id"] for c in found] == [
        "AaACmo05Yrqb6bOSTbsg1",
        "AaACmo05Yrqb6bOSTbsg2",
    ]
    assert found[0]["subject"] == "2+3=?" and found[0]["recent_chat_time"] == 1694572952383
    assert pages[0] == {
        "conversation_type": "ALL",
        "start_time": "1691942400000",
        "end_time": "1696032000000",
        "page_size": "100",
        "user_id": "3",
        "page": "1",
    }
    assert [p["page"] for p in pages] == ["1", "2"]


def test_history_brings_past_answers_back(server: ProviderServer, gb: ck.GPTBots) -> None:
    rec = GB[0][1]
    first = gb.ask(rec["question"])
    second = gb.ask(
        GB[1][1]["question"], conversation_id=first.conversation_id, stream=True, display=False
    )
    assert first.conversation_id is not None
    listed = gb.conversations(since=datetime(2020, 1, 1), user_id=gb.user_id)
    assert first.conversation_id in {c["conversation_id"] for c in listed}
    past = gb.history(first.conversation_id)
    assert [a.question for a in past] == [rec["question"], GB[1][1]["question"]]
    assert [a.text for a in past] == [first.text, second.text]
    assert [a.id for a in past] == [first.id, second.id]
    assert past[0].references is not None and list(past[0].references) == list(
        first.references or ()
    )
    frame = ck.sources_frame(past)
    assert frame.height > 0
    refs = ck.references_frame(past)
    assert refs.height == len(first.references or ()) + len(second.references or ())
    assert ck.charts.scores(refs).to_dict()  # the charts take them as any answers
    assert asyncio.run(gb.ahistory(first.conversation_id)) == past


def test_history_of_an_unknown_conversation_says_so(gb: ck.GPTBots) -> None:
    with pytest.raises(ck.ProviderError) as caught:
        gb.history("no-such-conversation")
    assert caught.value.code == 40356
