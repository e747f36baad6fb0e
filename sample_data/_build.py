"""Build the recorded-format sample answers from the hand-written sources in ``_source/``.

Usage::

    python sample_data/_build.py

The sources hold the question, the answer text (as a list of lines), citations, references and a
few per-file stream options. This script derives everything mechanical (ids, timestamps, token
counts, the chunking of streams) deterministically, then writes ``<provider>/NN_slug.json`` and
``<provider>/NN_slug.sse``. Every stream is cut from the very same text, citations and usage that
go into the ``.json``, so the two always assemble to the same answer. Stdlib only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import struct
import unicodedata
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_source"
SAMPLE_FIELD = "citekit_sample"

CITATION_FIELDS = (
    "cited_text",
    "cited_text_heading",
    "document_title",
    "document_index",
    "document_author",
    "document_year",
    "document_reference",
    "source_url",
)
DOCUMENT_FIELDS = ("document_title", "document_author", "document_year", "source_url")

# 2025-01-06 .. 2026-05-28, the window every derived timestamp falls in.
CREATED_MIN = 1736150400
CREATED_MAX = 1779926400

_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TOKEN_RE = re.compile(r"\S+\s*")


# --------------------------------------------------------------------------- helpers


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _rng(*parts: str) -> random.Random:
    # A str seed is hashed with SHA-512 by ``random``: stable across runs and platforms.
    return random.Random("\x1f".join(parts))


def _base62(*parts: str, length: int) -> str:
    n = int(_digest(*parts), 16)
    out = []
    for _ in range(length):
        n, r = divmod(n, 62)
        out.append(_ALNUM[r])
    return "".join(out)


def chat_id(sample: str) -> str:
    return "chatcmpl-" + _base62("chat", sample, length=29)


def call_id(sample: str, index: int) -> str:
    return "call_" + _base62("call", sample, str(index), length=24)


def object_id(seconds: int, *parts: str) -> str:
    """A 24-hex id shaped like a MongoDB ObjectId: 4 bytes of timestamp, then 8 bytes."""
    return f"{seconds:08x}" + _digest("oid", *parts)[:16]


def bump_id(oid: str, by: int = 1) -> str:
    return f"{int(oid, 16) + by:024x}"


def created_for(sample: str, explicit: int | None = None) -> int:
    if explicit is not None:
        return explicit
    return _rng("created", sample).randint(CREATED_MIN, CREATED_MAX)


def text_of(lines: str | list[str]) -> str:
    return lines if isinstance(lines, str) else "\n".join(lines)


def rough_tokens(text: str) -> int:
    """A plausible token count: ~0.75 words per token for Latin scripts, ~1 per CJK/Thai char."""
    wide = sum(1 for ch in text if _is_continuous_script(ch))
    latin = "".join(ch for ch in text if not _is_continuous_script(ch))
    words = len(re.findall(r"[^\W_]+", latin))
    marks = len(re.findall(r"[^\w\s]", latin))
    return max(1, round(words * 1.2 + marks * 0.5 + wide * 0.95))


def dump_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def compact(obj: Any, *, ascii_only: bool = False) -> str:
    return json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))


# --------------------------------------------------------------------------- chunking


def _is_continuous_script(ch: str) -> bool:
    """Scripts written without spaces between words (Thai, CJK, kana, hangul, fullwidth)."""
    cp = ord(ch)
    return (
        0x0E00 <= cp <= 0x0E7F
        or 0x2E80 <= cp <= 0x9FFF
        or 0xAC00 <= cp <= 0xD7AF
        or 0xF900 <= cp <= 0xFAFF
        or 0xFF00 <= cp <= 0xFFEF
    )


# Characters that never start a grapheme cluster although they are not category M: Thai and Lao
# SARA AM (UAX #29 SpacingMark), ZERO WIDTH JOINER.
_CLUSTER_CONTINUE = {"\u0e33", "\u0eb3", "\u200d"}


def _continues_cluster(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M") or ch in _CLUSTER_CONTINUE


def _safe_cut(text: str, pos: int) -> int:
    """Move a cut forward so it never splits a grapheme cluster (base + marks, SARA AM, ZWJ)."""
    while 0 < pos < len(text) and (_continues_cluster(text[pos]) or text[pos - 1] == "\u200d"):
        pos += 1
    return pos


def _units(text: str, rng: random.Random) -> list[str]:
    """Cut text into word-sized units whose concatenation is exactly ``text``."""
    units: list[str] = []
    lead = len(text) - len(text.lstrip())
    tokens = _TOKEN_RE.findall(text[lead:])
    if lead:
        if tokens:
            tokens[0] = text[:lead] + tokens[0]
        else:
            tokens = [text[:lead]]
    for token in tokens:
        if len(token) > 6 and any(_is_continuous_script(ch) for ch in token):
            pos = 0
            while pos < len(token):
                cut = _safe_cut(token, min(len(token), pos + rng.randint(2, 5)))
                units.append(token[pos:cut])
                pos = cut
        else:
            units.append(token)
    assert "".join(units) == text
    return units


def word_deltas(text: str, rng: random.Random, *, most: int = 4) -> list[str]:
    """Content deltas of 1..``most`` words each (Unicode-safe), concatenating to ``text``."""
    units = _units(text, rng)
    deltas: list[str] = []
    i = 0
    while i < len(units):
        n = rng.choice([1, 1, 2, 2, 2, 3, 3, 4][: 2 * most])
        n = min(n, most)
        deltas.append("".join(units[i : i + n]))
        i += n
    assert "".join(deltas) == text
    return deltas


def char_pieces(text: str, rng: random.Random, lo: int = 3, hi: int = 9) -> list[str]:
    """Arbitrary cuts of a string (tool-call arguments stream like this)."""
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        cut = _safe_cut(text, min(len(text), pos + rng.randint(lo, hi)))
        pieces.append(text[pos:cut])
        pos = cut
    assert "".join(pieces) == text
    return pieces


# --------------------------------------------------------------------------- SSE writing


def sse_body(
    payloads: Iterable[str],
    *,
    done: bool,
    crlf: bool = False,
    keepalive: bool = False,
    data_prefix: str = "data: ",
    rng: random.Random | None = None,
) -> str:
    """Serialise event payloads as ``text/event-stream``.

    A payload holding newlines (pretty-printed JSON) becomes several ``data:`` lines, which an
    SSE decoder joins back with ``\\n``.
    """
    rng = rng or random.Random(0)
    blocks: list[str] = []
    payload_list = list(payloads)
    for n, payload in enumerate(payload_list):
        if keepalive and n > 0 and rng.random() < 0.22:
            blocks.append(": keep-alive\n\n")
        if keepalive and n > 0 and rng.random() < 0.15:
            blocks.append("\n")
        lines = payload.split("\n")
        blocks.append("".join(f"{data_prefix}{line}\n" for line in lines) + "\n")
    if keepalive:
        blocks.append(": keep-alive\n\n\n")
    if done:
        blocks.append(f"{data_prefix}[DONE]\n\n")
    body = "".join(blocks)
    return body.replace("\n", "\r\n") if crlf else body


# --------------------------------------------------------------------------- OpenAI-style


def chat_usage(prompt: int, completion: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    usage.update(extra or {})
    return usage


def _chunk(head: dict[str, Any], choices: list[dict[str, Any]], **tail: Any) -> dict[str, Any]:
    chunk = dict(head)
    chunk["choices"] = choices
    chunk.update(tail)
    return chunk


def _choice(index: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish}


# --------------------------------------------------------------------------- Magisterium


def build_citations(answer: dict[str, Any]) -> list[dict[str, Any]]:
    documents = answer.get("documents", [])
    out = []
    for cit in answer.get("citations", []):
        doc = documents[cit["doc"]]
        row: dict[str, Any] = {}
        for field in CITATION_FIELDS:
            if field == "document_index":
                row[field] = cit["doc"]
            elif field in cit:
                row[field] = cit[field]
            elif field in DOCUMENT_FIELDS:
                row[field] = doc.get(field)
            else:
                row[field] = None
        out.append(row)
    return out


def build_magisterium(answer: dict[str, Any]) -> tuple[dict[str, Any], str]:
    stem = answer["stem"]
    sample = f"magisterium/{stem}"
    model = "magisterium-1"
    created = created_for(sample, answer.get("created"))
    text = text_of(answer["content"])
    citations = build_citations(answer)
    related = answer.get("related_questions", [])
    finish = answer.get("finish_reason", "stop")
    rng = _rng("usage", sample)
    prompt_tokens = answer.get("prompt_tokens") or (
        rough_tokens(answer["question"]) + 14 + (rng.randint(2600, 9400) if citations else 0)
    )
    completion_tokens = rough_tokens(text) if text else 0
    usage = chat_usage(prompt_tokens, completion_tokens)

    request: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": answer["question"]}],
        "return_related_questions": True,
    }
    request.update(answer.get("request_extra", {}))

    response: dict[str, Any] = {
        "id": chat_id(sample),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
            }
        ],
        "usage": usage,
        "citations": citations,
        "related_questions": related,
    }
    response.update(answer.get("extra", {}))
    response[SAMPLE_FIELD] = sample

    document = {
        "question": answer["question"],
        "language": answer["language"],
        "request": request,
        "response": response,
    }

    opts = answer.get("stream", {})
    head = {"id": response["id"], "object": "chat.completion.chunk", "created": created}
    head["model"] = model
    chunks: list[dict[str, Any]] = [
        _chunk(head, [_choice(0, {"role": "assistant", "content": ""})])
    ]
    for delta in word_deltas(text, _rng("deltas", sample)) if text else []:
        chunks.append(_chunk(head, [_choice(0, {"content": delta})]))
    final_tail: dict[str, Any] = {"citations": citations, "related_questions": related}
    if opts.get("usage_on_final"):
        final_tail["usage"] = usage
    final_tail.update(answer.get("extra", {}))
    final_tail[SAMPLE_FIELD] = sample
    chunks.append(_chunk(head, [_choice(0, {}, finish)], **final_tail))

    ascii_only = bool(opts.get("ascii"))
    payloads = [compact(c, ascii_only=ascii_only) for c in chunks]
    if opts.get("split_final"):
        payloads[-1] = json.dumps(chunks[-1], ensure_ascii=ascii_only, indent=2)
    body = sse_body(
        payloads,
        done=True,
        crlf=bool(opts.get("crlf")),
        keepalive=bool(opts.get("keepalive")),
        rng=_rng("keepalive", sample),
    )
    return document, body


# --------------------------------------------------------------------------- Maritaca


def build_search(search: dict[str, Any], answers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A ``POST /search`` sample: the cited passages of the answers it names, best first.

    The response shape is not documented publicly; this one (``results`` of ``title``, ``url``,
    ``text``, ``author``, ``year``, ``score``) is a plausible one the lenient parser reads.
    """
    stem = search["stem"]
    sample = f"magisterium/{stem}"
    rng = _rng("search", sample)
    results: list[dict[str, Any]] = []
    score = 0.95
    for source in search["from"]:
        answer = answers[source]
        for cit in build_citations(answer):
            results.append(
                {
                    "title": cit["document_title"],
                    "url": cit["source_url"],
                    "text": cit["cited_text"],
                    "author": cit["document_author"],
                    "year": cit["document_year"],
                    "score": round(score, 4),
                }
            )
            score -= rng.uniform(0.01, 0.05)
    request = {"query": search["query"], "numResults": 20, "category": search["category"]}
    response = {"results": results, "citekit_sample": sample}
    # "search_response", not "response": a folder of samples read as answers skips this file.
    return {
        "query": search["query"],
        "language": search["language"],
        "request": request,
        "search_response": response,
    }


