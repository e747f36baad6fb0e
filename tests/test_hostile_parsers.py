"""Bad input gets a citekit error, never a raw Python one (issue 11, parsers).

Every parser entry point is fed (a) arbitrary JSON values and (b) real samples with one subtree
replaced by an arbitrary JSON value. Each either returns what it promises, whose every consumer
works (HTML, Markdown, text, frames, the answer log written and read back), or raises
``ResponseFormatError`` (``StreamInterrupted`` carrying a usable ``.answer`` for streams).
Nothing else.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.core.models import References
from citekit.store import Log, LogWarning
from citekit.wire.errors import error_message
from citekit.wire.flow import interrupted
from citekit.wire.gptbots import GPTBotsAccumulator, check_body, classify, parse_message
from citekit.wire.openai_compat import ChatAccumulator, parse_chat_completion
from citekit.wire.search import parse_search

from .conftest import SAMPLES, sample_records

# -- arbitrary JSON -------------------------------------------------------------------------
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 10**30, 1.5, -0.0, "0", "1", "zero", "", "3"]),
    st.text(max_size=20),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.text(max_size=8),
                st.sampled_from(
                    ["index", "content", "text", "model", "id", "data", "code", "choices"]
                ),
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


# -- the samples, and one subtree of them replaced ------------------------------------------
def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    out = list(value)
    out[head] = _replaced(value[head], rest, new)
    return out


def mutated(body: Any) -> st.SearchStrategy[Any]:
    """``body`` with one subtree (any depth, the root included) replaced by arbitrary JSON."""
    paths = list(_paths(body))
    return st.tuples(st.sampled_from(paths), JSON).map(lambda pn: _replaced(body, pn[0], pn[1]))


def _sse_events(raw: bytes) -> list[Any]:
    """The JSON events of a recorded SSE stream (the samples' own simple shape)."""
    events, lines = [], []
    for line in raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            data = "\n".join(lines)
            lines = []
            if data != "[DONE]":
                events.append(json.loads(data))
    return events


CHAT = {
    provider: [(stem, rec["response"]) for stem, rec in sample_records(provider)]
    for provider in ("magisterium", "maritaca")
}
CHAT_STREAMS = {
    provider: [
        (path.stem, _sse_events(path.read_bytes()))
        for path in sorted((SAMPLES / provider).glob("[0-9]*.sse"))
    ]
    for provider in ("magisterium", "maritaca")
}
GB = sample_records("gptbots")
GB_STREAMS = [
    (path.stem, [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()])
    for path in sorted((SAMPLES / "gptbots").glob("[0-9]*.jsonl"))
]
SEARCHES = [
    json.loads(p.read_text("utf-8"))["search_response"]
    for p in sorted((SAMPLES / "magisterium").glob("search_*.json"))
]


def one_of_samples(bodies: list[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(bodies).flatmap(mutated)


def mutated_stream(events: list[Any]) -> st.SearchStrategy[list[Any]]:
    """A recorded stream with one subtree of one event replaced (the whole event included)."""
    return st.integers(0, len(events) - 1).flatmap(
        lambda i: mutated(events[i]).map(lambda e: [*events[:i], e, *events[i + 1 :]])
    )


# -- what must hold of every answer that comes out ------------------------------------------
_LOG_DIR: list[Path] = []


def _log() -> Log:
    if not _LOG_DIR:
        import tempfile

        _LOG_DIR.append(Path(tempfile.mkdtemp(prefix="citekit-hostile-")))
    return Log(_LOG_DIR[0] / "log.sqlite3")


def usable(answer: ck.Answer) -> None:
    """Every consumer of an answer works on it, and the log gives it back."""
    assert isinstance(answer, ck.Answer)
    for value in (answer.model, answer.id, answer.finish_reason, answer.conversation_id):
        assert value is None or isinstance(value, str)
    assert isinstance(answer.text, str)
    answer.to_html()
    answer.to_html(strict=True)
    answer.to_markdown()
    str(answer)
    answer._repr_mimebundle_()
    ck.citations_frame([answer])
    ck.answers_frame([answer])
    if answer.references is not None:
        ck.references_frame([answer])
    log = _log()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LogWarning)
        row = log.record(answer, request={"messages": [{"role": "user", "content": "q"}]})
        assert row is not None
        back = log.get(row)
    assert back.text == answer.text
    assert back.citations == answer.citations


def blocking(parse: Callable[[], ck.Answer]) -> None:
    try:
        answer = parse()
    except ck.ResponseFormatError as exc:
        assert str(exc)
        return
    usable(answer)


def streamed(acc: Any, events: list[Any], provider: str) -> None:
    """Feed ``events`` as a stream does: an error keeps the partial answer."""
    try:
        for event in events:
            acc.feed(event)
    except ck.ResponseFormatError as exc:
        error = interrupted(provider, acc, exc)
        assert isinstance(error, ck.StreamInterrupted)
        assert error.answer.partial
        usable(error.answer)
        return
    try:
        answer = acc.answer(partial=not acc.finished)
    except ck.ResponseFormatError:
        return
    usable(answer)
    if answer.partial:
        return
    again = ck.Answer.from_response(dict(answer.raw), provider=provider)
    assert again.text == answer.text


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- blocking responses ---------------------------------------------------------------------
@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
@FAST
@given(data=st.data())
def test_chat_completion_any_json(provider: str, data: st.DataObject) -> None:
    body = data.draw(st.one_of(JSON, one_of_samples([b for _, b in CHAT[provider]])))
    blocking(lambda: parse_chat_completion(body, provider=provider))
    blocking(lambda: ck.Answer.from_response(body, provider=provider))


@FAST
@given(body=st.one_of(JSON, one_of_samples([rec["message"] for _, rec in GB])))
def test_gptbots_message_any_json(body: Any) -> None:
    blocking(lambda: parse_message(body))
    blocking(lambda: ck.Answer.from_response(body, provider="gptbots"))


@FAST
@given(data=st.data())
def test_gptbots_references_any_json(data: st.DataObject) -> None:
    _, rec = data.draw(st.sampled_from(GB))
    correlate = data.draw(st.one_of(JSON, mutated(rec["correlate"])))
    try:
        refs = References.from_response(correlate, message_id="m1")
    except ck.ResponseFormatError:
        return
    answer = parse_message(rec["message"])
    from dataclasses import replace

    usable(replace(answer, references=refs))
    refs.to_html()
    refs.to_markdown()


# -- streams --------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", ["magisterium", "maritaca"])
@FAST
@given(data=st.data())
def test_chat_stream_any_json(provider: str, data: st.DataObject) -> None:
    streams = [events for _, events in CHAT_STREAMS[provider]]
    events = data.draw(
        st.one_of(
            st.lists(JSON, max_size=4),
            st.sampled_from(streams).flatmap(mutated_stream),
        )
    )
    streamed(ChatAccumulator(provider=provider), events, provider)


@FAST
@given(data=st.data())
def test_gptbots_stream_any_json(data: st.DataObject) -> None:
    streams = [events for _, events in GB_STREAMS]
    events = data.draw(
        st.one_of(
            st.lists(JSON, max_size=4),
            st.sampled_from(streams).flatmap(mutated_stream),
        )
    )
    streamed(GPTBotsAccumulator(), events, "gptbots")


# -- search and error bodies ----------------------------------------------------------------
@FAST
@given(body=st.one_of(JSON, one_of_samples(SEARCHES)))
def test_search_any_json(body: Any) -> None:
    try:
        found = parse_search(body, query="q")
    except ck.ResponseFormatError:
        return
    found._repr_mimebundle_()
    found.frame()
    str(found)
    for item in found:
        assert item.score is None or math.isfinite(item.score)


@FAST
@given(body=JSON, status=st.sampled_from([200, 400, 401, 404, 429, 500, 503]))
def test_error_bodies_any_json(body: Any, status: int) -> None:
    raw = json.dumps(body).encode()
    parsed, message = error_message(raw, "application/json")
    assert isinstance(message, str)
    for err in (classify(status, parsed, message, None), check_body(body, None)):
        assert err is None or isinstance(err, ck.ProviderError)
        if err is not None:
            str(err)
