"""citekit.data.frames: schemas, hand-computed frames, the sources it reads, years and markers."""

from __future__ import annotations

import json
import tempfile
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from citekit import Answer, References, answers_frame, citations_frame, references_frame
from citekit.data.frames import (
    ANSWERS_SCHEMA,
    CITATIONS_SCHEMA,
    REFERENCES_SCHEMA,
    load_answers,
)
from citekit.wire.parsers import parse_response
from tests.budget import examples

SAMPLES = Path(__file__).resolve().parents[3] / "sample_data"


def magisterium_response() -> dict[str, Any]:
    """Two citations share document 0; document 3 is never marked inline; entities, nulls."""
    return {
        "id": "chatcmpl-A",
        "object": "chat.completion",
        "created": 1_735_689_600,  # 2025-01-01T00:00:00Z
        "model": "magisterium-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Work has dignity [^1]. Wages must be just [^2][^3].",
                },
                "finish_reason": "stop",
            }
        ],
        "citations": [
            {
                "cited_text": "Labour is not a commodity.",
                "cited_text_heading": "On Capital and Labour",
                "document_title": "Rerum Novarum",
                "document_index": 0,
                "document_author": "Leo XIII",
                "document_year": "1891",
                "document_reference": "20",
                "source_url": "https://www.vatican.va/rn.html",
            },
            {
                "cited_text": "The worker&apos;s wage &amp; man&apos;s c&oelig;ur.",
                "document_title": "Rerum Novarum",
                "document_index": 0,
                "document_author": "Leo XIII",
                "document_year": "1891",
                "document_reference": "45",
                "source_url": "https://www.vatican.va/rn.html",
            },
            {
                "cited_text": "Grace perfects nature.",
                "cited_text_heading": None,
                "document_title": "Summa Theologiae",
                "document_index": 1,
                "document_author": "Thomas Aquinas",
                "document_year": "c. 1270",
                "document_reference": None,
                "source_url": "https://example.org/summa",
            },
            {
                "cited_text": "The council met for years.",
                "document_title": "Acts of the Council",
                "document_index": 2,
                "document_author": None,
                "document_year": "1962-1965",
                "source_url": "https://example.org/council",
            },
            {
                "cited_text": "An uncited passage.",
                "document_title": None,
                "document_index": 3,
                "document_year": "",
            },
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
        "citekit_sample": "magisterium/99_test",
    }


def maritaca_response() -> dict[str, Any]:
    return {
        "id": "chatcmpl-B",
        "object": "chat.completion",
        "created": 1_735_693_200,
        "model": "sabia-4",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Pix é instantâneo [1]."},
                "finish_reason": "length",
            }
        ],
    }


def correlate_body() -> dict[str, Any]:
    return {
        "conversation_id": "conv-1",
        "question_id": "q-1",
        "answer_id": "ans-1",
        "correlate_dataset": [
            {
                "content": "The wall is long.",
                "data_id": "d1",
                "data_name": "wall.pdf",
                "source_url": "",
                "score": 0.93,
            },
            {
                "content": "Built over centuries.",
                "data_id": "d2",
                "data_name": "UNESCO",
                "source_url": "https://whc.unesco.org",
                "score": "0.41",
            },
            {"content": "No score here.", "data_id": None, "data_name": None},
        ],
    }


@pytest.fixture()
def answer_a() -> Answer:
    return parse_response(
        magisterium_response(), provider="magisterium", question="Why is work dignified?"
    )


@pytest.fixture()
def answer_b() -> Answer:
    return parse_response(maritaca_response(), provider="maritaca", question="O que é Pix?")


