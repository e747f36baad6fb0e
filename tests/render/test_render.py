"""The rendering package: HTML structure, Markdown, plain text, bundles, safety, live display."""

from __future__ import annotations

import dataclasses
import io
import re
import threading
import warnings
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit.render.markdown as markdown_module
from citekit import Answer, Choice, Citation, Reference, References, ToolCall, Usage
from citekit.render import (
    LiveAnswer,
    NotebookLiveAnswer,
    RenderWarning,
    TerminalLiveAnswer,
    answer_bundle,
    answer_html,
    answer_markdown,
    answer_text,
    references_bundle,
    references_html,
    references_markdown,
    references_text,
    safe_url,
)
from citekit.render.html import target_style
from citekit.render.live import streaming_html
from citekit.text.escape import STYLE
from tests.budget import examples
from tests.conftest import sample_answers
from tests.render.test_text import MARKED

# -- a small DOM over html.parser -------------------------------------------------------------
_VOID = {"br", "hr", "img", "meta", "link", "input", "wbr", "col", "area", "source"}


@dataclasses.dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = dataclasses.field(default_factory=list)
    parent: Node | None = None

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.attrs.get("class", "").split())
        ]

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def ancestors(self) -> Iterator[Node]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.unbalanced: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(
            Node(tag, {k: v or "" for k, v in attrs}, parent=self.stack[-1])
        )

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if self.stack[-1].tag != tag:
            self.unbalanced.append(tag)
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    assert not builder.unbalanced, f"unbalanced tags: {builder.unbalanced}"
    assert len(builder.stack) == 1, f"unclosed: {[n.tag for n in builder.stack[1:]]}"
    return builder.root


def by_id(root: Node) -> dict[str, Node]:
    ids: dict[str, Node] = {}
    for node in root.iter():
        if "id" in node.attrs:
            assert node.attrs["id"] not in ids, f"duplicate id {node.attrs['id']}"
            ids[node.attrs["id"]] = node
    return ids


# -- fixtures -----------------------------------------------------------------------------------
def cite(index: int, text: str = "passage", **kw: Any) -> Citation:
    defaults: dict[str, Any] = {
        "document_title": f"Document {index + 1}",
        "document_author": "Author",
        "document_year": "1993",
        "document_reference": str(10 + index),
        "source_url": f"https://example.org/doc/{index + 1}",
    }
    defaults.update(kw)
    return Citation(cited_text=text, document_index=index, **defaults)


def magisterium_answer(**kw: Any) -> Answer:
    fields: dict[str, Any] = {
        "provider": "magisterium",
        "model": "magisterium-1",
        "text": (
            "## Work\n\nWork has *dignity*[^1] and **value** [2].\n\n"
            "- first point[^1][^3]\n- second `[2] stays code`\n\n"
            "Unknown marker [^9] stays text.\n"
        ),
        "citations": (
            cite(0, "First passage of one.", cited_text_heading="On work"),
            cite(0, "Second passage of one.", document_reference="11b"),
            cite(1, "Passage of two.", document_title="Laborem exercens"),
            cite(2, "Passage of three."),
            cite(4, "Never cited inline."),
        ),
        "related_questions": ("What is a just wage?", "What is subsidiarity?"),
        "question": "Why does work have dignity?",
        "usage": Usage(total_tokens=1234),
    }
    fields.update(kw)
    return Answer(**fields)


def gptbots_references(**kw: Any) -> References:
    items = (
        Reference(content="Chunk one text.", rank=1, data_name="a.pdf", score=0.9),
        Reference(
            content="Chunk two text.",
            rank=2,
            data_name="Page",
            source_url="https://e.org/p",
            score=0.45,
        ),
        Reference(content="Chunk three.", rank=3, data_id="id-3", score=None),
    )
    fields: dict[str, Any] = {"items": items, "message_id": "m-1"}
    fields.update(kw)
    return References(**fields)


def root_token(root: Node) -> str:
    container = root.find_all("div", "citekit-answer") or root.find_all("div", "citekit-references")
    return container[0].attrs["id"]


# -- HTML structure -----------------------------------------------------------------------------
def test_every_marker_links_to_a_footnote_of_the_same_render() -> None:
    root = parse(answer_html(magisterium_answer()))
    token = root_token(root)
    ids = by_id(root)
    markers = root.find_all("a", "citekit-marker")
    assert [m.text for m in markers] == ["[1]", "[2]", "[1]", "[3]"]
    for marker in markers:
        href = marker.attrs["href"]
        assert href.startswith(f"#{token}-fn-")
        target = ids[href[1:]]
        assert target.tag == "li" and "citekit-footnote" in target.attrs["class"]
        assert marker.attrs["id"].startswith(f"{token}-m-")
        assert marker.parent is not None and marker.parent.tag == "sup"
    assert all(i.startswith(token) for i in ids)


def test_footnotes_are_one_based_and_grouped_by_document() -> None:
    root = parse(answer_html(magisterium_answer()))
    token = root_token(root)
    notes = root.find_all("li", "citekit-footnote")
    assert [n.attrs["id"] for n in notes] == [f"{token}-fn-{k}" for k in (1, 2, 3, 5)]
    assert [n.attrs["value"] for n in notes] == ["1", "2", "3", "5"]
    first = notes[0]
    assert first.text.startswith("[1] Document 1")
    passages = first.find_all("details", "citekit-passage")
    assert len(passages) == 2
    assert "First passage of one." in passages[0].text
    assert passages[0].find_all("summary")[0].text == "no. 10 · On work"
    assert "Second passage of one." in passages[1].text
    assert passages[1].find_all("summary")[0].text == "11b"


