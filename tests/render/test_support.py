"""An answer shown with its support (``ck.show_support``): each sentence tinted by its verdict,
each marker's tooltip with its score and best passage, the shared words marked, a legend and the
summary; safe for any provider text; within what the front ends' sanitizers keep."""

from __future__ import annotations

import html as html_module
import io
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.render.support import GLYPHS, print_support, support_html, support_text
from citekit.render.text import StyledTerminal
from tests.budget import examples
from tests.render.test_render import _JUPYTERLAB_KEEPS, _NBCONVERT_TAGS, _PAYLOADS, by_id, parse

WAGE = (
    "Rerum Novarum, published by Leo XIII in 1891, teaches that "
    "a just wage must be enough to support a frugal and well-behaved worker."
)
COMMON_GOOD = "The common good is the sum of social conditions which allow people to flourish."


def cite(marker: int, passage: str, title: str) -> ck.Citation:
    return ck.Citation(cited_text=passage, document_index=marker - 1, document_title=title)


def answer() -> ck.Answer:
    return ck.Answer(
        provider="magisterium",
        question="What is a just wage?",
        text=(
            "Leo XIII published Rerum Novarum in 1891.[^1] "
            "A just wage must support a frugal worker.[^1]\n\n"
            "- Prices are set by the market alone.[^2]\n"
            "- Nobody cites this line."
        ),
        citations=(cite(1, WAGE, "Rerum Novarum"), cite(2, COMMON_GOOD, "Gaudium et spes")),
    )


def test_each_sentence_is_tinted_by_its_verdict_and_says_it_in_a_glyph() -> None:
    view = ck.show_support(answer())
    assert [s.verdict for s in view.sentences] == [
        "supported",
        "supported",
        "unsupported",
        "uncited",
    ]
    root = parse(view.to_html())
    spans = root.find_all("span", "citekit-sentence")
    assert len(spans) == 4
    for span, sentence in zip(spans, view.sentences, strict=True):
        assert f"citekit-{sentence.verdict}" in span.attrs["class"]
        glyph = span.find_all("span", "citekit-verdict")[0]
        assert glyph.text == GLYPHS[sentence.verdict]  # the verdict where colour is lost
        assert glyph.attrs["title"].startswith(sentence.verdict)
    styles = [s.attrs["style"] for s in spans]
    assert "46,160,67" in styles[0] and "220,50,50" in styles[2]  # green, red
    assert "background-color" not in styles[3]  # no source, no tint
    assert "Leo XIII published Rerum Novarum in 1891." in spans[0].text
    assert not spans[2].text.startswith("-")  # the list bullet is the layout's, not text


def test_a_marker_carries_score_and_best_passage_and_links_to_its_entry() -> None:
    root = parse(ck.show_support(answer()).to_html())
    ids = by_id(root)
    markers = root.find_all("a", "citekit-marker")
    assert [m.text for m in markers] == ["[1]", "[1]", "[2]"]
    first = markers[0].attrs["title"]
    assert first.startswith("[1] Rerum Novarum — supported, support 1.00")
    assert "best passage: “Rerum Novarum, published by Leo XIII in 1891" in first
    third = markers[2].attrs["title"]
    assert "unsupported, support" in third and "The common good is the sum" in third
    for marker in markers:
        entry = ids[marker.attrs["href"][1:]]
        assert "citekit-support-entry" in entry.attrs["class"]
    # The entry's passage has the shared words marked, and only words the sentence has.
    entry = ids[markers[0].attrs["href"][1:]]
    marked = [m.text for m in entry.find_all("mark")]
    assert {"Leo", "XIII", "published", "Rerum", "Novarum"} <= set(marked)
    assert "frugal" not in marked  # the first sentence does not say it


def test_the_summary_and_legend_count_the_sentences() -> None:
    view = ck.show_support(answer())
    assert view.summary() == "2 of 4 sentences supported"
    assert view.counts() == {
        "supported": 2,
        "partial": 0,
        "unsupported": 1,
        "unverifiable": 0,
        "uncited": 1,
    }
    root = parse(view.to_html())
    assert root.find_all("div", "citekit-support-summary")[0].text == view.summary()
    legend = root.find_all("div", "citekit-support-legend")[0].text
    assert "✓ supported 2" in legend and "∅ uncited 1" in legend and "✗ unsupported 1" in legend


def test_a_misattributed_citation_is_counted_and_named() -> None:
    from dataclasses import replace

    view = ck.show_support(answer())
    third = view.sentences[2]
    wrong = replace(third.sources[0], best_source=1, misattributed=True)
    view = replace(
        view,
        sentences=(*view.sentences[:2], replace(third, sources=(wrong,)), view.sentences[3]),
    )
    assert view.misattributed == 1
    assert view.summary() == "2 of 4 sentences supported; 1 citation fits another source better"
    root = parse(view.to_html())
    (badge,) = root.find_all("span", "citekit-misattributed")
    assert badge.text == "[1] fits better"
    assert "[1] fits this sentence better" in root.find_all("a", "citekit-marker")[2].attrs["title"]
    assert "[2]→[1]" in support_text(view)
    assert support_text(view).splitlines()[-2:] == [
        "[2]→[1]: the sentence cites [2], but the answer's source [1] fits it clearly better",
        "Evidence left unused: [2] fits no sentence",  # the common good passage
    ]