def expected_citations() -> pl.DataFrame:
    n = 5
    return pl.DataFrame(
        {
            "provider": ["magisterium"] * n,
            "answer_id": ["chatcmpl-A"] * n,
            "question": ["Why is work dignified?"] * n,
            "model": ["magisterium-1"] * n,
            "marker": [1, 1, 2, 3, 4],
            "document_index": [0, 0, 1, 2, 3],
            "cited_text": [
                "Labour is not a commodity.",
                "The worker's wage & man's cœur.",
                "Grace perfects nature.",
                "The council met for years.",
                "An uncited passage.",
            ],
            "cited_text_heading": ["On Capital and Labour", None, None, None, None],
            "document_title": [
                "Rerum Novarum",
                "Rerum Novarum",
                "Summa Theologiae",
                "Acts of the Council",
                None,
            ],
            "document_author": ["Leo XIII", "Leo XIII", "Thomas Aquinas", None, None],
            "document_year": ["1891", "1891", "c. 1270", "1962-1965", ""],
            "year": [1891, 1891, 1270, 1962, None],
            "document_reference": ["20", "45", None, None, None],
            "source_url": [
                "https://www.vatican.va/rn.html",
                "https://www.vatican.va/rn.html",
                "https://example.org/summa",
                "https://example.org/council",
                None,
            ],
            "cited_inline": [True, True, True, True, False],
        },
        schema=CITATIONS_SCHEMA,
    )


# -- citations_frame ------------------------------------------------------------------------


def test_citations_frame_matches_hand_computed(answer_a: Answer, answer_b: Answer) -> None:
    assert_frame_equal(citations_frame([answer_a, answer_b]), expected_citations())


def test_citations_frame_of_one_answer_and_of_a_generator(answer_a: Answer) -> None:
    assert_frame_equal(citations_frame(answer_a), expected_citations())
    assert_frame_equal(citations_frame(a for a in [answer_a]), expected_citations())


def test_citations_keep_order_across_answers(answer_a: Answer) -> None:
    second = parse_response(
        {**magisterium_response(), "id": "chatcmpl-C"}, provider="magisterium", question="Again?"
    )
    frame = citations_frame([answer_a, second])
    assert frame.height == 10
    assert frame["answer_id"].to_list() == ["chatcmpl-A"] * 5 + ["chatcmpl-C"] * 5
    assert frame["question"].to_list()[5:] == ["Again?"] * 5
    assert frame["marker"].to_list() == [1, 1, 2, 3, 4] * 2


def test_shared_document_index_gives_one_marker(answer_a: Answer) -> None:
    frame = citations_frame(answer_a)
    per_doc = frame.group_by("marker").agg(pl.len()).sort("marker")
    assert per_doc.filter(pl.col("marker") == 1)["len"].item() == 2
    assert frame.filter(pl.col("marker") == 1)["document_reference"].to_list() == ["20", "45"]


def test_cited_inline_uses_the_marker_rules() -> None:
    body = magisterium_response()
    # [^1] is a Markdown link here, [^2] a definition line, [^3] escaped: none are inline.
    body["choices"][0]["message"]["content"] = (
        "See [1](https://x.org) and \\[3] but also [^4].\n[^2]: a definition"
    )
    frame = citations_frame(parse_response(body, provider="magisterium"))
    assert frame["cited_inline"].to_list() == [False, False, False, False, True]


def test_empty_sources_give_typed_empty_frames(answer_b: Answer) -> None:
    for source in ([], (), answer_b, References()):
        assert citations_frame(source).schema == CITATIONS_SCHEMA
        assert citations_frame(source).height == 0
        assert references_frame(source).schema == REFERENCES_SCHEMA
        assert references_frame(source).height == 0
    assert answers_frame([]).schema == ANSWERS_SCHEMA
    assert answers_frame([]).height == 0


