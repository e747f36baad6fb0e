"""The explorer (citekit.notebook.explorer): filters, paging, selection, chart, detail."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from citekit import Answer, Citation, References, charts, citations_frame, explore, references_frame
from citekit.notebook.explorer import ALL, Explorer
from citekit.wire.parsers import parse_response
from tests.budget import examples
from tests.data.frames.test_loaders import correlate_body, magisterium_response

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def magisterium(answer_id: str, question: str, **changes: Any) -> Answer:
    body = {**magisterium_response(), "id": answer_id, **changes}
    return parse_response(body, provider="magisterium", question=question)


@pytest.fixture()
def answers() -> list[Answer]:
    second = magisterium_response()
    second["citations"] = [
        {
            "cited_text": "Faith and reason are two wings <script>alert(1)</script>.",
            "document_index": 0,
            "document_title": "Fides et Ratio",
            "document_author": "John Paul II",
            "document_year": "1998",
            "source_url": "javascript:alert(1)",
        }
    ]
    second["choices"][0]["message"]["content"] = "Faith seeks understanding [^1]."
    return [
        magisterium("A", "Why is work dignified?"),
        parse_response({**second, "id": "B"}, provider="magisterium", question="Faith and reason?"),
    ]


def test_explore_answers_starts_unfiltered(answers: list[Answer]) -> None:
    ex = explore(answers)
    assert isinstance(ex, Explorer)
    assert ex.kind == "citations"
    assert_frame_equal(ex.frame, citations_frame(answers))
    assert_frame_equal(ex.filtered, ex.frame)
    assert ex.source is None and ex.min_score is None
    assert ex.author.value == ALL
    labels = [label for label, _ in ex.author.options]
    # "All authors" counts authors, as the authors chart does; each entry its citations.
    assert labels == [
        "All authors (4)",
        "Leo XIII (2 citations)",
        "unknown author (2 citations)",
        "John Paul II (1 citation)",
        "Thomas Aquinas (1 citation)",
    ]
    assert ex.author.options[0][0] == f"All authors ({charts.authors(ex.frame).data.height})"
    assert (ex.years.min, ex.years.max) == (1270, 1998)
    assert "1–6 of 6 citations" in ex.status.value
    assert "<svg" in ex.chart.value


def test_author_filter(answers: list[Answer]) -> None:
    ex = explore(answers)
    ex.author.value = "Leo XIII"
    assert_frame_equal(ex.filtered, ex.frame.filter(pl.col("document_author") == "Leo XIII"))
    ex.author.value = "unknown author"
    assert ex.filtered["document_author"].to_list() == [None, None]
    assert "(filtered from 6)" in ex.status.value
    ex.author.value = ALL
    assert ex.filtered.height == 6


def test_year_range_drops_undated_only_when_narrowed(answers: list[Answer]) -> None:
    ex = explore(answers)
    ex.years.value = (1800, 1998)
    assert ex.filtered["year"].to_list() == [1891, 1891, 1962, 1998]
    ex.years.value = (1270, 1998)
    assert ex.filtered.height == 6  # the undated citation is back


def test_search_is_case_insensitive_over_text_title_author(answers: list[Answer]) -> None:
    ex = explore(answers)
    ex.search.value = "  FIDES "
    assert ex.filtered["document_title"].to_list() == ["Fides et Ratio"]
    ex.search.value = "aquinas"
    assert ex.filtered["document_author"].to_list() == ["Thomas Aquinas"]
    ex.search.value = "commodity"
    assert ex.filtered["cited_text"].to_list() == ["Labour is not a commodity."]
    ex.search.value = "no such words"
    assert ex.filtered.height == 0
    assert "no citations match" in ex.status.value
    # Nothing to chart: the chart area says so, not an empty frame with a lone "0".
    assert "No citations match these filters" in ex.chart.value and "<svg" not in ex.chart.value
    assert ex.detail.value == ""
    assert ex.selected_answer() is None


def test_filters_combine(answers: list[Answer]) -> None:
    ex = explore(answers)
    ex.author.value = "Leo XIII"
    ex.search.value = "wage"
    assert ex.filtered["cited_text"].to_list() == ["The worker's wage & man's cœur."]
    ex.years.value = (1900, 1998)
    assert ex.filtered.height == 0


def test_table_escapes_and_detail_shows_the_answer(answers: list[Answer]) -> None:
    ex = explore(answers)
    assert "<script>" not in ex.table.value
    assert "&lt;script&gt;" in ex.table.value
    ex.selected.value = 5
    assert ex.selected_answer() is answers[1]
    detail = ex.detail.value
    assert "Fides et Ratio" in detail
    assert "href='javascript" not in detail  # only http(s) URLs become links
    assert 'href="javascript' not in detail
    assert "&lt;script&gt;" in detail and "<script>" not in detail
    assert "Faith and reason?" in detail
    assert answers[1].to_html().split(">", 1)[0].split(" ")[0] in detail  # the rendered answer
    # the table widget knows the selection (its front end marks that row: a browser test)
    assert ex.table.selected == 5 and "<tr data-row='5'" in ex.table.value


def test_paging_and_selection_follow_each_other() -> None:
    many = [magisterium(f"id{i}", f"Question {i}?") for i in range(30)]  # 150 citations
    ex = explore(many, page_size=40)
    assert ex.page.max == 4
    assert ex.table.value.count("<tr data-row") == 40
    ex.page.value = 4
    assert ex.table.value.count("<tr data-row") == 30
    assert "<tr data-row='120'" in ex.table.value
    assert "121–150 of 150 citations" in ex.status.value
    ex.selected.value = 45
    assert ex.page.value == 2
    assert ex.selected_answer() is many[9]
    ex.author.value = "Thomas Aquinas"  # filtering resets paging and selection
    assert (ex.page.value, ex.page.max, ex.selected.value) == (1, 1, 0)
    assert explore(many, page_size=10_000).page_size == 200


def test_chart_follows_filters_and_kind(answers: list[Answer]) -> None:
    ex = explore(answers)
    before = ex.chart.value
    ex.author.value = "Leo XIII"
    assert ex.chart.value != before and "<svg" in ex.chart.value
    ex.chart_kind.value = "years"
    assert "When the cited documents were written" in ex.chart.value
    ex.chart_kind.value = "documents"
    assert "Most cited works" in ex.chart.value  # documents are counted by work
    assert explore(answers, chart=False).chart.value == ""


def test_references_from_gptbots_answers_and_bare_references() -> None:
    refs = References.from_response(correlate_body())
    gpt = Answer(provider="gptbots", text="The wall is old.", id="m1", question="Wall?")
    items: list[Any] = [replace(gpt, references=refs), refs]
    ex = explore(items)
    assert ex.kind == "references"
    assert ex.author is None and ex.years is None
    assert_frame_equal(ex.frame, references_frame(items))
    ex.min_score.value = 0.5
    assert ex.filtered["score"].to_list() == [0.93, 0.93]
    ex.min_score.value = 0.0
    ex.source.value = "unknown source"
    assert ex.filtered["cited_text"].to_list() == ["No score here."] * 2
    ex.source.value = ALL
    ex.search.value = "centuries"
    assert ex.filtered.height == 2
    assert ex.selected_answer() is items[0]
    assert "The wall is old." in ex.detail.value
    ex.selected.value = 1
    assert ex.selected_answer() is None  # the bare References has no answer
    assert "Built over centuries." in ex.detail.value
    assert "Relevance of the retrieved knowledge" in ex.chart.value


def test_explore_frames(answers: list[Answer]) -> None:
    cits = citations_frame(answers)
    ex = explore(cits)
    assert_frame_equal(ex.filtered, cits)
    assert ex.selected_answer() is None
    assert "Labour is not a commodity." in ex.detail.value
    refs = references_frame(References.from_response(correlate_body()))
    assert explore(refs).kind == "references"
    # Both frames have cited_text (one vocabulary): the citation columns tell them apart.
    assert explore(cits.drop("document_index")).kind == "citations"
    assert explore(refs.drop("rank")).kind == "references"
    with pytest.raises(ValueError, match="columns"):
        explore(pl.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="holds citations"):
        explore(cits, kind="references")


def test_explorer_is_a_widget(answers: list[Answer]) -> None:
    import ipywidgets

    ex = explore(answers)
    assert isinstance(ex.widget, ipywidgets.VBox)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert repr(ex) == "<Explorer of 6 citations, 6 shown after filters>"


def test_no_years_disables_the_slider() -> None:
    body = magisterium_response()
    for c in body["citations"]:
        c["document_year"] = None
    ex = explore(parse_response(body, provider="magisterium"))
    assert ex.years.disabled
    ex.search.value = "grace"
    assert ex.filtered.height == 1


@pytest.mark.skipif(not (SAMPLES / "magisterium").is_dir(), reason="sample_data is not present")
def test_sample_data_explorers() -> None:
    ex = explore(SAMPLES)
    assert ex.kind == "citations" and ex.filtered.height > 100
    ex.author.value = ex.author.options[1][1]
    assert 0 < ex.filtered.height < ex.frame.height
    assert "<svg" in ex.chart.value
    refs = explore(SAMPLES, kind="references")
    refs.min_score.value = 0.9
    assert (refs.filtered["score"] >= 0.9).all()
    assert refs.selected_answer() is not None


def test_detail_falls_back_to_escaped_text(
    answers: list[Answer], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Answer, *, strict: bool = False) -> str:
        raise RuntimeError("renderer unavailable")

    monkeypatch.setattr(Answer, "to_html", broken)
    ex = explore(answers, chart=False)
    assert "<pre style='white-space:pre-wrap'>Work has dignity [^1]." in ex.detail.value
    assert "<b>Question:</b> Why is work dignified?" in ex.detail.value


def test_a_passage_reads_as_text_and_its_source_as_a_link() -> None:
    from citekit.notebook.explorer_html import EXPLORER_CSS, row_html

    row = {
        "document_title": "Rerum novarum",
        "marker": 1,
        "cited_text": "The **just wage** is *owed*.",
        "source_url": "https://www.vatican.va/x.html",
    }
    shown = row_html(row, "citations")
    assert "**" not in shown and "<strong>just wage</strong>" in shown
    assert "href='https://www.vatican.va/x.html'" in shown
    # links are styled as links by the explorer's style sheet, in the theme's link colour
    assert ".citekit-ex a{color:var(--ck-ex-link);text-decoration:underline}" in EXPLORER_CSS
    assert "--ck-ex-link:var(--jp-content-link-color,var(--vscode-textLink-foreground," in (
        EXPLORER_CSS
    )


def test_a_row_picked_in_the_table_selects_it(answers: list[Answer]) -> None:
    """What a click (or an arrow key) does: the table widget's front end sets its ``selected``."""
    ex = explore(answers)
    assert ex.table.count == 6 and ex.table.selected == 0
    ex.table.selected = 5  # as the front end's message sets it
    assert ex.selected.value == 5
    assert ex.selected_answer() is answers[1]
    assert ex.selected_row()["document_title"] == "Fides et Ratio"  # type: ignore[index]
    assert "Faith and reason are two wings" in ex.detail.value
    ex.selected.value = 2  # and code moves the table's selection
    assert ex.table.selected == 2


