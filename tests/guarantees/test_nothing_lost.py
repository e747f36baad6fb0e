"""An answer that arrived is never lost on its way to the log or a file (issue: hardening)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.core.files import replacing
from citekit.core.unicode import decode_entities, valid_text
from citekit.data.io.exports import export_answer
from citekit.store import Log, LogWarning
from tests.budget import examples

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.lists(st.one_of(st.text(max_size=5), SURROGATES), max_size=12).map("".join)


@settings(max_examples=examples(200), deadline=None)
@given(TEXT)
def test_valid_text_is_always_utf8_and_keeps_what_it_can(text: str) -> None:
    fixed = valid_text(text)
    fixed.encode("utf-8")  # never raises
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        assert fixed == text


def test_an_emoji_split_across_two_stream_chunks_is_whole_again() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "Smile \ud83d"}}]},
        {"choices": [{"index": 0, "delta": {"content": "\ude00!"}, "finish_reason": "stop"}]},
    ]
    answer = ck.parse_chunks(chunks, provider="maritaca")
    assert answer.text == "Smile \U0001f600!"


@settings(max_examples=examples(40), deadline=None)
@given(text=TEXT, cited=TEXT)
def test_the_log_keeps_an_answer_whatever_its_text(tmp_path_factory, text: str, cited: str) -> None:
    # Lone surrogates in the text, a citation and the raw JSON: written, read back, exported.
    folder = tmp_path_factory.mktemp("log")
    store = Log(folder / "log.sqlite3")
    body = {
        "id": "a1",
        "choices": [{"index": 0, "message": {"content": text + " [1]"}}],
        "citations": [{"cited_text": cited or "x", "document_index": 0}],
    }
    answer = ck.parse_response(body, provider="magisterium", question="q")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LogWarning)
        row_id = store.record(answer, request={"messages": []})
    assert row_id is not None
    (back,) = store.answers()
    assert back.text == valid_text(text + " [1]")
    assert back.citations[0].cited_text == valid_text(cited or "x")
    for suffix in (".md", ".html", ".json"):
        path = export_answer(answer, folder / f"a{suffix}")
        path.read_bytes().decode("utf-8")
    store.close()


def test_a_full_disk_is_reported_as_such(tmp_path: Path) -> None:
    store = Log(tmp_path / "log.sqlite3")
    answer = ck.Answer(provider="magisterium", text="x" * 200_000)
    store.connect().execute("PRAGMA max_page_count = 8")  # a database that cannot grow
    with pytest.warns(LogWarning, match="full") as caught:
        assert store.record(answer) is None
    assert "no transaction is active" not in str(caught[0].message)
    store.connect().execute("PRAGMA max_page_count = 1073741823")
    assert store.record(ck.Answer(provider="magisterium", text="small")) is not None
    store.close()


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "refs.json"
    target.write_text('{"good": true}', encoding="utf-8")
    with pytest.raises(OSError, match="disk full"), replacing(target) as temporary:
        temporary.write_text('{"half', encoding="utf-8")
        raise OSError("disk full")
    assert json.loads(target.read_text("utf-8")) == {"good": True}
    assert [p.name for p in tmp_path.iterdir()] == ["refs.json"]  # no half-written leftover


@pytest.mark.parametrize(
    "damage",
    ['{"unterminated', "[1, 2]", '{"choices": 7}', "null"],
)
def test_one_unreadable_row_never_hides_the_log(tmp_path: Path, damage: str) -> None:
    store = Log(tmp_path / "log.sqlite3")
    ids = []
    for i in range(3):
        body = {"id": f"a{i}", "choices": [{"index": 0, "message": {"content": f"answer {i}"}}]}
        answer = ck.parse_response(body, provider="magisterium", question=f"q{i}")
        ids.append(store.record(answer))
    conn = store.connect()
    conn.execute("UPDATE answers SET response_json = ? WHERE id = ?", (damage, ids[1]))
    conn.commit()
    with pytest.warns(LogWarning, match=rf"ids {ids[1]}\b"):
        answers = store.answers()
    assert [a.text for a in answers] == ["answer 0", "answer 1", "answer 2"]
    assert answers[1].notes and "unreadable" in answers[1].notes[-1]
    with pytest.warns(LogWarning, match=f"answer {ids[1]} "):
        assert store.get(ids[1]).text == "answer 1"
    store.close()


@settings(max_examples=examples(60), deadline=None)
@given(field=TEXT)
def test_source_fields_with_surrogates_reach_frames_and_files(field: str) -> None:
    body = {
        "choices": [{"index": 0, "message": {"content": "Said [1]."}}],
        "citations": [{"cited_text": field, "document_index": 0, "document_title": field}],
    }
    answer = ck.parse_response(body, provider="magisterium")
    frame = ck.citations_frame([answer])
    # A source's text is kept valid and its HTML entities decoded ("&amp" is "&").
    expected = decode_entities(valid_text(field))
    assert frame["document_title"].to_list() == [expected or None] or field == ""
    answer.to_markdown().encode("utf-8")