def test_entities_are_decoded_in_text_fields() -> None:
    body = magisterium_response()
    body["citations"] = [
        {
            "cited_text": "&lt;b&gt; &quot;x&quot;",
            "document_index": 0,
            "document_title": "Lumen &amp; Gentium",
            "document_author": "Jean-Paul&nbsp;II",
            "cited_text_heading": "Chapitre &laquo;I&raquo;",
        }
    ]
    row = citations_frame(parse_response(body, provider="magisterium")).row(0, named=True)
    assert row["cited_text"] == '<b> "x"'
    assert row["document_title"] == "Lumen & Gentium"
    assert row["document_author"] == "Jean-Paul\xa0II"
    assert row["cited_text_heading"] == "Chapitre «I»"


# -- year parsing ---------------------------------------------------------------------------


def test_year_column_maps_repeated_strings() -> None:
    body = magisterium_response()
    years = ["1891", "1891", None, "", "c. 1270", "1891", None]
    body["citations"] = [
        {"cited_text": str(i), "document_index": i, "document_year": y} for i, y in enumerate(years)
    ]
    frame = citations_frame(parse_response(body, provider="magisterium"))
    assert frame["year"].to_list() == [1891, 1891, None, None, 1270, 1891, None]
    assert frame["document_year"].to_list() == years


# -- markers --------------------------------------------------------------------------------

_PIECES = ["[1]", "[^2]", "[12]", "\\[4]", "(", ":", " ", "\n", "[", "]", "a", "[x]", "[^1]:"]
_PIECES += ["](u)", "[0]", "\t", "^", "[5] (", "[^6][^7]", "[3][ref]", "   [^2]: d"]
_PIECES += ["`", "```\n", "~~~\n"]


@settings(deadline=None)  # (untimed: a loaded machine's first call took 263 ms)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_cited_inline_is_the_answers_cited_markers(text: str) -> None:
    body = magisterium_response()
    body["choices"][0]["message"]["content"] = text
    body["citations"] = [{"cited_text": str(i), "document_index": i} for i in range(13)]
    answer = parse_response(body, provider="magisterium")
    frame = citations_frame(answer)
    cited = set(frame.filter("cited_inline")["marker"].to_list())
    assert cited == answer.cited_markers & set(range(1, 14))


def test_markers_inside_code_are_not_cited_inline() -> None:
    body = magisterium_response()
    body["choices"][0]["message"]["content"] = "See `[1]` and [^2].\n\n```\nx = a[3]\n```\n"
    body["citations"] = [{"cited_text": str(i), "document_index": i} for i in range(3)]
    frame = citations_frame(parse_response(body, provider="magisterium"))
    assert frame["cited_inline"].to_list() == [False, True, False]


# -- references_frame -----------------------------------------------------------------------


def expected_references(provider: str = "gptbots") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "provider": [provider] * 3,
            "conversation_id": ["conv-1"] * 3,
            "question_id": ["q-1"] * 3,
            "answer_id": ["ans-1"] * 3,
            "rank": [1, 2, 3],
            "cited_text": ["The wall is long.", "Built over centuries.", "No score here."],
            "data_id": ["d1", "d2", None],
            "document_title": ["wall.pdf", "UNESCO", None],
            "source_url": [None, "https://whc.unesco.org", None],
            "score": [0.93, 0.41, None],
        },
        schema=REFERENCES_SCHEMA,
    )


def test_references_frame_of_references() -> None:
    refs = References.from_response(correlate_body())
    assert_frame_equal(references_frame(refs), expected_references())
    assert_frame_equal(references_frame(correlate_body()), expected_references())


def test_references_frame_of_answers_with_references(answer_a: Answer) -> None:
    from dataclasses import replace

    refs = References.from_response(correlate_body())
    gpt = Answer(provider="gptbots", text="It is long.", id="msg-1", references=refs)
    frame = references_frame([answer_a, gpt, gpt])
    assert_frame_equal(frame, pl.concat([expected_references()] * 2))
    # ids missing from the correlate body come from the answer
    bare = References(items=refs.items)
    lone = replace(gpt, references=bare, conversation_id="conv-9")
    row = references_frame(lone).row(0, named=True)
    assert (row["answer_id"], row["conversation_id"], row["question_id"]) == (
        "msg-1",
        "conv-9",
        None,
    )


