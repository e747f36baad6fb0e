"""JSON Lines read with msgspec's typed decoding give the frame the untyped route gives.

``citations_frame`` of a ``.jsonl`` file decodes each plain chat completion with its types
(``citekit.data.frames.typed``); any other line goes the untyped route (``json.loads``, the
column-wise reader or the provider's parser). Both routes, on every sample, on arbitrary
JSON in any field and on arbitrary bytes in a line, give equal frames, the same error, and
name the same skipped lines.
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import citekit as ck
from citekit.data.frames.columnar import read_source
from citekit.data.frames.loaders import _citations_of
from citekit.data.frames.sources import provider_from
from citekit.data.frames.typed import Plain, decode_line
from tests.budget import examples
from tests.data.frames.test_columnar import _PATHS, RECORDS, SAMPLES, _bulk, _json, _set


def _untyped(source: Any, provider: str | None = None) -> pl.DataFrame:
    """The citations frame by the untyped route (every line ``json.loads``)."""
    items = read_source(source, provider=provider, caller="citations_frame")
    return _citations_of(items)


def _outcome(make: Any) -> tuple[pl.DataFrame | type[BaseException], list[str]]:
    """The frame (or the error's class) and the warnings' messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: pl.DataFrame | type[BaseException] = make()
        except Exception as exc:  # the class is what is compared
            result = type(exc)
    # A ResourceWarning is the garbage collector closing another test's socket meanwhile,
    # not something either route said.
    return result, [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)]


def _same(path: Path, provider: str | None = None) -> pl.DataFrame | type[BaseException]:
    typed, typed_warned = _outcome(lambda: ck.citations_frame(path, provider=provider))
    untyped, untyped_warned = _outcome(lambda: _untyped(path, provider))
    assert typed_warned == untyped_warned
    if isinstance(untyped, pl.DataFrame):
        assert isinstance(typed, pl.DataFrame), typed
        assert_frame_equal(typed, untyped)
    else:
        assert typed is untyped
    return typed


def _decoded(line: bytes, provider: str | None = None) -> Plain | None:
    return decode_line(line, provider=provider, provider_of=provider_from)


def test_the_bulk_case_is_decoded_typed() -> None:
    record = _bulk(2)[1]
    plain = _decoded(json.dumps(record).encode())
    assert plain is not None
    assert (plain.provider, plain.id, plain.question) == ("magisterium", "chatcmpl-1", "Q1?")
    assert len(plain.citations) == len(record["response"]["citations"])
    # shapes the untyped route reads: a GPTBots record, Maritaca's links, no provider to tell
    assert _decoded(b'{"question": "q", "message": {"answer_id": "a"}, "choices": []}') is None
    maritaca = copy.deepcopy(record)
    del maritaca["response"]["citations"]
    assert _decoded(json.dumps(maritaca).encode(), provider="maritaca") is None
    assert _decoded(b'{"choices": [{"message": {"content": "x"}}], "citations": []}') is not None
    assert _decoded(b'{"choices": [{"message": {"content": "x"}}]}') is None
    assert _decoded(b'{"choices": [{"message": {"content": "\\ud800"}}], "citations": []}') is None


@pytest.mark.parametrize(("provider", "stem", "record"), RECORDS, ids=lambda v: str(v)[:40])
def test_every_sample_reads_alike(
    provider: str, stem: str, record: dict[str, Any], tmp_path: Path
) -> None:
    values = [record, record["response"]] if "response" in record else [record]  # and its body
    lines = tmp_path / "one.jsonl"
    lines.write_text("".join(json.dumps(v) + "\n" for v in values))
    frame = _same(lines, provider)
    assert isinstance(frame, pl.DataFrame)
    assert_frame_equal(frame, ck.citations_frame(values, provider=provider))


def test_all_samples_in_one_file_and_in_a_folder(tmp_path: Path) -> None:
    records = [rec for _, _, rec in RECORDS]
    lines = tmp_path / "all.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert_frame_equal(_same(lines), ck.citations_frame(records))  # type: ignore[arg-type]
    _same(SAMPLES)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    provider=st.sampled_from(["magisterium", "maritaca", None]),
    path=st.sampled_from(_PATHS),
    value=_json,
    bare=st.booleans(),
    where=st.sampled_from(["response", "record"]),
)
def test_arbitrary_json_in_a_field_reads_alike(
    tmp_path_factory: pytest.TempPathFactory,
    provider: str | None,
    path: tuple[Any, ...],
    value: Any,
    bare: bool,
    where: str,
) -> None:
    good = _bulk(4)
    record = copy.deepcopy(good[3])
    if where == "record":  # the sample record's own fields, beside its response
        record[path[0] if len(path) == 1 else "question"] = value
    else:
        _set(record["response"], path, value)
    line = record["response"] if bare else record
    lines = tmp_path_factory.mktemp("j") / "x.jsonl"
    lines.write_text(
        "\n".join(json.dumps(v) for v in (good[0], line, good[1])) + "\n", encoding="utf-8"
    )
    _same(lines, provider)


#: Pieces of JSON text a broken or hostile file holds.
_TEXT_PIECES = [
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    "NaN",
    "-Infinity",
    "1e400",
    "99999999999999999999999",
    "true",
    "null",
    "1.0",
    '"&amp;"',
    "\ufeff",
    "\xff",
    "{",
    "}",
    "[",
    "]",
    ",",
    '"document_index": 3',
    '"cited_text": "x"',
    '"citations": []',
    '"response": ',
    '"message": {}',
]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    at=st.integers(min_value=0, max_value=10_000),
    cut=st.integers(min_value=0, max_value=40),
    piece=st.sampled_from(_TEXT_PIECES) | st.text(max_size=6),
    folder=st.booleans(),
)
def test_arbitrary_bytes_in_a_line_read_alike(
    tmp_path_factory: pytest.TempPathFactory, at: int, cut: int, piece: str, folder: bool
) -> None:
    good = _bulk(3)
    text = json.dumps(good[1])
    at %= len(text) + 1
    broken = (text[:at] + piece + text[at + cut :]).encode("utf-8", "surrogatepass")
    body = b"\n".join([json.dumps(good[0]).encode(), broken, json.dumps(good[2]).encode()])
    root = tmp_path_factory.mktemp("b")
    (root / "x.jsonl").write_bytes(body + b"\n")
    # a file named raises at a line it cannot read; in a folder the line is named, skipped
    _same(root if folder else root / "x.jsonl")


def test_duplicate_keys_read_as_json_reads_them(tmp_path: Path) -> None:
    record = _bulk(1)[0]
    text = json.dumps(record)
    # the last of two keys wins, as json.loads has it; an odd first value changes nothing
    doubled = text.replace('"citations": [', '"citations": 3, "citations": [', 1)
    doubled = doubled.replace('"question": "Q0?"', '"question": "A", "question": "Q0?"', 1)
    lines = tmp_path / "d.jsonl"
    lines.write_text(doubled + "\n")
    frame = _same(lines)
    assert_frame_equal(frame, ck.citations_frame([record]))  # type: ignore[arg-type]
