"""Lexical evidence that a passage says what a sentence says, and the support score built on it.

:func:`evidence` compares one sentence of an answer with one cited passage and returns what a
reader can check for themselves, each piece apart:

``quote_found``
    Whether the text the sentence quotes (between double quotes of any kind: ``"..."``,
    ``“...”``, ``«...»``, ``„...“``; two words or more) stands in the passage. First exactly,
    after quotes, case and spaces are normalised; then with punctuation, accents and
    hyphenation folded away, comparing the words in order. A quote with one word changed,
    added or dropped is never found: a fuzzy character score would call it found, so none is
    used. ``None`` when the sentence quotes nothing. An ellipsis in the quote (``...``, ``…``,
    ``[...]``) stands for words left out: its pieces must be found in order.
``numbers_found`` / ``numbers_contradicted``
    The numbers of the sentence (years, paragraph numbers, counts; digits, digits grouped in
    thousands such as ``8.080``, or words from two to twelve in the alias table's languages)
    the passage has, and those it lacks while it gives another number in their place: one of
    the same length (``1891`` where the passage says ``1931``) or one of the same thing
    (``12 weeks`` where it says ``8 weeks``).
``shared_words``
    The sentence's content words the passage has too, compared by their stem in the language
    each text is guessed to be in (from the stop words of the alias table's languages; with
    ``snowballstemmer``, a dependency of citekit, for those it stems; else the folded words).
    Across two languages a word is also shared as a cognate: one that begins with the same
    five letters (``dignity``, ``dignità``).
``negated``
    Whether one of the two negates what the other affirms: the sentence says "not" ("não",
    "non", "nicht", ...) and the passage's clause that speaks of the same words (the one
    sharing most of them) does not, or the sentence negates nothing and that clause's "not"
    bears on a word of the sentence ("it does not cover damage from liquids" against "the
    warranty covers damage from liquids"). A "not" elsewhere in a long passage is about
    something else and counts for nothing.

The score (:func:`score`) is, without an embedding model, the share of the sentence's content
words the passage has, and with one the larger of that and the two texts' similarity of
meaning; a quote found lifts it to 0.9. It is laid from ``FLOOR`` (0.2: a passage that shares
nothing) to 1. Evidence against the pair (a quote not found, a number contradicted, a
negation) puts it below ``FLOOR`` whatever it shares: similarity cannot see a changed year or a
"not", so those have evidence of their own. It is support, not verification: shared words and
near vectors are not entailment, and a passage on the same topic that claims something else
can score well.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Final, NamedTuple

__all__ = ["Evidence", "evidence", "language", "score", "verdict"]


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
# fmt: on
_SNOWBALL: Final = {
    "en": "english",
    "pt": "portuguese",
    "es": "spanish",
    "it": "italian",
    "fr": "french",
    "de": "german",
}
_ALL_STOP: Final = frozenset().union(*STOP_WORDS.values())
_WORD = re.compile(r"[^\W_]+")
#: A number: up to four digits, or digits in groups of three ("8.080", "13,709"); the word
#: after it, if any, says what it counts.
_NUMBER = re.compile(
    r"(?<![\w.,])([0-9]{1,3}(?:[.,][0-9]{3})+|[0-9]{1,4})(?![0-9])(?:\s*([^\W\d_]+))?"
)
_GROUPS = str.maketrans("", "", ".,")
_QUOTED = re.compile(r"[\"“”„«»]([^\"“”„«»]+)[\"“”„«»]")
_ELLIPSIS = re.compile(r"\[\s*(?:\.\.\.|…)\s*\]|\.\.\.|…")
_QUOTES: Final = str.maketrans({c: '"' for c in "“”„«»″"} | {c: "'" for c in "‘’‚‹›′`"})
_SPACES = re.compile(r"\s+")


class Evidence(NamedTuple):
    """What one passage shows about one sentence (see the module)."""

    quote_found: bool | None
    numbers_found: tuple[str, ...]
    numbers_contradicted: tuple[str, ...]
    shared_words: tuple[str, ...]
    content_words: int  # the sentence's content words, shared or not
    negated: bool


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


def language(tokens: list[str]) -> str | None:
    """The alias-table language whose stop words ``tokens`` (folded words) hold most; None
    when none is found or two tie."""
    best: str | None = None
    top = 0
    tie = False
    for code, stops in _FOLDED_STOPS.items():
        hits = sum(1 for t in tokens if t in stops)
        if hits > top:
            best, top, tie = code, hits, False
        elif hits == top and hits:
            tie = True
    return None if tie else best


_FOLDED_STOPS: Final = {code: frozenset(map(fold, s)) for code, s in STOP_WORDS.items()}
_NUMBER_WORDS: Final = {
    code: {w: str(n) for n, w in enumerate(names, start=2) if w != "-"}
    for code, names in NUMBER_WORDS.items()
}
_FOLDED_ALL_STOPS: Final = frozenset(map(fold, _ALL_STOP))
_FOLDED_NEG: Final = {code: frozenset(map(fold, s)) for code, s in NEGATIONS.items()}
_ANY_NEG: Final = frozenset().union(*(s for c, s in _FOLDED_NEG.items() if c != "pt")) - {"ne"}


@lru_cache(maxsize=16)
def _stemmer(code: str | None) -> Callable[[str], str]:
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


def _negated(tokens: list[str], code: str | None) -> bool:
    negations = _FOLDED_NEG[code] if code else _ANY_NEG
    return any(t in negations for t in tokens)


class _Side(NamedTuple):
    words: frozenset[str]  # content words, folded
    stem: Callable[[str], str]  # the stemmer of the text's language
    stems: frozenset[str]
    pairs: tuple[tuple[str, str], ...]  # (word, stem) of each content word
    numbers: frozenset[str]
    counted: frozenset[tuple[str, str]]  # (number, the stem of the word after it)
    negated: bool
    prefixes: frozenset[str]  # the first COGNATE letters of its longer content words


#: Letters two words of two languages must begin with alike to count as one word
#: ("interdependence", "interdependência"; "dignity", "dignità"), and their least length.
COGNATE: Final = 5


@lru_cache(maxsize=256)  # a sentence is compared with each passage citing it
def _side(text: str) -> _Side:
    tokens = words(text)
    code = language(tokens)
    stem = _stemmer(code)
    content = frozenset(t for t in tokens if t not in _FOLDED_ALL_STOPS and not t.isdigit())
    counted = frozenset(
        (n.translate(_GROUPS).lstrip("0") or "0", _unit(unit, stem))
        for n, unit in _NUMBER.findall(text)
    )
    spelled = _NUMBER_WORDS.get(code or "", {})
    if spelled:
        counted |= {
            (spelled[t], _unit(tokens[i + 1] if i + 1 < len(tokens) else "", stem))
            for i, t in enumerate(tokens)
            if t in spelled
        }
    numbers = frozenset(n for n, _ in counted)
    pairs = tuple((w, stem(w)) for w in content)
    stems = frozenset(st for _, st in pairs)
    prefixes = frozenset(w[:COGNATE] for w in content if len(w) >= COGNATE)
    return _Side(content, stem, stems, pairs, numbers, counted, _negated(tokens, code), prefixes)


def _unit(word: str, stem: Callable[[str], str]) -> str:
    """What a number counts: the stem of the word after it; "" for none or a stop word."""
    folded = fold(word)
    return "" if not folded or folded in _FOLDED_ALL_STOPS else stem(folded)


class _Unit(NamedTuple):
    """One sentence or clause of a passage: the words and stems it has, whether it negates,
    and the words and stems its negations bear on (the ``NEGATED_WORDS`` content words after
    each)."""

    keys: frozenset[str]
    negated: bool
    denied: frozenset[str]


#: How many content words after a "not" it is taken to bear on.
NEGATED_WORDS: Final = 1


class _Read(NamedTuple):
    side: _Side
    normal: str  # quotes, case and spaces normalised
    folded: str  # the folded words joined by single spaces, a space each side
    units: tuple[_Unit, ...]
    negates: bool  # whether any of its units negates


_UNIT = re.compile(r"(?<=[.!?;:])\s+")


@lru_cache(maxsize=4096)
def _passage(text: str) -> _Read:
    """A passage read once."""
    side = _side(text)
    code = language(words(text))
    units: list[_Unit] = []
    negations = _FOLDED_NEG[code] if code else _ANY_NEG
    for piece in _UNIT.split(text):
        every = words(piece)
        tokens = [t for t in every if t not in _FOLDED_ALL_STOPS]
        if tokens:
            keys = frozenset(tokens) | {side.stem(t) for t in tokens} | _cognates(tokens)
            denied = _denied(every, negations)
            denied |= {side.stem(t) for t in denied} | _cognates(denied)
            units.append(_Unit(keys, _negated(every, code), frozenset(denied)))
    folded = " " + " ".join(words(text)) + " "
    return _Read(side, _normal(text), folded, tuple(units), any(u.negated for u in units))


def _cognates(tokens: Iterable[str]) -> set[str]:
    """The cognate keys of words: their first ``COGNATE`` letters, marked apart from words."""
    return {"~" + t[:COGNATE] for t in tokens if len(t) >= COGNATE}


def _denied(tokens: list[str], negations: frozenset[str]) -> set[str]:
    out: set[str] = set()
    left = 0
    for t in tokens:
        if t in negations:
            left = NEGATED_WORDS
        elif left and t not in _FOLDED_ALL_STOPS:
            out.add(t)
            left -= 1
    return out


#: Shared words from which a passage's clause is taken to speak of what a sentence says.
ALIGNED: Final = 2


def _negation_differs(own: _Side, keys: frozenset[str], read: _Read) -> bool:
    """Whether one of the sentence and the passage negates what the other affirms.

    The passage's clauses that share the most words with the sentence (``ALIGNED`` or more)
    are the ones compared: a "not" elsewhere in a long passage is about something else. A
    sentence that negates over a passage that negates nowhere differs too."""
    if own.negated and not read.negates:
        return True
    top = ALIGNED
    aligned: list[_Unit] = []
    for unit in read.units:
        n = len(unit.keys & keys)
        if n > top:
            top, aligned = n, [unit]
        elif n == top:
            aligned.append(unit)
    if not aligned:
        return False
    if own.negated:
        return not any(u.negated for u in aligned)
    # The passage negates what the sentence affirms only where its "not" bears on a word of
    # the sentence: "no fare" says nothing against a sentence that never speaks of fares.
    return any(u.denied & keys for u in aligned)


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text.translate(_QUOTES).casefold()).strip()


def quotes(sentence: str) -> list[str]:
    """The quoted stretches of ``sentence`` of two words or more."""
    return [q for q in _QUOTED.findall(sentence) if len(words(q)) >= 2]


def _found(quote: str, normal: str, folded: str) -> bool:
    if _normal(quote) in normal:
        return True
    at = 0
    for piece in _ELLIPSIS.split(quote):
        found = words(piece)
        if not found:
            continue
        needle = " " + " ".join(found) + " "
        hit = folded.find(needle, at)
        if hit < 0:
            return False
        at = hit + len(needle) - 1
    return at > 0


def evidence(sentence: str, passage: str) -> Evidence:
    """The evidence ``passage`` gives for ``sentence`` (plain text, markers left out)."""
    own = _side(sentence)
    read = _passage(passage)
    other, normal, folded = read.side, read.normal, read.folded
    quoted = quotes(sentence)
    quote_found = all(_found(q, normal, folded) for q in quoted) if quoted else None
    found = tuple(sorted(own.numbers & other.numbers, key=_by_value))
    # A number the passage lacks is contradicted when the passage gives another of its
    # length in its place, or another number of the same thing ("12 weeks" for "8 weeks").
    lengths = {len(n) for n in other.numbers}
    units = {unit for _, unit in other.counted if unit}
    contradicted = tuple(
        sorted(
            {
                n
                for n, unit in own.counted
                if n not in other.numbers and (len(n) in lengths or unit in units)
            },
            key=_by_value,
        )
    )
    # A word is shared when its stem, in either text's language, or the word itself is there.
    theirs = other.stems
    if own.stem is other.stem:  # one language (or none): one stem per word
        shared = tuple(sorted({st for w, st in own.pairs if st in theirs or w in other.words}))
    else:  # two languages: a word is shared in either's stems, or as a cognate
        stem = other.stem
        cognates = other.prefixes
        shared = tuple(
            sorted(
                {
                    st
                    for w, st in own.pairs
                    if st in theirs
                    or w in other.words
                    or stem(w) in theirs
                    or (len(w) >= COGNATE and w[:COGNATE] in cognates)
                }
            )
        )
    keys = own.words | own.stems
    if own.stem is not other.stem:
        keys = keys | {other.stem(w) for w in own.words} | _cognates(own.words)
    return Evidence(
        quote_found,
        found,
        contradicted,
        shared,
        len(own.stems),
        _negation_differs(own, keys, read),
    )


def _by_value(number: str) -> int:
    return int(number)


#: Cosine similarities of unrelated and of matching texts under an embedding model: the
#: similarity is stretched from this range to [0, 1] (multilingual-e5's range; a model whose
#: unrelated texts score lower is read the same, only less sharply).
UNRELATED: Final = 0.75
MATCHING: Final = 0.90
#: The support of a pair that shares nothing with its sentence; pairs that evidence speaks
#: against (a quote not found, a number contradicted, a negation) score below it.
FLOOR: Final = 0.2


def meaning(similarity: float) -> float:
    """A cosine similarity stretched to [0, 1] (``UNRELATED`` to ``MATCHING``)."""
    return min(1.0, max(0.0, (similarity - UNRELATED) / (MATCHING - UNRELATED)))


def score(found: Evidence, similarity: float | None = None) -> float:
    """The support of one piece of evidence, in [0, 1] (see the module), with the cosine
    similarity of the two texts' vectors when an embedding model gave them."""
    value = len(found.shared_words) / found.content_words if found.content_words else 0.0
    if similarity is not None:
        value = max(value, meaning(similarity))
    if found.quote_found:
        value = max(value, 0.9)
    against = (found.quote_found is False) + bool(found.numbers_contradicted) + found.negated
    if against:  # below every pair nothing speaks against, however many words it shares
        return FLOOR * value / (against + 1)
    return FLOOR + (1.0 - FLOOR) * min(1.0, max(0.0, value))


#: The support from which a pair is ``"supported"``, and ``"partial"``.
SUPPORTED: Final = 0.5
PARTIAL: Final = 0.25


def verdict(support: float) -> str:
    """``"supported"``, ``"partial"`` or ``"unsupported"`` for a support score."""
    if support >= SUPPORTED:
        return "supported"
    return "partial" if support >= PARTIAL else "unsupported"
