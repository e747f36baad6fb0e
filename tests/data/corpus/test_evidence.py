"""The rules of the support score (``citekit.data.corpus.evidence``), each on pairs written for
it in several languages: a case each rule decides and that the score without it got wrong."""

from __future__ import annotations

import pytest

import citekit as ck
from citekit.data.corpus import fit
from citekit.data.corpus.evidence import FLOOR, QUOTE_LIFT, evidence, score, verdict

pytest.importorskip("snowballstemmer")


def support(sentence: str, passage: str) -> float:
    return score(evidence(sentence, passage))


# -- a sentence's "not" is compared with the clause it bears on --------------------------------

MUSEUM = {
    "en": (
        "The museum is not open on Mondays, and visitors must book their tickets online.",
        "The museum is not open on Mondays. Visitors must book their tickets online and show "
        "them at the entrance.",
    ),
    "pt": (
        "O museu não abre às segundas-feiras, e os visitantes devem comprar os bilhetes pela "
        "internet.",
        "O museu não abre às segundas-feiras. Os visitantes devem comprar os bilhetes pela "
        "internet e mostrá-los na entrada.",
    ),
    "it": (
        "Il museo non apre il lunedì, e i visitatori devono comprare i biglietti online.",
        "Il museo non apre il lunedì. I visitatori devono comprare i biglietti online e "
        "mostrarli all'ingresso.",
    ),
}


@pytest.mark.parametrize("lang", sorted(MUSEUM))
def test_a_not_on_both_sides_agrees_where_the_other_clause_shares_more_words(lang: str) -> None:
    """The passage's second sentence shares more of the sentence's words than its first, but
    the sentence's "not" bears on "open on Mondays", and the first says that: no negation."""
    sentence, passage = MUSEUM[lang]
    found = evidence(sentence, passage)
    assert not found.negated
    assert verdict(score(found)) == "supported"


def test_a_not_on_one_side_still_speaks_against() -> None:
    passage = MUSEUM["en"][1]
    assert evidence("The museum is open on Mondays.", passage).negated
    assert evidence("The museum is not open on Mondays.", passage).negated is False
    assert evidence("Il museo apre il lunedì.", MUSEUM["it"][1]).negated


# -- numbers and the calendar are words of every language --------------------------------------


@pytest.mark.parametrize(
    ("sentence", "passage", "shared"),
    [
        (
            "Unused leave expires on 30 June.",
            "As férias não gozadas expiram em 30 de junho.",
            "june",
        ),
        ("Le ferie scadono il 30 giugno.", "Unused leave expires on 30 June.", "june"),
        ("El museo cierra los lunes.", "Das Museum ist montags geschlossen, am Montag.", "monday"),
    ],
)
def test_a_month_or_a_weekday_is_shared_across_languages(
    sentence: str, passage: str, shared: str
) -> None:
    found = evidence(sentence, passage)
    assert shared in found.shared_words
    assert found.coverage > 0


@pytest.mark.parametrize(
    ("sentence", "passage"),
    [
        ("Leave lasts 12 weeks.", "A licença dura 8 semanas e começa no dia 1."),
        ("Leave lasts 12 weeks.", "Der Urlaub dauert 8 Wochen."),
        ("La licencia dura 12 semanas.", "Il congedo dura 8 settimane, dal giorno 1."),
    ],
)
def test_another_count_of_the_same_unit_of_time_is_contradicted_across_languages(
    sentence: str, passage: str
) -> None:
    """12 has no number of its length in the passage: only the unit (weeks, semanas, Wochen,
    settimane: one word) says the passage gives another number in its place."""
    found = evidence(sentence, passage)
    assert found.numbers_contradicted == ("12",)
    assert verdict(score(found)) == "unsupported"


def test_a_number_found_counts_as_a_word_the_passage_has() -> None:
    """Across two languages with no word in common, the number alone is a shared part."""
    found = evidence("Pix passed 150 million users.", "O Pix superou 150 milhões de usuários.")
    assert found.numbers_found == ("150",)
    assert found.coverage > evidence("Pix passed many users.", "O Pix superou usuários.").coverage


# -- cognates spelled alike -------------------------------------------------------------------


@pytest.mark.parametrize(
    "passage",
    [
        "Filosofia, teologia e dottrina si insegnano insieme.",  # it
        "La filosofía, la teología y la doctrina se enseñan juntas.",  # es
        "A filosofia, a teologia e a doutrina são ensinadas juntas.",  # pt
    ],
)
def test_words_latin_s_daughters_spell_apart_are_one_cognate(passage: str) -> None:
    """ph and f, th and t, ct and tt: "philosophy" is "filosofia", "theology" "teologia"."""
    found = evidence("Philosophy and theology are taught together.", passage)
    assert {"philosophi", "theolog"} <= set(found.shared_words)
    assert verdict(score(found)) == "supported"


# -- what a sentence claims weighs more than whom it names -------------------------------------


