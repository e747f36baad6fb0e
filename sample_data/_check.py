"""Self-check of the recorded-format samples. Stdlib only.

Usage::

    python sample_data/_check.py

Re-parses every ``.sse`` file with a spec-conforming SSE decoder (WHATWG HTML, "Parsing an event
stream"), assembles the stream the way a client does, and asserts that it gives the same text,
citations, related questions, finish reasons, tool calls and usage as the matching ``.json``. It
also asserts the shape of every file and the variety of edge cases the set promises (see
``README.md``). Exits non-zero with a list of problems when anything is off.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLE_FIELD = "citekit_sample"
CITATION_FIELDS = {
    "cited_text",
    "cited_text_heading",
    "document_title",
    "document_index",
    "document_author",
    "document_year",
    "document_reference",
    "source_url",
}
CHAT_RESPONSE_FIELDS = {"id", "object", "created", "model", "choices", "usage", SAMPLE_FIELD}
MAGISTERIUM_KNOWN = CHAT_RESPONSE_FIELDS | {"citations", "related_questions"}
GPTBOTS_CODES = {0, 3, 4, 5, 6, 10, 11, 20, 39, 41, 83}
CREATED_RANGE = (1735689600, 1798761599)  # 2025-01-01 .. 2026-12-31 UTC
HEX24 = re.compile(r"^[0-9a-f]{24}$")

DEFINITION_RE = re.compile(r"^[ ]{0,3}\[\^([1-9][0-9]*)\]:.*$", re.MULTILINE)
MARKER_RE = re.compile(r"(?<!\\)\[(\^?)([1-9][0-9]{0,3})\](?!\()")
ADJACENT_RE = re.compile(r"\[\^?[1-9][0-9]*\]\[\^?[1-9][0-9]*\]")
LINK_RE = re.compile(r"\[[^\]]+\]\(https?://[^)\s]+\)")
CORNER_RE = re.compile(r"\$\[([1-9][0-9]{0,3})\]\$")
ENTITY_RE = re.compile(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);")

problems: list[str] = []


def check(condition: object, message: str) -> bool:
    if not condition:
        problems.append(message)
    return bool(condition)


# --------------------------------------------------------------------------- SSE decoding


def decode_sse(raw: bytes) -> list[str]:
    """The ``data`` of every event dispatched by a conforming SSE parser, in order.

    Lines end with CRLF, LF or CR; ``:`` starts a comment; one space after the field colon is
    dropped; several ``data`` lines are joined with ``\\n``; a blank line dispatches; an event
    with no data line is not dispatched; an unterminated event at end of stream is discarded.
    """
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    events: list[str] = []
    data: list[str] | None = None
    lines = re.split(r"\r\n|\r|\n", text)
    # re.split leaves a final "" after the last line terminator: it is not a line.
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if line == "":
            if data is not None:
                events.append("\n".join(data))
            data = None
            continue
        if line.startswith(":"):
            continue
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            data = [*(data or []), value]
    check(data is None, "stream ends with an unterminated event")
    return events


def word_count(text: str) -> int:
    return len(text.split())


# --------------------------------------------------------------------------- helpers


#: Maritaca's built-in tools need stream: false, so a sample using one has no .sse file.
BUILT_IN_TOOLS = ("web_search", "data_ocean", "code_execution")


def uses_tools(doc: dict[str, Any]) -> bool:
    request = doc.get("request")
    return isinstance(request, dict) and any(request.get(t) for t in BUILT_IN_TOOLS)


def load_pairs(provider: str) -> list[tuple[str, dict[str, Any], bytes]]:
    """Every sample with its stream (empty for a Maritaca built-in tool sample, which has none)."""
    folder = HERE / provider
    stems_json = {
        p.stem
        for p in folder.glob("*.json")
        if p.stem != "models" and not p.stem.startswith("search_")
    }
    stems_sse = {p.stem for p in folder.glob("*.sse")}
    docs = {
        stem: json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
        for stem in stems_json
    }
    no_stream = {stem for stem, doc in docs.items() if provider == "maritaca" and uses_tools(doc)}
    check(stems_json - no_stream == stems_sse, f"{provider}: .json and .sse files do not pair up")
    out = []
    for stem in sorted(stems_json):
        check(re.match(r"^\d\d_[a-z0-9_]+$", stem), f"{provider}/{stem}: name is not NN_slug")
        raw = b"" if stem in no_stream else (folder / f"{stem}.sse").read_bytes()
        out.append((stem, docs[stem], raw))
    return out


def check_maritaca_tools(where: str, doc: dict[str, Any], tally: Counter[str]) -> None:
    """A built-in tool sample: tool usage reported, links as sources, files that decode."""
    req, resp = doc["request"], doc["response"]
    for tool in BUILT_IN_TOOLS:
        if req.get(tool):
            check(req[tool] is True, f"{where}: {tool} must be the boolean true")
            tally[f"tool:{tool}"] += 1
    check("stream" not in req, f"{where}: a built-in tool needs stream: false")
    details = resp["usage"].get("tool_execution_details")
    check(
        isinstance(details, dict)
        and details
        and set(details)
        <= {"web_search_calls", "page_reads", "data_ocean_gb_processed", "code_execution_minutes"}
        and all(isinstance(v, int | float) and v >= 0 for v in details.values()),
        f"{where}: usage.tool_execution_details",
    )
    message = resp["choices"][0]["message"]
    text = message["content"] or ""
    links = re.findall(r"\]\((https?://[^)\s]+)\)", text)
    notes = message.get("annotations")
    check(
        links or notes,
        f"{where}: a tool answer gives its sources as Markdown links or url_citation annotations",
    )
    tally["links"] += len(links)
    if notes is not None:
        check_url_citations(where, text, notes, tally)
    for item in resp.get("generated_files", []):
        check(
            set(item) == {"filename", "mime_type", "size_bytes", "content_base64"},
            f"{where}: generated file keys",
        )
        data = base64.b64decode(item["content_base64"], validate=True)
        check(len(data) == item["size_bytes"], f"{where}: {item['filename']} size_bytes")
        if item["mime_type"] == "image/png":
            check(data.startswith(b"\x89PNG\r\n\x1a\n"), f"{where}: PNG signature")
            check(len(data) < 1000, f"{where}: the PNG should stay small")
            tally["png"] += 1


def check_chat_request(where: str, doc: dict[str, Any]) -> None:
    req = doc["request"]
    check("stream" not in req, f"{where}: request must not carry 'stream'")
    msgs = req.get("messages", [])
    check(
        msgs and msgs[-1] == {"role": "user", "content": doc["question"]},
        f"{where}: last request message is not the question",
    )
    check(
        all(m.get("role") in {"system", "user", "assistant", "tool"} for m in msgs),
        f"{where}: bad message role",
    )


def check_chat_response(where: str, sample: str, doc: dict[str, Any]) -> dict[str, Any]:
    resp = doc["response"]
    check(str(resp.get("id", "")).startswith("chatcmpl-"), f"{where}: id")
    check(
        isinstance(resp.get("created"), int)
        and CREATED_RANGE[0] <= resp["created"] <= CREATED_RANGE[1],
        f"{where}: created",
    )
    check(resp.get("model") == doc["request"]["model"], f"{where}: model differs from request")
    check(resp.get(SAMPLE_FIELD) == sample, f"{where}: {SAMPLE_FIELD} must be {sample!r}")
    usage = resp.get("usage", {})
    check(
        usage.get("prompt_tokens", 0) + usage.get("completion_tokens", -1)
        == usage.get("total_tokens"),
        f"{where}: usage totals",
    )
    for i, choice in enumerate(resp.get("choices", [])):
        check(choice.get("index") == i, f"{where}: choice index")
        check(choice.get("message", {}).get("role") == "assistant", f"{where}: role")
    return resp


def check_chunk_head(where: str, chunk: dict[str, Any], resp: dict[str, Any]) -> None:
    check(chunk.get("object") == "chat.completion.chunk", f"{where}: chunk object")
    for key in ("id", "created", "model"):
        check(chunk.get(key) == resp[key], f"{where}: chunk {key} differs from the response")
    check(isinstance(chunk.get("choices"), list), f"{where}: chunk without choices")


def split_done(where: str, events: list[str]) -> list[dict[str, Any]]:
    check(events and events[-1] == "[DONE]", f"{where}: stream must end with data: [DONE]")
    check(events.count("[DONE]") == 1, f"{where}: more than one [DONE]")
    return [json.loads(e) for e in events if e != "[DONE]"]


# --------------------------------------------------------------------------- Magisterium


def check_magisterium() -> dict[str, int]:
    tally: Counter[str] = Counter()
    pairs = load_pairs("magisterium")
    check(len(pairs) >= 14, "magisterium: fewer than 14 answers")
    for stem, doc, raw in pairs:
        where = f"magisterium/{stem}"
        check(set(doc) == {"question", "language", "request", "response"}, f"{where}: keys")
        req = doc["request"]
        check(req.get("model") == "magisterium-1", f"{where}: request model")
        check(req.get("return_related_questions") is True, f"{where}: return_related_questions")
        check_chat_request(where, doc)
        resp = check_chat_response(where, where, doc)
        tally[f"lang:{doc['language']}"] += 1
        check(resp.get("object") == "chat.completion", f"{where}: object")
        check(len(resp["choices"]) == 1, f"{where}: one choice")
        choice = resp["choices"][0]
        text = choice["message"]["content"]
        finish = choice["finish_reason"]
        citations = resp.get("citations")
        related = resp.get("related_questions")
        check(isinstance(citations, list), f"{where}: citations list")
        check(isinstance(related, list), f"{where}: related_questions list")
        if set(resp) - MAGISTERIUM_KNOWN:
            tally["extra_field"] += 1

        if finish == "content_filter":
            tally["content_filter"] += 1
            check(text == "" and citations == [], f"{where}: filtered answer must be empty")
            safety = req.get("safety_settings", {}).get("CATEGORY_NON_CATHOLIC", {})
            check(safety.get("response") is False, f"{where}: safety_settings response false")
        else:
            check(finish == "stop", f"{where}: finish_reason")
            check(150 <= word_count(text) <= 600, f"{where}: {word_count(text)} words")
            check(3 <= len(citations) <= 15, f"{where}: {len(citations)} citations")
            check(3 <= len(related) <= 4, f"{where}: related_questions count")
            check_magisterium_citations(where, text, citations, tally)

        # the stream
        events = decode_sse(raw)
        chunks = split_done(where, events)
        if b"\r\n" in raw:
            tally["crlf"] += 1
        if b": keep-alive" in raw and b"\n\n\n" in raw.replace(b"\r\n", b"\n"):
            tally["keepalive"] += 1
        if any("\n" in e for e in events):
            tally["multiline_data"] += 1
        check(
            chunks and chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""},
            f"{where}: first chunk delta",
        )
        pieces: list[str] = []
        for n, chunk in enumerate(chunks):
            check_chunk_head(where, chunk, resp)
            check(len(chunk["choices"]) == 1, f"{where}: one choice per chunk")
            ch = chunk["choices"][0]
            last = n == len(chunks) - 1
            check(set(ch) == {"index", "delta", "finish_reason"}, f"{where}: chunk choice keys")
            check((ch["finish_reason"] is not None) == last, f"{where}: finish_reason placement")
            check(("citations" in chunk) == last, f"{where}: citations only on the last chunk")
            if n > 0 and not last:
                delta = ch["delta"].get("content", "")
                check(
                    set(ch["delta"]) == {"content"} and 1 <= word_count(delta) <= 4,
                    f"{where}: content delta {delta!r} is not 1-4 words",
                )
                pieces.append(delta)
        final = chunks[-1]
        check(final["choices"][0]["delta"] == {}, f"{where}: final delta must be {{}}")
        check("".join(pieces) == text, f"{where}: streamed text differs from .json")
        check(final["choices"][0]["finish_reason"] == finish, f"{where}: finish differs")
        check(final.get("citations") == citations, f"{where}: streamed citations differ")
        check(final.get("related_questions") == related, f"{where}: related questions differ")
        check(final.get(SAMPLE_FIELD) == where, f"{where}: {SAMPLE_FIELD} on the last chunk")
        if "usage" in final:
            tally["usage_on_final"] += 1
            check(final["usage"] == resp["usage"], f"{where}: streamed usage differs")
    return dict(tally)


def check_magisterium_citations(
    where: str, text: str, citations: list[dict[str, Any]], tally: Counter[str]
) -> None:
    body = DEFINITION_RE.sub("", text)
    if body != text:
        tally["definitions"] += 1
    markers = [(m.group(1) == "^", int(m.group(2))) for m in MARKER_RE.finditer(body)]
    check(markers, f"{where}: no inline markers")
    styles = {caret for caret, _ in markers}
    check(len(styles) == 1, f"{where}: mixes [^N] and [N]")
    tally["caret" if True in styles else "plain"] += 1
    if ADJACENT_RE.search(body):
        tally["adjacent"] += 1
    if LINK_RE.search(body):
        tally["markdown_link"] += 1
    numbers = {n for _, n in markers}
    indexes = {c["document_index"] for c in citations}
    if {i + 1 for i in indexes} - numbers:
        tally["unreferenced_citation"] += 1
    if numbers - {i + 1 for i in indexes}:
        tally["dangling_marker"] += 1
    if any(v > 1 for v in Counter(c["document_index"] for c in citations).values()):
        tally["shared_index"] += 1

    by_doc: dict[int, tuple[Any, ...]] = {}
    for c in citations:
        check(set(c) == CITATION_FIELDS, f"{where}: citation fields {sorted(c)}")
        check(
            isinstance(c["document_index"], int) and c["document_index"] >= 0,
            f"{where}: document_index",
        )
        check(isinstance(c["cited_text"], str) and c["cited_text"].strip(), f"{where}: cited_text")
        check(
            isinstance(c["source_url"], str) and c["source_url"].startswith("https://"),
            f"{where}: source_url",
        )
        for key in (
            "cited_text_heading",
            "document_title",
            "document_author",
            "document_year",
            "document_reference",
        ):
            check(c[key] is None or isinstance(c[key], str), f"{where}: {key} type")
            if c[key] is None:
                tally[f"null:{key}"] += 1
        year = c["document_year"]
        if year == "":
            tally["empty_year"] += 1
        elif year and not re.fullmatch(r"\d{4}", year):
            tally["range_year"] += 1
        if ENTITY_RE.search(c["cited_text"]):
            tally[f"entities:{where}"] = 1
        if re.search(r"\*[^*\s][^*]*\*", c["cited_text"]):
            tally["markdown_cited_text"] += 1
        doc_key = (c["document_title"], c["document_author"], c["document_year"])
        check(
            by_doc.setdefault(c["document_index"], doc_key) == doc_key,
            f"{where}: citations sharing document_index {c['document_index']} disagree",
        )


# --------------------------------------------------------------------------- Maritaca


def check_url_citations(where: str, text: str, notes: Any, tally: Counter[str]) -> None:
    """OpenAI's chat-completions ``annotations``: ``{"type": "url_citation", "url_citation":
    {url, title, start_index, end_index}}``, an https URL and a span inside the text."""
    if not check(isinstance(notes, list) and notes, f"{where}: annotations must be a list"):
        return
    tally["url_citation_answers"] += 1
    for i, note in enumerate(notes):
        inner = note.get("url_citation") if isinstance(note, dict) else None
        shaped = (
            note.get("type") == "url_citation"
            and set(note) == {"type", "url_citation"}
            and isinstance(inner, dict)
            and set(inner) == {"url", "title", "start_index", "end_index"}
        )
        if not check(shaped, f"{where}: annotations[{i}] shape"):
            continue
        assert isinstance(inner, dict)
        check(str(inner["url"]).startswith("https://"), f"{where}: annotations[{i}] url")
        check(
            isinstance(inner["title"], str) and inner["title"], f"{where}: annotations[{i}] title"
        )
        start, end = inner["start_index"], inner["end_index"]
        check(
            isinstance(start, int)
            and isinstance(end, int)
            and 0 <= start < end <= len(text)
            and text[start:end].strip() == text[start:end],
            f"{where}: annotations[{i}] span must cover a passage of the text",
        )


def check_maritaca() -> dict[str, int]:
    tally: Counter[str] = Counter()
    models = json.loads((HERE / "maritaca" / "models.json").read_text(encoding="utf-8"))
    check(models.get("object") == "list", "maritaca/models: object")
    ids = set()
    for m in models.get("data", []):
        ids.add(m.get("id"))
        check(
            m.get("object") == "model"
            and isinstance(m.get("created"), int)
            and isinstance(m.get("context_length"), int)
            and m.get("owned_by"),
            f"maritaca/models: entry {m.get('id')}",
        )
    check({"sabia-4", "sabia-4-thinking", "sabiazinho-4"} <= ids, "maritaca/models: ids")
    check(any(i.endswith("-br-sp") for i in ids), "maritaca/models: no -br-sp model")

    pairs = load_pairs("maritaca")
    check(len(pairs) >= 5, "maritaca: fewer than 5 answers")
    for stem, doc, raw in pairs:
        where = f"maritaca/{stem}"
        check(set(doc) == {"question", "language", "request", "response"}, f"{where}: keys")
        check_chat_request(where, doc)
        req = doc["request"]
        check(req.get("model") in ids, f"{where}: model not in models.json")
        resp = check_chat_response(where, where, doc)
        tally[f"lang:{doc['language']}"] += 1
        check("citations" not in resp, f"{where}: Maritaca has no citations")
        obj = resp.get("object")
        check(obj in {"chat.completion", "chat_completion"}, f"{where}: object")
        if obj == "chat_completion" and req["messages"][0]["role"] == "system":
            tally["chat_completion_object_with_system"] += 1
        if "cached_tokens" in resp["usage"].get("prompt_tokens_details", {}):
            tally["cached_tokens"] += 1
        choices = resp["choices"]
        check(len(choices) == req.get("n", 1), f"{where}: choices vs n")
        if len(choices) == 2:
            texts = [c["message"]["content"] for c in choices]
            if texts[0] != texts[1]:
                tally["n2"] += 1
        expected_calls: list[dict[str, Any]] = []
        for choice in choices:
            if choice["finish_reason"] == "tool_calls":
                msg = choice["message"]
                check(msg.get("content") is None, f"{where}: tool-call content must be null")
                expected_calls = msg.get("tool_calls", [])
                names = {t["function"]["name"] for t in req.get("tools", [])}
                check(req.get("tool_choice") == "auto", f"{where}: tool_choice")
                for call in expected_calls:
                    check(
                        call["id"].startswith("call_") and call["type"] == "function",
                        f"{where}: tool call id/type",
                    )
                    check(call["function"]["name"] in names, f"{where}: unknown function")
                    check(
                        isinstance(json.loads(call["function"]["arguments"]), dict),
                        f"{where}: arguments are not a JSON object",
                    )
                if len(expected_calls) >= 2:
                    tally["parallel_tool_calls"] += 1
        if uses_tools(doc):
            check_maritaca_tools(where, doc, tally)
            continue

        # the stream
        chunks = split_done(where, decode_sse(raw))
        usage_chunk = chunks[-1]
        check(
            usage_chunk.get("choices") == [] and usage_chunk.get("usage") == resp["usage"],
            f"{where}: last chunk must be usage-only and match the usage",
        )
        check(usage_chunk.get(SAMPLE_FIELD) == where, f"{where}: {SAMPLE_FIELD} on last chunk")
        check(
            chunks[-2]["choices"] and chunks[-2]["choices"][0]["finish_reason"],
            f"{where}: chunk before the usage chunk must carry finish_reason",
        )
        text: dict[int, str] = {}
        finish: dict[int, str] = {}
        calls: dict[int, dict[str, Any]] = {}
        order: list[int] = []
        for chunk in chunks[:-1]:
            check_chunk_head(where, chunk, resp)
            check(chunk.get("usage") is None, f"{where}: usage before the last chunk")
            check(len(chunk["choices"]) == 1, f"{where}: one choice per chunk")
            ch = chunk["choices"][0]
            i = ch["index"]
            check(i not in finish, f"{where}: delta after finish_reason")
            delta = ch["delta"]
            if delta.get("content"):
                text[i] = text.get(i, "") + delta["content"]
                order.append(i)
            for frag in delta.get("tool_calls") or []:
                slot = calls.setdefault(frag["index"], {"id": None, "name": "", "args": ""})
                if frag.get("id"):
                    slot["id"] = frag["id"]
                    slot["type"] = frag.get("type")
                fn = frag.get("function", {})
                slot["name"] += fn.get("name") or ""
                slot["args"] += fn.get("arguments") or ""
            if ch["finish_reason"]:
                finish[i] = ch["finish_reason"]
        for choice in choices:
            i = choice["index"]
            check(
                text.get(i) == (choice["message"]["content"] or None),
                f"{where}: streamed text of choice {i} differs",
            )
            check(finish.get(i) == choice["finish_reason"], f"{where}: finish of choice {i}")
        got_calls = [
            {
                "id": c["id"],
                "type": c.get("type"),
                "function": {"name": c["name"], "arguments": c["args"]},
            }
            for _, c in sorted(calls.items())
        ]
        check(got_calls == expected_calls, f"{where}: streamed tool calls differ")
        if len(choices) > 1:
            switches = sum(1 for a, b in itertools.pairwise(order) if a != b)
            check(switches >= len(order) // 2, f"{where}: choices are not interleaved")
    check(
        sum(v for k, v in tally.items() if k == "lang:pt") * 2 > len(pairs),
        "maritaca: answers are not mostly Portuguese",
    )
    return dict(tally)


# --------------------------------------------------------------------------- GPTBots


def check_gptbots() -> dict[str, int]:
    tally: Counter[str] = Counter()
    pairs = load_pairs("gptbots")
    check(len(pairs) >= 9, "gptbots: fewer than 9 turns")
    message_ids: set[str] = set()
    for stem, doc, raw in pairs:
        where = f"gptbots/{stem}"
        keys = {"question", "language", "user_id", "conversation_id", "message", "correlate"}
        check(set(doc) - {"next_question"} == keys, f"{where}: keys")
        if "next_question" in doc:
            tally["next_question"] += 1
            questions = doc["next_question"].get("questions")
            check(
                isinstance(questions, list)
                and questions
                and all(isinstance(q, str) and q.strip() for q in questions)
                and doc["next_question"].get(SAMPLE_FIELD) == f"gptbots/{stem}",
                f"{where}: next_question must be {{questions: [...], {SAMPLE_FIELD}}}",
            )
        tally[f"lang:{doc['language']}"] += 1
        check(
            isinstance(doc["user_id"], str) and 0 < len(doc["user_id"]) <= 32, f"{where}: user_id"
        )
        conv = doc["conversation_id"]
        msg = doc["message"]
        cor = doc["correlate"]
        check(HEX24.match(conv), f"{where}: conversation_id")
        check(
            msg.get("conversation_id") == conv == cor.get("conversation_id"),
            f"{where}: conversation ids disagree",
        )
        mid = msg.get("message_id", "")
        check(HEX24.match(mid), f"{where}: message_id")
        check(mid not in message_ids, f"{where}: message_id reused")
        message_ids.add(mid)
        check(cor.get("answer_id") == mid, f"{where}: answer_id != message_id")
        check(
            HEX24.match(cor.get("question_id", "")) and cor["question_id"] != mid,
            f"{where}: question_id",
        )
        check(
            msg.get(SAMPLE_FIELD) == where and cor.get(SAMPLE_FIELD) == where,
            f"{where}: {SAMPLE_FIELD}",
        )
        ct = msg.get("create_time")
        check(isinstance(ct, int), f"{where}: create_time")
        seconds = ct // 1000 if ct > 10**11 else ct
        tally["create_time_ms" if ct > 10**11 else "create_time_s"] += 1
        check(CREATED_RANGE[0] <= seconds <= CREATED_RANGE[1], f"{where}: create_time range")
        outputs = msg.get("output", [])
        check(outputs, f"{where}: no output")
        for out in outputs:
            check(
                out.get("from_component_branch")
                and out.get("from_component_name")
                and isinstance(out.get("content", {}).get("text"), str),
                f"{where}: output item shape",
            )
            plain = CORNER_RE.sub("", out["content"]["text"]) if msg.get("citations") else None
            text_ = out["content"]["text"] if plain is None else plain
            check(not MARKER_RE.search(text_), f"{where}: text has markers")
        if len(outputs) >= 2:
            tally["two_branches"] += 1
        usage = msg.get("usage", {})
        check(
            isinstance(usage.get("tokens"), dict) and isinstance(usage.get("credits"), dict),
            f"{where}: usage shape",
        )

        dataset = cor.get("correlate_dataset")
        check(isinstance(dataset, list), f"{where}: correlate_dataset")
        if not dataset:
            tally["empty_dataset"] += 1
        else:
            check(3 <= len(dataset) <= 20, f"{where}: {len(dataset)} references")
        scores = []
        for item in dataset:
            check({"content", "data_id", "data_name", "score"} <= set(item), f"{where}: item")
            check(HEX24.match(item["data_id"]), f"{where}: data_id")
            s = item["score"]
            check(
                isinstance(s, float) and 0.0 <= s <= 1.0 and round(s, 4) == s,
                f"{where}: score {s!r}",
            )
            scores.append(s)
            if "source_url" not in item:
                tally["missing_source_url"] += 1
            elif item["source_url"] == "":
                tally["empty_source_url"] += 1
        check(scores == sorted(scores, reverse=True), f"{where}: scores not sorted")
        if scores:
            tally["max_refs"] = max(tally["max_refs"], len(scores))

        # the stream, framed as SSE (.sse) and as bare JSON lines (.jsonl), the same events
        events = [json.loads(e) for e in decode_sse(raw)]
        lines_path = HERE / "gptbots" / f"{stem}.jsonl"
        if check(lines_path.is_file(), f"{where}: no .jsonl stream"):
            lines = lines_path.read_bytes().decode("utf-8").splitlines()
            check(all(line.strip() for line in lines), f"{where}.jsonl: blank line")
            check([json.loads(line) for line in lines] == events, f"{where}: .jsonl != .sse")
        check(b"[DONE]" not in raw, f"{where}: GPTBots streams have no [DONE]")
        check(
            all(
                isinstance(e.get("code"), int) and isinstance(e.get("message"), str) and "data" in e
                for e in events
            ),
            f"{where}: event envelope",
        )
        check(
            events[0]["code"] == 11
            and events[0]["data"] == {"message_id": mid, "conversation_id": conv},
            f"{where}: first event must be MessageInfo",
        )
        check(
            events[-1]["code"] == 0 and events[-1]["data"] == {SAMPLE_FIELD: where},
            f"{where}: last event must be End with {SAMPLE_FIELD}",
        )
        text = "".join(e["data"] for e in events if e["code"] == 3)
        joined = "\n\n".join(o["content"]["text"] for o in outputs)
        check(text == joined, f"{where}: code-3 deltas differ from the output texts")
        # FlowOutput is not the answer (providers.md, "FlowOutput (code 10)"): a text agent's
        # is the "User Input" component echoing the question, a voice agent's its model
        # component's clips (audioDatas: transcript, url, seconds).
        flows = []
        for e in events:
            if e["code"] != 10:
                continue
            check(
                isinstance(e["data"], list) and HEX24.match(e.get("componentId", "")),
                f"{where}: FlowOutput must be a list with a sibling componentId",
            )
            flows.extend(e["data"])
        voice = any("audio" in o["content"] for o in outputs)
        if voice:
            clips = [(c["audio"], c["transcript"]) for o in outputs for c in o["content"]["audio"]]
            datas = [(d["url"], d["transcript"]) for f in flows for d in f.get("audioDatas", [])]
            check(datas == clips, f"{where}: FlowOutput audioDatas differ from the output's audio")
        else:
            echo = [
                {"content": doc["question"], "branch": None, "from_component_name": "User Input"}
            ]
            check(flows == echo, f"{where}: FlowOutput is not the User Input echo of the question")
        costs = [e["data"] for e in events if e["code"] == 4]
        check(costs == [usage], f"{where}: Cost event differs from usage")
        check_gptbots_citations(where, msg, outputs, events, tally)
        check_gptbots_data_ids(where, msg, dataset, events)
        check_gptbots_extras(where, outputs, events, tally)
        if any(e["code"] not in GPTBOTS_CODES for e in events):
            tally["unknown_code"] += 1
        if b"data:{" in raw:
            tally["data_without_space"] += 1
    for lang in ("en", "zh", "ja", "th"):
        check(tally[f"lang:{lang}"], f"gptbots: no {lang} turn")
    return dict(tally)


def check_gptbots_extras(
    where: str, outputs: list[dict[str, Any]], events: list[dict[str, Any]], tally: Counter[str]
) -> None:
    """Voice answers (Audio, code 39, and no Text), thoughts (41) and tool calls (5, 6)."""
    codes = [e["code"] for e in events]
    audio = [e["data"] for e in events if e["code"] == 39]
    if audio:
        tally["voice"] += 1
        check(3 not in codes, f"{where}: a voice answer has no Text events")
        clips = [c for o in outputs for c in o["content"].get("audio", [])]
        spoken = [a["transcript"] for a in audio if a["audioAnswer"] == ""]
        check(
            "".join(spoken) == "".join(c["transcript"] for c in clips)
            and all(a["transcript"] == "" for a in audio[len(spoken) :]),
            f"{where}: Audio events are not transcript deltas, then audio chunks",
        )
        check("".join(a["transcript"] for a in audio).strip(), f"{where}: empty transcript")
    if 41 in codes:
        tally["thought"] += 1
        first_text = min((i for i, c in enumerate(codes) if c == 3), default=len(codes))
        check(codes.index(41) < first_text, f"{where}: a Thought after the text")
        check(
            all(isinstance(e["data"], str) for e in events if e["code"] == 41),
            f"{where}: Thought data is not a string",
        )
    if 5 in codes and 6 in codes:
        tally["tool_events"] += 1
        check(codes.index(5) < codes.index(6), f"{where}: a tool response before its request")


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def check_gptbots_data_ids(
    where: str, msg: dict[str, Any], dataset: list[dict[str, Any]], events: list[dict[str, Any]]
) -> None:
    """``data_id`` is the knowledge document's id: one document (one name) has one id in the
    reply's citations, the Citation (20) and CorrelateAttachment (83) events and the
    correlate references, and two documents never share one."""
    pairs = [(c.get("name"), c.get("data_id")) for c in msg.get("citations") or []]
    pairs += [(d.get("data_name"), d.get("data_id")) for d in dataset]
    for e in events:
        if e["code"] == 20:
            pairs += [(i["citation"].get("name"), i["citation"].get("dataId")) for i in e["data"]]
        elif e["code"] == 83:
            pairs += [(i.get("dataName"), i.get("dataId")) for i in e["data"]]
    ids: dict[Any, set[Any]] = {}
    names: dict[Any, set[Any]] = {}
    for name, data_id in pairs:
        ids.setdefault(name, set()).add(data_id)
        names.setdefault(data_id, set()).add(name)
    check(all(len(v) == 1 for v in ids.values()), f"{where}: one document with two data_ids")
    check(all(len(v) == 1 for v in names.values()), f"{where}: two documents with one data_id")


def check_gptbots_citations(
    where: str,
    msg: dict[str, Any],
    outputs: list[dict[str, Any]],
    events: list[dict[str, Any]],
    tally: Counter[str],
) -> None:
    """Corner citations: every $[N]$ mark has a citation with index "N" (a string), each
    citation carries the documented fields, and the stream's Citation (20) and
    CorrelateAttachment (83) events carry the same content as the blocking citations."""
    citations = msg.get("citations")
    streamed = [e for e in events if e["code"] == 20]
    attachments = [item for e in events if e["code"] == 83 for item in e["data"]]
    if citations is None:
        check(not streamed and not attachments, f"{where}: citation events without citations")
        return
    tally["corner_citations"] += 1
    marks = {m for o in outputs for m in CORNER_RE.findall(o["content"]["text"])}
    indexes = [c.get("index") for c in citations]
    check(all(isinstance(i, str) for i in indexes), f"{where}: citation index is not a string")
    check(marks <= set(indexes), f"{where}: a $[N]$ mark without its citation")
    fields = {"index", "name", "type", "content", "data_id", "segment_id", "segment_index"}
    for c in citations:
        check(fields <= set(c), f"{where}: citation fields")
        check(c.get("type") in ("attachment", "doc", "tool"), f"{where}: citation type")
        check(isinstance(c.get(c.get("type")), dict), f"{where}: citation {c.get('type')} object")
        if c.get("type") == "attachment":
            check({"id", "url", "name", "type"} <= set(c["attachment"]), f"{where}: attachment")
    items = []
    for e in streamed:
        check(isinstance(e["data"], list), f"{where}: Citation data is not a list")
        items.extend({_snake(k): v for k, v in i["citation"].items()} for i in e["data"])
    check(len(items) == len(citations), f"{where}: Citation events != citations")
    for got, want in zip(items, citations, strict=False):
        same = ("index", "name", "type", "content", "data_id", "segment_id", "segment_index")
        check(all(got.get(k) == want.get(k) for k in same), f"{where}: Citation event differs")
    check(
        [(a["dataId"], a["content"]) for a in attachments]
        == [(c["data_id"], c["content"]) for c in citations],
        f"{where}: CorrelateAttachment events differ from citations",
    )


# --------------------------------------------------------------------------- main


SEARCH_CATEGORIES = {"auto", "magisterial", "scholarly"}
SEARCH_ITEM_FIELDS = {"title", "url", "text", "author", "year", "score"}


def check_searches() -> int:
    """Magisterium ``POST /search`` samples: ``search_NN_slug.json``, no stream.

    The response shape is not documented; ``search_response`` holds ``{"results": [{title, url,
    text, author, year, score}], "citekit_sample"}``, results best first, within ``numResults``.
    """
    folder = HERE / "magisterium"
    paths = sorted(folder.glob("search_*.json"))
    for path in paths:
        where = f"magisterium/{path.stem}"
        check(re.match(r"^search_\d\d_[a-z0-9_]+$", path.stem), f"{where}: not search_NN_slug")
        check(not path.with_suffix(".sse").exists(), f"{where}: a search has no stream")
        doc = json.loads(path.read_text(encoding="utf-8"))
        check(set(doc) == {"query", "language", "request", "search_response"}, f"{where}: keys")
        req, resp = doc.get("request") or {}, doc.get("search_response") or {}
        query = req.get("query")
        check(isinstance(query, str) and 0 < len(query) <= 1024, f"{where}: query")
        check(query == doc.get("query"), f"{where}: query is not the request's")
        count = req.get("numResults")
        check(isinstance(count, int) and 1 <= count <= 100, f"{where}: numResults 1-100")
        check(req.get("category") in SEARCH_CATEGORIES, f"{where}: category")
        check(resp.get(SAMPLE_FIELD) == where, f"{where}: {SAMPLE_FIELD} label")
        results = resp.get("results")
        if not check(isinstance(results, list) and results, f"{where}: no results"):
            continue
        check(isinstance(count, int) and len(results) <= count, f"{where}: over numResults")
        scores = []
        for i, item in enumerate(results):
            check(set(item) == SEARCH_ITEM_FIELDS, f"{where}: results[{i}] fields")
            check(isinstance(item.get("text"), str) and item["text"], f"{where}: results[{i}] text")
            check(str(item.get("url", "")).startswith("https://"), f"{where}: results[{i}] url")
            scores.append(item.get("score"))
        check(scores == sorted(scores, reverse=True), f"{where}: results not best first")
    check(len(paths) >= 1, "magisterium: no search_*.json sample")
    return len(paths)


def require(tally: dict[str, int], name: str, test: Callable[[dict[str, int]], bool]) -> None:
    check(test(tally), f"variety: {name}")


def main() -> int:
    mag = check_magisterium()
    mar = check_maritaca()
    gpt = check_gptbots()
    n_search = check_searches()

    langs = {k[5:]: v for k, v in mag.items() if k.startswith("lang:")}
    require(
        mag, "magisterium mostly English", lambda _: langs.get("en", 0) * 2 > sum(langs.values())
    )
    require(mag, ">=2 Spanish", lambda _: langs.get("es", 0) >= 2)
    require(mag, ">=1 Portuguese", lambda _: langs.get("pt", 0) >= 1)
    require(mag, "Italian or French", lambda _: langs.get("it", 0) + langs.get("fr", 0) >= 1)
    require(mag, "German or Latin", lambda _: langs.get("de", 0) + langs.get("la", 0) >= 1)
    require(mag, "[^N] in most answers", lambda t: t.get("caret", 0) > t.get("plain", 0))
    require(mag, "[N] in >=3 answers", lambda t: t.get("plain", 0) >= 3)
    require(mag, "adjacent markers", lambda t: t.get("adjacent", 0) >= 1)
    require(mag, "shared document_index in >=3", lambda t: t.get("shared_index", 0) >= 3)
    for key in ("document_author", "cited_text_heading", "document_year", "document_reference"):
        require(mag, f"null {key}", lambda t, k=key: t.get(f"null:{k}", 0) >= 1)
    require(mag, "empty document_year", lambda t: t.get("empty_year", 0) >= 1)
    require(mag, "range/approximate year", lambda t: t.get("range_year", 0) >= 1)
    require(
        mag,
        "entities in >=2 answers",
        lambda t: sum(1 for k in t if k.startswith("entities:")) >= 2,
    )
    require(mag, "Markdown in cited_text", lambda t: t.get("markdown_cited_text", 0) >= 1)
    require(mag, "unreferenced citation in >=2", lambda t: t.get("unreferenced_citation", 0) >= 2)
    require(mag, "dangling marker", lambda t: t.get("dangling_marker", 0) >= 1)
    require(mag, "footnote definitions", lambda t: t.get("definitions", 0) >= 1)
    require(mag, "Markdown link", lambda t: t.get("markdown_link", 0) >= 1)
    require(mag, "content_filter answer", lambda t: t.get("content_filter", 0) >= 1)
    require(mag, "unknown top-level field", lambda t: t.get("extra_field", 0) >= 1)
    require(mag, ">=2 CRLF streams", lambda t: t.get("crlf", 0) >= 2)
    require(mag, ">=2 keep-alive streams", lambda t: t.get("keepalive", 0) >= 2)
    require(mag, "multi-line data event", lambda t: t.get("multiline_data", 0) >= 1)
    require(mag, "usage on final chunk", lambda t: t.get("usage_on_final", 0) >= 1)

    require(mar, "n=2 answer", lambda t: t.get("n2", 0) >= 1)
    require(mar, "parallel tool calls", lambda t: t.get("parallel_tool_calls", 0) >= 1)
    require(mar, "cached_tokens", lambda t: t.get("cached_tokens", 0) >= 1)
    for tool in ("web_search", "data_ocean", "code_execution"):
        require(mar, f"a {tool} answer", lambda t, tool=tool: t.get(f"tool:{tool}", 0) >= 1)
    require(mar, "a generated PNG", lambda t: t.get("png", 0) >= 1)
    require(mar, "url_citation annotations", lambda t: t.get("url_citation_answers", 0) >= 1)
    require(
        mar,
        "chat_completion object + system message",
        lambda t: t.get("chat_completion_object_with_system", 0) >= 1,
    )

    require(gpt, "two output branches", lambda t: t.get("two_branches", 0) >= 1)
    require(gpt, "empty correlate_dataset", lambda t: t.get("empty_dataset", 0) >= 1)
    require(
        gpt,
        "create_time in ms and s",
        lambda t: t.get("create_time_ms", 0) >= 1 and t.get("create_time_s", 0) >= 1,
    )
    require(
        gpt,
        "missing and empty source_url",
        lambda t: t.get("missing_source_url", 0) >= 1 and t.get("empty_source_url", 0) >= 1,
    )
    require(gpt, "unknown event code", lambda t: t.get("unknown_code", 0) >= 1)
    require(gpt, "corner citations", lambda t: t.get("corner_citations", 0) >= 1)
    require(gpt, "suggested questions", lambda t: t.get("next_question", 0) >= 1)
    require(gpt, "voice answer (code 39)", lambda t: t.get("voice", 0) >= 1)
    require(gpt, "thought (code 41)", lambda t: t.get("thought", 0) >= 1)
    require(gpt, "tool call events (codes 5, 6)", lambda t: t.get("tool_events", 0) >= 1)

    if problems:
        print(f"{len(problems)} problem(s):")
        for p in problems:
            print("  -", p)
        return 1
    n_mag = sum(langs.values())
    n_mar = sum(v for k, v in mar.items() if k.startswith("lang:"))
    n_gpt = sum(v for k, v in gpt.items() if k.startswith("lang:"))
    print(
        f"ok: {n_mag} magisterium (+ {n_search} searches), {n_mar} maritaca (+ models.json), "
        f"{n_gpt} gptbots samples"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