def test_footnote_shows_link_author_year_reference_and_backlinks() -> None:
    root = parse(answer_html(magisterium_answer()))
    token = root_token(root)
    ids = by_id(root)
    first = ids[f"{token}-fn-1"]
    link = first.find_all("a")[0]
    assert link.attrs["href"] == "https://example.org/doc/1"
    assert link.attrs["target"] == "_blank" and link.attrs["rel"] == "noopener noreferrer"
    assert "Author · 1993 · no. 10, 11b" in first.text
    backlinks = first.find_all("a", "citekit-backlink")
    assert [b.attrs["href"] for b in backlinks] == [f"#{token}-m-1-1", f"#{token}-m-1-2"]
    for b in backlinks:
        assert ids[b.attrs["href"][1:]].text == "[1]"


def test_marker_tooltip_names_title_author_year_and_reference() -> None:
    root = parse(answer_html(magisterium_answer()))
    marker = root.find_all("a", "citekit-marker")[1]
    assert marker.attrs["title"] == "Laborem exercens — Author · 1993 · no. 11"


def test_unknown_markers_stay_plain_text_and_uncited_citations_are_listed() -> None:
    root = parse(answer_html(magisterium_answer()))
    token = root_token(root)
    assert "Unknown marker [^9] stays text." in root.text
    assert not [a for a in root.find_all("a") if a.attrs.get("href", "").endswith("-fn-9")]
    uncited = by_id(root)[f"{token}-fn-5"]
    assert uncited.find_all("span", "citekit-uncited")[0].text == "not cited inline"
    assert not uncited.find_all("a", "citekit-backlink")
    assert "Never cited inline." in uncited.text


def test_markers_in_code_and_links_are_not_footnotes() -> None:
    answer = magisterium_answer(
        text="Code `[1]` and\n\n```\n[2]\n```\n\nA link [1](https://example.org/x) and [text](https://e.org)[^2]."
    )
    root = parse(answer_html(answer))
    assert [m.text for m in root.find_all("a", "citekit-marker")] == ["[2]"]
    assert [c.text for c in root.find_all("code")][:2] == ["[1]", "[2]\n"]
    links = [a.attrs["href"] for a in root.find_all("a") if a.attrs.get("target") == "_blank"]
    assert "https://example.org/x" in links and "https://e.org" in links


def test_adjacent_and_repeated_markers_get_distinct_ids() -> None:
    answer = magisterium_answer(text="One[^1][^1][1] and [^2]")
    root = parse(answer_html(answer))
    token = root_token(root)
    ids = [m.attrs["id"] for m in root.find_all("a", "citekit-marker")]
    assert ids == [f"{token}-m-1-1", f"{token}-m-1-2", f"{token}-m-1-3", f"{token}-m-2-1"]


def test_definition_lines_leave_the_body() -> None:
    answer = magisterium_answer(text="Body [^1].\n\n[^1]: Catechism 1934\n[^7]: A loose note\n")
    html = answer_html(answer)
    root = parse(html)
    body = root.find_all("div", "citekit-text")[0]
    assert "Catechism 1934" not in body.text
    assert "[7] A loose note" in root.find_all("div", "citekit-definitions")[0].text


def test_two_renders_never_share_ids() -> None:
    answer = magisterium_answer()
    first, second = by_id(parse(answer_html(answer))), by_id(parse(answer_html(answer)))
    assert first and second and not set(first) & set(second)


def test_markdown_is_rendered() -> None:
    answer = magisterium_answer(
        text="# Title\n\n## Part\n\nSome *em* and **strong** and `code`.\n\n1. one\n2. two\n\n"
        "> quoted\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n~~old~~\n"
    )
    root = parse(answer_html(answer))
    body = root.find_all("div", "citekit-text")[0]
    assert [h.tag for h in body.iter() if re.fullmatch(r"h[1-6]", h.tag)] == ["h3", "h3"]
    assert body.find_all("em")[0].text == "em" and body.find_all("strong")[0].text == "strong"
    assert [li.text for li in body.find_all("ol")[0].find_all("li")] == ["one", "two"]
    assert body.find_all("blockquote") and body.find_all("table") and body.find_all("s")
    assert not body.find_all("p"), "answer text uses <div> blocks"


def test_raw_html_in_answer_is_escaped_and_bad_links_are_text() -> None:
    answer = magisterium_answer(
        text="<b>bold?</b> [x](javascript:alert(1)) <https://ok.example> ![img](https://e.org/i.png)"
    )
    root = parse(answer_html(answer))
    body = root.find_all("div", "citekit-text")[0]
    assert not body.find_all("b") and not body.find_all("img")
    assert "<b>bold?</b>" in body.text and "[x](javascript:alert(1))" in body.text
    hrefs = [a.attrs["href"] for a in body.find_all("a")]
    assert hrefs == ["https://ok.example", "https://e.org/i.png"]


def test_source_url_allow_list() -> None:
    assert safe_url("https://example.org/a?b=c#d") == "https://example.org/a?b=c#d"
    assert safe_url("  HTTP://Example.org ") == "HTTP://Example.org"
    for bad in (
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "//example.org/x",
        "/relative",
        "https://",
        "https://exa mple.org",
        'https://e.org/"onmouseover="x',
        "",
        None,
    ):
        assert safe_url(bad) is None, bad
    answer = magisterium_answer(
        citations=(cite(0, source_url="javascript:alert(1)"),), text="A[^1]"
    )
    root = parse(answer_html(answer))
    note = root.find_all("li", "citekit-footnote")[0]
    assert not [a for a in note.find_all("a") if "javascript" in a.attrs.get("href", "")]
    assert "(javascript:alert(1))" in note.text


