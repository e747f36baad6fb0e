"""The words of the alias table's languages (English, Portuguese, Spanish, Italian, French,
German, Latin) as support compares them: one place that knows how a text's words are read.

``fold`` and ``words``
    Casefolded, accents dropped: the form every word is compared in.
``language``
    The language a text is guessed to be in, from its commonest words (``STOP_WORDS``).
``stemmer``
    The Snowball stemmer of a language (``snowballstemmer``, a dependency of citekit), or the
    folded word itself for Latin and for a text whose language is not guessed.
``key``
    What a content word is compared by within its language: its stem, or the concept of a
    word of the calendar (``CALENDAR``: months, weekdays and units of time are one word in
    every language, as numbers are).
``cognate``
    What a word is compared by across two languages: its first ``COGNATE`` letters once the
    spellings Latin's daughters write apart are written alike (``ph`` as ``f``, ``th`` as
    ``t``, ``y`` as ``i``, ``k`` and ``qu`` as ``c``, ``ct`` and ``pt`` as ``t``, ``x`` as
    ``s``, ``z`` as ``c``, a doubled letter once): ``dignity`` and ``dignità``, ``doctrine``
    and ``dottrina``, ``philosophy`` and ``filosofia``.
``marks``
    Where in a text the words stand that a list of shared words names: the one reading the
    support view marks a passage by.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Final

__all__ = [
    "CALENDAR",
    "COGNATE",
    "NEGATIONS",
    "NUMBER_WORDS",
    "STOP_WORDS",
    "cognate",
    "fold",
    "key",
    "language",
    "marks",
    "stemmer",
    "words",
]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# fmt: off
#: A few of the commonest words of each language of the alias table: enough to guess a text's
#: language, and left out of the shared words.
STOP_WORDS: Final = {
    "en": _set(
        "the of and to in is that for it as with be by on this "
        "are was which from or an at his their not has have its who we they"
    ),
    "pt": _set(
        "de a o que e do da em um para com não uma os no se na "
        "por mais as dos como mas ao ele das seu sua ou quando pelo pela é são"
    ),
    "es": _set(
        "de la que el en y a los del se las por un para con "
        "no una su al lo como más pero sus le ya o es son este esta"
    ),
    "it": _set(
        "di e il la che in a per un è non una del della "
        "le dei si con i gli da al sono come nel alla lo questo"
    ),
    "fr": _set(
        "de la le et les des en un une du est que pour "
        "dans qui ne pas au sur se par plus il elle sont avec ce"
    ),
    "de": _set(
        "der die und in den von zu das mit sich des auf für "
        "ist im dem nicht ein eine als auch es an werden aus er sie"
    ),
    "la": _set(
        "et in est non ad quod cum ut qui quae sed per "
        "ex de enim ab autem esse sunt eius quam nec hoc vel"
    ),
}
#: The words that negate, by language ("no" is one in English and Spanish, not in Portuguese).
NEGATIONS: Final = {
    "en": _set("not no never nor cannot neither none"),
    "pt": _set("não nunca nem jamais nenhum nenhuma"),
    "es": _set("no nunca ni jamás ningún ninguna tampoco"),
    "it": _set("non mai né nessun nessuno nessuna"),
    "fr": _set("ne pas jamais ni aucun aucune"),
    "de": _set("nicht nie kein keine keinen niemals weder"),
    "la": _set("non nec neque numquam nihil nullus nemo haud"),
}
#: Numbers written as words, two to twelve, by language (never "one": it is also a pronoun
#: and an article), each in the order of its value from two.
NUMBER_WORDS: Final = {
    "en": _words("two three four five six seven eight nine ten eleven twelve"),
    "pt": _words("dois tres quatro cinco seis sete oito nove dez onze doze"),
    "es": _words("dos tres cuatro cinco seis siete ocho nueve diez once doce"),
    "it": _words("due tre quattro cinque - sette otto nove dieci undici dodici"),
    "fr": _words("deux trois quatre cinq six sept huit neuf dix onze douze"),
    "de": _words("zwei drei vier funf sechs sieben acht neun zehn elf zwolf"),
    "la": _words("duo tres quattuor quinque sex septem octo novem decem undecim duodecim"),
}
#: Words of the calendar and units of time, by concept (folded, singular and plural; no word
#: that is also a common other word, such as English "may" or Italian "ora"): in any two
#: languages they are one word, as numbers are.
CALENDAR: Final = {
    "january": "january janeiro enero gennaio janvier januar ianuarius ianuarii",
    "february": "february fevereiro febrero febbraio fevrier februar februarius februarii",
    "march": "march marco marzo mars marz martius martii",
    "april": "april abril aprile avril aprilis",
    "may": "maio mayo maggio mai maius maii",
    "june": "june junho junio giugno juin juni iunius iunii",
    "july": "july julho julio luglio juillet juli iulius iulii",
    "august": "august agosto aout augustus augusti",
    "september": "september setembro septiembre settembre septembre",
    "october": "october outubro octubre ottobre octobre oktober",
    "november": "november novembro noviembre novembre",
    "december": "december dezembro diciembre dicembre decembre dezember",
    "monday": "monday lunes lunedi lundi montag",
    "tuesday": "tuesday martes martedi mardi dienstag",
    "wednesday": "wednesday miercoles mercoledi mercredi mittwoch",
    "thursday": "thursday jueves giovedi jeudi donnerstag",
    "friday": "friday viernes venerdi vendredi freitag",
    "saturday": "saturday saturdays sabado sabados sabato samedi samstag",
    "sunday": "sunday sundays domingo domingos domenica domeniche dimanche sonntag dominica",
    "hour": "hour hours hora horas ore heure heures stunde stunden",
    "day": "day days dia dias giorno giorni jour jours tag tage tagen dies diebus",
    "week": "week weeks semana semanas settimana settimane semaine semaines woche wochen",
    "month": "month months meses mese mesi mois monat monate monaten mensis menses",
    "year": "year years ano anos año años anno anni ans annee annees jahr jahre jahren annus",
}
# fmt: on
_SNOWBALL: Final = {
    "en": "english",
    "pt": "portuguese",
    "es": "spanish",
    "it": "italian",
    "fr": "french",
    "de": "german",
}
_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Casefolded, accents dropped: the form words are compared in."""
    folded = text.casefold()
    if folded.isascii():  # the common case: nothing to drop
        return folded
    decomposed = unicodedata.normalize("NFKD", folded)
    if decomposed.isascii():
        return decomposed
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """The folded words of ``text``, in order."""
    return _WORD.findall(fold(text))