def test_text_form_one_line_per_sentence_then_the_summary() -> None:
    view = ck.show_support(answer())
    assert support_text(view).splitlines()[1:5] == [
        "  ✓ supported    1.00  Leo XIII published Rerum Novarum in 1891. [1]",
        "  ✓ supported    1.00  A just wage must support a frugal worker. [1]",
        "  ✗ unsupported  0.20  Prices are set by the market alone. [2]",
        "  ∅ uncited         –  Nobody cites this line.",
    ]
    lines = support_text(view).splitlines()
    assert lines[-2:] == [view.summary(), "Evidence left unused: [2] fits no sentence"]
    assert str(view) == support_text(view)


def test_terminal_plain_and_styled() -> None:
    view = ck.show_support(answer())
    out = io.StringIO()
    print_support(view, out)
    plain = out.getvalue()
    assert "Does the cited passage say so?" in plain
    assert plain.rstrip().endswith(f"{view.summary()}\nEvidence left unused: [2] fits no sentence")
    assert "\x1b" not in plain
    out = io.StringIO()
    print_support(view, out, StyledTerminal(out, width=70, color_system="standard"))
    styled = out.getvalue()
    assert "\x1b[1;32m" in styled  # supported in bold green
    text = re.sub(r"\x1b\[[0-9;]*m", "", styled)
    assert "✓ supported" in text and view.summary() in text


def test_inline_styles_stay_within_what_jupyterlab_keeps() -> None:
    keeps = _JUPYTERLAB_KEEPS | {"color"}  # JupyterLab's sanitizer keeps colour (hex, names)
    root = parse(ck.show_support(answer()).to_html())
    for node in root.iter():
        for declaration in filter(
            None, (d.strip() for d in node.attrs.get("style", "").split(";"))
        ):
            prop, _, value = declaration.partition(":")
            assert prop.strip() in keeps, declaration
            assert "var(" not in value and "url(" not in value
        if node.tag == "a" and node.attrs.get("href", "").startswith("#"):
            assert "style" not in node.attrs  # marimo: no style on an in-page link


def test_strict_survives_nbconvert_sanitizer() -> None:
    from nbconvert.filters.strings import clean_html

    html = ck.show_support(answer()).to_html(strict=True)
    tags = {n.tag for n in parse(html).iter()} - {"#root"}
    assert tags <= _NBCONVERT_TAGS | {"b"}, tags - _NBCONVERT_TAGS

    def visible(fragment: str) -> str:
        return " ".join(parse(fragment).text.split())

    assert visible(clean_html(html)) == visible(html)
    assert "✓ supported" in visible(html)


def test_display_bundle_never_raises() -> None:
    view = ck.show_support(answer())
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == support_text(view)


def test_show_support_refuses_what_is_not_an_answer() -> None:
    with pytest.raises(TypeError, match="one Answer"):
        ck.show_support([answer()])  # type: ignore[arg-type]


# -- hostile text ---------------------------------------------------------------------------------
_text = st.one_of(
    st.text(max_size=60),
    st.sampled_from(_PAYLOADS),
    st.lists(
        st.sampled_from([*_PAYLOADS, "[^1]", "[2]", " word. ", "\n\n", "- ", "# "]), max_size=5
    ).map("".join),
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentences=st.lists(_text, min_size=1, max_size=4),
    passages=st.lists(_text, min_size=1, max_size=3),
    title=_text,
    strict=st.booleans(),
)
def test_no_tag_or_attribute_injection_from_any_sentence_or_passage(
    sentences: list[str], passages: list[str], title: str, strict: bool
) -> None:
    text = " ".join(f"{s} [^{i % len(passages) + 1}]" for i, s in enumerate(sentences))
    citations = tuple(cite(i + 1, p, title) for i, p in enumerate(passages))
    view = ck.show_support(ck.Answer(provider="magisterium", text=text, citations=citations))
    html = support_html(view, strict=strict)
    root = parse(html)  # balanced: nothing closed what it did not open
    tokens = {n.attrs["id"] for n in root.find_all(None, "citekit-support")}
    (token,) = tokens
    for node in root.iter():
        assert node.tag not in {"script", "iframe", "img", "svg", "object", "embed", "form"}
        if node.tag == "style":
            assert node.parent is not None and node.parent.attrs.get("id") == token
            # constants and the render's token only: no provider text in a style
            assert re.fullmatch(r"[#\w\s.,:;{}()\-]+", "".join(map(str, node.children)))
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (name, value)
            if name == "href":
                assert value.startswith(("http://", "https://", f"#{token}-")), value
            if name == "style":
                assert "url(" not in value.lower() and "expression(" not in value.lower()
            if name == "class":  # only our own classes
                assert all(c.startswith("citekit-") for c in value.split()), value
    # What a provider wrote is shown as text: each best passage reads whole, as written.
    shown = " ".join(root.text.split())
    for sentence in view.sentences:
        for source in sentence.sources:
            if source.passage:
                assert " ".join(html_module.unescape(source.passage).split()) in shown