# -- answers_frame --------------------------------------------------------------------------


def test_answers_frame_matches_hand_computed(answer_a: Answer, answer_b: Answer) -> None:
    refs = References.from_response(correlate_body())
    gpt = Answer(provider="gptbots", text="It is long.", id="msg-1", references=refs, partial=True)
    expected = pl.DataFrame(
        {
            "provider": ["magisterium", "maritaca", "gptbots"],
            "answer_id": ["chatcmpl-A", "chatcmpl-B", "msg-1"],
            "model": ["magisterium-1", "sabia-4", None],
            "created": [
                datetime(2025, 1, 1, tzinfo=UTC),
                datetime(2025, 1, 1, 1, tzinfo=UTC),
                None,
            ],
            "question": ["Why is work dignified?", "O que é Pix?", None],
            "text": [
                "Work has dignity [^1]. Wages must be just [^2][^3].",
                "Pix é instantâneo [1].",
                "It is long.",
            ],
            "finish_reason": ["stop", "length", None],
            "n_citations": [5, 0, 0],
            "n_references": [None, None, 3],
            "prompt_tokens": [12, None, None],
            "completion_tokens": [30, None, None],
            "total_tokens": [42, None, None],
            "web_search_calls": [None, None, None],
            "page_reads": [None, None, None],
            "data_ocean_gb_processed": [None, None, None],
            "code_execution_minutes": [None, None, None],
            "partial": [False, False, True],
            "cached": [False, False, False],
            "sample": ["magisterium/99_test", None, None],
        },
        schema=ANSWERS_SCHEMA,
    )
    assert_frame_equal(answers_frame([answer_a, answer_b, gpt, refs]), expected)


# -- sources ---------------------------------------------------------------------------------


def test_saved_json_sources(tmp_path: Path, answer_a: Answer) -> None:
    record = {"question": "Why is work dignified?", "response": magisterium_response()}
    path = tmp_path / "one.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    expected = expected_citations()
    assert_frame_equal(citations_frame(record), expected)
    assert_frame_equal(citations_frame(path), expected)
    assert_frame_equal(citations_frame(str(path)), expected)
    # a bare response has no question; the provider comes from the sample label
    bare = citations_frame(magisterium_response())
    assert bare["question"].null_count() == bare.height
    assert_frame_equal(bare.drop("question"), expected.drop("question"))


def test_directory_source_skips_non_answers(tmp_path: Path) -> None:
    (tmp_path / "magisterium").mkdir()
    (tmp_path / "_source").mkdir()
    record = {"question": "Q?", "response": magisterium_response()}
    (tmp_path / "magisterium" / "01_a.json").write_text(json.dumps(record), encoding="utf-8")
    (tmp_path / "magisterium" / "02_b.json").write_text(
        json.dumps({"question": "R?", "response": maritaca_response()}), encoding="utf-8"
    )
    (tmp_path / "models.json").write_text(json.dumps({"data": []}), encoding="utf-8")
    (tmp_path / "_source" / "x.json").write_text(json.dumps([record]), encoding="utf-8")
    (tmp_path / "magisterium" / "03_list.json").write_text(
        json.dumps([{**record, "question": "S?"}]), encoding="utf-8"
    )
    (tmp_path / "magisterium" / "04_notes.json").write_text(json.dumps(["x"]), encoding="utf-8")
    frame = answers_frame(tmp_path)
    assert frame["question"].to_list() == ["Q?", "R?", "S?"]
    assert frame["provider"].to_list() == ["magisterium", "maritaca", "magisterium"]
    assert citations_frame(tmp_path).height == 10


