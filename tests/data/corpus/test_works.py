"""Sources as one corpus: sources_frame, works_frame, the alias table and the clustering."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit import Answer, Citation
from citekit.data.corpus.works import SOURCES_SCHEMA, WORKS_SCHEMA
from citekit.data.identity.aliases import Aliases
from citekit.data.identity.clusters import IDENTITY_COLUMNS, identify
from citekit.data.identity.keys import author_key, work_title
from citekit.testing import default_data_dir
from tests.budget import examples

VATICAN = "https://www.vatican.va/content/francesco/{lang}/encyclicals/documents/"
FT = "papa-francesco_20201003_enciclica-fratelli-tutti.html"


def cite(
    title: str | None, author: str | None = None, year: str | None = None, **kw: str
) -> Citation:
    return Citation(
        cited_text=kw.pop("text", "passage"),
        document_index=int(kw.pop("index", "0")),
        document_title=title,
        document_author=author,
        document_year=year,
        source_url=kw.pop("url", None),
        document_reference=kw.pop("reference", None),
    )


def answer(*citations: Citation, provider: str = "magisterium", id: str = "a") -> Answer:
    markers = "".join(f"[^{c.document_index + 1}]" for c in citations)
    return Answer(provider=provider, text=f"Text.{markers}", citations=citations, id=id)


def frame_of(rows: list[dict[str, object]]) -> pl.DataFrame:
    schema = {
        "document_title": pl.String,
        "document_author": pl.String,
        "year": pl.Int32,
        "source_url": pl.String,
        "data_id": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


# -- the recorded samples ---------------------------------------------------------------------


def test_every_provider_and_kind_is_in_the_frame() -> None:
    src = ck.sources_frame(default_data_dir())
    assert src.schema == SOURCES_SCHEMA
    cits = ck.citations_frame(default_data_dir())
    refs = ck.references_frame(default_data_dir())
    assert src.height == cits.height + refs.height
    kinds = dict(src.group_by("kind").len().iter_rows())
    assert kinds["knowledge chunk"] == refs.height
    assert kinds["web source"] == cits.filter(pl.col("provider") == "maritaca").height
    assert set(src["provider"]) == {"magisterium", "maritaca", "gptbots"}
    # Every source with a title or an address belongs to a work.
    titled = src.filter(pl.col("document_title").is_not_null() | pl.col("source_url").is_not_null())
    assert titled["work_id"].null_count() == 0


def test_one_pope_one_council_one_church_one_catechism() -> None:
    src = ck.sources_frame(default_data_dir() / "magisterium")
    names = src.group_by("author_id").agg(pl.col("document_author").unique())
    spelled = {k: set(v) - {None} for k, v in names.iter_rows()}
    assert {"Francis", "Francesco", "Francisco", "Franziskus"} <= spelled["francis"]
    assert len(spelled["second-vatican-council"]) >= 3
    assert len(spelled["catholic-church"]) >= 4
    ccc = src.filter(pl.col("work_id") == "catechism")
    assert ccc["document_title"].n_unique() >= 5  # one work under every language's title
    # A Catechism citation that names no author is the Church's.
    assert ccc.filter(pl.col("document_author").is_null())["author_id"].to_list() in (
        [],
        ["catholic-church"] * ccc.filter(pl.col("document_author").is_null()).height,
    )
    assert set(ccc["author_id"]) == {"catholic-church"}


def test_lang_chooses_the_display_names() -> None:
    pt = ck.sources_frame(default_data_dir() / "magisterium", lang="pt")
    assert set(pt.filter(pl.col("work_id") == "catechism")["work"]) == {
        "Catecismo da Igreja Católica"
    }
    assert set(pt.filter(pl.col("author_id") == "francis")["author"]) == {"Papa Francisco"}
    default = ck.sources_frame(default_data_dir() / "magisterium")
    # Without lang=, the title cited most often.
    ccc = default.filter(pl.col("work_id") == "catechism")
    most = ccc.group_by("document_title").len().sort("len", descending=True)["document_title"][0]
    assert set(ccc["work"]) == {most}


def test_works_frame_counts_each_work_once() -> None:
    src = ck.sources_frame(default_data_dir())
    works = ck.works_frame(src)
    assert works.schema == WORKS_SCHEMA
    assert works["work_id"].is_unique().all()
    assert works["citations"].sum() == src["work_id"].drop_nulls().len()
    ccc = works.filter(pl.col("work_id") == "catechism").row(0, named=True)
    assert ccc["author_id"] == "catholic-church"
    assert ccc["year"] == 1992
    assert {"en", "es", "it", "de", "fr"} <= set(ccc["languages"])
    assert ck.works_frame([]).schema == WORKS_SCHEMA
    assert ck.sources_frame([]).schema == SOURCES_SCHEMA


def test_spans_point_at_the_marker_or_the_annotated_text() -> None:
    src = ck.sources_frame(default_data_dir())
    answers = {
        a.id: a for a in ck.data.frames.load_answers(default_data_dir()) if isinstance(a, Answer)
    }
    spanned = src.filter(pl.col("span_start").is_not_null())
    assert spanned.height > 0
    for row in spanned.iter_rows(named=True):
        text = answers[row["answer_id"]].text
        assert 0 <= row["span_start"] < row["span_end"] <= len(text)
        if row["kind"] == "citation":
            assert str(row["marker"]) in text[row["span_start"] : row["span_end"]]
    uncited = src.filter((pl.col("kind") == "citation") & ~pl.col("cited_inline"))
    assert uncited["span_start"].null_count() == uncited.height


# -- the rules, on hand-built answers ----------------------------------------------------------


def test_translations_of_one_encyclical_are_one_work_by_one_author() -> None:
    a = answer(
        cite("Fratelli tutti", "Francis", "2020", url=VATICAN.format(lang="en") + FT), id="a"
    )
    b = answer(
        cite("Fratelli tutti", "Franziskus", "2020", url=VATICAN.format(lang="de") + FT + "#p5"),
        id="b",
    )
    src = ck.sources_frame([a, b])
    assert src["work_id"].n_unique() == 1
    assert src["author_id"].n_unique() == 1
    works = ck.works_frame([a, b])
    assert works.height == 1 and works["answers"].item() == 2


def test_a_commentary_sharing_the_title_stays_its_own_work() -> None:
    rows = [
        {"document_title": "Laborem Exercens", "document_author": "John Paul II", "year": 1981},
        {
            "document_title": "Laborem exercens",
            "document_author": "Giovanni Paolo II",
            "year": 1981,
        },
        {
            "document_title": "Laborem Exercens: A Commentary",
            "document_author": "Gregory Baum",
            "year": 2001,
        },
        {"document_title": "Laborem Exercens", "document_author": "Gregory Baum", "year": 2001},
    ]
    got = identify(frame_of(rows))["work_id"].to_list()
    assert got[0] == got[1]
    assert got[2] not in (got[0],) and got[3] != got[0]


def test_one_title_in_years_far_apart_is_two_works() -> None:
    rows = [
        {
            "document_title": "Message for the World Day of Peace",
            "document_author": "Francis",
            "year": 2015,
        },
        {
            "document_title": "Message for the World Day of Peace",
            "document_author": "Francis",
            "year": 2020,
        },
        {
            "document_title": "Message for the World Day of Peace",
            "document_author": "Francis",
            "year": 2016,
        },
    ]
    got = identify(frame_of(rows))["work_id"].to_list()
    assert got[0] == got[2] != got[1]


def test_parts_and_paragraphs_of_one_work_are_the_work() -> None:
    rows = [
        {
            "document_title": "Summa Theologiae, I-II, q. 94",
            "document_author": "Thomas Aquinas",
            "year": 1271,
        },
        {
            "document_title": "Summa Theologiae",
            "document_author": "St. Thomas Aquinas",
            "year": 1272,
        },
        {
            "document_title": "Summa Theologiae, III",
            "document_author": "Thomas Aquinas",
            "year": None,
        },
    ]
    got = identify(frame_of(rows))
    assert got["work_id"].n_unique() == 1
    assert got["author_id"].n_unique() == 1
    assert set(got["work"]) == {"Summa Theologiae"}


def test_gptbots_data_id_and_a_document_address_join_rows() -> None:
    rows = [
        {"document_title": "policy.pdf", "data_id": "68b8265352a1fe6d2d81de29"},
        {"document_title": "Travel Policy 2025", "data_id": "68b8265352a1fe6d2d81de29"},
        {"document_title": "Pix", "source_url": "http://bcb.gov.br/pix/?utm_source=x#top"},
        {"document_title": "Banco Central: Pix", "source_url": "https://www.bcb.gov.br/pix"},
    ]
    got = identify(frame_of(rows))["work_id"].to_list()
    assert got[0] == got[1] and got[2] == got[3] and got[0] != got[2]


def test_a_title_without_author_joins_the_one_author_who_has_it() -> None:
    rows = [
        {
            "document_title": "Introduction to Christianity",
            "document_author": "Joseph Ratzinger",
            "year": 1968,
        },
        {"document_title": "Introduction to Christianity", "document_author": None, "year": None},
        {"document_title": "Orthodoxy", "document_author": "G. K. Chesterton", "year": 1908},
        {"document_title": "Orthodoxy", "document_author": "Someone Else", "year": 1990},
        {"document_title": "Orthodoxy", "document_author": None, "year": None},
    ]
    got = identify(frame_of(rows))["work_id"].to_list()
    assert got[0] == got[1]
    assert len({got[2], got[3], got[4]}) == 3  # two authors have it: no guess


def test_surname_first_and_honorifics_are_one_author() -> None:
    assert author_key("Ratzinger, Joseph") == author_key("Joseph Ratzinger")
    assert author_key("Pope Benedict XVI") == author_key("Benedict XVI")
    assert author_key("Paul VI, Pope") == author_key("Paul VI")
    assert (
        work_title("Catechism of the Catholic Church, 1934") == "Catechism of the Catholic Church"
    )
    assert work_title("Message for the World Day of Peace 2015").endswith("2015")


def test_hand_aliases_merge_and_split(tmp_path: Path) -> None:
    rows = [
        {"document_title": "Laudato si'", "document_author": "Francis", "year": 2015},
        {
            "document_title": "On Care for Our Common Home",
            "document_author": "Francis",
            "year": 2015,
        },
        {"document_title": "Fratelli tutti", "document_author": "Francis", "year": 2020},
    ]
    merged = identify(
        frame_of(rows),
        aliases={"works": {"Laudato si'": "ls", "On Care for Our Common Home": "ls"}},
    )["work_id"].to_list()
    assert merged[0] == merged[1] == "ls"
    split = identify(frame_of(rows), aliases={"works": {"Fratelli tutti": "mine"}})
    assert split["work_id"][2] == "mine"
    # A file of the shipped shape extends the table.
    file = tmp_path / "more.json"
    file.write_text(
        json.dumps(
            {
                "works": [
                    {
                        "id": "lsi",
                        "author": "francis",
                        "years": [2015, 2015],
                        "names": {"en": "Laudato si'"},
                        "aliases": ["On Care for Our Common Home"],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    ids = identify(frame_of(rows), aliases=file)["work_id"].to_list()
    assert ids[0] == ids[1] == "lsi"


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (42, TypeError),
        ({"books": {}}, ValueError),
        ({"works": {"x": 3}}, ValueError),
        ({"works": {"...": "id"}}, ValueError),
        ({"works": [{"no": "id"}]}, ValueError),
        ("/no/such/aliases.json", FileNotFoundError),
    ],
)
def test_bad_aliases_say_what_to_pass(spec: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        Aliases.resolve(spec)


def test_a_broken_alias_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json"):
        Aliases.resolve(bad)


# -- properties --------------------------------------------------------------------------------

TITLES = st.sampled_from(
    [
        "Laudato si'",
        "Fratelli tutti",
        "Gaudium et spes",
        "Catecismo da Igreja Católica",
        "X",
        "",
        None,
    ]
) | st.text(max_size=30)
AUTHORS = st.sampled_from(
    ["Francis", "Francesco", "Catholic Church", "Gregory Baum", "", None]
) | st.text(max_size=20)
ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "document_title": TITLES,
            "document_author": AUTHORS,
            "year": st.none() | st.integers(-500, 2100),
            "source_url": st.none()
            | st.sampled_from(
                ["https://www.vatican.va/content/francesco/pt/x.html", "https://e.org/a"]
            )
            | st.text(max_size=20),
            "data_id": st.none() | st.sampled_from(["a1", "b2"]),
        }
    ),
    max_size=25,
)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None)
@given(rows=ROWS, seed=st.randoms(use_true_random=False))
def test_identity_is_a_function_of_the_row_not_of_its_neighbours_order(rows, seed) -> None:  # type: ignore[no-untyped-def]
    frame = frame_of(rows)
    got = identify(frame)
    assert got.height == frame.height
    assert got.columns == [*frame.columns, *IDENTITY_COLUMNS]
    order = list(range(len(rows)))
    seed.shuffle(order)
    again = identify(frame_of([rows[i] for i in order]))
    for new, old in enumerate(order):
        assert again.row(new) == got.row(old)
    # Rows with no title, address (its #fragment aside: "#" points nowhere) or data id have
    # no work; every other row has one.
    for row in got.iter_rows(named=True):
        address = (row["source_url"] or "").partition("#")[0]
        nameless = not (work_title(row["document_title"]) or address or row["data_id"])
        assert (row["work_id"] is None) == nameless


@settings(max_examples=examples(80), deadline=None)
@given(rows=ROWS)
def test_repeating_the_rows_changes_no_identity(rows) -> None:  # type: ignore[no-untyped-def]
    once = identify(frame_of(rows))
    twice = identify(frame_of(rows + rows))
    assert twice.head(len(rows))["work_id"].to_list() == once["work_id"].to_list()
    assert twice.head(len(rows))["author_id"].to_list() == once["author_id"].to_list()


def test_a_work_keeps_its_id_in_frames_of_other_answers() -> None:
    every = ck.sources_frame(default_data_dir())
    for provider in ("maritaca", "gptbots"):
        alone = ck.sources_frame(default_data_dir() / provider)
        pairs = alone.select("document_title", "source_url", "work_id").unique()
        joined = pairs.join(
            every.select("document_title", "source_url", pl.col("work_id").alias("in_all")),
            on=["document_title", "source_url"],
            nulls_equal=True,
        )
        # Works that stay alone keep their id; works joined by other answers take theirs.
        assert (joined["work_id"] == joined["in_all"]).mean() > 0.9


def test_a_file_name_names_a_work_only_when_nothing_else_does() -> None:
    rows = [
        {"document_title": "compendium_social_doctrine.pdf", "data_id": "d1"},
        {"document_title": "compendium_social_doctrine.pdf", "data_id": "d1"},
        {"document_title": "Compendium of Social Teaching", "data_id": "d1"},
        {"document_title": "parish_guide.docx", "data_id": "d2"},
    ]
    got = identify(frame_of(rows))
    assert got["work"].to_list()[:3] == ["Compendium of Social Teaching"] * 3
    assert got["work"][3] == "parish_guide.docx"


def test_a_web_source_cited_by_its_span_is_cited_inline() -> None:
    src = ck.sources_frame(default_data_dir() / "maritaca")
    web = src.filter(pl.col("kind") == "web source")
    assert (web["cited_inline"] == web["span_start"].is_not_null()).all()
    assert web["cited_inline"].any()


def test_numbered_titles_by_one_author_stay_apart() -> None:
    rows = [
        {"document_title": "Homily 1", "document_author": "Francis", "year": 2013},
        {"document_title": "Homily 2", "document_author": "Francis", "year": 2013},
        {
            "document_title": "Message for the 50th World Day of Peace",
            "document_author": "Francis",
            "year": 2017,
        },
        {
            "document_title": "Message for the 51st World Day of Peace",
            "document_author": "Francis",
            "year": 2018,
        },
    ]
    got = identify(frame_of(rows))["work_id"].to_list()
    assert len(set(got)) == 4


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
ALIAS_SHAPES = JSON | st.fixed_dictionaries(
    {
        "works": JSON
        | st.lists(
            st.dictionaries(
                st.sampled_from(
                    ["id", "names", "aliases", "author", "years", "urls", "also_by", "kind"]
                ),
                JSON,
                max_size=6,
            ),
            max_size=3,
        ),
        "authors": JSON
        | st.lists(
            st.dictionaries(st.sampled_from(["id", "names", "aliases", "sites"]), JSON, max_size=4),
            max_size=3,
        ),
    }
)


@settings(max_examples=examples(200), deadline=None)
@given(spec=ALIAS_SHAPES)
def test_any_alias_table_a_user_gives_is_read_or_refused_with_a_message(spec: object) -> None:
    """A table from a user's file or mapping: either it is read and identities still work, or
    it is refused with a ValueError / TypeError that says what to pass; nothing else escapes."""
    try:
        table = Aliases.resolve(spec) if not isinstance(spec, list) else Aliases.from_dict(spec)
    except (ValueError, TypeError, FileNotFoundError) as exc:  # a text is a file's path
        assert str(exc)
        return
    got = identify(
        frame_of([{"document_title": "Laudato si'", "document_author": "Francis"}]), aliases=table
    )
    assert got.height == 1
