"""Titles of numbered works, for the tests that hold "a number that names which work keeps works
apart" (``citekit.data.identity.keys.names_which``) in identity, the bibliography and health.

``numbered_titles()`` draws three titles of one numbered-work word ("Sermon", "Epistola",
"Salmo", "Lettera", "Carta", "Question"...), as a source may write them ("Sermão 169",
"Sermon 169, 3", "Psalm, 23"): the first and the third with the same number, the second with
another.
"""

from __future__ import annotations

from hypothesis import strategies as st

from citekit.data.identity.keys import NUMBERED_PARTS, NUMBERED_WORKS

#: How sources write some of the words, accents and all (the sets hold them as title keys).
WRITTEN = {
    "sermao": "Sermão",
    "homelie": "Homélie",
    "epitre": "Épître",
    "audiencia": "Audiência",
    "questao": "Questão",
    "cuestion": "Cuestión",
    "articulo": "Artículo",
    "capitulo": "Capítulo",
    "catechese": "Catéchèse",
    "discurso": "Discurso",
}
#: Where a number follows the word: alone, before a place in the work, after a comma.
FORMS = ("{w} {n}", "{w} {n}, {p}", "{w}, {n}", "{w} {n}: {p}", "{w} {n} ({p})")


@st.composite
def numbered_titles(draw: st.DrawFn) -> tuple[str, str, str]:
    """Three titles: (word n, word m, word n) with n != m, each in a form of its own."""
    part = draw(st.booleans())
    word = draw(st.sampled_from(sorted(NUMBERED_PARTS if part else NUMBERED_WORKS)))
    written = WRITTEN.get(word, word)
    case = draw(st.sampled_from([str.title, str.lower, str.upper, str]))
    # A part ("Question") names a work only when it opens the title; a sermon anywhere.
    lead = "" if part else draw(st.sampled_from(["", "Augustine, ", "Jerome - "]))
    n, m = draw(st.lists(st.integers(0, 5_000), min_size=2, max_size=2, unique=True))
    p = draw(st.integers(1, 300))

    def title(number: int) -> str:
        form = draw(st.sampled_from(FORMS))
        return lead + form.format(w=case(written), n=number, p=p)

    return title(n), title(m), title(n)
