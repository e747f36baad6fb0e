"""Magisterium search: inputs, the lenient parser, sync = async, errors and display."""

from __future__ import annotations

import asyncio
import html
import json
import time
from typing import Any

import httpx
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from citekit.wire.search import parse_search, search_request
from tests.budget import examples
from tests.conftest import SAMPLES, SECRET


def client_for(server: ProviderServer, *, max_retries: int = 2, **options: Any) -> Any:
    scenario = server.add_scenario(**options)
    url = server.scenario_url(scenario, "magisterium")
    return ck.Magisterium(api_key=SECRET, base_url=url, max_retries=max_retries), scenario


def search_samples() -> list[dict[str, Any]]:
    paths = sorted((SAMPLES / "magisterium").glob("search_*.json"))
    assert paths
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


# inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"query": ""}, "non-empty"),
        ({"query": "   "}, "non-empty"),
        ({"query": 3}, "non-empty"),
        ({"query": "x" * 1025}, "at most 1024"),
        ({"query": "q", "num_results": 0}, "1 to 100"),
        ({"query": "q", "num_results": 101}, "1 to 100"),
        ({"query": "q", "num_results": True}, "1 to 100"),
        ({"query": "q", "num_results": 2.0}, "1 to 100"),
        ({"query": "q", "category": "news"}, "'auto', 'magisterial', 'scholarly'"),
    ],
)
def test_inputs_are_checked_before_any_request(
    server: ProviderServer, kwargs: dict[str, Any], needle: str
) -> None:
    mg, scenario = client_for(server)
    query = kwargs.pop("query")
    with pytest.raises(ValueError, match=needle):
        mg.search(query, **kwargs)
    with pytest.raises(ValueError, match=needle):
        asyncio.run(mg.asearch(query, **kwargs))
    assert scenario.request_count == 0


def test_the_request_body_is_the_documented_one(server: ProviderServer) -> None:
    mg, scenario = client_for(server)
    mg.search("x" * 1024, num_results=100, category="scholarly")
    (request,) = [r for r in server.requests if r.scenario == scenario.id]
    assert request.path.endswith("/magisterium/api/v1/search") and request.method == "POST"
    assert request.json == {"query": "x" * 1024, "numResults": 100, "category": "scholarly"}
    assert request.headers["authorization"] == f"Bearer {SECRET}"


# against the server -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "record", search_samples(), ids=lambda r: r["search_response"]["citekit_sample"]
)
def test_sync_equals_async_on_each_sample(server: ProviderServer, record: dict[str, Any]) -> None:
    mg, _ = client_for(server)
    request = record["request"]
    args = {"num_results": request["numResults"], "category": request["category"]}
    found = mg.search(record["query"], **args)
    again = asyncio.run(mg.asearch(record["query"], **args))
    assert found == again and found.raw == again.raw
    assert found.query == record["query"]
    assert found.raw == record["search_response"]
    assert found.sample_label == record["search_response"]["citekit_sample"]
    sent = record["search_response"]["results"]
    assert [r.rank for r in found] == list(range(1, len(sent) + 1))
    for item, raw in zip(found, sent, strict=True):
        sent_text = tuple(
            None if raw[k] is None else html.unescape(raw[k])
            for k in ("title", "url", "text", "author")
        )
        assert (item.title, item.url, item.text, item.author) == sent_text
        assert (item.year, item.score) == (raw["year"], raw["score"])
        assert item.raw == raw


def test_num_results_cuts_the_list(server: ProviderServer) -> None:
    mg, _ = client_for(server)
    found = mg.search("dignity of human work", num_results=2)
    assert len(found) == 2 and [r.rank for r in found] == [1, 2]
    assert found[:1] == (found[0],) and list(found) == list(found.items) and found


def test_frame_has_the_named_schema(server: ProviderServer) -> None:
    mg, _ = client_for(server)
    found = mg.search("principle of subsidiarity", num_results=3, category="magisterial")
    frame = found.frame()
    assert frame.columns == [
        "rank",
        "document_title",
        "document_author",
        "document_year",
        "year",
        "source_url",
        "cited_text",
        "score",
    ]
    assert frame.schema["year"] == pl.Int32 and frame.schema["score"] == pl.Float64
    assert frame["rank"].to_list() == [1, 2, 3]
    assert frame["year"].to_list() == [int(r.year) for r in found if r.year]
    empty = ck.SearchResults(query="q").frame()
    assert empty.height == 0 and empty.schema == frame.schema