#: Maritaca's built-in tools; they need stream: false, so their samples have no .sse file.
BUILT_IN_TOOLS = ("web_search", "data_ocean", "code_execution")


def bar_chart_png(heights: list[int], *, width: int = 32, height: int = 120) -> bytes:
    """A small, valid RGB PNG: one bar per value (0-100) on a white ground, axis at the
    bottom. Built with zlib and struct, byte for byte the same on every run."""
    colors = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189)]
    gap = 8
    total = gap + len(heights) * (width + gap)
    rows = []
    for y in range(height):
        row = bytearray(b"\x00")  # filter type 0 (None)
        for x in range(total):
            pixel = (255, 255, 255)
            if y == height - 1:
                pixel = (60, 60, 60)
            else:
                slot, offset = divmod(x - gap, width + gap)
                if x >= gap and offset < width and slot < len(heights):
                    top = height - 1 - round(heights[slot] * (height - 4) / 100)
                    if y >= top:
                        pixel = colors[slot % len(colors)]
            row.extend(pixel)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", total, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def generated_file(spec: dict[str, Any]) -> dict[str, Any]:
    """One ``generated_files`` item: a bar-chart PNG (``bars``) or a text file (``text``)."""
    if "bars" in spec:
        data = bar_chart_png(spec["bars"])
    else:
        data = text_of(spec["text"]).encode("utf-8")
    return {
        "filename": spec["filename"],
        "mime_type": spec["mime_type"],
        "size_bytes": len(data),
        "content_base64": base64.b64encode(data).decode("ascii"),
    }


