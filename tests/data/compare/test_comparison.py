"""ck.compare: one question to several providers at once, side by side (real clients against
the loopback server; the hand-made cases build answers whose works are known)."""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import replace
from html.parser import HTMLParser
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import citekit as ck
from citekit.data.compare.clients import default_labels
from citekit.data.compare.comparison import FRAME_SCHEMA, OVERLAP_SCHEMA
from citekit.render.html import answer_html
from citekit.testing import ProviderServer
from tests.budget import examples

KEY = "test-key-0123456789"
QUESTION = "What is subsidiarity?"


def clients(server: ProviderServer) -> tuple[Any, Any, Any]:
    mg = ck.Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    mt = ck.Maritaca(api_key=KEY, base_url=server.base_url("maritaca"))
    gb = ck.GPTBots(api_key=KEY, base_url=server.base_url("gptbots"))
    return mg, mt, gb


class _Markup(HTMLParser):
    """Every tag, attribute, id and text piece of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: set[str] = set()
        self.ids: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            self.attributes.add(name)
            if name == "id" and value is not None:
                self.ids.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def markup(fragment: str) -> _Markup:
    parser = _Markup()
    parser.feed(fragment)
    parser.close()
    return parser


# -- the three providers on one question ----------------------------------------------------------


@pytest.fixture(scope="module")
def three(server: ProviderServer) -> ck.Comparison:
    mg, mt, gb = clients(server)
    return ck.compare(
        QUESTION, [mg, (mt, {"web_search": True}), (gb, {"citations": True})], progress=False
    )


def test_three_providers_answer_in_columns(three: ck.Comparison) -> None:
    assert three.question == QUESTION
    assert three.labels == (
        "Magisterium · magisterium-1",
        "Maritaca · sabia-4 · web search",
        "GPTBots",
    )
    assert three.errors == {}
    providers = [a.provider for a in three.answers.values() if isinstance(a, ck.Answer)]
    assert providers == ["magisterium", "maritaca", "gptbots"]
    page = three._repr_html_()
    assert page.count('class="citekit-answer"') == 3
    assert page.count('class="citekit-compare-column"') == 3
    assert "citekit-compare-error" not in page
    for answer in three.answered.values():
        assert f"recorded sample · {html.escape(answer.sample or '')}" in page


def test_sources_are_the_joint_sources_frame_with_labels(three: ck.Comparison) -> None:
    answers = list(three.answered.values())
    expected = ck.sources_frame(answers)
    by_id = {a.id: label for label, a in three.answered.items()}
    expected = expected.with_columns(
        label=pl.col("answer_id").replace_strict(by_id, return_dtype=pl.String)
    ).select("label", *expected.columns)
    got = three.sources
    assert got.columns == ["label", *ck.sources_frame([]).columns]
    key = ["label", "kind", "marker", "rank", "document_title"]
    assert_frame_equal(got.sort(key, nulls_last=True), expected.sort(key, nulls_last=True))


def test_frame_counts_each_labels_works(three: ck.Comparison) -> None:
    frame = three.frame()
    assert frame.schema == FRAME_SCHEMA
    src = three.sources.filter(pl.col("work_id").is_not_null())
    for label in three.labels:
        mine = src.filter(pl.col("label") == label)
        want = dict(Counter(mine["work_id"].to_list()))
        rows = frame.filter(pl.col("label") == label)
        assert dict(zip(rows["work_id"], rows["citations"], strict=True)) == want
        assert rows["citations"].to_list() == sorted(rows["citations"].to_list(), reverse=True)
    # shared_with is exactly the other labels citing the work
    citing: dict[str, set[str]] = {}
    for label, work in zip(frame["label"], frame["work_id"], strict=True):
        citing.setdefault(work, set()).add(label)
    for row in frame.iter_rows(named=True):
        assert set(row["shared_with"]) == citing[row["work_id"]] - {row["label"]}


def test_overlap_is_jaccard_of_the_frames_work_sets(three: ck.Comparison) -> None:
    frame, overlap = three.frame(), three.overlap()
    assert overlap.schema == OVERLAP_SCHEMA
    assert overlap.height == 3  # three labels, three pairs
    for row in overlap.iter_rows(named=True):
        a = set(frame.filter(pl.col("label") == row["a"])["work_id"])
        b = set(frame.filter(pl.col("label") == row["b"])["work_id"])
        assert (row["works_a"], row["works_b"], row["shared"]) == (len(a), len(b), len(a & b))
        assert row["jaccard"] == pytest.approx(len(a & b) / len(a | b))


def test_repr_is_a_plain_text_summary(three: ck.Comparison) -> None:
    text = repr(three)
    assert text.splitlines()[0] == f"Comparison of 3 answers to {QUESTION!r}"
    for label in three.labels:
        assert f"  {label}: " in text
    assert "<" not in text


def test_the_questions_are_asked_concurrently(server: ProviderServer) -> None:
    slow = server.add_scenario(latency=0.4)
    mg, mt, gb = (
        cls(api_key=KEY, base_url=server.scenario_url(slow, name))
        for cls, name in (
            (ck.Magisterium, "magisterium"),
            (ck.Maritaca, "maritaca"),
            (ck.GPTBots, "gptbots"),
        )
    )
    cmp = ck.compare(QUESTION, [mg, mt, gb], progress=False)
    assert cmp.errors == {}
    # each reply waits 0.4 s on the server: the three were in flight at once
    assert slow.max_concurrent >= 3


@pytest.mark.anyio
async def test_acompare_gives_what_compare_gives(server: ProviderServer) -> None:
    mg, mt, gb = clients(server)
    entries = [mg, (mt, {"web_search": True}), gb]
    got = await ck.acompare(QUESTION, entries, progress=False)
    want = ck.compare(QUESTION, entries, progress=False)
    assert got.labels == want.labels
    assert_frame_equal(got.frame(), want.frame())
    assert_frame_equal(got.overlap(), want.overlap())


def test_options_are_forwarded_and_a_clients_own_win(server: ProviderServer) -> None:
    mg, mt, _ = clients(server)
    cmp = ck.compare(
        QUESTION, [mg, (mt, {"stream": False})], labels=["mg", "mt"], stream=True, progress=False
    )
    assert cmp.errors == {}
    streamed = mg.ask(QUESTION, stream=True, display=False)
    mg_answer = cmp.answers["mg"]
    assert isinstance(mg_answer, ck.Answer)
    assert mg_answer.text == streamed.text
    # a tool does not stream: had stream=True reached Maritaca it would have refused
    cmp = ck.compare(
        QUESTION, [(mt, {"web_search": True, "stream": False})], stream=True, progress=False
    )
    assert cmp.errors == {}


# -- failures are cards ---------------------------------------------------------------------------


def test_a_failing_provider_is_an_error_card_and_the_others_render(server: ProviderServer) -> None:
    mg, mt, gb = clients(server)
    refused = ck.Magisterium(
        api_key="a-wrong-key-0123", base_url=server.base_url("magisterium", api_key=KEY)
    )
    down = ck.Maritaca(
        api_key=KEY,
        base_url=server.base_url("maritaca", fault="status", status=500),
        max_retries=0,
    )
    cmp = ck.compare(QUESTION, [mg, refused, (mt, {"web_search": True}), down, gb], progress=False)
    assert set(cmp.errors) == {cmp.labels[1], cmp.labels[3]}
    assert isinstance(cmp.errors[cmp.labels[1]], ck.AuthenticationError)
    assert isinstance(cmp.errors[cmp.labels[3]], ck.ServerError)
    assert len(set(cmp.labels)) == 5  # two Magisterium and two Maritaca columns, told apart
    page = cmp._repr_html_()
    assert page.count('class="citekit-answer"') == 3
    assert page.count('class="citekit-compare-error"') == 2
    text = " ".join(markup(page).text)
    assert "Magisterium did not answer" in text and "Maritaca did not answer" in text
    assert "AuthenticationError (HTTP 401)" in text
    assert "Incorrect API key provided" in text
    assert "Check the key in MAGISTERIUM_API_KEY" in text
    assert "ServerError (HTTP 500)" in text
    assert "What to do:" in text
    assert "a-wrong-key-0123" not in page
    assert cmp.frame().filter(pl.col("label").is_in(list(cmp.errors))).height == 0
    assert cmp.overlap().height == 3  # pairs of the three that answered
    assert "failed: AuthenticationError" in repr(cmp)


def test_every_provider_failing_raises_nothing(server: ProviderServer) -> None:
    slow = ck.GPTBots(
        api_key=KEY,
        base_url=server.base_url("gptbots", fault="stall", stall=5),
        max_retries=0,
        timeout=0.3,
    )
    unreachable = ck.Magisterium(api_key=KEY, base_url="http://127.0.0.1:9/api", max_retries=0)
    wrong_option = ck.Maritaca(api_key=KEY, base_url=server.base_url("maritaca"))
    cmp = ck.compare(
        QUESTION,
        [slow, unreachable, (wrong_option, {"not_an_option": 1})],
        progress=False,
    )
    assert list(cmp.errors) == list(cmp.labels)
    assert isinstance(cmp.errors[cmp.labels[0]], ck.APITimeoutError)
    assert isinstance(cmp.errors[cmp.labels[1]], ck.TransportError)
    assert isinstance(cmp.errors[cmp.labels[2]], TypeError)
    assert cmp.frame().height == 0 and cmp.frame().schema == FRAME_SCHEMA
    assert cmp.overlap().height == 0 and cmp.overlap().schema == OVERLAP_SCHEMA
    page = cmp._repr_html_()
    assert page.count('class="citekit-compare-error"') == 3
    text = " ".join(markup(page).text)
    assert "deadline= or timeout=" in text
    assert "check the network" in text
    assert "not_an_option" in text


# -- bad input raises, saying what to pass -------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "entries", "labels", "error", "words"),
    [
        ("", "mg", None, ValueError, "must not be blank"),
        ("   ", "mg", None, ValueError, "must not be blank"),
        (None, "mg", None, TypeError, "must be a string"),
        (QUESTION, [], None, ValueError, "pass at least one client"),
        (QUESTION, "one", None, TypeError, "wrap one client in"),
        (QUESTION, "text", None, TypeError, "list of clients"),
        (QUESTION, ["not a client"], None, TypeError, "clients[0] is a str, not a client"),
        (QUESTION, "bad-tuple", None, TypeError, "(client, {options})"),
        (QUESTION, "mg", ["a", "b"], ValueError, "give one per client"),
        (QUESTION, "two", ["a", "a"], ValueError, "must be distinct"),
        (QUESTION, "mg", [" "], ValueError, "non-empty string"),
        (QUESTION, "mg", "a", TypeError, "list of 1 strings"),
    ],
)
def test_bad_input_raises_saying_what_to_pass(
    server: ProviderServer,
    question: Any,
    entries: Any,
    labels: Any,
    error: type[Exception],
    words: str,
) -> None:
    mg, _, _ = clients(server)
    given = (
        {
            "mg": [mg],
            "two": [mg, mg],
            "one": mg,
            "text": "magisterium",
            "bad-tuple": [(mg, "web_search")],
        }.get(entries, entries)
        if isinstance(entries, str)
        else entries
    )
    server.clear_requests()
    with pytest.raises(error, match=None) as caught:
        ck.compare(question, given, labels=labels, progress=False)
    assert words in str(caught.value)
    assert server.requests == []  # refused before anything was sent


def test_default_labels_tell_clients_of_one_provider_apart(server: ProviderServer) -> None:
    mg, mt, gb = clients(server)
    assert default_labels([mt, mt], [{}, {"web_search": True}]) == [
        "Maritaca · sabia-4",
        "Maritaca · sabia-4 · web search",
    ]
    assert default_labels([mt, mt], [{"model": "sabiazinho-4"}, {}]) == [
        "Maritaca · sabiazinho-4",
        "Maritaca · sabia-4",
    ]
    assert default_labels([gb, gb, mg]) == [
        "GPTBots (1)",
        "GPTBots (2)",
        "Magisterium · magisterium-1",
    ]


def test_comparison_by_hand_refuses_what_is_not_an_answer() -> None:
    with pytest.raises(ValueError, match="non-empty mapping"):
        ck.Comparison(QUESTION, {})
    with pytest.raises(TypeError, match=r"answers\['x'\] is a str; pass an Answer"):
        ck.Comparison(QUESTION, {"x": "text"})  # type: ignore[dict-item]


# -- frame and overlap on a case computed by hand -------------------------------------------------


def cited(provider: str, answer_id: str, *sources: tuple[str, str | None]) -> ck.Answer:
    """An answer citing each (title, author) once, with a marker for each."""
    text = "Answer " + " ".join(f"[^{i + 1}]" for i in range(len(sources)))
    citations = tuple(
        ck.Citation(
            cited_text=f"passage {i}",
            document_index=i,
            document_title=title,
            document_author=author,
        )
        for i, (title, author) in enumerate(sources)
    )
    return ck.Answer(
        provider=provider, text=text, id=answer_id, question=QUESTION, citations=citations
    )


CATECHISM = ("Catechism of the Catholic Church", "Catholic Church")
APPLES = ("On the Keeping of Apples", "Ada Orchard")
PEARS = ("A Grammar of Pears", "Bruno Pearson")
PLUMS = ("Plums in Winter", "Clara Damson")


def test_frame_and_jaccard_on_known_sets() -> None:
    # A cites {catechism, apples, pears}, B {catechism (twice, in two languages), plums}.
    a = cited("magisterium", "a1", CATECHISM, APPLES, PEARS)
    b = cited(
        "gptbots", "b1", CATECHISM, ("Catecismo de la Iglesia Católica", "Iglesia católica"), PLUMS
    )
    cmp = ck.Comparison(QUESTION, {"A": a, "B": b, "C": RuntimeError("down")})
    frame = cmp.frame()
    catechism = frame.filter(pl.col("work_id") == "catechism")
    assert catechism.select("label", "citations", "shared_with").rows() == [
        ("A", 1, ["B"]),
        ("B", 2, ["A"]),
    ]
    assert frame.filter(pl.col("label") == "A").height == 3
    assert frame.filter(pl.col("label") == "B").height == 2
    alone = frame.filter(pl.col("work_id") != "catechism")
    assert alone["shared_with"].to_list() == [[], [], []]
    overlap = cmp.overlap()
    assert overlap.rows() == [("A", "B", 3, 2, 1, pytest.approx(1 / 4))]
    shared = cmp.shared()
    assert shared.select("work_id", "labels", "citations").rows() == [("catechism", ["A", "B"], 3)]
    page = cmp._repr_html_()
    assert "Shared works (1)" in page
    assert page.count("citekit-compare-shared-mark") == 2  # once in each citing column


def test_the_same_answer_under_two_labels_is_framed_for_each() -> None:
    a = cited("magisterium", "a1", CATECHISM, APPLES)
    cmp = ck.Comparison(QUESTION, {"one": a, "two": a})
    assert cmp.sources.group_by("label").len().sort("label").rows() == [("one", 2), ("two", 2)]
    assert cmp.overlap()["jaccard"].to_list() == [1.0]


def test_two_answers_with_one_id_are_kept_apart() -> None:
    a = cited("magisterium", "same", APPLES)
    b = cited("magisterium", "same", PEARS)
    cmp = ck.Comparison(QUESTION, {"a": a, "b": b})
    assert cmp.frame().select("label", "work").rows() == [("a", APPLES[0]), ("b", PEARS[0])]
    assert cmp.overlap()["jaccard"].to_list() == [0.0]


def test_jaccard_is_null_when_neither_cites_anything() -> None:
    empty = ck.Answer(provider="maritaca", text="No sources.", id="e1")
    other = ck.Answer(provider="maritaca", text="None here.", id="e2")
    assert ck.Comparison(QUESTION, {"x": empty, "y": other}).overlap()["jaccard"].to_list() == [
        None
    ]


# -- the HTML -------------------------------------------------------------------------------------


def test_no_id_repeats_in_the_whole_comparison(server: ProviderServer) -> None:
    mg, mt, gb = clients(server)
    cmp = ck.compare(QUESTION, [mg, mg, (mt, {"web_search": True}), gb], progress=False)
    first, second = cmp._repr_html_(), cmp._repr_html_()
    ids = markup(first).ids
    assert len(ids) > 30  # markers, footnotes, chunks, columns
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    # every in-page link points at an id of this render
    targets = {h[1:] for h in _hrefs(first) if h.startswith("#")}
    assert targets <= set(ids)
    # two renders (two outputs in one notebook) share no id either
    assert not set(ids) & set(markup(second).ids)


def _hrefs(fragment: str) -> list[str]:
    out: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            out.extend(v for k, v in attrs if k == "href" and v is not None)

    Links().feed(fragment)
    return out


def test_each_column_is_answer_html_of_its_answer(server: ProviderServer) -> None:
    mg, mt, _ = clients(server)
    cmp = ck.compare(QUESTION, [mg, (mt, {"web_search": True})], progress=False)
    page = _without_ids(cmp._repr_html_())
    for answer in cmp.answered.values():
        # as the answer renders alone, without the question and sample label the column's
        # own heading already shows (a notice that the sample answers another question stays)
        raw = {k: v for k, v in answer.raw.items() if k != "citekit_sample"}
        shown = replace(answer, question=None, raw=raw)
        assert _without_ids(answer_html(shown)) in page


def _without_ids(fragment: str) -> str:
    return re.sub(r"ck[0-9a-f]{10}", "TOKEN", fragment)


def test_a_status_line_while_the_answers_come(
    server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    mg, mt, _ = clients(server)
    ck.compare(QUESTION, [mg, mt], progress=True)
    err = capsys.readouterr().err
    assert err.rstrip().splitlines()[-1].split("\r")[-1].startswith("[")
    assert "2/2" in err


def test_aliases_and_lang_reach_the_identity() -> None:
    a = cited("magisterium", "l1", ("Laudato si'", "Francis"), APPLES)
    b = cited("magisterium", "l2", ("Laudato si'", "Franziskus"), PEARS)
    cmp = ck.Comparison(QUESTION, {"a": a, "b": b}, lang="pt")
    francis = cmp.frame().filter(pl.col("shared_with").list.len() > 0)
    assert francis["author"].to_list() == ["Papa Francisco", "Papa Francisco"]
    merged = ck.Comparison(
        QUESTION, {"a": a, "b": b}, aliases={"works": {PEARS[0]: "w-apples-and-pears"}}
    )
    assert merged.overlap()["shared"].to_list() == [1]  # Laudato si' only: pears stay apart
    joined = ck.Comparison(
        QUESTION,
        {"a": a, "b": b},
        aliases={"works": {APPLES[0]: "w-fruit", PEARS[0]: "w-fruit"}},
    )
    assert joined.overlap()["shared"].to_list() == [2]


_ALLOWED_TAGS = {
    "div", "span", "strong", "em", "a", "ul", "ol", "li", "sup", "details", "summary",
    "blockquote", "p", "h3", "h4", "h5", "h6", "code", "pre", "style", "br",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {
    "class", "id", "style", "href", "title", "dir", "target", "rel", "value",
}  # fmt: skip

hostile = st.one_of(
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            '"><img src=x onerror=alert(1)>',
            "'; background:url(javascript:alert(1))",
            "\u202eevil\u202c",
            "\u200f\u05e9\u05dc\u05d5\u05dd",
            "</style><script>x</script>",
            "&lt;b&gt;",
            "{{7*7}}",
        ]
    ),
    st.text(
        alphabet=st.sampled_from(list("<>\"'&=/ ;:()ab\u202e\u200f\u05d0")), min_size=1, max_size=30
    ),
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    question=hostile,
    labels=st.lists(hostile, min_size=2, max_size=3, unique_by=str.strip),
    title=hostile,
    author=hostile,
    message=hostile,
)
def test_hostile_text_never_becomes_markup(
    question: str, labels: list[str], title: str, author: str, message: str
) -> None:
    labels = [label if label.strip() else f"x{label}" for label in labels]
    if len({label.strip() for label in labels}) != len(labels) or not question.strip():
        return
    a = cited("magisterium", "h1", (title, author), CATECHISM)
    b = cited("gptbots", "h2", (title, author))
    answers: dict[str, ck.Answer | BaseException] = {labels[0]: a, labels[1]: b}
    if len(labels) == 3:
        answers[labels[2]] = ck.ServerError(message, provider="maritaca", status=500)
    cmp = ck.Comparison(question, answers)
    page = cmp._repr_html_()
    found = markup(page)
    assert set(found.tags) <= _ALLOWED_TAGS, set(found.tags) - _ALLOWED_TAGS
    # the view's scoped style and each answer's own (its :target highlight, and for an answer
    # with footnotes the highlight of the footnote a focused link points to)
    styles = 1 + sum(1 + bool(v.citations) for v in answers.values() if isinstance(v, ck.Answer))
    assert found.tags["style"] == styles and found.tags.get("script", 0) == 0
    assert found.attributes <= _ALLOWED_ATTRIBUTES, found.attributes - _ALLOWED_ATTRIBUTES
    text = "".join(found.text)
    assert question in text
    for label in labels:
        assert label in text
    if len(labels) == 3:
        assert message in text


def test_support_names_the_claims_two_providers_support_with_one_work(
    three: ck.Comparison,
) -> None:
    from citekit.data.compare.comparison import SUPPORT_SCHEMA

    support = three.support()
    assert support.schema == SUPPORT_SCHEMA
    assert set(support["verdict"]) <= {"supported", "partial"}
    together = support.filter(pl.col("supported_with").list.len() > 0)
    by_work = {w: sorted(rows["label"].unique()) for (w,), rows in together.group_by("work_id")}
    # Maritaca's web pages give no passage: only Magisterium and GPTBots support claims.
    assert by_work == {
        w: ["GPTBots", "Magisterium · magisterium-1"]
        for w in ("catechism", "compendium-of-the-social-doctrine")
    }
    gptbots = together.filter(
        (pl.col("label") == "GPTBots") & (pl.col("work_id") == "catechism")
    ).row(0, named=True)
    assert gptbots["verdict"] == "supported" and gptbots["support"] > 0.8
    assert gptbots["sentence"].startswith("The Catechism restates it")
    # The same works' names as frame() gives them.
    names = dict(three.frame().select("work_id", "work").iter_rows())
    assert all(names[w] == n for w, n in support.select("work_id", "work").iter_rows())
    page = markup(three._repr_html_())
    text = " ".join("".join(page.text).split())
    assert "Claims supported by the same work" in text
    assert "“The Catechism restates it" in text
    assert f"supported, support {gptbots['support']:.2f}" in text


def test_support_of_answers_without_passages_is_empty() -> None:
    plain = ck.Answer(provider="maritaca", text="Uma resposta sem fontes.", id="x")
    cmp = ck.Comparison("q", {"a": plain, "b": replace(plain, id="y")})
    assert cmp.support().height == 0
    assert "Claims supported by the same work" not in cmp._repr_html_()


def _column_works(page: str) -> list[list[str]]:
    """The works each column lists, as a reader sees them (the work's name, before the author)."""
    columns = page.split('class="citekit-compare-works"')[1:]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", item)).split(" — ")[0].removesuffix("shared")
         for item in re.findall(r"<li [^>]*>(.*?)</li>", column.split("</ul>")[0])]
        for column in columns
    ]  # fmt: skip