def test_related_questions_and_labels() -> None:
    answer = magisterium_answer(
        raw={"citekit_sample": "magisterium/01_x"},
        partial=True,
        cached=True,
        notes=("References could not be fetched.",),
    )
    root = parse(answer_html(answer))
    labels = [s.text for s in root.find_all("span", "citekit-label")]
    # What the answer is sits above the question, what happened to its text below it.
    assert labels == [
        "recorded sample · magisterium/01_x",
        "from cache",
        "incomplete: the stream was interrupted",
    ]
    assert root.find_all("div", "citekit-note")[0].text == "References could not be fetched."
    related = root.find_all("div", "citekit-related")[0]
    assert [li.text for li in related.find_all("li")] == [
        "What is a just wage?",
        "What is subsidiarity?",
    ]


def test_content_filtered_answer_says_so() -> None:
    answer = Answer(provider="magisterium", text="", finish_reason="content_filter")
    html = answer_html(answer)
    assert "withheld by the provider&#x27;s content filter" in html
    assert "withheld by the provider's content filter" in answer_text(answer)
    assert "(empty answer)" not in html


def test_the_content_filter_notice_sits_below_the_question() -> None:
    answer = Answer(
        provider="magisterium", text="", finish_reason="content_filter", question="Why?"
    )
    html = answer_html(answer)
    assert html.index("Question: Why?") < html.index("withheld by the provider")


def test_an_answer_that_is_a_tool_call_says_why_it_has_no_text() -> None:
    answer = Answer(
        provider="maritaca",
        text="",
        tool_calls=(ToolCall(id="c1", name="get_weather", arguments='{"city": "Recife"}'),),
    )
    root = parse(answer_html(answer))
    said = root.find_all("div", "citekit-text")[0].text.strip()
    assert said.startswith("(no text: the answer is a tool call (get_weather)")
    assert "(empty answer)" not in str(root)
    assert "the answer is a tool call (get_weather)" in answer_text(answer)


def test_gptbots_answer_shows_ranked_references_with_score_bars() -> None:
    answer = Answer(
        provider="gptbots", text="The wall was built for defence.", references=gptbots_references()
    )
    root = parse(answer_html(answer))
    section = root.find_all("div", "citekit-references")[0]
    items = section.find_all("li", "citekit-reference")
    assert [i.find_all("a")[0].text if i.find_all("a") else i.text[:5] for i in items][1] == "Page"
    assert items[0].text.startswith("a.pdf") and "score 0.900" in items[0].text
    bars = section.find_all("span", "citekit-score-bar")
    assert len(bars) == 2
    widths = [re.search(r"width:([0-9.]+)%", b.children[0].attrs["style"]).group(1) for b in bars]  # type: ignore[union-attr]
    assert widths == ["90.0", "45.0"]
    assert "Chunk three." in items[2].text and "id-3" in items[2].text


def test_scores_above_one_are_scaled_to_the_largest() -> None:
    refs = References(items=(Reference("x", 1, score=8.0), Reference("y", 2, score=2.0)))
    root = parse(references_html(refs))
    bars = root.find_all("span", "citekit-score-bar")
    assert [b.children[0].attrs["style"].rsplit("width:", 1)[1] for b in bars] == [
        "100.0%",
        "25.0%",
    ]  # type: ignore[union-attr]


def test_references_html_stands_alone() -> None:
    refs = gptbots_references(
        raw={"citekit_sample": "gptbots/01_x"}, note="Scores are cosine similarities."
    )
    root = parse(references_html(refs))
    assert root.find_all("span", "citekit-label")[0].text == "recorded sample · gptbots/01_x"
    assert root.find_all("div", "citekit-note")[0].text == "Scores are cosine similarities."
    assert len(root.find_all("li", "citekit-reference")) == 3
    empty = parse(references_html(References()))
    assert "No knowledge chunks were retrieved." in empty.text


def test_choices_and_tool_calls_are_shown() -> None:
    answer = magisterium_answer(
        choices=(Choice(0, "first"), Choice(1, "second choice[^1]")),
        tool_calls=(ToolCall(id="c1", name="get_weather", arguments='{"city": "<x>"}'),),
    )
    root = parse(answer_html(answer))
    assert "Choice 2" in root.text and "second choice" in root.text
    assert root.find_all("div", "citekit-tool-call")[0].find_all("code")[0].text == "get_weather"
    assert '{"city": "<x>"}' in root.text


# Properties JupyterLab's output sanitizer keeps (packages/apputils/src/sanitizer.ts, 4.x);
# the subset a citekit render may use.
_JUPYTERLAB_KEEPS = {
    "background-color", "border", "border-collapse", "border-left", "border-radius",
    "border-top", "cursor", "display", "font-size", "font-weight", "height", "line-height",
    "list-style-type", "margin", "opacity", "overflow-x", "padding", "text-align",
    "text-decoration", "vertical-align", "width",
}  # fmt: skip


@pytest.mark.parametrize("strict", [False, True])
def test_inline_styles_stay_within_what_sanitizers_keep(strict: bool) -> None:
    answer = dataclasses.replace(
        magisterium_answer(text="# H\n\n| a |\n|:-:|\n| b |\n\n`c` ```x```\n\n---\n\n> q"),
        references=gptbots_references(),
        raw={"citekit_sample": "x"},
        notes=("n",),
    )
    root = parse(answer_html(answer, strict=strict))
    for node in root.iter():
        style = node.attrs.get("style")
        if style is None:
            continue
        for declaration in filter(None, (d.strip() for d in style.split(";"))):
            prop, _, value = declaration.partition(":")
            assert prop.strip() in _JUPYTERLAB_KEEPS, declaration
            assert "var(" not in value and "url(" not in value and "!important" not in value


# nbconvert's clean_html (used with sanitize_html=True) keeps these tags; others are escaped.
_NBCONVERT_TAGS = {
    "a", "abbr", "acronym", "b", "blockquote", "code", "div", "em", "i", "li", "ol", "pre",
    "span", "strong", "table", "td", "tr", "ul",
}  # fmt: skip


