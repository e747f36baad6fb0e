"""Citation health (``ck.health_frame``): the recorded answers of all three providers, asked
through the real clients from the loopback server, answers built by hand for the cases the
samples do not hold, and properties on arbitrary answers."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.data.corpus.health import HEALTH_SCHEMA, _overlapping
from citekit.data.frames.sources import load_answers
from citekit.testing import ProviderServer, default_data_dir
from citekit.text.reader import read
from citekit.text.sentences import Sentence, sentences
from citekit.wire.maritaca import link_citations
from tests.budget import examples
from tests.conftest import SECRET, sample_records
from tests.data.identity.numbered import numbered_titles

MAGISTERIUM = {stem: rec for stem, rec in sample_records("magisterium")}


def row(frame: pl.DataFrame, i: int) -> dict[str, Any]:
    return frame.row(i, named=True)


def expected_marks(answer: ck.Answer) -> tuple[list[int], list[int], int, int]:
    """unmarked, unlisted, sentences and cited sentences of a marker-cited answer, from the
    answer itself (the text reader and the splitter), not from the frame."""
    listed = {c.marker for c in answer.citations}
    marked = read(answer.text).numbers
    found = sentences(answer.text)
    return (
        sorted(listed - marked),
        sorted(marked - listed),
        len(found),
        sum(1 for s in found if s.markers),
    )


# -- the recorded answers, through the clients ------------------------------------------------


@pytest.fixture(scope="module")
def magisterium_answers(server: ProviderServer) -> dict[str, ck.Answer]:
    mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))
    out = {}
    for stem, rec in MAGISTERIUM.items():
        if "blocked" in stem:  # the recorded content filter says so
            with pytest.warns(ck.ContentFilteredWarning):
                out[stem] = mg.ask(rec["question"])
        else:
            out[stem] = mg.ask(rec["question"])
    return out


def test_magisterium_samples(magisterium_answers: dict[str, ck.Answer]) -> None:
    stems = list(magisterium_answers)
    answers = list(magisterium_answers.values())
    health = ck.health_frame(answers)
    assert health.schema == HEALTH_SCHEMA
    assert health.height == len(answers)  # every answer, also the blocked one without text
    assert health["answer_id"].to_list() == [a.id for a in answers]
    for i, (stem, answer) in enumerate(zip(stems, answers, strict=True)):
        got = row(health, i)
        unmarked, unlisted, n, cited = expected_marks(answer)
        assert (got["unmarked"], got["unlisted"]) == (unmarked, unlisted), stem
        assert (got["sentences"], got["cited_sentences"]) == (n, cited), stem
        assert got["n_unmarked"] == len(unmarked) and got["n_unlisted"] == len(unlisted)
        assert got["sources"] == len({c.marker for c in answer.citations})
        assert got["chunks"] is None  # Magisterium retrieves no knowledge chunks
        assert got["coverage"] == (cited / n if n else None)
    by_stem = dict(zip(stems, health.iter_rows(named=True), strict=True))
    # The recorded defects: a marker with no citation, citations no marker points to.
    assert by_stem["09_marriage"]["unlisted"] == [9]
    assert by_stem["04_just_wage"]["unmarked"] == [6]
    assert by_stem["10_conscience"]["unmarked"] == [5]
    assert sum(h["n_unlisted"] for h in by_stem.values()) == 1
    blocked = by_stem["17_off_topic_blocked"]
    assert blocked["sentences"] == 0 and blocked["coverage"] is None and blocked["sources"] == 0


def test_definition_lines_are_not_sentences(magisterium_answers: dict[str, ck.Answer]) -> None:
    answer = magisterium_answers["08_grace_and_justification"]
    assert read(answer.text).definitions  # the sample ends with [^N]: lines
    health = row(ck.health_frame(answer), 0)
    assert all(not s.text.startswith("[^") for s in sentences(answer.text))
    assert health["unmarked"] == [] and health["unlisted"] == []
    assert 0 < health["coverage"] < 1


def test_gptbots_corner_citations_and_chunks(server: ProviderServer) -> None:
    gb = ck.GPTBots(api_key=SECRET, base_url=server.base_url("gptbots"))
    records = dict(sample_records("gptbots"))
    cited = gb.ask(records["11_travel_policy_corner_citations"]["question"], citations=True)
    plain = gb.ask(records["02_great_wall_builders_zh"]["question"])
    none = gb.ask(records["10_buttermilk_substitute_no_sources"]["question"])
    health = ck.health_frame([cited, plain, none])
    first, second, third = health.iter_rows(named=True)
    assert first["sources"] == 3 and first["unmarked"] == [] and first["unlisted"] == []
    assert first["coverage"] == 1.0  # every sentence of that answer carries a corner mark
    assert first["chunks"] == len(cited.references or ())
    # Chunks are retrieved, never marked: counted, not called unmarked.
    assert second["chunks"] == len(plain.references or ()) > 0
    assert second["sources"] == 0 and second["unmarked"] == [] and second["cited_sentences"] == 0
    assert second["sentences"] == len(sentences(plain.text)) > 1  # CJK sentence ends
    assert third["chunks"] == 0 and third["sources"] == 0


def test_maritaca_web_sources_cite_the_sentences_they_are_linked_from(
    server: ProviderServer,
) -> None:
    mt = ck.Maritaca(api_key=SECRET, base_url=server.base_url("maritaca"))
    records = dict(sample_records("maritaca"))
    web = mt.ask(records["08_pix_web_search"]["question"], web_search=True)
    ocean = mt.ask(records["09_ipca_data_ocean"]["question"], data_ocean=True)
    plain = mt.ask(records["01_pix"]["question"])
    health = ck.health_frame([web, ocean, plain])
    for got, answer in zip(health.iter_rows(named=True), (web, ocean, plain), strict=True):
        links = [(link.start, link.end) for link in read(answer.text).links]
        found = sentences(answer.text)
        linked = [any(a < s.end and s.start < b for a, b in links) for s in found]
        assert got["sentences"] == len(found)
        assert got["cited_sentences"] == sum(linked)
        assert got["sources"] == len({c.marker for c in answer.citations})
        assert got["unmarked"] == [] and got["unlisted"] == [] and got["chunks"] is None
    assert row(health, 0)["sources"] == 4 and row(health, 0)["cited_sentences"] >= 4
    assert row(health, 2)["coverage"] == 0.0  # an answer without sources cites nothing


def test_the_sample_folder_gives_one_row_per_answer() -> None:
    answers = [a for a in load_answers(default_data_dir()) if isinstance(a, ck.Answer)]
    health = ck.health_frame(default_data_dir())
    assert health.height == len(answers)
    assert health.select(pl.col("provider").unique().sort()).to_series().to_list() == [
        "gptbots",
        "magisterium",
        "maritaca",
    ]
    coverage = health["coverage"].drop_nulls()
    assert ((coverage >= 0) & (coverage <= 1)).all()


# -- answers built by hand --------------------------------------------------------------------


def cite(
    marker: int, title: str, author: str | None = None, year: str | None = None
) -> ck.Citation:
    return ck.Citation(
        cited_text=f"A passage of {title}.",
        document_index=marker - 1,
        document_title=title,
        document_author=author,
        document_year=year,
    )


def test_one_work_cited_under_two_numbers() -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="Work is for man.[^1] Wages must be just.[^2] The family needs them.[^3]",
        citations=(
            cite(1, "Catechism of the Catholic Church", "Catholic Church", "1992"),
            cite(2, "A Study of Wages", "Jane Roe", "2001"),
            cite(3, "Catecismo da Igreja Católica", "Igreja Católica", "1992"),
        ),
    )
    src = ck.sources_frame(answer)
    assert src["work_id"].to_list()[0] == src["work_id"].to_list()[2] == "catechism"
    catechism = src["work"][0]
    got = row(ck.health_frame(answer), 0)
    assert got["same_work"] == [f"{catechism} [1, 3]"] and got["n_same_work"] == 1
    assert got["coverage"] == 1.0 and got["sources"] == 3
    # A hand assignment splits the Portuguese title off: two works, nothing repeated.
    split = {"works": {"Catecismo da Igreja Católica": "my-catecismo"}}
    assert ck.health_frame(answer, aliases=split)["n_same_work"].to_list() == [0]


def test_rows_follow_the_answers_even_with_repeated_or_missing_ids() -> None:
    listed = ck.Answer(provider="magisterium", text="Cited.[^2]", citations=(cite(1, "A"),))
    bare = ck.Answer(provider="magisterium", text="Nothing cited here.")
    other = ck.Answer(
        provider="magisterium", text="One.[^1] Two.", citations=(cite(1, "B"), cite(2, "C"))
    )
    health = ck.health_frame([listed, bare, other, listed])
    assert health["unmarked"].to_list() == [[1], [], [2], [1]]
    assert health["unlisted"].to_list() == [[2], [], [], [2]]
    assert health["sources"].to_list() == [1, 0, 2, 1]
    assert health["coverage"].to_list() == [1.0, 0.0, 0.5, 1.0]


def test_markers_in_code_do_not_count() -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="Intro.\n\n    code [1]\n\nText [2].",
        citations=(cite(1, "A"), cite(2, "B")),
    )
    got = row(ck.health_frame(answer), 0)
    assert got["unmarked"] == [1] and got["unlisted"] == []
    assert (got["sentences"], got["cited_sentences"]) == (2, 1)


def test_a_marker_in_a_maritaca_answer_points_to_no_web_source() -> None:
    text = "Veja o [Banco Central](https://www.bcb.gov.br/pix) [1]. Outra frase."
    answer = ck.Answer(provider="maritaca", text=text, citations=link_citations(text))
    got = row(ck.health_frame(answer), 0)
    assert got["sources"] == 1 and got["unmarked"] == [] and got["unlisted"] == [1]
    assert (got["sentences"], got["cited_sentences"]) == (2, 1)


def test_a_web_source_neither_linked_nor_annotated_in_the_text_is_unmarked() -> None:
    stray = ck.Citation(
        cited_text="Agência Brasil",
        document_index=0,
        document_title="Agência Brasil",
        source_url="https://agenciabrasil.ebc.com.br/x",
        raw={"type": "url_citation", "start_index": 500, "end_index": 600},
    )
    answer = ck.Answer(provider="maritaca", text="Sem links. Nenhum.", citations=(stray,))
    got = row(ck.health_frame(answer), 0)
    assert got["unmarked"] == [1] and got["cited_sentences"] == 0


def test_no_answers_give_a_typed_empty_frame() -> None:
    empty = ck.health_frame([])
    assert empty.height == 0 and empty.schema == HEALTH_SCHEMA
    refs = ck.References.from_response({"correlate_dataset": []})
    assert ck.health_frame(refs).height == 0  # chunks without their answer: no answer, no row


# -- properties ---------------------------------------------------------------------------------

TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            [" ", ". ", "! ", "。", "\n", "\n\n", "- ", "# ", "| ", "`", "    ", "[^1]", "[2]"]
        ),
        st.sampled_from(["$[3]$", "[^4]: note\n", "[x](https://e.org/a)", "Word", "cf. n. 3"]),
        st.text(max_size=6),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=examples(200), deadline=None)
@given(
    text=TEXT,
    markers=st.lists(st.integers(min_value=1, max_value=6), max_size=6),
    provider=st.sampled_from(["magisterium", "gptbots"]),
)
def test_any_answer_gives_consistent_health(text: str, markers: list[int], provider: str) -> None:
    answer = ck.Answer(
        provider=provider, text=text, citations=tuple(cite(m, f"Work {m}") for m in markers)
    )
    got = row(ck.health_frame(answer), 0)
    listed = set(markers)
    assert 0 <= got["cited_sentences"] <= got["sentences"]
    assert got["coverage"] is None if got["sentences"] == 0 else 0 <= got["coverage"] <= 1
    assert set(got["unmarked"]) <= listed and not set(got["unlisted"]) & listed
    assert got["unlisted"] == sorted(read(answer.text).numbers - listed)
    assert got["sources"] == len(listed)
    for name in ("unmarked", "unlisted", "same_work"):
        assert got[f"n_{name}"] == len(got[name])


@settings(max_examples=examples(150), deadline=None)
@given(text=TEXT)
def test_a_maritaca_answer_with_its_links_as_sources_never_has_unmarked_ones(text: str) -> None:
    answer = ck.Answer(provider="maritaca", text=text, citations=link_citations(text))
    got = row(ck.health_frame(answer), 0)
    assert got["unmarked"] == []
    assert got["sources"] == len(answer.citations)
    assert got["coverage"] is None or 0 <= got["coverage"] <= 1


@settings(max_examples=examples(100))
@given(titles=numbered_titles())
def test_numbered_works_with_two_numbers_are_never_the_same_work(
    titles: tuple[str, str, str],
) -> None:
    answer = ck.Answer(
        provider="magisterium",
        text="One.[^1] Two.[^2] Three.[^3]",
        citations=tuple(cite(i, t, "Augustine of Hippo") for i, t in enumerate(titles, 1)),
    )
    got = row(ck.health_frame(answer), 0)
    # Only the first and the third, of one number, are one work cited under two markers.
    assert got["n_same_work"] == 1, (titles, got["same_work"])
    assert got["same_work"][0].endswith("[1, 3]")


# -- sentences against spans: bounded work -------------------------------------------------------


class Counted(int):
    """An offset that counts every comparison made with it (both ways round: a subclass's
    reflected comparison is tried first)."""

    made = 0

    def _count(self, other: object, op: str) -> bool:
        Counted.made += 1
        result: bool = getattr(int(self), op)(int(other))  # type: ignore[call-overload]
        return result

    def __lt__(self, other: object) -> bool:
        return self._count(other, "__lt__")

    def __le__(self, other: object) -> bool:
        return self._count(other, "__le__")

    def __gt__(self, other: object) -> bool:
        return self._count(other, "__gt__")

    def __ge__(self, other: object) -> bool:
        return self._count(other, "__ge__")

    def __eq__(self, other: object) -> bool:
        return self._count(other, "__eq__")

    __hash__ = int.__hash__


def linked_text(n: int) -> str:
    """``n`` sentences, each linking a page of its own."""
    return " ".join(f"Claim {i} is [documented](https://e.org/{i})." for i in range(n))


def span_comparisons(n: int) -> int:
    """Comparisons of span offsets made to tell which of ``n`` linked sentences cite."""
    text = linked_text(n)
    spans = [(Counted(link.start), Counted(link.end)) for link in read(text).links]
    found = sentences(text)
    Counted.made = 0
    assert all(_overlapping(found, spans))
    return Counted.made


def test_sentences_find_their_spans_in_n_log_n_comparisons() -> None:
    """2,000 and 8,000 linked sentences: the comparisons grow as n log n (x4.7 for four times
    the sentences), not as sentences x spans (x16)."""
    small, big = span_comparisons(2_000), span_comparisons(8_000)
    assert big <= 5 * small
    assert big <= 4 * 16_000 * (16_000).bit_length()


def test_a_long_linked_answer_counts_every_cited_sentence() -> None:
    text = linked_text(2_000)
    answer = ck.Answer(provider="maritaca", text=text, citations=link_citations(text))
    got = row(ck.health_frame(answer), 0)
    assert got["sentences"] == got["cited_sentences"] == got["sources"] == 2_000
    assert got["n_unmarked"] == 0


SPAN = st.tuples(st.integers(0, 60), st.integers(0, 12)).map(lambda s: (s[0], s[0] + s[1]))


@settings(max_examples=examples(300))
@given(bounds=st.lists(SPAN, max_size=12), spans=st.lists(SPAN, max_size=12))
def test_overlapping_agrees_with_every_pair(
    bounds: list[tuple[int, int]], spans: list[tuple[int, int]]
) -> None:
    """Any sentences (empty ones too) and spans (overlapping, touching, empty, repeated): a
    sentence overlaps exactly when some span does, pair by pair."""
    found = [Sentence(start, end, "", ()) for start, end in sorted(bounds)]
    expected = [any(a < s.end and s.start < b for a, b in spans) for s in found]
    assert _overlapping(found, spans) == expected
