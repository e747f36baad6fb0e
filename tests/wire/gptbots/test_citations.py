"""GPTBots corner citations: ``conversation_config.corner_citation``, ``$[N]$`` marks, and the
``citations`` of blocking replies and of Citation (20) / CorrelateAttachment (83) events."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from tests.budget import examples
from tests.conftest import SECRET, sample_records

CITED = [(stem, rec) for stem, rec in sample_records("gptbots") if "citations" in rec["message"]]
STEM, REC = CITED[0]
QUESTION = REC["question"]


@pytest.fixture()
def gb(server: ProviderServer) -> ck.GPTBots:
    return ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))


def sent_config(server: ProviderServer) -> Any:
    body = [r.json for r in server.requests if r.endpoint == "message"][-1]
    return body.get("conversation_config", "not sent")


def test_citations_per_call_and_as_the_client_default(server: ProviderServer) -> None:
    plain = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
    answer = plain.ask(QUESTION, references=False)
    assert sent_config(server) == "not sent"
    assert "$[" not in answer.text and answer.citations == ()
    plain.ask(QUESTION, references=False, citations=True)
    assert sent_config(server) == {"corner_citation": True}
    cited = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"), citations=True)
    assert "$[1]$" in cited.ask(QUESTION, references=False).text
    assert sent_config(server) == {"corner_citation": True}
    cited.ask(QUESTION, references=False, citations=False)
    assert sent_config(server) == "not sent"
    with pytest.raises(TypeError, match="citations="):
        ck.GPTBots(api_key=SECRET, citations="yes")  # type: ignore[arg-type]


def test_citations_map_to_citekit_citations(gb: ck.GPTBots) -> None:
    ans = gb.ask(QUESTION, citations=True)
    recorded = REC["message"]["citations"]
    assert len(ans.citations) == len(recorded)
    first = ans.citations[0]
    assert first.cited_text == recorded[0]["content"]
    assert first.document_title == recorded[0]["name"]
    assert first.source_url == recorded[0]["attachment"]["url"]
    assert first.source_url.startswith("https://")
    assert [c.marker for c in ans.citations] == [int(c["index"]) for c in recorded]
    assert [c.document_index for c in ans.citations] == [int(c["index"]) - 1 for c in recorded]
    assert first.raw["data_id"] == recorded[0]["data_id"]  # the provider's item stays reachable
    not_attachments = [c for c in ans.citations if c.raw["type"] != "attachment"]
    assert not_attachments and all(c.source_url is None for c in not_attachments)
    marks = {int(n) for n in re.findall(r"\$\[(\d+)\]\$", ans.text)}
    assert ans.cited_markers == marks


def test_streamed_blocking_and_rebuilt_citations_are_equal(gb: ck.GPTBots) -> None:
    blocking = gb.ask(QUESTION, citations=True, references=False)
    streamed = gb.ask(QUESTION, citations=True, references=False, stream=True, display=False)
    rebuilt = ck.parse_response(streamed.raw, provider="gptbots", question=QUESTION)
    assert blocking.citations and blocking.citations == streamed.citations == rebuilt.citations
    assert blocking.text == streamed.text == rebuilt.text


def test_html_links_each_corner_mark_to_its_footnote(gb: ck.GPTBots) -> None:
    ans = gb.ask(QUESTION, citations=True)
    html = ans.to_html()
    links = re.findall(r'<a class="citekit-marker" id="[^"]+" href="#([^"]+)"[^>]*>\[1\]</a>', html)
    assert links, "the $[1]$ mark is a link"
    assert all(f'<li class="citekit-footnote" id="{target}"' in html for target in links)
    assert "$[1]$" not in html
    assert "[^1]:" in ans.to_markdown()
    frame = ck.citations_frame([ans])
    assert frame.height == len(ans.citations)
    assert frame["cited_inline"].to_list() == [True] * frame.height
    assert frame["cited_text"].to_list() == [c.cited_text for c in ans.citations]


def test_correlate_attachments_alone_give_citations_in_order() -> None:
    events = [
        {"code": 11, "message": "MessageInfo", "data": {"message_id": "m1"}},
        {
            "code": 83,
            "message": "CorrelateAttachment",
            "data": [
                {"dataId": "d1", "dataName": "a.pdf", "dataType": "attachment",
                 "url": "https://x.example/a.pdf", "content": "alpha"},
                {"dataId": "d2", "dataName": "b", "dataType": "doc", "url": "", "content": "beta"},
            ],
        },
        {"code": 3, "message": "Text", "data": "A$[1]$ and B$[2]$."},
        {"code": 0, "message": "End", "data": None},
    ]  # fmt: skip
    ans = ck.parse_chunks(events, provider="gptbots")
    assert [(c.marker, c.cited_text, c.document_title) for c in ans.citations] == [
        (1, "alpha", "a.pdf"),
        (2, "beta", "b"),
    ]
    assert ans.citations[0].source_url == "https://x.example/a.pdf"
    assert ans.citations[1].source_url is None
    assert ans.raw["correlate_attachments"][0]["dataId"] == "d1"
    again = ck.parse_response(ans.raw, provider="gptbots")
    assert again.citations == ans.citations


@pytest.mark.parametrize(
    ("index", "expected"), [("1", 0), ("12", 11), (3, 2), ("x", 4), ("0", 4), (None, 4)]
)
def test_citation_index_is_the_mark_number(index: Any, expected: int) -> None:
    reply = {
        "message_id": "m1",
        "output": [{"content": {"text": "t"}}],
        "citations": [{}, {}, {}, {}, {"index": index, "content": "c", "name": "n"}],
    }
    ans = ck.parse_response(reply, provider="gptbots")
    assert ans.citations[4].document_index == expected


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "/files/a.pdf", ""])
def test_only_http_urls_become_source_urls(url: str) -> None:
    item = {"index": "1", "name": "a", "type": "attachment", "attachment": {"url": url}}
    reply = {"message_id": "m1", "output": [], "citations": [item]}
    assert ck.parse_response(reply, provider="gptbots").citations[0].source_url is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=examples(200), deadline=None)
@given(citations=json_values, item=st.dictionaries(st.text(), json_values, max_size=6))
def test_any_json_in_citations_never_crashes(citations: Any, item: dict[str, Any]) -> None:
    for value in (citations, [item], [{**item, "index": "1"}]):
        output = [{"content": {"text": "a$[1]$"}}]
        reply = {"message_id": "m1", "output": output, "citations": value}
        ans = ck.parse_response(reply, provider="gptbots")
        assert all(isinstance(c.cited_text, str) for c in ans.citations)
        ans.to_html()


@pytest.mark.parametrize("framing", ["lines", "sse"])
def test_the_great_wall_question_comes_with_footnotes(server: ProviderServer, framing: str) -> None:
    gb = ck.GPTBots(api_key="k", base_url=server.base_url("gptbots", framing=framing))
    ans = gb.ask("Why was the Great Wall built?", citations=True)
    assert ans.citations[0].cited_text.startswith("[Great Wall History]")
    assert ans.citations[0].source_url == "https://files.example.com/history/great_wall_history.pdf"
    assert ans.cited_markers == {1, 2, 3, 4, 5, 6}
    streamed = gb.ask("Why was the Great Wall built?", citations=True, stream=True)
    assert (streamed.text, streamed.citations) == (ans.text, ans.citations)
    assert gb.ask("Why was the Great Wall built?").citations == ()  # not asked: no marks


@pytest.mark.parametrize(("stem", "rec"), CITED, ids=[s for s, _ in CITED])
@pytest.mark.parametrize("stream", [False, True], ids=["blocking", "streamed"])
def test_a_knowledge_document_has_one_data_id(
    gb: ck.GPTBots, stem: str, rec: dict[str, Any], stream: bool
) -> None:
    """``data_id`` is the knowledge document's id: a citation, a CorrelateAttachment and the
    references of one document carry the same one, and two documents never share one."""
    ans = gb.ask(rec["question"], citations=True, stream=stream, display=False)
    assert ans.sample == f"gptbots/{stem}" and ans.references is not None
    pairs = {(c.document_title, c.raw["data_id"]) for c in ans.citations}
    pairs |= {(r.data_name, r.data_id) for r in ans.references}
    pairs |= {(a["dataName"], a["dataId"]) for a in ans.raw.get("correlate_attachments") or []}
    names = {name for name, _ in pairs}
    ids = {data_id for _, data_id in pairs}
    assert len(names) == len(pairs) == len(ids), sorted(pairs)
    cited = {c.document_title for c in ans.citations}
    shared = cited & {r.data_name for r in ans.references}
    assert shared, "a cited document is also among the references"