def _visible_text(html: str) -> str:
    return " ".join(parse(html).text.split())


def test_strict_html_survives_nbconvert_sanitizer_without_literal_tags() -> None:
    from nbconvert.filters.strings import clean_html

    answer = dataclasses.replace(
        magisterium_answer(
            text="# H\n\nText[^1] *e* `c` <i>raw</i>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
            "line  \nbreak ~~s~~\n\n---\n\n1. x\n\n```\n<b>code</b>\n```\n"
        ),
        references=gptbots_references(),
        raw={"citekit_sample": "magisterium/01"},
        partial=True,
    )
    html = answer_html(answer, strict=True)
    tags = {n.tag for n in parse(html).iter()} - {"#root"}
    assert tags <= _NBCONVERT_TAGS, tags - _NBCONVERT_TAGS
    cleaned = clean_html(html)
    assert _visible_text(cleaned) == _visible_text(html)
    root = parse(cleaned)
    ids = by_id(root)
    marker = root.find_all("a", "citekit-marker")[0]
    assert marker.attrs["href"][1:] in ids and marker.attrs["title"].startswith("Document 1")
    assert "First passage of one." in root.text  # passages are shown open in strict mode
    # The normal variant needs <sup>/<details>, which that sanitizer would show as text.
    assert _visible_text(clean_html(answer_html(answer))) != _visible_text(answer_html(answer))


def test_strict_references_html_survives_nbconvert_sanitizer() -> None:
    from nbconvert.filters.strings import clean_html

    html = references_html(gptbots_references(), strict=True)
    assert _visible_text(clean_html(html)) == _visible_text(html)


# -- Markdown and plain text --------------------------------------------------------------------
def test_answer_markdown_uses_footnotes_and_definitions() -> None:
    md = answer_markdown(magisterium_answer())
    assert "Work has *dignity*[^1] and **value** [^2]." in md
    assert "- first point[^1][^3]" in md and "`[2] stays code`" in md
    assert "Unknown marker [^9] stays text." in md
    assert "[^1]: [Document 1](<https://example.org/doc/1>) — Author · 1993 · no. 10, 11b" in md
    assert "    > First passage of one." in md and "    > Second passage of one." in md
    assert "[^5]:" not in md
    assert "**Sources not cited inline**" in md and "- \\[5\\] [Document 5]" in md
    assert "**Related questions**\n\n- What is a just wage?" in md
    definitions = re.findall(r"^\[\^(\d+)\]:", md, re.M)
    assert definitions == ["1", "2", "3"]


def test_answer_markdown_escapes_html_and_bad_urls() -> None:
    answer = magisterium_answer(
        text="<script>alert(1)</script> `<b>inline</b>` <https://auto.example>[^1]\n\n"
        "```html\n<b>kept in a code block</b>\n```\n\n[x](javascript:y) ![i](https://e.org/i.png)",
        citations=(
            cite(
                0, "<img src=x onerror=alert(1)>", document_title="T*[x]", source_url="javascript:x"
            ),
        ),
    )
    md = answer_markdown(answer)
    assert "&lt;script>alert(1)&lt;/script>" in md
    assert "<https://auto.example>" in md
    assert "\n<b>kept in a code block</b>\n" in md
    assert "`<b>inline</b>`" in md  # code every renderer reads as code keeps its "<"
    assert "[x]\\(javascript:y)" in md and "\\![i](https://e.org/i.png)" in md
    assert "T\\*\\[x\\] (javascript:x)" in md and "](<javascript" not in md
    assert "> &lt;img src=x onerror=alert(1)>" in md


def test_references_markdown_and_text() -> None:
    refs = gptbots_references()
    md = references_markdown(refs)
    assert "1. a.pdf — score 0.900" in md and "2. [Page](<https://e.org/p>) — score 0.450" in md
    assert "3. id-3\n" in md and "   > Chunk three." in md
    text = references_text(refs)
    assert "  1. a.pdf (score 0.900)" in text and "      https://e.org/p" in text


def test_answer_text_is_readable_with_numbered_sources() -> None:
    text = answer_text(magisterium_answer(raw={"citekit_sample": "magisterium/01_x"}))
    assert text.startswith("[recorded sample · magisterium/01_x]\n## Work")
    assert "Work has *dignity*[1] and **value** [2]." in text
    assert "Unknown marker [^9] stays text." in text
    assert (
        "Sources:\n  [1] Document 1 — Author · 1993 · no. 10, 11b\n      https://example.org/doc/1"
        in text
    )
    assert "  [5] Document 5 — Author · 1993 · no. 14 (not cited inline)" in text
    assert "Related questions:\n  - What is a just wage?" in text


# -- mimebundle ---------------------------------------------------------------------------------
def test_mimebundle_has_three_formats_and_honours_include_exclude() -> None:
    answer = magisterium_answer()
    bundle = answer._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}
    assert set(answer._repr_mimebundle_(include={"text/html"})) == {"text/html"}
    assert set(answer._repr_mimebundle_(exclude={"text/markdown"})) == {"text/plain", "text/html"}
    refs = gptbots_references()
    assert set(refs._repr_mimebundle_()) == {"text/plain", "text/markdown", "text/html"}
    assert answer.to_html().startswith('<div class="citekit-answer"')
    assert answer.to_markdown() == answer_markdown(answer)
    assert refs.to_markdown() == references_markdown(refs)