def test_selection_from_code_turns_the_page_the_table_shows() -> None:
    many = [magisterium(f"id{i}", f"Question {i}?") for i in range(30)]
    ex = explore(many, page_size=40)
    page_one = ex.table.value
    ex.table.selected = 39  # same page: the table is not redrawn, only the mark moves
    assert ex.table.value is page_one and ex.page.value == 1
    ex.table.selected = 40
    assert ex.page.value == 2 and "<tr data-row='40'" in ex.table.value
    assert ex.table.selected == 40


def test_cells_are_one_line_with_the_whole_text_as_tooltip() -> None:
    long = "word " * 100
    body = magisterium_response()
    body["citations"][0]["cited_text"] = long + "\n\nsecond paragraph"
    ex = explore(parse_response(body, provider="magisterium"))
    assert "\n" not in ex.table.value.split("<tbody>", 1)[1]
    assert "second paragraph'" in ex.table.value  # the tooltip (title) holds the whole text
    assert "…</td>" in ex.table.value


def test_search_box_sends_typed_text_once_typing_pauses(answers: list[Answer]) -> None:
    ex = explore(answers)
    assert ex.search.delay == 250  # the front end waits this long after the last keystroke
    seen: list[str] = []
    ex.search.observe(lambda change: seen.append(change["new"]), names="value")
    ex.search.value = "wage"  # a value from code (or the front end) filters at once
    assert seen == ["wage"]
    assert ex.filtered["cited_text"].to_list() == ["The worker's wage & man's cœur."]