def test_401_is_an_authentication_error(server: ProviderServer) -> None:
    url = server.base_url("magisterium", api_key="the-right-key")
    mg = ck.Magisterium(api_key=SECRET, base_url=url)
    with pytest.raises(ck.AuthenticationError) as info:
        mg.search("work")
    assert info.value.status == 401 and "Incorrect API key provided" in str(info.value)
    assert SECRET not in str(info.value)


def test_429_with_retry_after_is_retried(server: ProviderServer) -> None:
    mg, scenario = client_for(
        server, fault="status", status=429, retry_after_ms=200, times=2, endpoint="search"
    )
    start = time.monotonic()
    found = asyncio.run(mg.asearch("dignity of human work", num_results=1))
    assert len(found) == 1
    assert scenario.request_count == 3
    assert time.monotonic() - start >= 0.35


def test_429_after_the_retries_is_a_rate_limit_error(server: ProviderServer) -> None:
    mg, scenario = client_for(server, fault="status", status=429, retry_after=0, max_retries=1)
    with pytest.raises(ck.RateLimitError, match="Too many requests"):
        mg.search("work")
    assert scenario.request_count == 2


def test_a_body_without_a_list_is_a_format_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"answer": "no list here"})

    mg = ck.Magisterium(api_key="k", transport=httpx.MockTransport(handler), max_retries=0)
    with pytest.raises(ck.ResponseFormatError, match="no list of results"):
        mg.search("work")


# the lenient parser -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        [{"title": "T", "url": "https://a.b/c", "text": "x", "score": 1}],
        {"data": [{"title": "T", "source_url": "https://a.b/c", "snippet": "x", "score": "1"}]},
        {"documents": [{"document_title": "T", "link": "https://a.b/c", "cited_text": "x"}]},
        {"items": [{"name": "T", "href": "https://a.b/c", "content": "x", "relevance": 1.0}]},
        {"hits": {"hits": [{"_score": 1.0, "_source": {"title": "T", "url": "https://a.b/c"}}]}},
        {"results": [{"metadata": {"title": "T", "url": "https://a.b/c"}, "text": "x"}]},
    ],
)
def test_usual_shapes_are_read(body: Any) -> None:
    (item,) = parse_search(body, query="q").items
    assert item.title == "T" and item.url == "https://a.b/c" and item.rank == 1


def test_authors_dates_and_odd_values() -> None:
    body = {
        "results": [
            {"title": "A", "authors": ["Leo XIII", {"name": "Pius XI"}], "date": 1891.0},
            {"title": 5, "year": "c. 1270", "score": float("nan")},
            None,
            "a bare snippet",
            {"title": True, "score": True, "year": False},
        ]
    }
    first, second, third, fourth = parse_search(body, query="q").items
    assert first.author == "Leo XIII; Pius XI" and first.year == "1891"
    assert second.title == "5" and second.parsed_year == 1270 and second.score is None
    assert third.text == "a bare snippet" and third.rank == 3
    assert fourth.title is None and fourth.score is None and fourth.year is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=30,
)
KEYS = st.sampled_from(["results", "data", "documents", "items", "hits", "other"])
FIELDS = st.sampled_from(
    ["title", "url", "source_url", "link", "text", "snippet", "author", "year", "date", "score"]
)
ITEM = st.dictionaries(FIELDS | st.text(max_size=8), JSON, max_size=6)


@given(JSON)
@settings(max_examples=examples(300), deadline=None)
def test_arbitrary_json_never_crashes(body: Any) -> None:
    try:
        found = parse_search(body, query="q")
    except ck.ResponseFormatError:
        return
    _check_parsed(found)


@given(st.dictionaries(KEYS, st.lists(ITEM | JSON, max_size=5) | JSON, max_size=3))
@settings(max_examples=examples(300), deadline=None)
def test_arbitrary_items_are_read_or_skipped(body: Any) -> None:
    try:
        found = parse_search(body, query="q")
    except ck.ResponseFormatError:
        return
    _check_parsed(found)