def test_mimebundle_never_raises(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import citekit.render.bundle as bundle_module

    def broken(obj: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setitem(bundle_module._ANSWER, "text/html", broken)
    answer = magisterium_answer()
    with pytest.warns(RenderWarning, match="boom"):
        bundle = answer_bundle(answer)
    assert list(bundle) == ["text/plain"] and "Work has" in bundle["text/plain"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(answer_bundle(answer)) == ["text/plain"]
    assert "boom" in capsys.readouterr().err
    monkeypatch.setitem(bundle_module._REFERENCES, "text/html", broken)
    refs = References(items=(Reference("a chunk", 1),))
    with pytest.warns(RenderWarning, match="References as text/html"):
        assert list(references_bundle(refs)) == ["text/plain"]


def test_display_survives_odd_values() -> None:
    odd = Answer(
        provider="magisterium",
        text="x[^1]",
        citations=(Citation(cited_text="", document_index=0),),
        references=References(items=(Reference("", 1, score=float("nan")),)),
        related_questions=("", "  "),
    )
    bundle = answer_bundle(odd)
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}
    assert "Source 1" in bundle["text/html"] and "(no passage text)" in bundle["text/html"]


# -- samples ------------------------------------------------------------------------------------


def test_every_sample_renders_with_its_label() -> None:
    samples = sample_answers()
    if not samples:
        pytest.skip("sample_data has no recorded answers yet")
    for name, answer in samples:
        bundle = answer_bundle(answer)
        root = parse(bundle["text/html"])
        assert root.find_all("span", "citekit-label")[0].text == f"recorded sample · {name}"
        assert f"[recorded sample · {name}]" in bundle["text/plain"]
        ids = by_id(root)
        for marker in root.find_all("a", "citekit-marker"):
            assert marker.attrs["href"][1:] in ids
        numbers = answer.cited_markers
        assert len(root.find_all("li", "citekit-footnote")) == len(
            {c.marker for c in answer.citations}
        )
        assert {int(m.text.strip("[]")) for m in root.find_all("a", "citekit-marker")} <= numbers


# -- safety property ----------------------------------------------------------------------------
_PAYLOADS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "javascript:alert(1)",
    " JaVaScRiPt:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "[x](javascript:alert(1))",
    "<a href='javascript:alert(1)'>x</a>",
    "' onmouseover='alert(1)",
    "<svg onload=alert(1)>",
    "</details></li></ol><script>alert(1)</script>",
    "<style>*{background:url(javascript:alert(1))}</style>",
    'x" style="background:url(javascript:alert(1))',
    "expression(alert(1))",
    "[^1]: <script>x</script>",
    '<https://ok.example/"onmouseover=alert(1)>',
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "```\n</code></pre><script>x</script>\n```",
]
_text = st.one_of(
    st.text(max_size=80),
    st.sampled_from(_PAYLOADS),
    st.lists(st.sampled_from(_PAYLOADS), max_size=3).map("".join),
)
_url = st.one_of(
    st.none(),
    st.text(max_size=40),
    st.sampled_from(_PAYLOADS),
    st.builds(lambda s: "https://e.org/" + s, st.text(max_size=20)),
    st.builds(lambda s: "http://" + s, st.sampled_from(_PAYLOADS)),
)
_citation = st.builds(
    Citation,
    cited_text=_text,
    document_index=st.integers(0, 5),
    cited_text_heading=st.one_of(st.none(), _text),
    document_title=st.one_of(st.none(), _text),
    document_author=st.one_of(st.none(), _text),
    document_year=st.one_of(st.none(), _text),
    document_reference=st.one_of(st.none(), _text),
    source_url=_url,
)
_reference = st.builds(
    Reference,
    content=_text,
    rank=st.integers(1, 9),
    data_id=st.one_of(st.none(), _text),
    data_name=st.one_of(st.none(), _text),
    source_url=_url,
    score=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
)
_answer = st.builds(
    Answer,
    provider=_text,
    text=st.lists(
        st.one_of(_text, st.sampled_from(["[^1]", "[2]", "[^3]", "\n\n", "# ", "- "])), max_size=8
    ).map("".join),
    model=st.one_of(st.none(), _text),
    citations=st.lists(_citation, max_size=4).map(tuple),
    references=st.one_of(
        st.none(),
        st.builds(
            References,
            items=st.lists(_reference, max_size=3).map(tuple),
            note=st.one_of(st.none(), _text),
        ),
    ),
    related_questions=st.lists(_text, max_size=2).map(tuple),
    question=st.one_of(st.none(), _text),
    notes=st.lists(_text, max_size=2).map(tuple),
    tool_calls=st.lists(
        st.builds(ToolCall, id=st.none(), name=_text, arguments=_text), max_size=1
    ).map(tuple),
    raw=st.one_of(st.just({}), st.builds(lambda s: {"citekit_sample": s}, _text)),
)


def assert_safe_html(html: str) -> None:
    root = parse(html)
    for node in root.iter():
        if node.tag == "style":  # only the answer's own scoped style, constants and its token
            token = node.parent.attrs.get("id", "") if node.parent is not None else ""
            (css,) = node.children
            if css != target_style(token)[7:-8]:
                # the landing rules: the token and numbers only, then the constant highlight
                rule = f'#{token}:has\\(a\\[href="#{token}-(?:fn-\\d+|m-\\d+-\\d+)"\\]:focus\\) '
                rule += f'\\[id="{token}-(?:fn-\\d+|m-\\d+-\\d+)"\\]'
                style = re.escape("{" + STYLE.TARGET + "}")
                assert re.fullmatch(f"{rule}(?:, {rule})*{style}", css), css
            continue
        assert node.tag not in {
            "script",
            "iframe",
            "object",
            "embed",
            "img",
            "svg",
            "form",
        }, node.tag
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (name, value)
            if name in ("href", "src", "action", "formaction", "xlink:href"):
                assert re.match(r"(https?://|#ck[0-9a-f]+-)", value), (name, value)
            if name == "style":
                lowered = value.lower()
                assert "url(" not in lowered and "expression(" not in lowered, value


def _permissive_markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True})
    md.validateLink = lambda url: True
    return md