FOLDED_STOPS: Final = {code: frozenset(map(fold, s)) for code, s in STOP_WORDS.items()}
#: Every language's stop words, folded: never content words.
ALL_STOPS: Final = frozenset().union(*FOLDED_STOPS.values())
FOLDED_NEGATIONS: Final = {code: frozenset(map(fold, s)) for code, s in NEGATIONS.items()}
#: The negations of a text whose language is not guessed ("não" is left out: "nao" folded is
#: no word elsewhere, and French "ne" comes with "pas").
ANY_NEGATION: Final = frozenset().union(*(s for c, s in FOLDED_NEGATIONS.items() if c != "pt")) - {
    "ne"
}
SPELLED: Final = {
    code: {w: str(n) for n, w in enumerate(names, start=2) if w != "-"}
    for code, names in NUMBER_WORDS.items()
}
_CALENDAR: Final = {fold(w): c for c, names in CALENDAR.items() for w in names.split()}


def language(tokens: list[str]) -> str | None:
    """The alias-table language whose stop words ``tokens`` (folded words) hold most; None
    when none is found or two tie."""
    best: str | None = None
    top = 0
    tie = False
    for code, stops in FOLDED_STOPS.items():
        hits = sum(1 for t in tokens if t in stops)
        if hits > top:
            best, top, tie = code, hits, False
        elif hits == top and hits:
            tie = True
    return None if tie else best


def negations(code: str | None) -> frozenset[str]:
    """The folded negations of a language (of every language when it is not known)."""
    return FOLDED_NEGATIONS[code] if code else ANY_NEGATION


@lru_cache(maxsize=16)
def stemmer(code: str | None) -> Callable[[str], str]:
    """The stemmer of a language; the word itself where there is none (Latin, unknown)."""
    name = _SNOWBALL.get(code or "")
    if name is None:
        return _plain
    try:
        import snowballstemmer  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:  # installed with citekit; a plain word when it is missing
        return _plain
    stem: Callable[[str], str] = snowballstemmer.stemmer(name).stemWord
    return stem


def _plain(word: str) -> str:
    return word


def key(word: str, stem: Callable[[str], str]) -> str:
    """What a folded content word is compared by in its language: the concept of a word of
    the calendar (``"week"`` for ``semanas``), else its stem."""
    return _CALENDAR.get(word) or stem(word)


#: Letters two words of two languages must begin with alike (once spelled alike, see
#: :func:`cognate`) to count as one word, and their least length.
COGNATE: Final = 5
_SPELLING: Final = tuple(
    (re.compile(a), b)
    for a, b in (
        ("ph", "f"),
        ("th", "t"),
        ("y", "i"),
        ("k", "c"),
        ("qu", "c"),
        ("ct", "t"),
        ("pt", "t"),
        ("x", "s"),
        ("z", "c"),
        (r"(.)\1", r"\1"),
    )
)


@lru_cache(maxsize=65_536)
def cognate(word: str) -> str:
    """What a folded word is compared by across two languages: its first ``COGNATE`` letters
    once spelled alike; "" for a shorter word (too short to tell a cognate from chance)."""
    if len(word) < COGNATE:
        return ""
    for pattern, into in _SPELLING:
        if pattern.search(word):
            word = pattern.sub(into, word)
    return word[:COGNATE] if len(word) >= COGNATE else ""


def cognates(tokens: Iterable[str]) -> set[str]:
    """The cognate keys of words, marked apart from words (``"~digni"``)."""
    return {"~" + k for t in tokens if (k := cognate(t))}


def marks(text: str, shared: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The spans of ``text`` (code points) holding one of ``shared``: the stems support found
    in both a sentence and ``text`` (``Evidence.shared_words``).

    A word is marked when its folded form, its key in the text's language or in any language
    of the alias table, or its cognate is the one of a shared word; the words of an HTML
    entity (``&apos;``) are not.
    """
    wanted = frozenset(shared)
    if not wanted or not text:
        return ()
    kin = cognates(wanted)
    stems = [stemmer(language(words(text)))]
    stems += [stemmer(code) for code in _SNOWBALL]
    out: list[tuple[int, int]] = []
    for m in _WORD.finditer(text):
        start, end = m.span()
        if start and text[start - 1] == "&" and text[end : end + 1] == ";":
            continue
        word = fold(m.group())
        if (
            word in wanted
            or any(key(word, stem) in wanted for stem in stems)
            or (kin and "~" + cognate(word) in kin)
        ):
            out.append((start, end))
    return tuple(out)
