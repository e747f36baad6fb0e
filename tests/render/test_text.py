"""``citekit.render.text``: the terminal's source listing, the one the CLI and the demo print."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit.render.text as text_module
from citekit import Answer, Citation, Reference, References
from citekit.render.text import answer_text, body_text, print_sources, source_items, source_lines
from tests.budget import examples


def _cite(index: int, text: str, **fields: str) -> Citation:
    return Citation(cited_text=text, document_index=index, **fields)


def test_a_source_is_a_footnote_with_all_its_passages() -> None:
    """Passages of one document make one line: author and year from whichever passage has
    them, each reference once, as the other formats group them."""
    answer = Answer(
        provider="magisterium",
        text="Work is for man [1], and rest too [2].",
        citations=(
            _cite(0, "Labour is for man", document_title="Laborem exercens",
                  document_reference=" 6 "),
            _cite(0, "Work is a good thing", document_author="John Paul II",
                  document_year="1981", document_reference="9",
                  source_url="https://www.vatican.va/le"),
            _cite(0, "again", document_reference="6"),
            _cite(1, "Keep holy the sabbath"),
        ),
    )  # fmt: skip
    assert source_lines(answer) == [
        "[1] Laborem exercens — John Paul II (1981), 6, 9 <https://www.vatican.va/le>",
        "[2] Untitled",
    ]


def test_knowledge_chunks_follow_with_their_scores() -> None:
    refs = References(
        items=(
            Reference(content="Book flights early", rank=1, data_name="Travel.pdf", score=0.876),
            Reference(content="unnamed", rank=2),
        )
    )
    answer = Answer(provider="gptbots", text="Book early.", references=refs)
    assert [item.line() for item in source_items(answer)] == [
        "[1] Travel.pdf (score 0.88)",
        "[2] knowledge chunk",
    ]


def test_print_sources_writes_the_listing_notes_and_sample_as_plain_text() -> None:
    answer = Answer(
        provider="maritaca",
        text="Half of it",
        finish_reason="length",
        citations=(_cite(0, "x", document_title="Banco Central", source_url="https://bcb.gov.br"),),
        notes=("A note from the provider.",),
    )
    out = io.StringIO()
    print_sources(answer, out)
    assert out.getvalue().splitlines() == [
        "",
        "Sources:",
        "  [1] Banco Central <https://bcb.gov.br>",
        "",
        "Note: cut short: the answer reached its token limit (finish_reason 'length'); "
        "ask again with a higher max_tokens= for the rest",
        "",
        "Note: A note from the provider.",
    ]


# Answer texts with markers of every style, and what may make a "[^" or "^" no marker.
MARKED = [
    "Work", " is ", "for man.", "\n\n", "\n", "## Why\n", "- item ", "[^1]", "[^2]", "[^9]",
    "[1]", "$[2]$", "[^1][^2]", "^", "[^", "[^x]", "[^1](https://e.org)", "`[^1]`", "\r\n",
    "[^3]: a definition\n", "[^1]:", "*", "\\[^1]", "    [^2]\n",
]  # fmt: skip


@settings(max_examples=examples(600), deadline=None)
@given(
    pieces=st.lists(st.sampled_from(MARKED), max_size=25),
    cited=st.lists(st.integers(0, 8), max_size=4),
)
def test_the_usual_markers_rewritten_at_once_as_one_by_one(
    pieces: list[str], cited: list[int]
) -> None:
    """Where every marker is a ``[^n]`` of a source, the text output drops the carets at once:
    the same text and numbers as rewriting the markers one by one."""
    answer = Answer(
        provider="magisterium",
        text="".join(pieces),
        citations=tuple(Citation(cited_text="x", document_index=i) for i in cited),
    )
    fast = body_text(answer)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text_module, "carets_only", lambda text: False)
        assert body_text(answer) == fast
        slow = answer_text(answer)
    assert answer_text(answer) == slow