_PERMISSIVE_MARKDOWN = _permissive_markdown()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=_answer, strict=st.booleans())
def test_no_script_handler_or_unsafe_url_for_any_input(answer: Answer, strict: bool) -> None:
    assert_safe_html(answer_html(answer, strict=strict))
    if answer.references is not None:
        assert_safe_html(references_html(answer.references, strict=strict))
    assert_safe_html(streaming_html(answer.provider, answer.question, answer.text, status="x"))
    bundle = answer_bundle(answer)
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}
    # The Markdown too, as rendered by a front end that allows raw HTML and any link.
    assert_safe_html(_PERMISSIVE_MARKDOWN.render(bundle["text/markdown"]))


# -- live display -------------------------------------------------------------------------------
class FakeClock:
    def __init__(self, step: float = 0.0) -> None:
        self.now = 100.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class FakeHandle:
    def __init__(self, log: list[tuple[str, dict[str, str]]]) -> None:
        self.log = log

    def update(self, obj: dict[str, str], **kw: Any) -> None:
        assert kw == {"raw": True}
        self.log.append(("update", obj))


class FakeDisplay:
    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, str]]] = []
        self.threads: list[int] = []

    def __call__(self, obj: dict[str, str], **kw: Any) -> FakeHandle:
        assert kw == {"raw": True, "display_id": True}
        self.log.append(("display", obj))
        return FakeHandle(self.log)


def test_live_start_picks_the_right_implementation() -> None:
    assert type(LiveAnswer.start(provider="magisterium", enabled=False)) is LiveAnswer
    live = LiveAnswer.start(provider="magisterium", question="q")
    assert isinstance(live, TerminalLiveAnswer)  # no IPython kernel here
    noop = LiveAnswer("magisterium")
    noop.add("x")
    noop.finish(magisterium_answer())
    noop.fail(RuntimeError())


def test_notebook_live_updates_in_place_throttled_and_ends_with_footnotes() -> None:
    display = FakeDisplay()
    clock = FakeClock(step=0.001)  # one millisecond per clock read
    live = NotebookLiveAnswer("magisterium", "Why?", display=display, clock=clock, interval=0.1)
    assert (
        display.log[0][0] == "display"
        and "waiting for the answer" in display.log[0][1]["text/html"]
    )
    answer = magisterium_answer()
    deltas = [answer.text[i : i + 3] for i in range(0, len(answer.text), 3)] * 50
    for delta in deltas:
        live.add(delta)
    updates = [obj for kind, obj in display.log if kind == "update"]
    elapsed = clock.now - 100.0
    assert 2 <= len(updates) <= elapsed / 0.1 + 2
    assert live.renders == len(updates)
    assert updates[0]["text/html"].count("citekit-marker") == 0  # no links while streaming
    assert "<sup" in updates[-1]["text/html"] and "receiving" in updates[-1]["text/html"]
    assert live.text == "".join(deltas)
    live.finish(answer)
    final = display.log[-1]
    assert final[0] == "update" and set(final[1]) == {"text/plain", "text/markdown", "text/html"}
    assert "citekit-footnote" in final[1]["text/html"]
    assert [kind for kind, _ in display.log].count("display") == 1


def test_notebook_live_first_delta_shows_at_once_and_fail_keeps_text() -> None:
    display = FakeDisplay()
    live = NotebookLiveAnswer("maritaca", None, display=display, clock=FakeClock(step=0.0))
    live.add("Hello")
    live.add(" world")  # clock does not move: throttled
    assert len(display.log) == 2 and "Hello" in display.log[1][1]["text/html"]
    live.fail(TimeoutError("read timed out"))
    html = display.log[-1][1]["text/html"]
    assert "Hello world" in html and "incomplete: the stream was interrupted" in html
    assert "TimeoutError" in html


def test_notebook_live_add_from_another_thread() -> None:
    display = FakeDisplay()
    live = NotebookLiveAnswer("magisterium", None, display=display, clock=FakeClock(step=1.0))
    worker = threading.Thread(target=lambda: [live.add(f"{i} ") for i in range(5)])
    worker.start()
    worker.join()
    assert live.text == "0 1 2 3 4 " and len(display.log) >= 2


def test_notebook_live_render_errors_do_not_escape() -> None:
    class BrokenHandle:
        def update(self, obj: object, **kw: Any) -> None:
            raise RuntimeError("front end gone")

    live = NotebookLiveAnswer(
        "magisterium", None, display=lambda obj, **kw: BrokenHandle(), clock=FakeClock(1.0)
    )
    with pytest.warns(RenderWarning, match="front end gone"):
        live.add("x")
        live.finish(magisterium_answer())


def test_terminal_live_prints_progressively_then_sources() -> None:
    out = io.StringIO()
    live = TerminalLiveAnswer("magisterium", "q", stream=out, clock=FakeClock(0.05))
    answer = magisterium_answer()
    live.add("Work has dignity[^1]")
    assert out.getvalue() == "Work has dignity[^1]"
    live.add(" and value.")
    live.finish(answer)
    text = out.getvalue()
    assert text.startswith("Work has dignity[^1] and value.\n\nSources:\n  [1] Document 1")
    assert "Related questions:" in text


