"""Maritaca as it really is: built-in tools, sources from links, tool usage, generated files,
the flex tier, and the model list, against the loopback server."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.testing import ProviderServer
from tests.budget import examples
from tests.conftest import sample_records

TOOLS = ("web_search", "data_ocean", "code_execution")
MSG = [{"role": "user", "content": "Qual é a capital do Brasil?"}]


@pytest.fixture()
def mt(server: ProviderServer) -> ck.Maritaca:
    return ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))


# -- 1. built-in tools -------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_built_in_tool_is_sent_as_a_boolean(
    server: ProviderServer, mt: ck.Maritaca, tool: str
) -> None:
    mt.chat(MSG, **{tool: True})  # type: ignore[arg-type]
    body = server.requests[-1].json
    assert body[tool] is True and "stream" not in body
    mt.ask("Qual é a capital do Brasil?", **{tool: False})  # type: ignore[arg-type]
    assert server.requests[-1].json[tool] is False


def test_tools_left_out_are_not_sent(server: ProviderServer, mt: ck.Maritaca) -> None:
    mt.chat(MSG)
    assert not set(TOOLS) & set(server.requests[-1].json)


@pytest.mark.parametrize("tool", TOOLS)
def test_streaming_with_a_tool_is_refused_before_sending(
    server: ProviderServer, mt: ck.Maritaca, tool: str
) -> None:
    before = len(server.requests)
    why = rf"Maritaca's built-in tools \({tool}\) do not stream: call without stream=True"
    with pytest.raises(ValueError, match=why):
        mt.chat(MSG, stream=True, **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.ask("oi", stream=True, **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.stream(MSG, **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.astream("oi", **{tool: True})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=why):
        mt.chat(MSG, stream=True, extra_body={tool: True})
    assert len(server.requests) == before


def test_async_streaming_with_a_tool_is_refused(server: ProviderServer, mt: ck.Maritaca) -> None:
    before = len(server.requests)
    with pytest.raises(ValueError, match=r"do not stream"):
        asyncio.run(mt.achat(MSG, stream=True, web_search=True))
    with pytest.raises(ValueError, match=r"do not stream"):
        asyncio.run(mt.aask("oi", stream=True, data_ocean=True))
    assert len(server.requests) == before


def test_a_tool_switched_off_streams(server: ProviderServer, mt: ck.Maritaca) -> None:
    ans = mt.chat(MSG, stream=True, display=False, web_search=False)
    assert ans.provider == "maritaca" and server.requests[-1].json["stream"] is True


def test_magisterium_takes_no_built_in_tool(server: ProviderServer) -> None:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    for tool in TOOLS:
        with pytest.raises(TypeError, match=rf"Magisterium does not take {tool}"):
            mg.ask("x", **{tool: True})  # type: ignore[arg-type]


def test_server_refuses_a_streaming_tool_request(server: ProviderServer) -> None:
    body: dict[str, Any] = {"model": "sabia-4", "messages": MSG, "stream": True}
    for tool in TOOLS:
        r = httpx.post(
            server.base_url("maritaca") + "/chat/completions",
            json={**body, tool: True},
            headers={"Authorization": "Bearer k"},
        )
        assert r.status_code == 400 and tool in r.json()["detail"]


# -- 2. sources --------------------------------------------------------------------------------

LINKED = (
    "Segundo o [Banco Central](https://www.bcb.gov.br/pix), o Pix é gratuito. "
    "Veja também [o regulamento](https://www.bcb.gov.br/regulamento) e de novo o "
    "[BC](https://www.bcb.gov.br/pix); `[código](https://e.org)` não é fonte."
)


def completion(text: str, **message: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "model": "sabia-4",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, **message},
                "finish_reason": "stop",
            }
        ],
    }


def test_links_become_citations() -> None:
    ans = ck.parse_response(completion(LINKED), provider="maritaca")
    assert [
        (c.marker, c.document_index, c.document_title, c.source_url) for c in ans.citations
    ] == [
        (1, 0, "Banco Central", "https://www.bcb.gov.br/pix"),
        (2, 1, "o regulamento", "https://www.bcb.gov.br/regulamento"),
    ]
    first = ans.citations[0]
    assert first.cited_text == "Banco Central"
    assert LINKED[first.raw["start_index"] : first.raw["end_index"]] == (
        "[Banco Central](https://www.bcb.gov.br/pix)"
    )


def test_magisterium_links_are_not_citations() -> None:
    ans = ck.parse_response(completion(LINKED), provider="magisterium")
    assert ans.citations == ()


def test_streamed_links_give_the_same_citations() -> None:
    pieces = [LINKED[i : i + 7] for i in range(0, len(LINKED), 7)]
    chunks: list[dict[str, Any]] = [
        {"id": "c1", "model": "sabia-4", "choices": [{"index": 0, "delta": {"content": p}}]}
        for p in pieces
    ]
    chunks.append({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    streamed = ck.parse_chunks(chunks, provider="maritaca")
    blocking = ck.parse_response(completion(LINKED), provider="maritaca")
    assert streamed.citations == blocking.citations and len(streamed.citations) == 2


ANNOTATED = "O Pix é gratuito para pessoas físicas."


@pytest.mark.parametrize(
    "annotation",
    [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://www.bcb.gov.br/pix",
                "title": "Pix - Banco Central",
                "start_index": 2,
                "end_index": 17,
            },
        },
        {
            "type": "url_citation",
            "url": "https://www.bcb.gov.br/pix",
            "title": "Pix - Banco Central",
            "start_index": 2,
            "end_index": 17,
        },
    ],
    ids=["chat-completions", "responses"],
)
def test_url_citation_annotations_take_precedence(annotation: dict[str, Any]) -> None:
    text = ANNOTATED + " Fonte: [outra](https://other.org)."
    ans = ck.parse_response(completion(text, annotations=[annotation]), provider="maritaca")
    (c,) = ans.citations
    assert (c.marker, c.document_title, c.source_url) == (
        1,
        "Pix - Banco Central",
        "https://www.bcb.gov.br/pix",
    )
    assert c.cited_text == "Pix é gratuito"
    assert (c.raw["start_index"], c.raw["end_index"]) == (2, 17)
    # streamed annotations give the same answer, and its raw rebuilds it
    chunks = [
        {"id": "c1", "model": "sabia-4", "choices": [{"index": 0, "delta": {"content": text}}]},
        {
            "id": "c1",
            "choices": [
                {"index": 0, "delta": {"annotations": [annotation]}, "finish_reason": "stop"}
            ],
        },
    ]
    streamed = ck.parse_chunks(chunks, provider="maritaca")
    assert streamed.citations == ans.citations
    again = ck.parse_response(dict(streamed.raw), provider="maritaca")
    assert again.citations == ans.citations


def test_annotations_of_one_url_share_a_marker() -> None:
    notes = [
        {"type": "url_citation", "url": u, "title": t, "start_index": a, "end_index": b}
        for u, t, a, b in [
            ("https://a.org", "A", 0, 4),
            ("https://b.org", "B", 5, 9),
            ("https://a.org", "A", 10, 14),
        ]
    ]
    ans = ck.parse_response(completion(ANNOTATED, annotations=notes), provider="maritaca")
    assert [c.marker for c in ans.citations] == [1, 2, 1]
    assert ans.citation_groups()[1][1].cited_text == ANNOTATED[10:14]


def test_a_recorded_web_search_answer_with_url_citation_annotations(mt: ck.Maritaca) -> None:
    """A web-search answer recorded with OpenAI-style annotations: one source per annotation,
    citing the passage its span covers; annotations of one URL share a marker."""
    recs = [
        rec
        for _, rec in sample_records("maritaca")
        if rec["response"]["choices"][0]["message"].get("annotations")
    ]
    assert recs, "a sample with url_citation annotations is needed"
    for rec in recs:
        ans = mt.ask(rec["question"], web_search=True, display=False)
        notes = [n["url_citation"] for n in rec["response"]["choices"][0]["message"]["annotations"]]
        assert ans.sample is not None and ans.usage is not None and ans.usage.tools
        assert [c.source_url for c in ans.citations] == [n["url"] for n in notes]
        assert [c.cited_text for c in ans.citations] == [
            ans.text[n["start_index"] : n["end_index"]] for n in notes
        ]
        first_seen = list(dict.fromkeys(n["url"] for n in notes))
        assert [c.marker for c in ans.citations] == [first_seen.index(n["url"]) + 1 for n in notes]
        frame = ck.sources_frame([ans])
        assert frame["kind"].unique().to_list() == ["web source"]
        assert frame["span_start"].to_list() == [n["start_index"] for n in notes]
        assert frame["span_end"].to_list() == [n["end_index"] for n in notes]
        again = ck.parse_response(dict(ans.raw), provider="maritaca")
        assert again.citations == ans.citations


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_annotation = st.fixed_dictionaries(
    {"type": st.sampled_from(["url_citation", "file_citation"]) | _json},
    optional={
        "url": st.sampled_from(["https://a.org", "javascript:x", ""]) | _json,
        "title": _json,
        "start_index": st.integers(-5, 80) | _json,
        "end_index": st.integers(-5, 80) | _json,
        "url_citation": _json,
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(annotations=_json | st.lists(_annotation | _json, max_size=5), text=st.text(max_size=60))
def test_any_annotations_never_crash(annotations: Any, text: str) -> None:
    ans = ck.parse_response(completion(text, annotations=annotations), provider="maritaca")
    for c in ans.citations:
        assert c.source_url is not None and c.source_url.startswith(("http://", "https://"))
        assert 0 <= c.document_index < len(ans.citations)


# -- 3. tool usage -----------------------------------------------------------------------------

DETAILS = {
    "web_search_calls": 2,
    "page_reads": 5,
    "data_ocean_gb_processed": 0.25,
    "code_execution_minutes": 0.5,
}


def test_tool_execution_details_are_usage_tools() -> None:
    data = completion("ok") | {"usage": {"prompt_tokens": 3, "tool_execution_details": DETAILS}}
    ans = ck.parse_response(data, provider="maritaca")
    assert ans.usage is not None and ans.usage.tools == {k: float(v) for k, v in DETAILS.items()}
    plain = ck.parse_response(
        completion("ok") | {"usage": {"prompt_tokens": 3}}, provider="maritaca"
    )
    assert plain.usage is not None and plain.usage.tools is None


def test_answers_frame_has_the_tool_columns() -> None:
    with_tools = ck.parse_response(
        completion("ok") | {"usage": {"tool_execution_details": {"page_reads": 4}}},
        provider="maritaca",
    )
    frame = ck.answers_frame([with_tools, ck.parse_response(completion("ok"), provider="maritaca")])
    assert frame["page_reads"].to_list() == [4.0, None]
    assert frame["web_search_calls"].to_list() == [None, None]
    assert frame["code_execution_minutes"].dtype == pl.Float64


@settings(max_examples=examples(300), deadline=None)
@given(details=_json | st.dictionaries(st.sampled_from([*DETAILS, "x"]), _json, max_size=5))
def test_any_tool_execution_details_never_crash(details: Any) -> None:
    usage = ck.Usage.from_dict({"tool_execution_details": details})
    assert usage is not None
    if usage.tools is not None:
        assert usage.tools and all(isinstance(v, float) for v in usage.tools.values())


# -- 4. generated files ------------------------------------------------------------------------


def tiny_png() -> bytes:
    """A valid 4x2 RGB PNG, built with zlib and struct."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([200, 40 * x, 90] * 4) for x in range(2))
    header = struct.pack(">IIBBBBB", 4, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def with_files(*files: dict[str, Any]) -> dict[str, Any]:
    return completion("Veja o gráfico.") | {"generated_files": list(files)}


def png_item(name: str = "grafico.png", data: bytes | None = None) -> dict[str, Any]:
    raw = tiny_png() if data is None else data
    return {
        "filename": name,
        "mime_type": "image/png",
        "size_bytes": len(raw),
        "content_base64": base64.b64encode(raw).decode(),
    }


def test_generated_files_are_answer_files(tmp_path: Path) -> None:
    csv = b"regiao,populacao\nSudeste,84\n"
    ans = ck.parse_response(
        with_files(
            png_item(),
            {
                "filename": "dados.csv",
                "mime_type": "text/csv",
                "size_bytes": len(csv),
                "content_base64": base64.b64encode(csv).decode(),
            },
        ),
        provider="maritaca",
    )
    png, table = ans.files
    assert (png.name, png.mime_type, png.data, png.is_image) == (
        "grafico.png",
        "image/png",
        tiny_png(),
        True,
    )
    assert (table.data, table.size_bytes, table.is_image) == (csv, len(csv), False)
    saved = png.save(tmp_path)
    assert saved == tmp_path / "grafico.png" and saved.read_bytes() == tiny_png()
    assert png.save(saved) == saved  # the same bytes: nothing to refuse
    with pytest.raises(FileExistsError, match="overwrite=True"):
        table.save(saved)
    assert saved.read_bytes() == tiny_png()
    table.save(saved, overwrite=True)
    assert saved.read_bytes() == csv


def test_a_file_name_cannot_leave_the_folder(tmp_path: Path) -> None:
    ans = ck.parse_response(with_files(png_item("../../evil.png")), provider="maritaca")
    assert ans.files[0].save(tmp_path) == tmp_path / "evil.png"


def test_bad_base64_keeps_the_file_with_a_note(tmp_path: Path) -> None:
    item = png_item() | {"content_base64": "não é base64!"}
    ans = ck.parse_response(with_files(item), provider="maritaca")
    (f,) = ans.files
    assert f.data is None and f.note and "not valid base64" in f.note
    assert f.note in ans.notes
    with pytest.raises(ValueError, match="not valid base64"):
        f.save(tmp_path / "x.png")
    assert "grafico.png" in ans.to_html() and "<img" not in ans.to_html()


def test_html_shows_images_inline_and_lists_other_files() -> None:
    big = png_item("big.png", b"\x89PNG" + bytes(3 * 1024 * 1024))
    evil = png_item('<script>"x".png') | {"mime_type": "image/svg+xml"}
    ans = ck.parse_response(
        with_files(png_item(), big, evil, {"filename": "a.txt", "mime_type": "text/plain"}),
        provider="maritaca",
    )
    html = ans.to_html()
    encoded = base64.b64encode(tiny_png()).decode()
    assert html.count("<img ") == 1
    assert f'<img src="data:image/png;base64,{encoded}" alt="grafico.png"' in html
    assert "big.png" in html and "over the 2.0 MB inline limit" in html
    assert "answer.files[1].save(path)" in html
    assert "<script>" not in html and "&lt;script&gt;" in html and "image/svg+xml" in html
    assert "a.txt" in html


_file_item = st.fixed_dictionaries(
    {},
    optional={
        "filename": st.text(max_size=10) | _json,
        "mime_type": st.sampled_from(["image/png", "text/csv"]) | _json,
        "size_bytes": st.integers() | _json,
        "content_base64": st.text(max_size=12)
        | st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode())
        | _json,
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(files=_json | st.lists(_file_item | _json, max_size=4))
def test_any_generated_files_never_crash(files: Any) -> None:
    data = completion("ok") | {"generated_files": files}
    ans = ck.parse_response(data, provider="maritaca")
    for f in ans.files:
        assert isinstance(f.name, str) and f.name
        assert (f.data is None) == (f.note is not None)
    ans.to_html()


# -- 5. flex -----------------------------------------------------------------------------------


class RecordingTransport(httpx.HTTPTransport):
    """A real transport that remembers each request's timeouts."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[dict[str, float | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.timeouts.append(dict(request.extensions["timeout"]))
        return super().handle_request(request)


def test_flex_waits_for_the_queue(server: ProviderServer) -> None:
    transport = RecordingTransport()
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), transport=transport)
    mt.chat(MSG)
    mt.chat(MSG, service_tier="flex")
    mt.chat(MSG, extra_body={"service_tier": "flex"})
    assert [t["read"] for t in transport.timeouts] == [120.0, 330.0, 330.0]
    assert transport.timeouts[1]["connect"] == 10.0
    assert server.requests[-1].json["service_tier"] == "flex"


def test_flex_keeps_a_timeout_you_set(server: ProviderServer) -> None:
    transport = RecordingTransport()
    mt = ck.Maritaca(
        api_key="k", base_url=server.base_url("maritaca"), transport=transport, timeout=30
    )
    mt.chat(MSG, service_tier="flex")
    assert transport.timeouts[-1]["read"] == 30.0


@pytest.mark.parametrize(
    "message", ["Flex queue is full", "A fila do tier flex está cheia, tente mais tarde"]
)
def test_a_full_flex_queue_says_so(server: ProviderServer, message: str) -> None:
    scenario = server.add_scenario(fault="status", status=429, message=message)
    url = server.scenario_url(scenario, "maritaca")
    mt = ck.Maritaca(api_key="k", base_url=url, max_retries=0)
    with pytest.raises(ck.RateLimitError, match="Maritaca's flex queue is full") as info:
        mt.chat(MSG, service_tier="flex")
    assert info.value.status == 429 and message in str(info.value)


def test_other_429s_stay_plain_rate_limits(server: ProviderServer) -> None:
    scenario = server.add_scenario(fault="status", status=429, message="Too many requests")
    mt = ck.Maritaca(api_key="k", base_url=server.scenario_url(scenario, "maritaca"), max_retries=0)
    with pytest.raises(ck.RateLimitError) as info:
        mt.chat(MSG)
    assert "flex" not in str(info.value)


@pytest.mark.parametrize("name", ["temperature", "top_p"])
def test_sampling_bounds_are_citekits(mt: ck.Maritaca, name: str) -> None:
    with pytest.raises(ValueError, match=r"citekit's bound.*the provider documents no range"):
        mt.chat(MSG, **{name: 5.0})  # type: ignore[arg-type]
    with pytest.raises(ValueError) as info:
        mt.chat(MSG, frequency_penalty=5.0)
    assert "citekit's bound" not in str(info.value)


# -- 6. models ---------------------------------------------------------------------------------


def test_models_in_the_documented_shape(mt: ck.Maritaca) -> None:
    models = mt.models()
    assert {m.owned_by for m in models} == {"maritacaai"}
    sabia = next(m for m in models if m.id == "sabia-4")
    assert (sabia.context_length, sabia.max_completion_tokens) == (128000, 32768)
    assert sabia.raw["top_provider"] == {"context_length": 128000, "max_completion_tokens": 32768}
    assert asyncio.run(mt.amodels()) == models


def test_context_length_falls_back_to_top_provider() -> None:
    from citekit.providers.maritaca import parse_models

    (m,) = parse_models(
        {"data": [{"id": "x", "top_provider": {"context_length": 64000}, "owned_by": 3}]}
    )
    assert (m.context_length, m.max_completion_tokens, m.owned_by) == (64000, None, None)


@settings(max_examples=examples(200), deadline=None)
@given(entry=st.fixed_dictionaries({"id": st.just("sabia-4")}, optional={
    "owned_by": _json, "context_length": _json, "created": _json,
    "top_provider": _json | st.dictionaries(
        st.sampled_from(["context_length", "max_completion_tokens"]), _json),
}))  # fmt: skip
def test_any_model_entry_never_crashes(entry: dict[str, Any]) -> None:
    from citekit.providers.maritaca import parse_models

    (m,) = parse_models({"data": [entry]})
    assert m.max_completion_tokens is None or m.max_completion_tokens > 0


# -- 7. samples --------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_requests_get_tool_samples(mt: ck.Maritaca, tool: str) -> None:
    recorded = {
        f"maritaca/{stem}" for stem, rec in sample_records("maritaca") if rec["request"].get(tool)
    }
    assert recorded, f"a sample recorded with {tool} is needed"
    ans = mt.ask("Qual é a novidade?", **{tool: True})  # type: ignore[arg-type]
    assert ans.sample in recorded
    assert ans.usage is not None and ans.usage.tools
    assert ans.citations and all(c.source_url for c in ans.citations)
    assert not mt.ask("Qual é a novidade?").usage.tools  # type: ignore[union-attr]


def test_the_code_execution_sample_renders_its_chart(mt: ck.Maritaca) -> None:
    ans = mt.ask("gráfico das regiões", code_execution=True)
    png, csv = ans.files
    assert png.data is not None and png.data.startswith(b"\x89PNG\r\n\x1a\n")
    assert png.size_bytes == len(png.data) < 1000
    assert csv.data is not None and csv.data.startswith(b"regiao,populacao_milhoes")
    html = ans.to_html()
    assert html.count("<img ") == 1 and "populacao_regioes.csv" in html
    again = ck.parse_response(dict(ans.raw), provider="maritaca", question=ans.question)
    assert again == ans and again.files == ans.files
    frame = ck.answers_frame([ans])
    assert frame["code_execution_minutes"].to_list() == [0.2]


def test_linked_sources_are_cited_in_the_text() -> None:
    ans = ck.parse_response(completion(LINKED), provider="maritaca")
    html = ans.to_html()
    assert "not cited inline" not in html and html.count('class="citekit-footnote"') == 2
    assert 'class="citekit-passage"' not in html  # the link text is the title: nothing to unfold


def _answer(text: str, **extra: Any) -> ck.Answer:
    message: dict[str, Any] = {"role": "assistant", "content": text, **extra}
    body = {"id": "x", "model": "sabia-4", "choices": [{"index": 0, "message": message}]}
    return ck.parse_response(body, provider="maritaca")


def test_a_bracket_number_is_not_a_footnote_of_a_linked_source() -> None:
    # Maritaca's sources are its links: a literal "[1]" in its text points at nothing.
    answer = _answer("O Pix [1] foi criado. [fonte](https://bcb.gov.br)")
    assert [c.source_url for c in answer.citations] == ["https://bcb.gov.br"]
    assert 'class="citekit-marker"' not in answer.to_html()
    markdown = answer.to_markdown()
    assert "[^1]" not in markdown and "**Sources linked in the text**" in markdown
    assert "not cited inline" not in answer._repr_mimebundle_()["text/plain"]


def test_an_annotation_span_past_the_text_cites_its_title() -> None:
    note = {
        "type": "url_citation",
        "url_citation": {"url": "https://bcb.gov.br", "title": "BCB", "start_index": 0,
                         "end_index": 10_000},
    }  # fmt: skip
    answer = _answer("O Pix foi criado pelo Banco Central.", annotations=[note])
    assert [c.cited_text for c in answer.citations] == ["BCB"]


def test_files_are_listed_in_every_format_and_save_into_a_new_folder(
    mt: ck.Maritaca, tmp_path: Path
) -> None:
    chart = mt.ask(
        "Execute código: faça um gráfico de barras da população das regiões do Brasil no Censo "
        "2022.",
        code_execution=True,
    )
    bundle = chart._repr_mimebundle_()
    for kind in ("text/plain", "text/markdown", "text/html"):
        assert all(f.name in bundle[kind] for f in chart.files), kind
    saved = chart.files[0].save(f"{tmp_path / 'out'}/")
    assert saved == tmp_path / "out" / chart.files[0].name
    assert saved.read_bytes() == chart.files[0].data


# -- the Responses API (api="responses") --------------------------------------------------------
PIX = "Pesquise na web: o que mudou no Pix em 2025?"
CHART = "Execute código: faça um gráfico de barras da população das regiões do Brasil."


def _same(a: ck.Answer, b: ck.Answer) -> None:
    assert (a.text, a.finish_reason, a.citations, a.files) == (
        b.text,
        b.finish_reason,
        b.citations,
        b.files,
    )
    assert a.tool_calls == b.tool_calls
    assert a.usage is not None and b.usage is not None
    assert (a.usage.prompt_tokens, a.usage.completion_tokens, a.usage.tools) == (
        b.usage.prompt_tokens,
        b.usage.completion_tokens,
        b.usage.tools,
    )


@pytest.mark.parametrize("per_call", [False, True])
def test_responses_gives_the_chat_answer(server: ProviderServer, per_call: bool) -> None:
    url = server.base_url("maritaca")
    chat = ck.Maritaca(api_key="k", base_url=url)
    responses = ck.Maritaca(api_key="k", base_url=url, api="chat" if per_call else "responses")
    api: dict[str, Any] = {"api": "responses"} if per_call else {}
    for question, tool in ((PIX, "web_search"), (CHART, "code_execution")):
        a = chat.ask(question, log=False, **{tool: True})  # type: ignore[arg-type]
        b = responses.ask(question, log=False, **{tool: True}, **api)  # type: ignore[arg-type]
        sent = server.requests[-1]
        assert sent.path.endswith("/api/v1/responses")
        assert {
            "type": {"web_search": "web_search", "code_execution": "code_interpreter"}[tool]
        } in sent.json["tools"]
        _same(a, b)
    assert b.files and b.usage is not None and b.usage.tools


def test_responses_streams_the_blocking_answer(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api="responses")
    blocking = mt.ask("O que é o Pix?", log=False)
    with mt.stream("O que é o Pix?", log=False) as events:
        deltas = "".join(e.text for e in events if isinstance(e, ck.TextDelta))
    assert deltas == blocking.text and events.answer is not None
    _same(events.answer, blocking)
    async_answer = asyncio.run(_astreamed(mt))
    _same(async_answer, blocking)


async def _astreamed(mt: ck.Maritaca) -> ck.Answer:
    async with mt.astream("O que é o Pix?", log=False) as events:
        async for _ in events:
            pass
    blocking = await mt.aask("O que é o Pix?", log=False)
    await mt.aclose()
    assert events.answer is not None
    _same(blocking, events.answer)
    return events.answer


def test_responses_function_calls_carry_the_call_id(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    tools = [
        {"type": "function", "function": {"name": "buscar_cep", "parameters": {"type": "object"}}}
    ]
    question = "Qual o CEP da Avenida Paulista e como está o clima lá?"
    chat = mt.ask(question, tools=tools, log=False)
    ans = mt.ask(
        question,
        tools=tools,
        api="responses",
        system="Use as ferramentas.",
        max_tokens=200,
        log=False,
    )
    body = server.requests[-1].json
    assert body["tools"] == [
        {"type": "function", "name": "buscar_cep", "parameters": {"type": "object"}}
    ]
    assert body["instructions"] == "Use as ferramentas." and body["max_output_tokens"] == 200
    assert [(c.id, c.name, c.arguments) for c in ans.tool_calls] == [
        (c.id, c.name, c.arguments) for c in chat.tool_calls
    ]
    assert ans.tool_calls and ans.finish_reason == "tool_calls"


def test_a_failed_response_raises_carrying_the_answer(server: ProviderServer) -> None:
    mt = ck.Maritaca(
        api_key="k", base_url=server.base_url("maritaca", fault="failed"), api="responses"
    )
    for stream in (False, True):
        with pytest.raises(ck.ProviderError, match="internal error") as info:
            mt.ask("O que é o Pix?", stream=stream, display=False, log=False)
        assert info.value.answer is not None and info.value.answer.text
        assert info.value.answer.finish_reason == "error"


def test_a_cut_response_is_length(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api="responses")
    ans = mt.ask("Conte a história do samba em detalhes.", log=False)
    chat = mt.ask("Conte a história do samba em detalhes.", api="chat", log=False)
    assert chat.finish_reason == "length" and ans.finish_reason == "length"


def test_api_is_checked() -> None:
    with pytest.raises(ck.ConfigurationError, match="use 'chat' or 'responses'"):
        ck.Maritaca(api_key="k", api="completions")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use 'chat' or 'responses'"):
        ck.Maritaca(api_key="k").ask("oi", api="v2")  # type: ignore[typeddict-item]


# -- structured output (schema=) ---------------------------------------------------------------
CITY = {
    "type": "object",
    "properties": {"cidade": {"type": "string"}, "populacao": {"type": "integer"}},
    "required": ["cidade", "populacao"],
}


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_schema_is_sent_and_the_answer_parsed(server: ProviderServer, api: str) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api=api)  # type: ignore[arg-type]
    ans = mt.ask("Qual é a capital do Brasil?", schema=CITY, log=False)
    body = server.requests[-1].json
    if api == "chat":
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": True, "schema": CITY},
        }
    else:
        assert body["text"] == {
            "format": {"type": "json_schema", "name": "answer", "schema": CITY, "strict": True}
        }
    assert isinstance(ans.parsed, dict) and set(ans.parsed) == {"cidade", "populacao"}
    assert ans.parsed == json.loads(ans.text)


def test_a_pydantic_schema_gives_an_instance(server: ProviderServer) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Cidade(pydantic.BaseModel):
        cidade: str
        populacao: int

    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api="responses")
    ans = mt.ask("Qual é a capital do Brasil?", schema=Cidade, log=False)
    assert isinstance(ans.parsed, Cidade) and ans.parsed.populacao == 1


def test_a_reply_that_is_not_json_for_the_schema_keeps_the_answer_with_a_note(
    server: ProviderServer,
) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    # json_object: the server answers {"answer": ...}, which this schema refuses.
    ans = mt.ask("Qual é a capital do Brasil?", response_format={"type": "json_object"}, log=False)
    assert json.loads(ans.text) and ans.parsed is None
    from citekit.wire.schema import decode, schema_of

    value, note = decode(ans.text, schema_of(CITY))
    assert value is None and note and "not valid for the schema" in note and "cidade" in note
    value, note = decode("Brasília.", schema_of(CITY))
    assert value is None and note and "not JSON" in note


def test_schema_limits_are_checked_before_sending(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    before = len(server.requests)
    with pytest.raises(ValueError, match="pattern"):
        mt.ask("oi", schema={"type": "string", "pattern": "^a"})
    with pytest.raises(ValueError, match="schema= or response_format="):
        mt.ask("oi", schema=CITY, response_format={"type": "json_object"})
    assert len(server.requests) == before


def test_response_format_is_sent_on_chat_completions(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    mt.ask("oi", response_format={"type": "json_object"}, log=False)
    assert server.requests[-1].json["response_format"] == {"type": "json_object"}
    with pytest.raises(ValueError, match="response_format="):
        mt.ask("oi", response_format={"type": "yaml"})


@pytest.mark.slow  # importing openai takes seconds
def test_the_openai_sdk_responses_create_works(server: ProviderServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="k", base_url=server.base_url("maritaca"))
    response = client.responses.create(model="sabia-4", input="O que é o Pix?")
    assert response.status == "completed" and response.output_text
    assert server.requests[-1].path.endswith("/api/responses")
    events = list(client.responses.create(model="sabia-4", input="O que é o Pix?", stream=True))
    assert [e.sequence_number for e in events] == list(range(1, len(events) + 1))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == response.output_text


def test_the_documented_code_interpreter_body_is_what_is_sent(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api="responses")
    question = "Gere um gráfico de barras (3, 7, 2, 5) com matplotlib e mostre para mim."
    ans = mt.ask(question, model="sabia-4-thinking", code_execution=True, log=False)
    # providers.md, "Built-in tools on this endpoint": the documented example body.
    documented = json.loads(
        '{"model":"sabia-4-thinking","input":"Gere um gráfico de barras (3, 7, 2, 5) com '
        'matplotlib e mostre para mim.","tools":[{"type":"code_interpreter"}]}'
    )
    assert server.requests[-1].json == documented
    assert ans.files and ans.usage is not None and ans.usage.tools


def test_the_documented_function_result_input_is_what_is_sent(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api="responses")
    arguments = '{"latitude": -22.9068, "longitude": -43.1729}'
    messages = [
        {"role": "user", "content": "What's the weather forecast in Rio de Janeiro?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc123",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_abc123",
            "content": '{"temperature": 25.6, "unit": "°C"}',
        },
    ]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    mt.chat(messages, tools=tools, log=False)
    # providers.md, "Input items" (Example 1): a function result sent back.
    documented = json.loads(
        '{"model":"sabia-4","input":[{"role":"user","content":"What\'s the weather forecast in '
        'Rio de Janeiro?"},{"type":"function_call","call_id":"call_abc123","name":"get_weather",'
        '"arguments":"{\\"latitude\\": -22.9068, \\"longitude\\": -43.1729}"},'
        '{"type":"function_call_output","call_id":"call_abc123","output":'
        '"{\\"temperature\\": 25.6, \\"unit\\": \\"°C\\"}"}],"tools":[...]}'.replace("[...]", "[]")
    )
    sent = server.requests[-1].json
    assert sent["input"] == documented["input"] and sent["model"] == documented["model"]
    assert sent["tools"] == [{"type": "function", "name": "get_weather", "parameters": {}}]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_streamed_schema_answer_is_parsed(server: ProviderServer, api: str) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api=api)  # type: ignore[arg-type]
    ans = mt.ask("Qual é a capital do Brasil?", schema=CITY, stream=True, display=False, log=False)
    assert isinstance(ans.parsed, dict) and set(ans.parsed) == {"cidade", "populacao"}


def test_streamed_function_calls_arrive_whole(server: ProviderServer) -> None:
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"), api="responses")
    tools = [{"type": "function", "function": {"name": "buscar_cep", "parameters": {}}}]
    question = "Qual o CEP da Avenida Paulista e como está o clima lá?"
    blocking = mt.ask(question, tools=tools, log=False)
    with mt.stream(question, tools=tools, log=False) as events:
        deltas = [e for e in events if isinstance(e, ck.ToolCallDelta)]
    assert events.answer is not None and events.answer.tool_calls == blocking.tool_calls
    assert [(d.index, d.id, d.name, d.arguments) for d in deltas] == [
        (c.index, c.id, c.name, c.arguments) for c in blocking.tool_calls
    ]


def test_responses_answers_are_logged_and_read_back(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    monkeypatch.delenv("CITEKIT_LOG", raising=False)
    url = server.base_url("maritaca")
    mt = ck.Maritaca(api_key="k", base_url=url, api="responses")
    blocking = mt.ask(CHART, code_execution=True)
    streamed = mt.ask("O que é o Pix?", stream=True, display=False)
    failing = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca", fault="failed"))
    with pytest.raises(ck.ProviderError) as info:
        failing.ask("O que é o Pix?", api="responses")
    rows = ck.log.rows()
    assert [r["error_type"] for r in rows] == [None, None, "ProviderError"]
    back = [ck.log.get(r["id"]) for r in rows]
    assert back[0] == blocking and back[1] == streamed
    assert info.value.answer is not None and back[2].text == info.value.answer.text
    again = mt.ask(CHART, code_execution=True, cache=True)
    assert again.cached and again.files == blocking.files