def url_citations(stem: str, text: str, notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style ``url_citation`` annotations of a chat-completions message: each source note
    names the passage it covers (``quote``, found in ``text``; its first occurrence, or the
    ``occurrence``-th), and the annotation carries that passage's character span."""
    out = []
    for note in notes:
        start = -1
        for _ in range(note.get("occurrence", 1)):
            start = text.find(note["quote"], start + 1)
        assert start >= 0, (stem, note["quote"])
        span = {"start_index": start, "end_index": start + len(note["quote"])}
        inner = {"url": note["url"], "title": note["title"], **span}
        out.append({"type": "url_citation", "url_citation": inner})
    return out


def build_maritaca(answer: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    stem = answer["stem"]
    sample = f"maritaca/{stem}"
    model = answer["model"]
    created = created_for(sample, answer.get("created"))
    rid = chat_id(sample)

    messages = []
    if answer.get("system"):
        messages.append({"role": "system", "content": text_of(answer["system"])})
    messages.append({"role": "user", "content": answer["question"]})
    request: dict[str, Any] = {"model": model, "messages": messages}
    request.update(answer.get("params", {}))

    # Choices: text answers, or one message with tool calls.
    choices: list[dict[str, Any]] = []
    texts: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    if "tool_calls" in answer:
        for i, call in enumerate(answer["tool_calls"]):
            tool_calls.append(
                {
                    "id": call_id(sample, i),
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": compact(call["arguments"]),
                    },
                }
            )
        choices.append(
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
                "finish_reason": "tool_calls",
            }
        )
    else:
        for i, choice in enumerate(answer["choices"]):
            text = text_of(choice["content"])
            texts.append(text)
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if choice.get("annotations"):
                message["annotations"] = url_citations(stem, text, choice["annotations"])
            choices.append(
                {
                    "index": i,
                    "message": message,
                    "finish_reason": choice.get("finish_reason", "stop"),
                }
            )

    prompt_tokens = answer.get("prompt_tokens") or sum(
        rough_tokens(m["content"]) + 4 for m in messages
    )
    if tool_calls:
        prompt_tokens += 96 * len(answer["params"].get("tools", []))
        completion = sum(rough_tokens(c["function"]["arguments"]) + 9 for c in tool_calls)
    elif any(c["finish_reason"] == "length" for c in choices):
        completion = answer["params"]["max_tokens"] * len(choices)
    else:
        completion = sum(rough_tokens(t) for t in texts)
    usage_extra = dict(answer.get("usage_extra", {}))
    if answer.get("cache_system_prompt"):
        # Providers cache prompt prefixes in blocks; the long system prompt was a cache hit.
        cached = (rough_tokens(messages[0]["content"]) // 128) * 128
        usage_extra["prompt_tokens_details"] = {"cached_tokens": cached}
    usage = chat_usage(prompt_tokens, completion, usage_extra)

    response: dict[str, Any] = {
        "id": rid,
        "object": answer.get("object", "chat.completion"),
        "created": created,
        "model": model,
        "choices": choices,
        "usage": usage,
    }
    if answer.get("generated_files"):
        response["generated_files"] = [generated_file(f) for f in answer["generated_files"]]
    response[SAMPLE_FIELD] = sample
    document = {
        "question": answer["question"],
        "language": answer["language"],
        "request": request,
        "response": response,
    }
    if any(request.get(tool) for tool in BUILT_IN_TOOLS):
        return document, None  # a built-in tool does not stream: no .sse

    opts = answer.get("stream", {})
    head = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model}
    null_usage = {"usage": None} if opts.get("null_usage") else {}
    rng = _rng("deltas", sample)
    chunks: list[dict[str, Any]] = []
    if tool_calls:
        chunks.append(
            _chunk(head, [_choice(0, {"role": "assistant", "content": None})], **null_usage)
        )
        for i, call in enumerate(tool_calls):
            first = {
                "index": i,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            chunks.append(_chunk(head, [_choice(0, {"tool_calls": [first]})], **null_usage))
            for piece in char_pieces(call["function"]["arguments"], rng):
                frag = {"index": i, "function": {"arguments": piece}}
                chunks.append(_chunk(head, [_choice(0, {"tool_calls": [frag]})], **null_usage))
        chunks.append(_chunk(head, [_choice(0, {}, "tool_calls")], **null_usage))
    else:
        per_choice = [word_deltas(t, rng) for t in texts]
        for i in range(len(texts)):
            role = {"role": "assistant", "content": ""}
            chunks.append(_chunk(head, [_choice(i, role)], **null_usage))
        position = [0] * len(texts)
        while any(position[i] < len(per_choice[i]) for i in range(len(texts))):
            for i in range(len(texts)):
                if position[i] < len(per_choice[i]):
                    delta = {"content": per_choice[i][position[i]]}
                    chunks.append(_chunk(head, [_choice(i, delta)], **null_usage))
                    position[i] += 1
        for i, choice in enumerate(choices):
            finish = choice["finish_reason"]
            chunks.append(_chunk(head, [_choice(i, {}, finish)], **null_usage))
    chunks.append(_chunk(head, [], usage=usage, **{SAMPLE_FIELD: sample}))

    body = sse_body(
        (compact(c) for c in chunks),
        done=True,
        crlf=bool(opts.get("crlf")),
        keepalive=bool(opts.get("keepalive")),
        rng=_rng("keepalive", sample),
    )
    return document, body


def build_models(source: dict[str, Any]) -> dict[str, Any]:
    body = {"object": "list", "data": source["data"]}
    body[SAMPLE_FIELD] = "maritaca/models"
    return body


# --------------------------------------------------------------------------- GPTBots


def _credits(prompt: int, completion: int, rate_in: float, rate_out: float) -> dict[str, float]:
    text_in = round(prompt * rate_in / 1000, 4)
    text_out = round(completion * rate_out / 1000, 4)
    return {
        "total_credits": round(text_in + text_out, 4),
        "text_input_credits": text_in,
        "text_output_credits": text_out,
    }


def voice_clips(stem: str, text: str) -> list[dict[str, str]]:
    """A voice answer as audio clips, one per sentence, with their transcripts."""
    sentences = re.findall(r".+?(?:[.!?]\s+(?=[A-Z])|$)", text, flags=re.DOTALL)
    assert "".join(sentences) == text
    return [
        {
            "audio": f"https://cdn.example.com/voice/{_digest('clip', stem, str(n))[:16]}.mp3",
            "transcript": sentence,
        }
        for n, sentence in enumerate(sentences)
    ]


def voice_events(
    stem: str, index: int, text: str, output: dict[str, Any], seconds: int
) -> list[dict[str, Any]]:
    """A voice agent's stream as in the documented AUDIO example (providers.md, "Audio events"):
    Audio (39) transcript deltas with ``audioAnswer: ""``, then base64 audio chunks with
    ``transcript: ""``, then FlowOutput from the model component, its content
    ``" Audio:<url>,Transcript:(<text>)"`` and ``audioDatas: [{transcript, url, seconds}]``."""
    rng = _rng("voice", stem, str(index))
    events: list[dict[str, Any]] = []
    for delta in word_deltas(text, rng, most=3):
        data = {"audioAnswer": "", "transcript": delta}
        events.append({"code": 39, "message": "Audio", "data": data})
    clips = output["content"]["audio"]
    for clip in clips:
        sound = base64.b64encode(hashlib.sha256(clip["audio"].encode()).digest()).decode()
        for piece in (sound[:24], sound[24:]):
            data = {"audioAnswer": piece, "transcript": ""}
            events.append({"code": 39, "message": "Audio", "data": data})
    datas = [
        {
            "transcript": clip["transcript"],
            "url": clip["audio"],
            "seconds": round(len(clip["transcript"].split()) / 2.5, 1),
        }
        for clip in clips
    ]
    flow = {
        "content": "".join(f" Audio:{c['audio']},Transcript:({c['transcript']})" for c in clips),
        "branch": output["from_component_branch"],
        "from_component_name": output["from_component_name"],
        "audioDatas": datas,
    }
    component = object_id(seconds - 86400 * 90, "component", stem, str(index))
    events.append({"code": 10, "message": "FlowOutput", "data": [flow], "componentId": component})
    return events


def knowledge_data_id(stem: str, seconds: int, name: str) -> str:
    """The ``data_id`` of a knowledge document: the id of the DOCUMENT, so one document has
    one id in the reply's ``citations``, the Citation (20) and CorrelateAttachment (83) events
    and the ``correlate_dataset`` references, and two documents never share one. Derived from
    the document's name (its identity in a sample's knowledge base), never from a position."""
    return object_id(seconds - 86400 * 40, "data", stem, name)


def knowledge_file_id(stem: str, seconds: int, name: str) -> str:
    """The id of the file behind a knowledge document (a citation's ``attachment.id``)."""
    return object_id(seconds - 86400 * 41, "file", stem, name)


def gptbots_citations(
    turn: dict[str, Any], seconds: int, millis: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The blocking ``citations``, the same as Citation (code 20) event items, and the
    CorrelateAttachment (code 83) items, in the documented shapes."""
    stem = turn["stem"]
    bot_id = object_id(seconds - 86400 * 200, "bot", stem)
    component_id = object_id(seconds - 86400 * 90, "component", stem, "0")
    blocking: list[dict[str, Any]] = []
    streamed: list[dict[str, Any]] = []
    attachments: list[dict[str, Any]] = []
    for n, source in enumerate(turn.get("citations", [])):
        index = str(n + 1)
        data_id = knowledge_data_id(stem, seconds, source["name"])
        segment_id = object_id(seconds - 86400 * 39, "segment", stem, str(n))
        segment_index = _rng("segment", stem, str(n)).randint(0, 40)
        kind = source["type"]
        detail: dict[str, Any] = {"id": knowledge_file_id(stem, seconds, source["name"])}
        detail["name"] = source["name"]
        if kind == "attachment":
            detail.update({"url": source["url"], "type": source.get("file_type", "pdf")})
        item = {
            "index": index,
            "name": source["name"],
            "type": kind,
            "content": source["content"],
            "segment_id": segment_id,
            "segment_index": segment_index,
            "position": n,
            "timestamp_millis": millis - 4000 + n,
            "data_id": data_id,
            "bot_id": bot_id,
            kind: detail,
            "component_id": component_id,
        }
        blocking.append(item)
        streamed.append(
            {
                "index": index,
                "name": source["name"],
                "type": kind,
                kind: {**detail, "content": source["content"]},
                "dataId": data_id,
                "content": source["content"],
                "segmentId": segment_id,
                "segmentIndex": segment_index,
                "position": n,
                "timestampMillis": millis - 4000 + n,
                "botId": bot_id,
                "componentId": component_id,
            }
        )
        attachments.append(
            {
                "dataId": data_id,
                "dataName": source["name"],
                "dataType": kind,
                "url": source.get("url", ""),
                "content": source["content"],
                "segmentId": segment_id,
                "segmentIndex": segment_index,
            }
        )
    return blocking, streamed, attachments


def build_gptbots(turn: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
    stem = turn["stem"]
    sample = f"gptbots/{stem}"
    seconds = created_for(sample, turn.get("created"))
    millis = seconds * 1000 + _rng("ms", sample).randint(0, 999)
    create_time = millis if turn.get("time_unit", "ms") == "ms" else seconds

    conversation_id = turn.get("conversation_id") or object_id(seconds - 95, "conv", stem)
    question_id = object_id(seconds - 6, "msg", stem)
    message_id = bump_id(question_id)

    outputs = []
    texts = []
    for branch in turn["output"]:
        text = text_of(branch["text"])
        texts.append(text)
        content: dict[str, Any] = {"text": text}
        if turn.get("voice"):
            # A voice agent answers in audio: the text is empty, the transcripts carry it.
            content = {"text": "", "audio": voice_clips(stem, text)}
        content.update(branch.get("content_extra", {}))
        outputs.append(
            {
                "from_component_branch": branch["branch"],
                "from_component_name": branch["name"],
                "content": content,
            }
        )

    refs = turn.get("references", [])
    rng = _rng("usage", sample)
    prompt = rough_tokens(turn["question"]) + rng.randint(380, 620)
    prompt += sum(rough_tokens(r["content"]) + 12 for r in refs)
    completion = sum(rough_tokens(t) for t in texts)
    tokens: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if turn.get("token_details"):
        tokens["prompt_tokens_details"] = {
            "text_tokens": prompt,
            "audio_tokens": 0,
            "image_tokens": 0,
            "cached_tokens": 0,
        }
    credits = _credits(prompt, completion, *turn.get("credit_rates", (0.25, 1.0)))
    if turn.get("token_details"):
        credits.update({"audio_input_credits": 0.0, "audio_output_credits": 0.0})
    usage = {"tokens": tokens, "credits": credits}

    message: dict[str, Any] = {
        "create_time": create_time,
        "conversation_id": conversation_id,
        "message_id": message_id,
        "output": outputs,
        "usage": usage,
    }
    # Recorded with conversation_config.corner_citation: the text carries $[N]$ marks and the
    # reply a top-level citations array (index is a string matching the mark).
    citations, stream_citations, attachments = gptbots_citations(turn, seconds, millis)
    if citations:
        message["citations"] = citations
    message[SAMPLE_FIELD] = sample

    dataset = []
    last = 2.0
    for n, ref in enumerate(refs):
        score = ref["score"]
        assert 0.0 <= score <= 1.0 and score <= last, (stem, n, score)
        assert round(score, 4) == score, (stem, n, score)
        last = score
        item: dict[str, Any] = {
            "content": text_of(ref["content"]),
            "data_id": ref.get("data_id") or knowledge_data_id(stem, seconds, ref["data_name"]),
            "data_name": ref["data_name"],
        }
        if "source_url" in ref:
            item["source_url"] = ref["source_url"]
        item["score"] = score
        dataset.append(item)
    correlate: dict[str, Any] = {
        "conversation_id": conversation_id,
        "question_id": question_id,
        "answer_id": message_id,
        "correlate_dataset": dataset,
    }
    correlate[SAMPLE_FIELD] = sample

    document = {
        "question": turn["question"],
        "language": turn["language"],
        "user_id": turn["user_id"],
        "conversation_id": conversation_id,
        "message": message,
        "correlate": correlate,
    }
    if "next_questions" in turn:  # the GET /v1/next/question?answer_id= body
        document["next_question"] = {"questions": turn["next_questions"], SAMPLE_FIELD: sample}

    opts = turn.get("stream", {})
    delta_rng = _rng("deltas", sample)
    events: list[dict[str, Any]] = [
        {
            "code": 11,
            "message": "MessageInfo",
            "data": {"message_id": message_id, "conversation_id": conversation_id},
        }
    ]
    if attachments:
        events.append({"code": 83, "message": "CorrelateAttachment", "data": attachments})
    for thought in turn.get("thoughts", []):
        for delta in word_deltas(thought, delta_rng, most=4):
            events.append({"code": 41, "message": "Thought", "data": delta})
    events.extend(turn.get("tool_events", []))  # code 5 request, code 6 response
    unknown = opts.get("unknown_event")
    # FlowOutput as in the documented TEXT stream (providers.md, "FlowOutput (code 10)"): the
    # "User Input" component echoing the question, a list item with a sibling componentId. It
    # is not the answer, which comes as Text (or, from a voice agent, Audio) events.
    if not turn.get("voice"):
        echo = {"content": turn["question"], "branch": None, "from_component_name": "User Input"}
        component = object_id(seconds - 86400 * 90, "component", stem, "input")
        events.append(
            {"code": 10, "message": "FlowOutput", "data": [echo], "componentId": component}
        )
    for i, (text, output) in enumerate(zip(texts, outputs, strict=True)):
        if i:
            events.append({"code": 3, "message": "Text", "data": "\n\n"})
        if turn.get("voice"):
            events.extend(voice_events(stem, i, text, output, seconds))
        for n, delta in enumerate(
            [] if turn.get("voice") else word_deltas(text, delta_rng, most=3)
        ):
            if unknown and i == 0 and n == unknown["after"]:
                events.append(unknown["event"])
            events.append({"code": 3, "message": "Text", "data": delta})
    for item in stream_citations:
        events.append({"code": 20, "message": "Citation", "data": [{"citation": item}]})
    events.append({"code": 4, "message": "Cost", "data": usage})
    events.append({"code": 0, "message": "End", "data": {SAMPLE_FIELD: sample}})

    body = sse_body(
        (compact(e) for e in events),
        done=False,
        crlf=bool(opts.get("crlf")),
        keepalive=bool(opts.get("keepalive")),
        data_prefix=opts.get("data_prefix", "data: "),
        rng=_rng("keepalive", sample),
    )
    # The same events as bare JSON lines, the framing of every official GPTBots example.
    eol = "\r\n" if opts.get("crlf") else "\n"
    lines = "".join(compact(e) + eol for e in events)
    return document, body, lines


# --------------------------------------------------------------------------- main


def _load(name: str) -> Any:
    return json.loads((SOURCE / name).read_text(encoding="utf-8"))


def _write(path: Path, text: str, written: set[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert path not in written, path
    # newline="" keeps CRLF streams byte-exact on every platform.
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    written.add(path)


def _items(name: str) -> Iterator[dict[str, Any]]:
    yield from _load(name)["answers"]


def main() -> None:
    written: set[Path] = set()

    magisterium = _load("magisterium.json")
    for answer in magisterium["answers"]:
        doc, sse = build_magisterium(answer)
        _write(HERE / "magisterium" / f"{answer['stem']}.json", dump_json(doc), written)
        _write(HERE / "magisterium" / f"{answer['stem']}.sse", sse, written)
    by_stem = {answer["stem"]: answer for answer in magisterium["answers"]}
    for search in magisterium.get("searches", []):
        doc = build_search(search, by_stem)
        _write(HERE / "magisterium" / f"{search['stem']}.json", dump_json(doc), written)

    maritaca = _load("maritaca.json")
    _write(HERE / "maritaca" / "models.json", dump_json(build_models(maritaca["models"])), written)
    for answer in maritaca["answers"]:
        doc, maybe_sse = build_maritaca(answer)
        _write(HERE / "maritaca" / f"{answer['stem']}.json", dump_json(doc), written)
        if maybe_sse is not None:
            _write(HERE / "maritaca" / f"{answer['stem']}.sse", maybe_sse, written)

    seen_ids: set[str] = set()
    for turn in _items("gptbots.json"):
        doc, sse, lines = build_gptbots(turn)
        assert doc["message"]["message_id"] not in seen_ids, turn["stem"]
        seen_ids.add(doc["message"]["message_id"])
        _write(HERE / "gptbots" / f"{turn['stem']}.json", dump_json(doc), written)
        _write(HERE / "gptbots" / f"{turn['stem']}.sse", sse, written)
        _write(HERE / "gptbots" / f"{turn['stem']}.jsonl", lines, written)

    # Drop generated files whose source entry is gone.
    for provider in ("magisterium", "maritaca", "gptbots"):
        for path in (HERE / provider).iterdir():
            if path.suffix in {".json", ".sse", ".jsonl"} and path not in written:
                path.unlink()

    print(f"wrote {len(written)} files")


if __name__ == "__main__":
    main()
