"""Server-sent event bodies as the server sends them: recorded files and synthesized streams.

GPTBots streams are also sent as bare JSON lines (``json_line``, ``split_lines``): one event per
line with no ``data:`` prefix, as every official GPTBots streaming example shows.

A recorded ``.sse`` file is split into *segments*, each one event with the blank line that ends
it (or a stray blank keep-alive), kept byte for byte. Only a segment whose JSON has to change is
re-serialized, so a replay is otherwise exactly the recorded bytes: CRLF line endings, comment
lines and JSON split over several ``data:`` lines all survive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Segment",
    "cycle_pieces",
    "data_event",
    "drop_usage_chunk",
    "json_line",
    "pieces_of",
    "split_lines",
    "split_segments",
    "strip_related_questions",
    "synthesize_chat_stream",
]

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_EOL = re.compile(rb"\r\n|\r|\n")
_PIECE = re.compile(r"\S*\s*")


@dataclass(frozen=True, slots=True)
class Segment:
    """One event of a stream as bytes, with its joined ``data`` text (None for comments)."""

    raw: bytes
    data: str | None

    @property
    def eol(self) -> bytes:
        """The line ending this segment uses (``\\n`` when it has none)."""
        found = _EOL.search(self.raw)
        return found.group() if found else b"\n"

    def payload(self) -> Any:
        """The segment's data parsed as JSON, or None when it is no JSON (``[DONE]``, comments)."""
        if self.data is None:
            return None
        try:
            return json.loads(self.data)
        except ValueError:
            return None


def data_event(obj: Any, eol: bytes = b"\n") -> Segment:
    """A one-line ``data:`` event carrying ``obj`` as compact JSON."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return Segment(b"data: " + text.encode() + eol + eol, text)


def json_line(obj: Any, eol: bytes = b"\n") -> Segment:
    """One bare JSON line carrying ``obj`` (GPTBots' streaming framing)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return Segment(text.encode() + eol, text)


def split_lines(body: bytes) -> list[Segment]:
    """Cut a bare-JSON-lines body into one segment per line (blank lines carry no data)."""
    segments: list[Segment] = []
    for match in _LINE.finditer(body):
        line = match.group()
        text = line.strip(b"\r\n").decode("utf-8", "replace")
        segments.append(Segment(line, text if text.strip() else None))
    return segments


def _field_value(line: bytes) -> tuple[bytes, bytes]:
    body = line.rstrip(b"\r\n")
    name, sep, value = body.partition(b":")
    if sep and value.startswith(b" "):
        value = value[1:]
    return name, value


def split_segments(body: bytes) -> list[Segment]:
    """Cut a ``text/event-stream`` body into segments whose ``raw`` bytes add up to ``body``."""
    segments: list[Segment] = []
    lines: list[bytes] = []
    data: list[bytes] = []
    has_data = False
    for match in _LINE.finditer(body):
        line = match.group()
        lines.append(line)
        if line.strip(b"\r\n"):
            name, value = _field_value(line)
            if name == b"data":
                data.append(value)
                has_data = True
            continue
        text = b"\n".join(data).decode("utf-8", "replace") if has_data else None
        segments.append(Segment(b"".join(lines), text))
        lines, data, has_data = [], [], False
    if lines:
        text = b"\n".join(data).decode("utf-8", "replace") if has_data else None
        segments.append(Segment(b"".join(lines), text))
    return segments


def _rewrite_last(
    segments: list[Segment], edit: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> None:
    """Apply ``edit`` to the last JSON-object segment; None from ``edit`` means keep it as is."""
    for index in range(len(segments) - 1, -1, -1):
        payload = segments[index].payload()
        if isinstance(payload, dict):
            changed = edit(payload)
            if changed is not None:
                segments[index] = data_event(changed, segments[index].eol)
            return


def strip_related_questions(segments: Sequence[Segment]) -> list[Segment]:
    """Remove ``related_questions`` from every chunk that carries it (re-serializing only those)."""
    result: list[Segment] = []
    for segment in segments:
        payload = (
            segment.payload() if segment.data and "related_questions" in segment.data else None
        )
        if isinstance(payload, dict) and "related_questions" in payload:
            del payload["related_questions"]
            result.append(data_event(payload, segment.eol))
        else:
            result.append(segment)
    return result


def drop_usage_chunk(segments: Sequence[Segment], label_field: str) -> list[Segment]:
    """Drop usage-only chunks (``"choices": []``), moving ``label_field`` to the new last chunk."""
    result: list[Segment] = []
    moved: dict[str, Any] = {}
    for segment in segments:
        payload = segment.payload() if segment.data and '"choices"' in segment.data else None
        if isinstance(payload, dict) and payload.get("choices") == [] and "usage" in payload:
            if label_field in payload:
                moved[label_field] = payload[label_field]
            continue
        result.append(segment)

    def add_label(payload: dict[str, Any]) -> dict[str, Any] | None:
        if not moved or payload.get(label_field) == moved[label_field]:
            return None
        return {**payload, **moved}

    _rewrite_last(result, add_label)
    return result


def pieces_of(text: str) -> list[str]:
    """``text`` cut into stream deltas: a word and the spacing after it, at most 12 chars each."""
    pieces: list[str] = []
    for match in _PIECE.finditer(text):
        word = match.group()
        pieces.extend(word[i : i + 12] for i in range(0, len(word), 12))
    return [piece for piece in pieces if piece] or ([text] if text else ["…"])


def cycle_pieces(pieces: Sequence[str], count: int) -> Iterator[str]:
    """``count`` deltas taken from ``pieces`` over and over."""
    for index in range(count):
        yield pieces[index % len(pieces)]


def synthesize_chat_stream(
    response: dict[str, Any],
    pieces: Sequence[str],
    *,
    last_extra: dict[str, Any],
    usage_chunk: dict[str, Any] | None = None,
) -> list[Segment]:
    """A ``chat.completion.chunk`` stream: one chunk per piece, then the ``finish_reason`` chunk.

    ``last_extra`` goes on the ``finish_reason`` chunk (citations, related questions, the sample
    label); ``usage_chunk`` extras, when given, go on a usage-only chunk after it, OpenAI style.
    """
    choice = (response.get("choices") or [{}])[0]
    head = {
        "id": response.get("id", "chatcmpl-citekit"),
        "object": "chat.completion.chunk",
        "created": response.get("created", 0),
        "model": response.get("model", ""),
    }
    prefix = json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1].encode()
    encoded: dict[str, bytes] = {}
    segments: list[Segment] = []
    for index, piece in enumerate(pieces):
        if index == 0:
            delta = {"role": "assistant", "content": piece}
            segments.append(data_event({**head, "choices": [_choice(delta, None)]}))
            continue
        raw = encoded.get(piece)
        if raw is None:
            tail = json.dumps(
                [_choice({"content": piece}, None)], ensure_ascii=False, separators=(",", ":")
            )
            raw = b"data: " + prefix + b',"choices":' + tail.encode() + b"}\n\n"
            encoded[piece] = raw
        segments.append(Segment(raw, raw[6:-2].decode()))
    finish = choice.get("finish_reason", "stop") if isinstance(choice, dict) else "stop"
    segments.append(data_event({**head, "choices": [_choice({}, finish)], **last_extra}))
    if usage_chunk is not None:
        segments.append(data_event({**head, "choices": [], **usage_chunk}))
    segments.append(Segment(b"data: [DONE]\n\n", "[DONE]"))
    return segments


def _choice(delta: dict[str, Any], finish: Any) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish}