@pytest.mark.parametrize(
    ("names_only", "claim_only", "passage"),
    [
        (
            "Maria Souza cancelled the lease.",
            "Rita Lopes signed the contract.",
            "Maria Souza signed the contract.",
        ),
        (
            "Maria Souza cancelou o aluguel.",
            "Rita Lopes assinou o contrato.",
            "Maria Souza assinou o contrato.",
        ),
        (
            "María Souza canceló el alquiler.",
            "Rita Lopes firmó el contrato.",
            "María Souza firmó el contrato.",
        ),
    ],
)
def test_a_sentence_sharing_only_names_scores_below_one_sharing_its_claim(
    names_only: str, claim_only: str, passage: str
) -> None:
    """Both share two of their four content words; the names say who, not what."""
    by_names, by_claim = evidence(names_only, passage), evidence(claim_only, passage)
    assert len(by_names.shared_words) == len(by_claim.shared_words) == 2
    assert score(by_names) < score(by_claim)
    assert verdict(score(by_names)) != "supported"


# -- a short quote found vouches for the words it quotes ---------------------------------------

SONG = {
    "en": (
        'Ary Barroso wrote "Aquarela do Brasil" as a bitter protest song against the military '
        "government of his country.",
        '"Aquarela do Brasil" was composed by Ary Barroso in 1939 and recorded the same year.',
    ),
    "pt": (
        'Ary Barroso compôs "Aquarela do Brasil" como uma canção de protesto contra o governo '
        "militar do seu país.",
        '"Aquarela do Brasil" foi composta por Ary Barroso em 1939 e gravada no mesmo ano.',
    ),
}


@pytest.mark.parametrize("lang", sorted(SONG))
def test_a_short_quote_found_does_not_lift_the_whole_sentence(lang: str) -> None:
    """A title quoted right is found, but the sentence claims much more than the title."""
    sentence, passage = SONG[lang]
    found = evidence(sentence, passage)
    assert found.quote_found is True
    assert score(found) < FLOOR + (1 - FLOOR) * QUOTE_LIFT
    assert verdict(score(found)) != "supported"


def test_a_quote_that_is_most_of_the_sentence_still_lifts_it() -> None:
    passage = "Work is for man, not man for work, as the Catechism says in 2428."
    found = evidence('The Catechism: "work is for man, not man for work".', passage)
    assert found.quote_found is True
    assert score(found) >= FLOOR + (1 - FLOOR) * QUOTE_LIFT


# -- misattributed: another source fits at least partly, and clearly better -----------------------


def answer(text: str, *passages: str) -> ck.Answer:
    citations = tuple(
        ck.Citation(cited_text=p, document_index=i, document_title=f"Doc {i + 1}")
        for i, p in enumerate(passages)
    )
    return ck.Answer(provider="magisterium", text=text, citations=citations)


@pytest.mark.parametrize(
    ("sentence", "fits", "other"),
    [
        (
            "Visitors must book their tickets online before the visit.",
            "Tickets for the museum are sold online only, and groups pay less.",
            "The garden café serves lunch from noon until three.",
        ),
        (
            "Os visitantes devem comprar os bilhetes pela internet antes da visita.",
            "Os bilhetes do museu são vendidos só pela internet, e os grupos pagam menos.",
            "O café do jardim serve almoço do meio-dia às três.",
        ),
    ],
)
def test_a_source_that_fits_partly_and_clearly_better_makes_the_citation_misattributed(
    sentence: str, fits: str, other: str
) -> None:
    """The sentence cites [2], which shares nothing with it; [1] shares part of it: not
    enough to support it alone, clearly more than [2]."""
    partly = support(sentence, fits)
    assert fit.FITS <= partly < 0.5 and partly - support(sentence, other) >= fit.MARGIN
    (row,) = ck.support_frame(answer(f"{sentence}[^2]", fits, other)).rows(named=True)
    assert row["marker"] == 2 and row["best_source"] == 1 and row["misattributed"] is True
    (right,) = ck.support_frame(answer(f"{sentence}[^1]", fits, other)).rows(named=True)
    assert right["misattributed"] is False


# -- a quote found that the passage denies ------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "passage"),
    [
        (
            'The common good is "the simple sum of private goods".',
            "The common good does not consist in the simple sum of private goods.",
        ),
        (
            'O bem comum é a "simples soma dos bens particulares".',
            "O bem comum não consiste na simples soma dos bens particulares.",
        ),
        (
            'Il bene comune è la "semplice somma dei beni particolari".',
            "Il bene comune non consiste nella semplice somma dei beni particolari.",
        ),
    ],
)
def test_a_quote_found_right_after_a_not_is_denied_by_the_passage(
    sentence: str, passage: str
) -> None:
    """The words are the passage's, but it says them to deny them."""
    found = evidence(sentence, passage)
    assert found.quote_found is True and found.negated
    assert verdict(score(found)) == "unsupported"


@pytest.mark.parametrize(
    ("sentence", "passage"),
    [
        (
            'La legge è "un ordinamento della ragione".',
            "La legge non è altro che un ordinamento della ragione.",
        ),
        (
            'Lex est "quaedam rationis ordinatio".',
            "Lex nihil aliud quam quaedam rationis ordinatio.",
        ),
    ],
)
def test_a_not_that_means_only_does_not_deny_the_quote(sentence: str, passage: str) -> None:
    """ "Not other than", "nihil aliud quam": what follows is affirmed."""
    found = evidence(sentence, passage)
    assert found.quote_found is True and not found.negated
    assert verdict(score(found)) == "supported"