def test_terminal_live_without_deltas_prints_the_whole_answer_and_fail_marks_it() -> None:
    out = io.StringIO()
    live = TerminalLiveAnswer("gptbots", None, stream=out)
    live.finish(Answer(provider="gptbots", text="Whole answer.", references=gptbots_references()))
    assert out.getvalue().startswith("Whole answer.\n\nSources (ranked by relevance):\n  1. a.pdf")
    out = io.StringIO()
    live = TerminalLiveAnswer("gptbots", None, stream=out)
    live.add("partial")
    live.fail(ConnectionError("reset"))
    assert (
        out.getvalue()
        == "partial\n[incomplete: the stream was interrupted (ConnectionError: reset)]\n"
    )
    out = io.StringIO()
    live = TerminalLiveAnswer("gptbots", None, stream=out)
    live.add("partial")
    live.fail(KeyboardInterrupt())  # Ctrl-C carries no message: no dangling colon
    assert out.getvalue().endswith("[incomplete: the stream was interrupted (KeyboardInterrupt)]\n")


def test_notebook_live_uses_ipython_display_inside_a_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import IPython
    import IPython.display

    class Shell:
        kernel = object()
        display_pub = None

    calls: list[dict[str, Any]] = []

    def fake_display(obj: object, **kw: Any) -> FakeHandle:
        calls.append(kw)
        return FakeHandle([])

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    monkeypatch.setattr(IPython.display, "display", fake_display)
    live = LiveAnswer.start(provider="magisterium", question="q")
    assert isinstance(live, NotebookLiveAnswer)
    assert calls == [{"raw": True, "display_id": True}]


# -- incremental rendering of the growing text ------------------------------------------------
_BLOCKS = [
    "Para with *em* and [^1] marker.",
    "## Heading [2]",
    "- item one\n- item two[^3]",
    "1. first\n2. second",
    "   indented three",
    "    indented code",
    "```\ncode [1]\n\nmore code\n```",
    "~~~py\nx\n\ny\n~~~",
    "> quote\n> more",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "---",
    "___",
    "Setext\n===",
    "- loose\n\n- list",
    "- item\n\n  continued para",
    "  - nested\n    - deeper",
    "2023 was a year.",
    "10) ten",
    "+ plus",
    "Text\nlazy line",
    "[link](https://e.org) and <https://x.org>",
    "Hard  \nbreak",
    "```\nunclosed fence",
    "- a\n  ```\n  x\n\nfoo\n```",
    "[ref]: https://e.org",
    "see [ref]",
    "[^1]: a definition",
]


@settings(max_examples=examples(300), deadline=None)
@given(
    blocks=st.lists(st.sampled_from(_BLOCKS), min_size=1, max_size=8),
    separator=st.sampled_from(["\n\n", "\n", "\n\n\n"]),
    cuts=st.lists(st.integers(1, 60), max_size=30),
)
def test_incremental_render_equals_a_whole_render(
    blocks: list[str], separator: str, cuts: list[int]
) -> None:
    from citekit.text.incremental import IncrementalMarkdown, fill_markers
    from citekit.text.markdown_html import render_markdown

    text = separator.join(blocks)
    incremental = IncrementalMarkdown()
    pos = 0
    for step in cuts:
        pos = min(len(text), pos + step)
        incremental.render(text[:pos])
    html = incremental.render(text, final=True)

    def mark(number: int, source: str) -> str:
        return f"<M{number}{source}>"

    if incremental.exact:
        assert fill_markers(html, mark) == render_markdown(text, markers=mark)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(max_size=40))
def test_plain_paragraph_shortcut_matches_markdown_it(text: str) -> None:
    from citekit.text.markdown_html import _PARSER, _Renderer, plain_paragraph

    shortcut = plain_paragraph(text)
    if shortcut is not None:
        slow = _Renderer(strict=False, markers=None, top_heading=3).block(_PARSER.parse(text, {}))
        assert shortcut == slow


def _without_tokens(html: str) -> str:
    return re.sub(r"ck[0-9a-f]{10}", "TOKEN", html)