def test_no_match_says_so_in_the_table_and_the_chart(answers: list[Answer]) -> None:
    ex = explore(answers)
    ex.search.value = "no such words"
    assert "No citations match these filters" in ex.table.value
    assert "No citations match these filters" in ex.chart.value
    assert ex.table.count == 0 and ex.status_text == "no citations match (filtered from 6)"
    assert ex.selected_row() is None


def test_status_is_one_line_cut_with_an_ellipsis(answers: list[Answer]) -> None:
    from citekit.notebook.explorer_html import EXPLORER_CSS

    ex = explore(answers)
    assert "class='citekit-ex-status'" in ex.status.value
    assert ex.status_text == "1–6 of 6 citations"
    rule = EXPLORER_CSS.split(".citekit-ex .citekit-ex-status{", 1)[1].split("}", 1)[0]
    assert "white-space:nowrap" in rule and "text-overflow:ellipsis" in rule


def test_min_score_moves_the_scores_chart_threshold() -> None:
    refs = References.from_response(correlate_body())
    ex = explore(refs)
    assert ex.chart_kind.value == "scores"
    ex.min_score.value = 0.5
    assert "at or above 0.5" in ex.chart.value
    # the chart still shows the chunks below the threshold: its subtitle counts them
    scored = ex.frame.filter(pl.col("score").is_not_null()).height
    assert f"{ex.filtered.height} of {scored} scored chunks at or above 0.5" in ex.chart.value
    ex.min_score.value = 0.25
    assert "at or above 0.25" in ex.chart.value


