"""Frames from saved responses read column-wise equal the frames of their ``Answer`` objects.

Every recorded sample is read four ways (its record dict, its ``.json`` file, a ``.jsonl`` file
holding it as one line, and the ``Answer`` objects it parses into); the four give the same
citations, references, answers and sources frames. Arbitrary JSON values in any field of a
response give the same frame on both paths, or the same error.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import citekit as ck
from citekit.data.frames.columnar import chat_header
from citekit.data.frames.sources import Saved, load_answers
from citekit.text import reader
from citekit.text.reader import marker_digits, numbers, read
from citekit.text.source_map import normalise
from tests.budget import examples
from tests.conftest import sample_records
from tests.text.test_reader import _PIECES

FRAMES: dict[str, Callable[..., pl.DataFrame]] = {
    "citations": ck.citations_frame,
    "references": ck.references_frame,
    "answers": ck.answers_frame,
    "sources": ck.sources_frame,
}
PROVIDERS = ("magisterium", "maritaca", "gptbots")
RECORDS = [(p, stem, rec) for p in PROVIDERS for stem, rec in sample_records(p)]
SAMPLES = Path(__file__).resolve().parents[3] / "sample_data"


def _answer_path(source: Any, provider: str | None = None) -> list[Any]:
    """The source parsed into ``Answer`` (and ``References``) objects first: the old path."""
    return load_answers(source, provider=provider)


@pytest.mark.parametrize(("provider", "stem", "record"), RECORDS, ids=lambda v: str(v)[:40])
@pytest.mark.parametrize("frame", sorted(FRAMES))
def test_every_sample_gives_one_frame_four_ways(
    frame: str, provider: str, stem: str, record: dict[str, Any], tmp_path: Path
) -> None:
    make = FRAMES[frame]
    expected = make(_answer_path(record))
    lines = tmp_path / "one.jsonl"
    lines.write_text(json.dumps(record) + "\n", encoding="utf-8")
    for source in (record, [record], SAMPLES / provider / f"{stem}.json", lines):
        assert_frame_equal(make(source), expected)


@pytest.mark.parametrize("frame", sorted(FRAMES))
def test_all_samples_at_once(frame: str, tmp_path: Path) -> None:
    make = FRAMES[frame]
    records = [rec for _, _, rec in RECORDS]
    expected = make(_answer_path(records))
    lines = tmp_path / "all.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert_frame_equal(make(records), expected)
    assert_frame_equal(make(lines), expected)
    # a folder: the samples' .json answers (their .jsonl stream recordings are not answers)
    assert_frame_equal(make(SAMPLES), make(_answer_path(SAMPLES)))
    assert make(records).height == expected.height


def _bulk(n: int) -> list[dict[str, Any]]:
    """Plain Magisterium responses (the bulk case), with entities, repeats and no markers."""
    out = []
    for i in range(n):
        citations = [
            {
                "cited_text": f"Passage {j % 3} &apos;q&apos; &amp; more" if j % 2 else "plain",
                "cited_text_heading": None if j % 3 else f"Chapter {j}",
                "document_title": f"Document {j} &eacute;",
                "document_index": j // 2,
                "document_author": ["Leo XIII", None, ""][j % 3],
                "document_year": ["1891", "c. 1270", "", None, "33 AD"][j % 5],
                "document_reference": str(j),
                "source_url": f"https://example.org/{j}" if j % 4 else None,
            }
            for j in range(i % 6)
        ]
        text = "" if i % 7 == 0 else f"Answer {i}.[^1][^3] `[^2]` [4]"
        out.append(
            {
                "question": f"Q{i}?",
                "response": {
                    "id": f"chatcmpl-{i}",
                    "model": "magisterium-1",
                    "created": 1_760_000_000 + i,
                    "choices": [
                        {"index": 0, "message": {"content": text}, "finish_reason": "stop"}
                    ],
                    "citations": citations,
                    "usage": {"prompt_tokens": 4, "completion_tokens": 5, "total_tokens": 9},
                },
            }
        )
    return out


@pytest.mark.parametrize("frame", sorted(FRAMES))
def test_plain_responses_in_bulk(frame: str) -> None:
    records = _bulk(60)
    assert all(chat_header(Saved(r["response"], "magisterium", r["question"])) for r in records)
    assert_frame_equal(FRAMES[frame](records), FRAMES[frame](_answer_path(records)))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("document_index", "2"),  # a digit string: Citation reads it
        ("document_index", True),  # a boolean is not an index: the position is
        ("document_index", 1.0),
        ("document_index", -1),
        ("document_index", 2**40),
        ("document_title", 1992),  # a number as its digits
        ("document_year", 1992),
        ("cited_text", None),
        ("cited_text", ["x"]),
        ("document_author", "lone \ud800 surrogate"),
        ("document_author", "pair \ud83d\ude00 joined"),
        ("source_url", {"href": "x"}),
    ],
)
def test_odd_citation_values_give_the_answer_path_frame(field: str, value: Any) -> None:
    records = _bulk(12)
    records[5]["response"]["citations"][1][field] = value
    records[9]["response"]["citations"].insert(0, "not an object")
    for make in FRAMES.values():
        assert_frame_equal(make(records), make(_answer_path(records)))


def test_batches_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # citation arrays are read into columns by batches; one batch read as Citation objects
    # (an odd value in it) and answers parsed whole (GPTBots) keep their place
    monkeypatch.setattr("citekit.data.frames.rows._BATCH", 7)
    records: list[Any] = _bulk(30)
    records[13]["response"]["citations"][0]["document_index"] = "1"
    records.insert(3, sample_records("gptbots")[10][1])
    records.insert(20, sample_records("maritaca")[7][1])
    for make in FRAMES.values():
        assert_frame_equal(make(records), make(_answer_path(records)))


# -- arbitrary JSON anywhere in a response -------------------------------------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["&amp;", "&apos;x", "[^1]", "\ud800", "1992", "0", "stop"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)

_PATHS = [
    ("id",),
    ("model",),
    ("created",),
    ("object",),
    ("choices",),
    ("choices", 0),
    ("choices", 0, "index"),
    ("choices", 0, "finish_reason"),
    ("choices", 0, "message"),
    ("choices", 0, "message", "content"),
    ("choices", 0, "message", "role"),
    ("choices", 0, "message", "tool_calls"),
    ("choices", 0, "message", "annotations"),
    ("citations",),
    ("citations", 0),
    ("citations", 0, "document_index"),
    ("citations", 0, "cited_text"),
    ("citations", 1, "document_title"),
    ("citations", 1, "document_year"),
    ("citations", 1, "source_url"),
    ("citations", 2, "cited_text_heading"),
    ("citations", 2, "document_author"),
    ("citations", 2, "document_reference"),
    ("citations", 2, "document_index"),
    ("usage",),
    ("usage", "prompt_tokens"),
    ("usage", "tool_execution_details"),
    ("generated_files",),
    ("related_questions",),
    ("citekit_sample",),
]


def _set(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target: Any = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def _outcome(make: Callable[[], pl.DataFrame]) -> pl.DataFrame | type[BaseException]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return make()
    except Exception as exc:  # the class is what is compared
        return type(exc)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    provider=st.sampled_from(["magisterium", "maritaca"]),
    path=st.sampled_from(_PATHS),
    value=_json,
    maritaca_links=st.booleans(),
)
def test_arbitrary_json_in_a_field_reads_as_the_answer_path(
    provider: str, path: tuple[Any, ...], value: Any, maritaca_links: bool
) -> None:
    body = copy.deepcopy(_bulk(4)[3]["response"])
    if provider == "maritaca" and maritaca_links:
        del body["citations"]  # its sources are then the text's links
        body["choices"][0]["message"]["content"] = "See [Pix](https://bcb.gov.br) [^1]."
        if path[0] == "citations":
            path = ("choices", 0, "message", "content")
    _set(body, path, value)
    record = {"question": "Q?", "response": body}
    for make in FRAMES.values():
        columnar = _outcome(lambda: make([record], provider=provider))  # noqa: B023
        answers = _outcome(lambda: make(_answer_path([record], provider)))  # noqa: B023
        if isinstance(answers, type) and columnar is not answers:
            # the Answer path raises when parsing; so must the column-wise path, alike
            assert columnar is answers, (path, value)
        elif isinstance(answers, pl.DataFrame):
            assert isinstance(columnar, pl.DataFrame), (path, value, columnar)
            assert_frame_equal(columnar, answers)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=12), _json, max_size=6))
def test_arbitrary_bodies_read_as_the_answer_path(body: dict[str, Any]) -> None:
    body.setdefault("choices", [])
    for make in FRAMES.values():
        columnar = _outcome(lambda: make([body], provider="magisterium"))  # noqa: B023
        answers = _outcome(lambda: make(_answer_path([body], "magisterium")))  # noqa: B023
        if isinstance(answers, pl.DataFrame):
            assert isinstance(columnar, pl.DataFrame)
            assert_frame_equal(columnar, answers)
        else:
            assert columnar is answers


# -- the text reader's fast path ---------------------------------------------------------------

_MARKER_PIECES = [
    *_PIECES,
    "[^1][^3]",
    "[2][",
    "x[3]y",
    "[^10]",
    "[9999]",
    "[10000]",
    "\\[4]",
    "$[5]",
    "[6]$",
    "[7](",
    "[8]:",
    "[^9] ",
    "text ",
]
_marker_texts = st.lists(
    st.one_of(st.sampled_from(_MARKER_PIECES), st.text(max_size=3)), max_size=24
).map("".join)


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_marker_texts)
def test_numbers_is_the_full_reading(text: str) -> None:
    assert numbers(text) == read(text).numbers
    digits = marker_digits(text)
    if digits is not None:  # the frames' route: each marker's digits, in order
        assert [int(d) for d in digits] == [m.number for m in read(text).markers]
    if "]:" not in text and "\r" not in text:  # no definition lines: the whole text is the body
        norm, shift = normalise(text)
        markers, _ = reader._parsed(norm, shift, scan=False)  # markdown-it's full parse
        assert numbers(text) == {m.number for m in markers}


_citation_values = st.fixed_dictionaries(
    {"cited_text": st.sampled_from(["plain", "a &amp; b", "&apos;q&apos;", "[^1]"])},
    optional={
        "document_index": st.integers(min_value=0, max_value=12)
        | st.sampled_from([-1, 2**40, "3", True, 2.0, None]),
        "document_title": st.sampled_from(["T", "T &eacute;", "", None, 7]),
        "document_author": st.sampled_from(["Leo XIII", "A &amp; B", None]),
        "document_year": st.sampled_from(["1891", "c. 1270", "500 BC", "", None]),
        "cited_text_heading": st.text(max_size=4) | st.none(),
        "source_url": st.sampled_from(["https://e.org/1", None]),
        "document_reference": st.sampled_from(["12", None]),
    },
)
_saved_records = st.lists(
    st.tuples(
        st.lists(_citation_values | st.sampled_from(["not an object", 3]), max_size=5),
        # markers the citations have, some in code or a link, and any marker text
        st.lists(st.sampled_from(["[^1]", "[2]", "[^3][1]", " `[^2]` ", "[4](x) ", "w "])).map(
            "".join
        )
        | _marker_texts,
        st.sampled_from([None, "magisterium-1", "sabiazinho-3"]),
    ),
    max_size=8,
)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_saved_records, st.integers(min_value=1, max_value=6))
def test_arbitrary_saved_dicts_give_the_answer_path_citations(
    answers: list[tuple[list[Any], str, str | None]], batch: int
) -> None:
    # Several saved responses at once: their rows in order, each marker's cited_inline from
    # its own answer's text, read in batches of any size, as the Answer path gives them.
    records = [
        {
            "question": f"Q{i}?",
            "response": {
                "id": f"chatcmpl-{i}",
                "model": model,
                "choices": [{"index": 0, "message": {"content": text}, "finish_reason": "stop"}],
                "citations": citations,
            },
        }
        for i, (citations, text, model) in enumerate(answers)
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("citekit.data.frames.rows._BATCH", batch)
        columnar = _outcome(lambda: ck.citations_frame(records, provider="magisterium"))
    expected = _outcome(lambda: ck.citations_frame(_answer_path(records, "magisterium")))
    if isinstance(expected, pl.DataFrame):
        assert isinstance(columnar, pl.DataFrame), columnar
        assert_frame_equal(columnar, expected)
    else:
        assert columnar is expected


def test_numbers_fast_path_cases() -> None:
    assert numbers("no brackets") == frozenset()
    assert numbers("Work.[^1][^3] and [2].") == {1, 2, 3}
    assert numbers("`[1]` [2]") == {2}
    assert numbers("\\[1] [2]") == {2}
    assert numbers("$[1]$ [2]") == {1, 2}
    assert numbers("[1](https://e.org) [1][ref] [3]") == {3}
    assert numbers("Para [1]\n[^2]: def [3]\n") == {1}


# -- JSON Lines ----------------------------------------------------------------------------------


def test_jsonl_file_and_folder(tmp_path: Path) -> None:
    records = _bulk(20)
    lines = tmp_path / "answers.jsonl"
    lines.write_text(
        "\n".join(json.dumps(r) for r in records[:10])
        + "\n\n"
        + "\r\n".join(json.dumps(r) for r in records[10:]),
        encoding="utf-8",
    )
    expected = ck.citations_frame(_answer_path(records))
    assert_frame_equal(ck.citations_frame(lines), expected)
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.jsonl").write_text(lines.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "b.json").write_text(json.dumps(records[:3]), encoding="utf-8")
    # a stream recording (JSON lines that are not answers) is skipped, as models.json is
    (folder / "c.jsonl").write_text('{"code": 3, "message": "Text"}\n', encoding="utf-8")
    both = ck.citations_frame(folder)
    assert both.height == expected.height + ck.citations_frame(records[:3]).height
    assert_frame_equal(both, ck.citations_frame(_answer_path(folder)))


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    records = _bulk(3)
    lines = tmp_path / "bad.jsonl"
    lines.write_text(
        json.dumps(records[0])
        + "\n\n"
        + '{"question": "Q", "response": {\n'
        + json.dumps(records[1]),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"line 3 of .*bad\.jsonl is not readable JSON"):
        ck.citations_frame(lines)
    with pytest.raises(ValueError, match="line 3"):
        ck.answers_frame(str(lines))
    # in a folder, the broken line is named and skipped; the file's other lines and the other
    # files are read (the file is streamed as it is read, so nothing read before is dropped)
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "bad.jsonl").write_bytes(lines.read_bytes())
    (folder / "good.jsonl").write_text(json.dumps(records[2]) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"bad\.jsonl \(line 3\)"):
        frame = ck.answers_frame(folder)
    assert frame["answer_id"].to_list() == ["chatcmpl-0", "chatcmpl-1", "chatcmpl-2"]


def test_a_jsonl_line_that_is_no_answer(tmp_path: Path) -> None:
    lines = tmp_path / "x.jsonl"
    lines.write_text('{"code": 3}\n', encoding="utf-8")
    with pytest.raises(TypeError, match="none of these"):
        ck.citations_frame(lines)
    undecodable = tmp_path / "y.jsonl"
    undecodable.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(ValueError, match="line 1 of"):
        ck.citations_frame(undecodable)