def test_each_column_names_its_works_in_its_own_language(three: ck.Comparison) -> None:
    """The English answer's column names the Compendium and the Catechism in English though
    the Portuguese answer cites them too; the Portuguese column in Portuguese."""
    english, portuguese, _ = _column_works(three._repr_html_())
    assert "Compendium of the Social Doctrine of the Church" in english
    assert "Catechism of the Catholic Church" in english
    assert not any("Compêndio" in w or "Catecismo" in w for w in english), english
    assert "Compêndio da Doutrina Social da Igreja" in portuguese


def test_column_counts_use_the_one_vocabulary(three: ck.Comparison) -> None:
    """ "sources" are what the answer lists (its footnotes), "citations" its passages, "works"
    the distinct works: the header's numbers are those of the answer below it."""
    from citekit.render._sources import footnotes

    page = three._repr_html_()
    headers = re.findall(r'class="citekit-compare-header".*?</div>\s*</div>', page, re.S)
    frame = three.frame()
    for label, header in zip(three.labels, headers, strict=True):
        answer = three.answers[label]
        assert isinstance(answer, ck.Answer)
        text = html.unescape(re.sub(r"<[^>]+>", " ", header))
        n = len(footnotes(answer.citations))
        if answer.references is None:
            assert f"{n} source{'' if n == 1 else 's'}" in text, text
        c = len(answer.citations)
        assert f"{c} citation{'' if c == 1 else 's'}" in text, text
        w = frame.filter(pl.col("label") == label).height
        assert f"{w} work{'' if w == 1 else 's'}" in text, text