def test_colours_follow_the_theme() -> None:
    from citekit.notebook.explorer_html import EXPLORER_CSS

    for dark in (
        'body[data-jp-theme-light="false"] .citekit-ex',
        "body.vscode-dark .citekit-ex",
        "html[theme=dark] .citekit-ex",
        "@media (prefers-color-scheme: dark)",
    ):
        assert dark in EXPLORER_CSS
    assert "#fff3c4" not in EXPLORER_CSS
    # every colour variable reads JupyterLab's, then VS Code's variable, then a literal
    for name in ("fg", "muted", "line", "link"):
        assert f"--ck-ex-{name}:var(--jp-" in EXPLORER_CSS


def test_a_front_end_row_out_of_range_is_clamped(answers: list[Answer]) -> None:
    ex = explore(answers)
    ex.table.selected = 10_000  # a message from a front end is not trusted to be in range
    assert (ex.selected.value, ex.table.selected) == (5, 5)
    ex.table.selected = -3
    assert (ex.selected.value, ex.table.selected) == (0, 0)
    ex.search.value = "no such words"
    ex.table.selected = 4
    assert ex.selected.value == 0 and ex.selected_row() is None and ex.detail.value == ""


_TEXT = st.text(st.characters(codec="utf-8"), max_size=400)


@settings(max_examples=examples(150), deadline=None)
@given(
    texts=st.lists(
        st.fixed_dictionaries(
            {
                "marker": st.one_of(st.none(), st.integers(-5, 10**6)),
                "document_author": st.one_of(st.none(), _TEXT),
                "document_year": st.one_of(st.none(), _TEXT),
                "document_title": st.one_of(st.none(), _TEXT),
                "document_reference": st.one_of(st.none(), _TEXT),
                "cited_text": st.one_of(st.none(), _TEXT),
            }
        ),
        max_size=8,
    ),
    first=st.integers(0, 10**6),
)
def test_any_provider_text_makes_one_escaped_line_per_row(
    texts: list[dict[str, Any]], first: int
) -> None:
    from html.parser import HTMLParser

    from citekit.notebook.explorer_html import table_html

    schema = {k: (pl.Int64 if k == "marker" else pl.String) for k in texts[0]} if texts else None
    page = (
        pl.DataFrame(texts, schema=schema)
        if texts
        else pl.DataFrame(schema={"cited_text": pl.String})
    )
    shown = table_html(page, "citations", first=first)
    tags: list[str] = []
    cells: list[str] = []

    class Reader(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append(tag)

        def handle_data(self, data: str) -> None:
            cells.append(data)

    Reader(convert_charrefs=True).feed(shown)
    # only the table's own elements: provider text never becomes markup
    assert set(tags) <= {"table", "colgroup", "col", "thead", "tr", "th", "tbody", "td", "span"}
    assert tags.count("tr") == page.height + 1
    rows = shown.split("<tbody>", 1)[1]
    assert "\n" not in rows and "\r" not in rows  # one line per cell
    assert [f"data-row='{first + i}'" in rows for i in range(page.height)] == [True] * page.height


def test_one_author_under_several_names_is_one_entry_and_rows_count_from_one() -> None:
    names = ("Francis", "Pope Francis", "Francesco", "Franziskus")
    answer = Answer(
        provider="magisterium",
        text="x[^1]",
        citations=tuple(
            Citation(cited_text=f"p{i}", document_index=0, document_title="Laudato si'",
                     document_author=name, document_year="2015")
            for i, name in enumerate(names)
        ),
    )  # fmt: skip
    ex = explore([answer])
    labels = [label for label, _ in ex.author.options]
    assert labels == ["All authors (1)", "Francis (4 citations)"]
    ex.author.value = "Francis"
    assert ex.filtered.height == 4
    # The table and the row box number rows from 1, as the pages are; selected is the index.
    assert "<td class='citekit-ex-muted'>1</td>" in ex.table.value
    assert "<td class='citekit-ex-muted'>0</td>" not in ex.table.value
    assert (ex.row.value, ex.row.max) == (1, 4)
    ex.row.value = 3
    assert ex.selected.value == 2 and ex.selected_row()["cited_text"] == "p2"
    ex.selected.value = 0
    assert ex.row.value == 1