def _check_parsed(found: ck.SearchResults) -> None:
    assert [r.rank for r in found] == list(range(1, len(found) + 1))
    for item in found:
        for value in (item.title, item.url, item.text, item.author, item.year):
            assert value is None or (isinstance(value, str) and value.strip())
        assert item.score is None or isinstance(item.score, float)
    bundle = found._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}
    assert found.frame().height == len(found)


# display ----------------------------------------------------------------------------------


def test_display_escapes_and_links_only_http() -> None:
    body = {
        "results": [
            {"title": "<b>x</b>", "url": "javascript:alert(1)", "text": "<script>", "score": 0.5},
            {"title": "Ok", "url": "https://example.org/a?b=1&c=2", "author": "A & B"},
        ]
    }
    found = parse_search(body, query="<q>")
    bundle = found._repr_mimebundle_()
    html = bundle["text/html"]
    assert "<script>" not in html and "<b>x</b>" not in html and 'href="javascript' not in html
    assert 'href="https://example.org/a?b=1&amp;c=2"' in html
    assert "A &amp; B" in html and "<ol" in html
    assert "[Ok](<https://example.org/a?b=1&c=2>)" in bundle["text/markdown"]
    assert "2 results for '<q>'" in bundle["text/plain"]
    assert str(found) == bundle["text/plain"]
    assert found._repr_mimebundle_(include={"text/html"}).keys() == {"text/html"}


def test_display_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from citekit.render import bundle as render_bundle

    def broken(results: Any) -> str:
        raise RuntimeError("boom")

    monkeypatch.setitem(render_bundle._SEARCH, "text/html", broken)
    found = parse_search([{"title": "T"}], query="q")
    with pytest.warns(UserWarning, match="could not render SearchResults as text/html"):
        bundle = found._repr_mimebundle_()
    assert set(bundle) == {"text/plain"} and "T" in bundle["text/plain"]


def test_search_request_is_pure() -> None:
    spec = search_request("q", num_results=5, category="magisterial")
    assert (spec.method, spec.path, spec.stream) == ("POST", "/search", False)
    assert spec.json == {"query": "q", "numResults": 5, "category": "magisterial"}


# the loopback server's /search --------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"query": ""}, "'query'"),
        ({"query": "x" * 1025}, "'query'"),
        ({"query": "q", "numResults": 101}, "'numResults'"),
        ({"query": "q", "category": "news"}, "'category'"),
        ([1, 2], "not a valid JSON object"),
    ],
)
def test_server_checks_the_documented_inputs(
    server: ProviderServer, body: Any, needle: str
) -> None:
    url = server.base_url("magisterium") + "/search"
    reply = httpx.post(url, json=body, headers={"Authorization": "Bearer k"})
    assert reply.status_code == 400
    assert needle in reply.json()["error"]["message"]


def test_server_keeps_search_samples_apart(server: ProviderServer) -> None:
    searches = server.sample_set.searches
    assert searches and all(s.name.startswith("search_") for s in searches)
    assert not any(s.name.startswith("search_") for s in server.samples("magisterium"))
    reply = httpx.post(
        server.base_url("magisterium") + "/search",
        json={"query": "subsidiarity", "numResults": 1},
        headers={"Authorization": "Bearer k"},
    )
    assert reply.status_code == 200 and len(reply.json()["results"]) == 1
    # A folder of samples read as answers skips the search samples.
    frame = ck.citations_frame(SAMPLES / "magisterium")
    assert frame.height > 0


def test_entities_in_result_text_are_decoded_once(server: ProviderServer) -> None:
    # Magisterium's texts hold HTML entities (as its citations' cited_text does): the user reads
    # "Church's", never "Church&apos;s" nor "&amp;apos;".
    mg = ck.Magisterium(api_key="sk-test", base_url=server.base_url("magisterium"))
    found = mg.search("principle of subsidiarity", num_results=5, category="magisterial")
    texts = [item.text or "" for item in found]
    assert any("Church's" in t for t in texts)
    assert not any("&apos;" in t or "&amp;" in t for t in texts)
    html = found._repr_mimebundle_()["text/html"]
    assert "Church&#x27;s" in html and "&amp;apos;" not in html
