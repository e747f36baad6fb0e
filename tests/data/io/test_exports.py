"""Every export written, read back, and checked (``citekit.data.io.exports`` and
``citekit.data.io.bibliography``)."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import citekit as ck
from citekit import Answer, Failed, Magisterium, References, export_answer, export_citations
from citekit.data.io.bibliography import bibtex, csl_json, documents_by_work, latex_escape
from citekit.data.io.rows import SOURCE_COLUMNS, export_frame
from citekit.testing import ProviderServer
from citekit.wire.parsers import parse_response

# Some recorded samples are withheld by Magisterium's content filter, which warns.
pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

TRICKY_TITLE = "Rerum {Novarum} & 100% of_the #1 $cost ~ ^ \\ done"


def citation(index: int, title: str, ref: str, **extra: Any) -> dict[str, Any]:
    return {
        "cited_text": f"Passage {ref} of {title}.",
        "document_index": index,
        "document_title": title,
        "document_author": extra.get("author", "Leo XIII"),
        "document_year": extra.get("year", "1891"),
        "document_reference": ref,
        "source_url": extra.get("url", f"https://example.org/{index}"),
    }


def chat(question: str, citations: list[dict[str, Any]], text: str) -> Answer:
    body = {
        "id": f"id-{question[:5]}",
        "model": "magisterium-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "citations": citations,
    }
    return parse_response(body, provider="magisterium", question=question)


@pytest.fixture
def answers() -> list[Answer]:
    first = chat(
        "What is a just wage?",
        [
            citation(0, TRICKY_TITLE, "45"),
            citation(0, TRICKY_TITLE, "46"),
            citation(
                1,
                "Catechism of the Catholic Church",
                "2434",
                author="Catholic Church",
                year="1992",
                url="https://example.org/ccc",
            ),
        ],
        "A wage must support a family [^1][^2]. See also [1].",
    )
    second = chat(
        "And property?",
        [
            citation(
                0,
                "Catechism of the Catholic Church",
                "2403",
                author="Catholic Church",
                year="1992",
                url="https://example.org/ccc",
            ),
            citation(1, "Quadragesimo Anno", "49", author="Pius XI", year="1931-1932"),
        ],
        "Property has a social function [^1][^2].",
    )
    refs = References.from_response(
        {
            "correlate_dataset": [
                {
                    "content": "Refunds in 5 days.",
                    "data_name": "policy.pdf",
                    "score": 0.9,
                    "source_url": "https://example.com/policy.pdf",
                    "data_id": "d1",
                },
                {
                    "content": "Exchanges in 30 days.",
                    "data_name": "policy.pdf",
                    "score": 0.7,
                    "source_url": "https://example.com/policy.pdf",
                    "data_id": "d2",
                },
            ]
        },
        message_id="m1",
    )
    bot = Answer(provider="gptbots", text="Refunds take 5 days.", question="Refunds?",
                 id="m1", references=refs)  # fmt: skip
    return [first, second, bot]


# -- a small BibTeX reader ------------------------------------------------------------------------
def read_bibtex(text: str) -> dict[str, tuple[str, dict[str, str]]]:
    """``{key: (type, {field: value})}``; values keep their LaTeX, braces must balance."""
    entries: dict[str, tuple[str, dict[str, str]]] = {}
    pos = 0
    while (m := re.compile(r"@(\w+)\{([^,\s]+),").search(text, pos)) is not None:
        kind, key, i = m.group(1), m.group(2), m.end()
        fields: dict[str, str] = {}
        while True:
            fm = re.compile(r"\s*(\w+)\s*=\s*\{").match(text, i)
            if fm is None:
                break
            depth, j = 1, fm.end()
            while depth:
                ch = text[j]
                if ch == "\\":
                    j += 2
                    continue
                depth += {"{": 1, "}": -1}.get(ch, 0)
                j += 1
            fields[fm.group(1)] = text[fm.end() : j - 1]
            i = j + 1 if text[j] == "," else j
        end = re.compile(r"\s*\}").match(text, i)
        assert end is not None, f"entry {key} is not closed"
        assert key not in entries, f"duplicate key {key}"
        entries[key] = (kind, fields)
        pos = end.end()
    return entries


_UNLATEX = {
    r"\textbackslash{}": "\\",
    r"\textasciitilde{}": "~",
    r"\textasciicircum{}": "^",
    r"\{": "{",
    r"\}": "}",
    r"\&": "&",
    r"\%": "%",
    r"\$": "$",
    r"\#": "#",
    r"\_": "_",
}


def unlatex(text: str) -> str:
    return re.sub("|".join(re.escape(k) for k in _UNLATEX), lambda m: _UNLATEX[m.group(0)], text)


# -- one answer -----------------------------------------------------------------------------------
def test_markdown(answers: list[Answer], tmp_path: Path) -> None:
    path = export_answer(answers[0], tmp_path / "answer.md")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# What is a just wage?\n")
    assert "[^1]" in text and "[^2]" in text
    assert re.search(r"^\[\^1\]:", text, re.MULTILINE)
    assert "Catechism of the Catholic Church" in text


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_a_standalone_page(answers: list[Answer], tmp_path: Path) -> None:
    evil = chat("<script>alert(1)</script>?", [citation(0, "<b>T</b>", "1")], "Hi [^1].")
    for answer in (answers[0], evil):
        text = export_answer(answer, tmp_path / "a.html").read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
        parser = _Collect()
        parser.feed(text)
        assert parser.tags[:4] == ["html", "head", "meta", "meta"]
        assert "script" not in parser.tags
        assert "title" in parser.tags and "body" in parser.tags
    assert "&lt;script&gt;" in text


def test_json_round_trip(answers: list[Answer], tmp_path: Path) -> None:
    for answer in answers[:2]:
        data = json.loads(export_answer(answer, tmp_path / "a.json").read_text(encoding="utf-8"))
        again = parse_response(data["response"], provider=data["provider"],
                                     question=data["question"])  # fmt: skip
        assert again == answer
    data = json.loads(export_answer(answers[2], tmp_path / "b.json").read_text(encoding="utf-8"))
    assert len(data["correlate"]["correlate_dataset"]) == 2


def test_unknown_suffixes(answers: list[Answer], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.md, \.markdown, \.html"):
        export_answer(answers[0], tmp_path / "a.docx")
    with pytest.raises(ValueError, match=r"\.csv, \.parquet, \.bib, \.json"):
        export_citations(answers, tmp_path / "a.xlsx")


# -- sources of many answers ----------------------------------------------------------------------
def test_csv(answers: list[Answer], tmp_path: Path) -> None:
    path = export_citations(answers, tmp_path / "refs.csv")
    frame = pl.read_csv(path)
    assert frame.columns == [name for name, _ in SOURCE_COLUMNS]
    assert frame.height == 3 + 2 + 2
    assert frame.filter(pl.col("kind") == "knowledge chunk")["score"].to_list() == [0.9, 0.7]
    assert TRICKY_TITLE in frame["document_title"].to_list()
    chunks = frame.filter(pl.col("kind") == "knowledge chunk")
    assert chunks["cited_text"].to_list() == ["Refunds in 5 days.", "Exchanges in 30 days."]
    assert chunks["data_id"].to_list() == ["d1", "d2"]
    assert chunks["document_reference"].null_count() == 2


def test_parquet_round_trip(answers: list[Answer], tmp_path: Path) -> None:
    mixed = [answers[0], Failed("q", RuntimeError("x"), 1), None, *answers[1:]]
    path = export_citations(mixed, tmp_path / "refs.parquet")  # type: ignore[arg-type]
    assert_frame_equal(pl.read_parquet(path), export_frame(answers))
    empty = export_citations([], tmp_path / "empty.parquet")
    assert pl.read_parquet(empty).schema == export_frame([]).schema


def test_bibtex_one_entry_per_document(answers: list[Answer], tmp_path: Path) -> None:
    path = export_citations(answers, tmp_path / "refs.bib")
    entries = read_bibtex(path.read_text(encoding="utf-8"))
    titles = sorted(unlatex(f["title"]) for _, f in entries.values())
    assert titles == sorted(
        [TRICKY_TITLE, "Catechism of the Catholic Church", "Quadragesimo Anno", "policy.pdf"]
    )
    by_title = {unlatex(f["title"]): (k, f) for k, (_, f) in entries.items()}
    key, rerum = by_title[TRICKY_TITLE]
    assert key == "leo1891rerumnovarum"
    assert rerum["author"] == "{Leo XIII}" and rerum["year"] == "1891"
    assert rerum["url"] == "https://example.org/0"
    assert unlatex(rerum["note"]) == "Cited at: 45, 46"
    ccc = by_title["Catechism of the Catholic Church"][1]
    assert ccc["author"] == "{Catholic Church}" and unlatex(ccc["note"]) == "Cited at: 2434, 2403"
    assert by_title["Quadragesimo Anno"][1]["year"] == "1931-1932"
    assert all(kind == "misc" for kind, _ in entries.values())


def test_bibtex_keys_are_unique_and_escaping_balances() -> None:
    titles = ["Same Title", "Same Title Again", "Same Title Once More"]
    same = [
        chat(f"q{i}", [citation(0, title, "1", url=f"https://example.org/{i}")], "t")
        for i, title in enumerate(titles)
    ]
    same += [chat("q9", [citation(0, "Same Title", "2", url="https://other")], "t")]
    entries = read_bibtex(bibtex(same))
    # The two "Same Title" passages are one work, whatever page each links to.
    assert len(entries) == 3
    assert sorted(entries) == ["leo1891sametitle", "leo1891sametitlea", "leo1891sametitleb"]
    (one,) = [fields for _, fields in entries.values() if fields["title"] == "Same Title"]
    assert one["url"] == "https://example.org/0" and one["note"] == "Cited at: 1, 2"
    assert latex_escape("a{b}c") == "a{b}c" and latex_escape("a}b{c") == "abc"


def test_csl_json(answers: list[Answer], tmp_path: Path) -> None:
    items = json.loads(export_citations(answers, tmp_path / "refs.json").read_text("utf-8"))
    assert len(items) == 4
    assert len({item["id"] for item in items}) == 4
    by_title = {item["title"]: item for item in items}
    rerum = by_title[TRICKY_TITLE]
    assert rerum["type"] == "document"
    assert rerum["author"] == [{"literal": "Leo XIII"}]
    assert rerum["issued"] == {"date-parts": [[1891]]}
    assert rerum["URL"] == "https://example.org/0"
    assert by_title["Quadragesimo Anno"]["issued"] == {"date-parts": [[1931], [1932]]}
    assert "issued" not in by_title["policy.pdf"]


def test_exports_of_live_answers(server: ProviderServer, tmp_path: Path) -> None:
    client = Magisterium(api_key="sk-test", base_url=server.base_url("magisterium"))
    live = [client.ask(s.question) for s in server.samples("magisterium")]
    for suffix in (".csv", ".parquet", ".bib", ".json"):
        path = export_citations(live, tmp_path / f"live{suffix}", include_samples=True)
        assert path.stat().st_size > 0
    entries = read_bibtex((tmp_path / "live.bib").read_text("utf-8"))
    works = ck.sources_frame(live)["work_id"]
    assert works.null_count() == 0 and len(entries) == works.n_unique()
    assert pl.read_parquet(tmp_path / "live.parquet").height == sum(len(a.citations) for a in live)
    for answer in live:
        assert export_answer(answer, tmp_path / "a.md").read_text("utf-8").startswith("# ")


# -- one entry per work ---------------------------------------------------------------------------
LAUDATO = "https://www.vatican.va/content/francesco/{}/encyclicals/documents/papa-francesco_20150524_enciclica-laudato-si.html"
CATECHISM = [
    # (title, author, year, url, paragraph): the Catechism as five titles in five languages.
    ("Catechism of the Catholic Church", "Catholic Church", "1992",
     "https://www.vatican.va/archive/ENG0015/__P8B.HTM", "2427"),
    ("Catecismo da Igreja Católica", "Igreja Católica", "1992",
     "https://www.vatican.va/archive/cathechism_po/index_new/p3s2cap2_2196-2557_po.html", "2428"),
    ("Catecismo de la Iglesia Católica", "Iglesia católica", "1992",
     "https://www.vatican.va/archive/catechism_sp/p3s2c2a7_sp.html", "2402"),
    ("Catéchisme de l'Église catholique", "Église catholique", "1997",
     "https://www.vatican.va/archive/FRA0013/__P8B.HTM", "2403"),
    ("Katechismus der Katholischen Kirche", "Katholische Kirche", "1993",
     "https://www.vatican.va/archive/DEU0035/__P8B.HTM", "2434"),
]  # fmt: skip


def cited(question: str, *sources: tuple[str, str, str, str, str]) -> Answer:
    """One Magisterium answer citing ``sources`` (title, author, year, url, reference)."""
    return chat(
        question,
        [
            citation(i, title, ref, author=author, year=year, url=url)
            for i, (title, author, year, url, ref) in enumerate(sources)
        ],
        " ".join(f"Claim [^{i + 1}]." for i in range(len(sources))),
    )


def parsed_bibtex(answers: list[Answer], **options: Any) -> dict[str, Any]:
    """The BibTeX of ``answers`` as pybtex reads it: ``{key: entry}``."""
    from pybtex.database import parse_string

    return dict(parse_string(bibtex(answers, **options), "bibtex").entries)


def the_work(answers: list[Answer], work_id: str | None = None, **options: Any) -> dict[str, Any]:
    """The row of ``ck.works_frame`` for ``work_id`` (or its only row)."""
    works = ck.works_frame(answers, **options)
    if work_id is not None:
        works = works.filter(pl.col("work_id") == work_id)
    (row,) = works.to_dicts()
    return row


def test_one_work_in_two_languages_is_one_bibtex_entry() -> None:
    answers = [
        cited("Care for creation?", ("Laudato si'", "Pope Francis", "2015",
                                     LAUDATO.format("en"), "no. 139")),
        cited("Cuidado da criação?", ("Carta Encíclica Laudato si' sobre o cuidado da casa comum",
                                      "Papa Francisco", "2015", LAUDATO.format("pt"), "n. 156")),
    ]  # fmt: skip
    entries = parsed_bibtex(answers)
    assert len(entries) == 1
    ((key, entry),) = entries.items()
    work = the_work(answers)
    assert unlatex(entry.fields["title"]) == work["work"]
    assert [str(p) for p in entry.persons["author"]] == ["{" + work["author"] + "}"]
    assert entry.fields["year"] == str(work["year"]) == "2015"
    assert entry.fields["url"] == LAUDATO.format("en").replace("www.", "")
    assert entry.fields["note"] == "Cited at: no. 139, n. 156"
    assert key.startswith("francis2015")  # the name, not the honorific
    (item,) = csl_json(answers)
    assert item["title"] == work["work"] and item["author"] == [{"literal": work["author"]}]
    assert item["issued"] == {"date-parts": [[2015]]} and item["id"] == key


def test_the_catechism_under_five_titles_is_one_entry(tmp_path: Path) -> None:
    answers = [cited(f"q{i}", source) for i, source in enumerate(CATECHISM)]
    answers.append(cited("q5", CATECHISM[0]))  # English cited most
    entries = parsed_bibtex(answers)
    assert len(entries) == 1
    ((key, entry),) = entries.items()
    work = the_work(answers, "catechism")
    assert work["citations"] == 6
    assert unlatex(entry.fields["title"]) == work["work"] == "Catechism of the Catholic Church"
    assert [str(p) for p in entry.persons["author"]] == ["{" + work["author"] + "}"]
    # The work's year (the alias table's first), as a source wrote it; not 1993 or 1997.
    assert entry.fields["year"] == str(work["year"])
    assert entry.fields["url"] == "https://vatican.va/archive/ENG0015/__P8B.HTM"
    assert entry.fields["note"] == "Cited at: 2427, 2428, 2402, 2403, 2434"
    assert key == f"catholic{work['year']}catechismcatholic"
    # The CSV keeps every source, each with the one work.
    rows = pl.read_csv(export_citations(answers, tmp_path / "ccc.csv"))
    assert rows.height == 6 and rows["work_id"].unique().to_list() == ["catechism"]
    assert rows["document_title"].n_unique() == 5


def test_a_language_asked_for_names_the_work_in_it() -> None:
    answers = [cited(f"q{i}", source) for i, source in enumerate(CATECHISM)]
    for lang in ("pt", "de"):
        (entry,) = parsed_bibtex(answers, lang=lang).values()
        work = the_work(answers, "catechism", lang=lang)
        assert unlatex(entry.fields["title"]) == work["work"]
        assert [str(p) for p in entry.persons["author"]] == ["{" + work["author"] + "}"]
        (item,) = csl_json(answers, lang=lang)
        assert item["title"] == work["work"]
    portuguese = the_work(answers, "catechism", lang="pt")
    assert portuguese["work"] != the_work(answers, "catechism", lang="de")["work"]


def test_a_commentary_with_the_same_title_by_another_author_is_its_own_entry() -> None:
    encyclical = (
        "Laborem Exercens",
        "John Paul II",
        "1981",
        "https://www.vatican.va/content/john-paul-ii/en/encyclicals/documents/"
        "hf_jp-ii_enc_14091981_laborem-exercens.html",
        "no. 6",
    )
    commentary = (
        "Laborem Exercens",
        "Gregory Baum",
        "1982",
        "https://example.org/baum/laborem-exercens",
        "p. 12",
    )
    titled = (
        "Laborem Exercens: A Commentary",
        "Gregory Baum",
        "1982",
        "https://example.org/baum/laborem-exercens#ch2",
        "p. 40",
    )
    answers = [cited("Work?", encyclical, commentary), cited("Work again?", titled, encyclical)]
    entries = parsed_bibtex(answers)
    works = ck.works_frame(answers)
    assert len(entries) == works.height == 2
    by_author = {str(e.persons["author"][0]): e for e in entries.values()}
    assert set(by_author) == {"{John Paul II}", "{Gregory Baum}"}
    assert by_author["{John Paul II}"].fields["year"] == "1981"
    assert by_author["{John Paul II}"].fields["note"] == "Cited at: no. 6"
    baum = by_author["{Gregory Baum}"]
    assert baum.fields["year"] == "1982" and baum.fields["note"] == "Cited at: p. 12, p. 40"
    assert baum.fields["url"] == "https://example.org/baum/laborem-exercens"


def test_knowledge_chunks_and_citations_of_one_document_share_an_entry() -> None:
    refs = References.from_response(
        {
            "correlate_dataset": [
                {"content": "Refunds.", "data_name": "policy.pdf", "score": 0.9,
                 "source_url": "https://example.com/policy.pdf", "data_id": "d1"},
            ]
        },
        message_id="m2",
    )  # fmt: skip
    cite = {
        "index": "1",
        "name": "policy.pdf",
        "url": "https://example.com/policy.pdf?utm_source=bot",
        "content": "Refunds in 5 days.",
    }
    body = {
        "message_id": "m2",
        "output": [{"content": {"text": "Refunds take 5 days $[1]$."}}],
        "citations": [cite],
    }
    bot = parse_response(body, provider="gptbots", question="Refunds?")
    bot = dataclasses.replace(bot, references=refs)
    src = ck.sources_frame([bot])
    assert sorted(src["kind"]) == ["citation", "knowledge chunk"]
    (doc,) = documents_by_work([bot])
    assert doc.title == "policy.pdf" and doc.url == "https://example.com/policy.pdf"
    assert doc.chunks == ["d1"] and doc.note == "Knowledge chunks: d1"
    assert doc.work_id == src["work_id"][0] and doc.providers == ["gptbots"]


def test_the_csv_is_the_sources_frame_with_two_more_columns(
    answers: list[Answer], tmp_path: Path
) -> None:
    frame = pl.read_parquet(export_citations(answers, tmp_path / "all.parquet"))
    corpus = ck.sources_frame(answers)
    assert set(frame.columns) == set(corpus.columns) | {"document_index", "cited_text_heading"}
    assert_frame_equal(frame.select(corpus.columns), corpus)
    cited = frame.filter(pl.col("kind") != "knowledge chunk")
    citations = ck.citations_frame(answers)
    assert_frame_equal(
        cited.select("document_index", "cited_text_heading"),
        citations.select("document_index", "cited_text_heading"),
    )
    assert frame.filter(pl.col("kind") == "knowledge chunk")["document_index"].null_count() == 2


def test_the_entry_names_the_works_author_not_its_first_sources() -> None:
    (title, _, year, url, _) = CATECHISM[0]
    first = cited("q0", (title, "John Paul II", year, url, "11"))  # he promulgated it
    rest = [cited(f"q{i}", CATECHISM[0]) for i in range(1, 4)]
    (doc,) = documents_by_work([first, *rest])
    work = the_work([first, *rest], "catechism")
    assert (doc.author, doc.author_id) == (work["author"], work["author_id"])
    assert doc.author_id == "catholic-church" and doc.places == ["11", "2427"]


def test_the_export_columns_are_the_corpus_columns_and_two_more() -> None:
    from citekit.data.corpus.works import SOURCES_SCHEMA

    names = [name for name, _ in SOURCE_COLUMNS]
    assert [n for n in names if n in SOURCES_SCHEMA] == SOURCES_SCHEMA.names()
    assert sorted(set(names) - set(SOURCES_SCHEMA.names())) == [
        "cited_text_heading",
        "document_index",
    ]
    assert {n: t for n, t in export_frame([]).schema.items() if n in SOURCES_SCHEMA} == dict(
        SOURCES_SCHEMA
    )


# -- recorded samples are left out unless asked ---------------------------------------------------
def test_exports_leave_recorded_samples_out_unless_asked(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citekit.data.io.exports import SamplesLeftOut

    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    client = Magisterium(api_key="sk-test", base_url=server.base_url("magisterium"))
    recorded = [client.ask("What is the best pizza topping?")]  # another question's sample
    live = chat("What is a live question?", [citation(0, "Rerum Novarum", "1")], "Yes [1].")
    assert recorded[0].sample is not None and live.sample is None
    ck.log.record(live, request={"model": "m", "messages": [{"role": "user", "content": "q"}]})

    for suffix in (".csv", ".bib", ".json", ".parquet"):
        with pytest.warns(SamplesLeftOut, match="left out 1 recorded sample .*include_samples"):
            export_citations([*recorded, live], tmp_path / f"mixed{suffix}")
    [(_, fields)] = read_bibtex((tmp_path / "mixed.bib").read_text("utf-8")).values()
    assert "Rerum Novarum" in fields["title"]
    assert pl.read_csv(tmp_path / "mixed.csv")["document_title"].to_list() == ["Rerum Novarum"]
    everything = export_citations([*recorded, live], tmp_path / "all.csv", include_samples=True)
    assert pl.read_csv(everything).height == len(recorded[0].citations) + 1

    # The log's dataset: the same rule, the count said.
    with pytest.warns(SamplesLeftOut, match="left out 1 recorded sample"):
        written = ck.to_parquet(ck.log, tmp_path / "ds", progress=False)
    assert written.rows["answers"] == 1
    assert ck.scan_answers(tmp_path / "ds").collect()["question"].to_list() == [live.question]
    whole = ck.to_parquet(ck.log, tmp_path / "whole", progress=False, include_samples=True)
    assert whole.rows["answers"] == 2
    only = ck.to_parquet(ck.log.where(samples=True), tmp_path / "only", progress=False)
    assert only.rows["answers"] == 1  # a source that chose by samples= itself: no warning
