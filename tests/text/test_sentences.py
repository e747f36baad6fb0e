"""The sentence splitter (``citekit.text.sentences``): languages, abbreviations, blocks, code,
markers after the final punctuation; and its properties on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from citekit.text.reader import read
from citekit.text.sentences import sentences
from tests.budget import examples


def texts(text: str) -> list[str]:
    return [s.text for s in sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # en, with the abbreviations of citations
            "Work has dignity (cf. n. 34). St. Thomas agrees, e.g. in the Summa, q. 94, a. 2. "
            "See pp. 3-4 and vol. II. It costs 3.5 euros. Dr. Smith wrote it... and left.",
            [
                "Work has dignity (cf. n. 34).",
                "St. Thomas agrees, e.g. in the Summa, q. 94, a. 2.",
                "See pp. 3-4 and vol. II.",
                "It costs 3.5 euros.",
                "Dr. Smith wrote it... and left.",
            ],
        ),
        (  # pt
            "O trabalho é para o homem (cf. Laborem exercens, n. 6). Não o homem para o "
            "trabalho! Por quê? Veja o art. 23 da Declaração.",
            [
                "O trabalho é para o homem (cf. Laborem exercens, n. 6).",
                "Não o homem para o trabalho!",
                "Por quê?",
                "Veja o art. 23 da Declaração.",
            ],
        ),
        (  # es
            "¿Existe el purgatorio? Sí. El Catecismo lo enseña (núm. 1030). ¡Es una purificación!",
            [
                "¿Existe el purgatorio?",
                "Sí.",
                "El Catecismo lo enseña (núm. 1030).",
                "¡Es una purificación!",
            ],
        ),
        (  # it
            "La pena di morte è inammissibile. Lo dice il Catechismo, n. 2267. S. Agostino "
            "la discute.",
            [
                "La pena di morte è inammissibile.",
                "Lo dice il Catechismo, n. 2267.",
                "S. Agostino la discute.",
            ],
        ),
        (  # fr, with « » and a space before ? and !
            "La propriété a une « hypothèque sociale ». Pourquoi ? Parce que les biens sont "
            "destinés à tous !",
            [
                "La propriété a une « hypothèque sociale ».",
                "Pourquoi ?",
                "Parce que les biens sont destinés à tous !",
            ],
        ),
        (  # de: an ordinal after a pope's name is no end
            "Schon Pius XII. hatte das erklärt. Vgl. dazu Nr. 12. Das Herz ist die Mitte.",
            [
                "Schon Pius XII. hatte das erklärt.",
                "Vgl. dazu Nr. 12.",
                "Das Herz ist die Mitte.",
            ],
        ),
        (  # zh, ja: ends need no space
            "长城是谁修建的？许多朝代接力修建。明长城最有名！",
            ["长城是谁修建的？", "许多朝代接力修建。", "明长城最有名！"],
        ),
        ("保証期間は1年です。延長できます。", ["保証期間は1年です。", "延長できます。"]),
        (  # closing quotes and brackets stay with their sentence
            'He said "work is for man." Then he left.) The end.',
            ['He said "work is for man."', "Then he left.)", "The end."],
        ),
        ("Version 3.5.1 of file.txt is out. Yes.", ["Version 3.5.1 of file.txt is out.", "Yes."]),
        (  # books of the Bible before chapter and verse; a place before a number is no book
            "Love is patient (1 Cor. 13:4; cf. Gen. 1:27). Born in Rome. 30 years later, he died.",
            [
                "Love is patient (1 Cor. 13:4; cf. Gen. 1:27).",
                "Born in Rome.",
                "30 years later, he died.",
            ],
        ),
    ],
)
def test_languages_and_abbreviations(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_blocks_are_separate_and_code_is_no_sentence() -> None:
    text = (
        "# The dignity of work\n"
        "Work is a good\n"
        "of the person.[^1] It has a subjective side.\n"
        "\n"
        "- first item, no period\n"
        "- second item. It has two sentences [2]\n"
        "1. numbered item\n"
        "\n"
        "> A quoted line.\n"
        "\n"
        "| work | wage |\n"
        "|------|------|\n"
        "| just. fair | 1 [3] |\n"
        "\n"
        "```\n"
        "Code. Is. Not. Sentences.\n"
        "```\n"
        "\n"
        "    indented code. Also not.\n"
        "\n"
        "***\n"
        "Setext heading\n"
        "==============\n"
        "Last `code. span` sentence.\n"
        "\n"
        "[^1]: Laborem exercens, n. 6. A definition line is no sentence.\n"
    )
    assert texts(text) == [
        "The dignity of work",
        "Work is a good\nof the person.[^1]",
        "It has a subjective side.",
        "first item, no period",
        "second item.",
        "It has two sentences [2]",
        "numbered item",
        "A quoted line.",
        "| work | wage |",
        "| just. fair | 1 [3] |",
        "Setext heading",
        "Last `code. span` sentence.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Work has dignity.[^1] Next one.",
        "Work has dignity. [1] Next one.",
        "Work has dignity.$[1]$ Next one.",
        "Work has dignity. [^1][^2] Next one.",
        "Work has dignity.[1], [2] Next one.",
        'Work has "dignity."[^1] Next one.',
        "Work has dignity.\n[^1]\n\nNext one.",
    ],
)
def test_a_marker_after_the_final_punctuation_cites_that_sentence(text: str) -> None:
    first, second = sentences(text)
    assert first.markers and not second.markers
    assert first.text.startswith("Work") and second.text == "Next one."


def test_a_marker_alone_on_its_line_joins_the_sentence_before() -> None:
    (only,) = sentences("Work has dignity.\n\n[^1]")
    assert [m.number for m in only.markers] == [1]
    (alone,) = sentences("[^1]")
    assert [m.number for m in alone.markers] == [1]


def test_markers_in_code_are_not_markers_and_positions_are_the_texts() -> None:
    text = "Intro [1].\n\n    code [2]\n\nText `[3]` here [4].\n\n[^1]: def [5].\nMore [6]."
    found = sentences(text)
    assert [[m.number for m in s.markers] for s in found] == [[1], [4], [6]]
    for s in found:
        assert text[s.start : s.end] == s.text
        for m in s.markers:
            assert s.start <= m.start < m.end <= s.end
    assert [m for s in found for m in s.markers] == list(read(text).markers)


def test_nothing_to_split() -> None:
    assert sentences("") == ()
    assert sentences("   \n\n  ") == ()
    assert sentences("```\nonly code.\n```") == ()
    assert texts("---\n\n***") == []
    assert texts("No final period") == ["No final period"]


def test_line_ends_crlf_and_cr() -> None:
    assert texts("One.\r\nTwo.\r\n\r\n- three\r- four") == ["One.", "Two.", "three", "four"]


# -- properties -----------------------------------------------------------------------------------

PIECES = st.one_of(
    st.sampled_from(
        [
            *"abcXYZ 0123456789.!?。！？…,;:\"'()[]^$*_#>-|`~\\\n\t",
            *("[^1]", "[2]", "$[3]$", "[^4]:", "```", "    ", "\r\n", "\n\n"),
            *("e.g.", "n. ", "St. "),
        ]
    ),
    st.characters(codec="utf-8"),
)
MARKDOWNISH = st.lists(PIECES, max_size=80).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(text=st.one_of(MARKDOWNISH, st.text(max_size=200)))
def test_any_text_is_split_never_raises_and_keeps_every_marker(text: str) -> None:
    found = sentences(text)
    last = 0
    for s in found:
        assert last <= s.start < s.end <= len(text)
        assert s.text == text[s.start : s.end] and s.text.strip()
        for m in s.markers:
            assert s.start <= m.start < m.end <= s.end  # in exactly one sentence
        last = s.end
    assert [m for s in found for m in s.markers] == list(read(text).markers)


@settings(max_examples=examples(300), deadline=None)
@given(text=MARKDOWNISH)
def test_text_with_a_letter_outside_code_has_a_sentence(text: str) -> None:
    body = read(text).body
    spans = read(body).code_spans
    outside = "".join(ch for i, ch in enumerate(body) if not any(a <= i < b for a, b in spans))
    assume(re.search(r"[^\W\d_]", outside))
    assert len(sentences(text)) >= 1


WORDS = st.sampled_from(
    ["work", "dignity", "grace", "wage", "família", "trabalho", "Kirche", "lavoro", "travail"]
)
INNER = st.sampled_from(
    [
        "cf. n. 34",
        "St. Joseph",
        "e.g. this",
        "i.e. that",
        "p. 12",
        "pp. 3-4",
        "art. 2",
        "q. 94",
        "c. 1270",
        "vol. II",
        "no. 5",
        "Dr. Smith",
        "3.5",
        "wait... then",
        "`a. B`",
    ]
)
LATIN = st.builds(
    lambda first, inner, rest, end: " ".join([first.capitalize(), *inner, *rest]) + end,
    WORDS,
    st.lists(INNER, max_size=2),
    st.lists(WORDS, max_size=4),
    st.sampled_from([".", "!", "?", '."', ".)"]),
)
CJK = st.builds(
    lambda words, end: "".join(words) + end,
    st.lists(st.sampled_from(["长城", "保証", "修建", "期間", "朝代"]), min_size=1, max_size=4),
    st.sampled_from(["。", "！", "？"]),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    parts=st.one_of(
        st.lists(st.tuples(LATIN, st.sampled_from([" ", "\n", "\n\n"])), min_size=1, max_size=6),
        st.lists(st.tuples(CJK, st.sampled_from(["", "\n\n"])), min_size=1, max_size=6),
    ),
    pick=st.integers(min_value=0),
    marker=st.sampled_from(["[^7]", " [7]", "$[7]$", "[7]", " [^7][^8]"]),
)
def test_a_marker_inserted_after_a_sentence_marks_exactly_that_sentence(
    parts: list[tuple[str, str]], pick: int, marker: str
) -> None:
    text = "".join(sentence + sep for sentence, sep in parts)
    assert texts(text) == [sentence for sentence, _ in parts]
    i = pick % len(parts)
    at = sum(len(s) + len(sep) for s, sep in parts[:i]) + len(parts[i][0])
    found = sentences(text[:at] + marker + text[at:])
    assert len(found) == len(parts)
    assert [bool(s.markers) for s in found] == [j == i for j in range(len(parts))]
    assert found[i].text == parts[i][0] + marker.lstrip(" ") or found[i].text.endswith(marker)