def test_live_finish_reuses_the_streamed_html_and_equals_a_fresh_render(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import citekit.render.bundle as bundle_module

    reused: list[bool] = []
    original = bundle_module.render_answer_html

    def spy(answer: Answer, *, strict: bool = False, body_html: str | None = None) -> str:
        reused.append(body_html is not None)
        return original(answer, strict=strict, body_html=body_html)

    monkeypatch.setattr(bundle_module, "render_answer_html", spy)
    samples = [a for _, a in sample_answers() if a.citations] or [magisterium_answer()]
    for answer in samples[:6]:
        display = FakeDisplay()
        live = NotebookLiveAnswer("magisterium", None, display=display, clock=FakeClock(0.02))
        text = answer.text
        for start in range(0, len(text), 7):
            live.add(text[start : start + 7])
        assert live.renders > 3
        live.finish(answer)
        final = display.log[-1][1]
        fresh = answer_bundle(answer)
        assert _without_tokens(final["text/html"]) == _without_tokens(fresh["text/html"])
        assert final["text/plain"] == fresh["text/plain"]
        assert final["text/markdown"] == fresh["text/markdown"]
    assert reused and all(reused)


def test_live_finish_with_other_text_renders_afresh() -> None:
    display = FakeDisplay()
    live = NotebookLiveAnswer("magisterium", None, display=display, clock=FakeClock(0.02))
    live.add("Something else entirely.\n\n")
    answer = magisterium_answer()
    live.finish(answer)
    html = display.log[-1][1]["text/html"]
    assert _without_tokens(html) == _without_tokens(answer_html(answer))


@pytest.mark.parametrize("heading", [None, "Chapter I"])
def test_a_passage_without_a_caption_is_shown_once(heading: str | None) -> None:
    """In Markdown and text a passage is shown whole: with no heading or reference to
    introduce it, its start is not repeated above it as a caption (the HTML's collapsed
    passage uses that start as its summary)."""
    passage = "Labour is for man, not man for labour."
    citation = Citation(passage, 0, document_title="Laborem Exercens", cited_text_heading=heading)
    text = "Work serves the person [^1]."
    answer = Answer(provider="magisterium", text=text, citations=(citation,))
    for shown in (answer_markdown(answer), answer_text(answer)):
        assert shown.count("Labour is for man") == 1, shown
        assert ("Chapter I" in shown) is (heading is not None)


def test_an_answer_cut_at_its_token_limit_says_so() -> None:
    """finish_reason "length": the HTML, the Markdown, the terminal text and the CLI say the
    answer was cut short, as they say a content-filtered one was withheld."""
    import io

    from citekit.render import answer_html, answer_markdown, answer_text
    from citekit.render.text import print_sources

    cut = Answer(provider="maritaca", text="The first half of", finish_reason="length")
    whole = Answer(provider="maritaca", text="All of it.", finish_reason="stop")
    for render in (answer_html, answer_markdown, answer_text):
        assert "cut short" in render(cut) and "max" in render(cut)  # Markdown escapes the _
        assert "cut short" not in render(whole)
    out = io.StringIO()
    print_sources(cut, out)
    assert "cut short" in out.getvalue()


def test_one_source_has_one_number_in_every_list_of_the_answer() -> None:
    """A GPTBots answer lists its sources as footnotes [1]-[2] and its chunks ranked by
    relevance: a chunk of a footnoted file carries that file's footnote number, not a rank."""
    answer = Answer(
        provider="gptbots",
        text="Built for defence[1] and trade[2].",
        citations=(
            Citation(cited_text="Defence.", document_index=0, document_title="wall.pdf"),
            Citation(cited_text="Trade.", document_index=1, document_title="Silk Road"),
        ),
        references=References(
            items=(
                Reference(content="Trade.", rank=1, data_name="Silk Road", score=0.9),
                Reference(content="Lessons.", rank=2, data_name="plan.md", score=0.5),
                Reference(content="Defence.", rank=3, data_name="wall.pdf", score=0.4),
            )
        ),
    )
    root = parse(answer_html(answer))
    chunks = root.find_all("li", "citekit-reference")
    labels = [c.text.split(" ")[0] for c in chunks]
    assert labels == ["[2]", "not", "[1]"]
    assert "rank 1" in chunks[0].text and "rank 3" in chunks[2].text
    # The text and the Markdown number the chunks the same way.
    text = answer_text(answer).split("Sources (ranked by relevance):")[1]
    assert text.split("\n")[1].strip().startswith("[2] Silk Road (rank 1")
    markdown = answer_markdown(answer).split("**Sources (ranked by relevance)**")[1]
    assert "- \\[2\\] Silk Road — rank 1" in markdown and "\n1. " not in markdown
    assert not root.find_all("ol", None) or all(
        "decimal" not in (ol.attrs.get("style") or "") for ol in root.find_all("ol", None)
    )


def test_a_passage_sent_twice_is_listed_once() -> None:
    twice = Citation(
        cited_text="Work is for man.", document_index=0, document_title="Laborem exercens",
        document_reference="45",
    )  # fmt: skip
    answer = Answer(provider="magisterium", text="Work[^1].", citations=(twice, twice))
    html = answer_html(answer)
    assert html.count('class="citekit-passage"') == 1
    assert html.count("Work is for man.") == 1
    assert answer_text(answer).count("Work is for man.") <= 1


# The text output's marked pieces, and what Markdown and HTML make of more.
_MARKED = [*MARKED, "<b>", "{x}", "```\n"]


@settings(max_examples=examples(600), deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_MARKED), max_size=25),
    cited=st.lists(st.integers(0, 8), max_size=4),
)
def test_markdown_keeps_the_usual_markers_as_rewriting_them_one_by_one(
    pieces: list[str], cited: list[int]
) -> None:
    """Where every marker is a ``[^n]`` of a source, the Markdown output keeps the text's
    markers as they are: the same Markdown as rewriting them one by one."""
    answer = Answer(
        provider="magisterium",
        text="".join(pieces),
        citations=tuple(Citation(cited_text="x", document_index=i) for i in cited),
    )
    fast = answer_markdown(answer)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown_module, "carets_only", lambda text: False)
        assert answer_markdown(answer) == fast


def test_footnotes_asked_again_of_the_same_citations_are_the_same_and_a_copy() -> None:
    """An answer's three outputs each ask for its footnotes: the latest answer's are kept,
    handed out as a new mapping each time (a caller changing it changes nothing else)."""
    from citekit.render._sources import footnotes

    answer = magisterium_answer()
    first = footnotes(answer.citations)
    first.clear()
    again = footnotes(answer.citations)
    assert again and again == footnotes(tuple(answer.citations))
    assert again is not footnotes(answer.citations)
    listed = list(answer.citations)
    assert footnotes(listed) == again
    listed.pop()
    assert footnotes(listed) != again  # a list may change: never taken from what was kept


_LINKY = [
    "Work", " ", "\n", "[^1]", "[2]", "$[3]$", "]", "[", "(", ":", "](", "]:", "[1](https://e.org)",
    "[1]:", "[^2]: x\n", "`[1]`", "`", "[x]", "\\[1]", "> ", "- ", "\r",
]  # fmt: skip


@settings(max_examples=examples(600), deadline=None)
@given(pieces=st.lists(st.sampled_from(_LINKY), max_size=20))
def test_may_link_is_a_look_for_the_two_characters(pieces: list[str]) -> None:
    """Whether the text may hold a link is told from the markers where every bracket closes
    one: the same answer as looking for "](" and "]:"."""
    from citekit.render.markdown import _may_link
    from citekit.text.reader import read

    text = "".join(pieces).replace("\r", "")  # as neutralize reads it
    assert _may_link(text, read(text).markers) == ("](" in text or "]:" in text)