@settings(max_examples=examples(40), deadline=None)
@given(
    junk=st.one_of(
        st.binary(max_size=64),
        st.just(b"[" * 100_000),  # deeper than Python reads
        st.just(b'{"question": "Q?", "response": '),  # cut short
        st.just(b"\xff\xfe{}"),
    )
)
def test_a_broken_json_file_is_named_and_never_costs_the_rest(junk: bytes) -> None:
    """A folder of saved answers with one file that is not JSON: the others load, and a
    warning names the file; the broken file loaded alone is a ValueError naming it."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        record = {"question": "Q?", "response": magisterium_response()}
        (root / "01_good.json").write_text(json.dumps(record), encoding="utf-8")
        (root / "02_broken.json").write_bytes(junk)
        try:
            json.loads(junk)
        except (ValueError, RecursionError):
            readable = False
        else:
            readable = True
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = answers_frame(root)
        assert "Q?" in frame["question"].to_list()
        said = " ".join(str(w.message) for w in caught)
        assert ("02_broken.json" in said) is not readable
        if not readable:
            with pytest.raises(ValueError, match=r"02_broken\.json.*not readable JSON"):
                answers_frame(root / "02_broken.json")


def test_gptbots_record_attaches_references() -> None:
    record = {
        "question": "Why was the wall built?",
        "message": {
            "message_id": "ans-1",
            "conversation_id": "conv-1",
            "create_time": 1_735_689_600_000,
            "output": [{"content": {"text": "To defend."}}],
        },
        "correlate": correlate_body(),
    }
    (answer,) = load_answers(record)
    assert isinstance(answer, Answer)
    assert answer.references is not None and len(answer.references) == 3
    assert_frame_equal(references_frame(record), expected_references())
    row = answers_frame(record).row(0, named=True)
    assert row["n_references"] == 3
    assert row["created"] == datetime(2025, 1, 1, tzinfo=UTC)


def test_provider_keyword_for_unlabelled_responses() -> None:
    body = maritaca_response()
    body["model"] = "some-model"
    with pytest.raises(ValueError, match="provider="):
        answers_frame(body)
    assert answers_frame(body, provider="maritaca")["provider"].to_list() == ["maritaca"]


@pytest.mark.parametrize("bad", [42, 3.5, b"{}", None, object()])
def test_wrong_source_is_a_type_error_naming_what_is_accepted(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"citations_frame\(\) takes an Answer.*References"):
        citations_frame(bad)


def test_wrong_item_inside_a_list_is_a_type_error(answer_a: Answer) -> None:
    with pytest.raises(TypeError, match=r"answers_frame\(\).*an item of the iterable is a int"):
        answers_frame([answer_a, 3])


def test_unrecognised_json_is_a_type_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"hello": 1}), encoding="utf-8")
    with pytest.raises(TypeError, match="keys: hello"):
        references_frame(path)
    with pytest.raises(FileNotFoundError):
        references_frame(tmp_path / "missing.json")


# -- the recorded samples ----------------------------------------------------------------------

needs_samples = pytest.mark.skipif(
    not (SAMPLES / "magisterium").is_dir(), reason="sample_data is not present"
)


@needs_samples
def test_sample_data_frames_agree_with_the_answers() -> None:
    items = load_answers(SAMPLES)
    answers = [a for a in items if isinstance(a, Answer)]
    cits = citations_frame(answers)
    assert cits.height == sum(len(a.citations) for a in answers) > 0
    refs = references_frame(answers)
    assert refs.height == sum(len(a.references or ()) for a in answers) > 0
    frame = answers_frame(SAMPLES)
    assert frame.height == len(answers)
    assert frame["sample"].null_count() == 0
    # every year string holding a four-digit year parses to it
    with_digits = cits.filter(pl.col("document_year").str.contains(r"^\D*\d{4}"))
    assert with_digits["year"].null_count() == 0
    assert (
        with_digits["year"].cast(pl.String) == with_digits["document_year"].str.extract(r"(\d{4})")
    ).all()
    # the citation text matches the Answer objects one to one
    assert cits["cited_text"].to_list() == [c.cited_text for a in answers for c in a.citations]
