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
    The sentence's content words the passage has too, compared by their key in the language
    each text is guessed to be in (:mod:`.lexicon`: the stem, or the concept of a word of the
    calendar, which is one word in every language). Across two languages a word is also shared
    as a cognate: one that begins with the same five letters once spelled alike (``dignity``,
    ``dignità``; ``philosophy``, ``filosofia``).
``negated``
    Whether one of the two negates what the other affirms: the sentence says "not" ("não",
    "non", "nicht", ...) and the passage's clause that holds the words that "not" bears on (or,
    without them, the clause sharing most of the sentence's words) does not; or the sentence
    negates nothing and that clause's "not" bears on a word of the sentence ("it does not cover
    damage from liquids" against "the warranty covers damage from liquids"); or a quote of the
    sentence is found right after a passage's "not" that does not mean "only". A "not"
    elsewhere in a long passage is about something else and counts for nothing.
``coverage``
    The weighted share of the sentence the passage has: its content words, each weighing by its
    length (up to ``FULL_LENGTH`` letters) and a name (written with a capital inside the
    sentence) by ``NAME`` of that, and its numbers, each ``NUMBER``.

The score (:func:`score`) is, without an embedding model, the coverage, and with one the mean
of the coverage and the two texts' similarity of meaning; a quote found lifts it to 0.9 when it
holds half the sentence's content words or more, in proportion when shorter. It is laid from
``FLOOR`` (0.2: a passage that shares nothing) to 1. Evidence against the pair (a quote not
found, a number contradicted, a negation) puts it below ``FLOOR`` whatever it shares:
similarity cannot see a changed year or a "not", so those have evidence of their own. It is
support, not verification: shared words and near vectors are not entailment, and a passage on
the same topic that claims something else can score well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final, NamedTuple

from .lexicon import (
    ALL_STOPS,
    SPELLED,
    cognate,
    cognates,
    fold,
    key,
    language,
    negations,
    stemmer,
    words,
)

__all__ = ["Evidence", "evidence", "fold", "language", "score", "verdict", "words"]


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
    coverage: float = 0.0  # the weighted share of the sentence the passage has (see the module)
    quoted: float = 0.0  # the share of the sentence's content words inside its quotes


class _Side(NamedTuple):
    words: frozenset[str]  # content words, folded
    stem: Callable[[str], str]  # the stemmer of the text's language
    stems: frozenset[str]  # the key of each content word (its stem, or a calendar concept)
    pairs: tuple[tuple[str, str], ...]  # (word, key) of each content word
    numbers: frozenset[str]
    counted: frozenset[tuple[str, str]]  # (number, the key of the word after it)
    negated: bool
    prefixes: frozenset[str]  # the cognate keys of its content words
    denied: frozenset[str]  # the words its negations bear on, with their keys
    weights: dict[str, float]  # the weight of each key (see ``weight``)
    quotes: tuple[str, ...]  # its quoted stretches (see ``quotes``)
    quoted: float  # the share of its content keys inside them


#: How much a name (a word written with a capital inside the sentence) weighs against another
#: word of its length: it says what the sentence is about, not what it claims of it.
NAME: Final = 0.5
#: The length from which a word weighs fully; a shorter one weighs its share of it.
FULL_LENGTH: Final = 10


def weight(word: str, name: bool) -> float:
    """How much a content word counts in the sentence's coverage: longer words carry more of
    a claim (and short ones are often function words no list holds, or cannot be matched
    across languages), names less than other words."""
    return (NAME if name else 1.0) * min(len(word), FULL_LENGTH) / FULL_LENGTH


_RAW = re.compile(r"[^\W_]+")


def _names(text: str, code: str | None) -> frozenset[str]:
    """The folded words written with a capital inside the text (not its first word), or all
    in capitals: names and titles. German writes every noun so, and has none."""
    if code == "de":
        return frozenset()
    out: set[str] = set()
    for i, m in enumerate(_RAW.finditer(text)):
        w = m.group()
        if (i and w[0].isupper()) or (len(w) > 1 and w.isupper()):
            out.add(fold(w))
    return frozenset(out)


@lru_cache(maxsize=256)  # a sentence is compared with each passage citing it
def _side(text: str) -> _Side:
    tokens = words(text)
    code = language(tokens)
    stem = stemmer(code)
    content = frozenset(t for t in tokens if t not in ALL_STOPS and not t.isdigit())
    counted = frozenset(
        (n.translate(_GROUPS).lstrip("0") or "0", _unit(unit, stem))
        for n, unit in _NUMBER.findall(text)
    )
    spelled = SPELLED.get(code or "", {})
    if spelled:
        counted |= {
            (spelled[t], _unit(tokens[i + 1] if i + 1 < len(tokens) else "", stem))
            for i, t in enumerate(tokens)
            if t in spelled
        }
    numbers = frozenset(n for n, _ in counted)
    pairs = tuple((w, key(w, stem)) for w in content)
    stems = frozenset(k for _, k in pairs)
    prefixes = frozenset(k for w in content if (k := cognate(w)))
    denied = _denied(tokens, negations(code), SENTENCE_NEGATED_WORDS)
    denied |= {key(t, stem) for t in denied}
    names = _names(text, code) if content else frozenset()
    weights: dict[str, float] = {}
    for w, k in pairs:
        weights[k] = max(weights.get(k, 0.0), weight(w, w in names))
    negated = any(t in negations(code) for t in tokens)
    quoted = tuple(quotes(text))
    inside = {key(w, stem) for q in quoted for w in words(q)}
    share = len(inside & stems) / len(stems) if stems else 0.0
    return _Side(
        content,
        stem,
        stems,
        pairs,
        numbers,
        counted,
        negated,
        prefixes,
        frozenset(denied),
        weights,
        quoted,
        share,
    )


def _unit(word: str, stem: Callable[[str], str]) -> str:
    """What a number counts: the key of the word after it; "" for none or a stop word."""
    folded = fold(word)
    return "" if not folded or folded in ALL_STOPS else key(folded, stem)


class _Unit(NamedTuple):
    """One sentence or clause of a passage: the words and keys it has, whether it negates,
    and the words and keys its negations bear on (the ``NEGATED_WORDS`` content words after
    each)."""

    keys: frozenset[str]
    negated: bool
    denied: frozenset[str]


#: How many content words after a "not" of a passage it is taken to bear on, and after a
#: "not" of a sentence (a sentence is short: its "not" is read a word further).
NEGATED_WORDS: Final = 1
SENTENCE_NEGATED_WORDS: Final = 2


class _Read(NamedTuple):
    side: _Side
    normal: str  # quotes, case and spaces normalised
    folded: str  # the folded words joined by single spaces, a space each side
    units: tuple[_Unit, ...]
    negates: bool  # whether any of its units negates
    nots: frozenset[str]  # the negations of its language


_UNIT = re.compile(r"(?<=[.!?;:])\s+")


@lru_cache(maxsize=4096)
def _passage(text: str) -> _Read:
    """A passage read once."""
    side = _side(text)
    code = language(words(text))
    units: list[_Unit] = []
    nots = negations(code)
    for piece in _UNIT.split(text):
        every = words(piece)
        tokens = [t for t in every if t not in ALL_STOPS]
        if tokens:
            keys = frozenset(tokens) | {key(t, side.stem) for t in tokens} | cognates(tokens)
            denied = _denied(every, nots, NEGATED_WORDS)
            denied |= {key(t, side.stem) for t in denied} | cognates(denied)
            negated = any(t in nots for t in every)
            units.append(_Unit(keys, negated, frozenset(denied)))
    folded = " " + " ".join(words(text)) + " "
    negates = any(u.negated for u in units)
    return _Read(side, _normal(text), folded, tuple(units), negates, nots)


def _denied(tokens: list[str], nots: frozenset[str], reach: int) -> set[str]:
    """The content words after each negation, ``reach`` of them at most."""
    out: set[str] = set()
    left = 0
    for t in tokens:
        if t in nots:
            left = reach
        elif left and t not in ALL_STOPS:
            out.add(t)
            left -= 1
    return out


#: Shared words from which a passage's clause is taken to speak of what a sentence says.
ALIGNED: Final = 2


def _most(units: tuple[_Unit, ...], keys: frozenset[str], least: int) -> list[_Unit]:
    """The units sharing the most of ``keys``, ``least`` or more."""
    top = least
    out: list[_Unit] = []
    for unit in units:
        n = len(unit.keys & keys)
        if n > top:
            top, out = n, [unit]
        elif n == top and n:
            out.append(unit)
    return out


def _negation_differs(own: _Side, keys: frozenset[str], read: _Read) -> bool:
    """Whether one of the sentence and the passage negates what the other affirms.

    A sentence's "not" is compared with the passage's clauses that hold the words it bears
    on ("workers are not their bondsmen" with the clause that speaks of bondsmen), else with
    the clauses sharing most of the sentence's words (``ALIGNED`` or more); a passage's
    "not" only in those clauses, and only where it bears on a word of the sentence. A "not"
    elsewhere in a long passage is about something else. A sentence that negates over a
    passage that negates nowhere differs too."""
    if own.negated:
        if not read.negates:
            return True
        near = _most(read.units, own.denied, 1) if own.denied else []
        near = near or _most(read.units, keys, ALIGNED)
        return bool(near) and not any(u.negated for u in near)
    # The passage negates what the sentence affirms only where its "not" bears on a word of
    # the sentence: "no fare" says nothing against a sentence that never speaks of fares.
    return any(u.denied & keys for u in _most(read.units, keys, ALIGNED))


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


#: How many words before a quote found a passage's "not" is taken to deny it.
DENIED_QUOTE: Final = 4


def _quotes_denied(quoted: tuple[str, ...], read: _Read) -> bool:
    """Whether the passage says a quote found only to deny it: a "not" in the
    ``DENIED_QUOTE`` words before it ("does not consist in the simple sum" for a sentence
    quoting "the simple sum"), unless a word after the "not" makes it "only" (``_EXCEPT``)."""
    if not read.negates:
        return False
    for q in quoted:
        needle = " " + " ".join(words(_ELLIPSIS.split(q)[0])) + " "
        hit = read.folded.find(needle)
        before = read.folded[:hit].split()[-DENIED_QUOTE:] if hit > 0 else []
        at = max((i for i, w in enumerate(before) if w in read.nots), default=-1)
        if at >= 0 and not any(w in _EXCEPT for w in before[at + 1 :]):
            return True
    return False


#: The words that turn a "not" before them into "only" ("nothing other than", "non è altro
#: che", "nihil aliud quam", "no es sino"): what follows is affirmed, not denied.
_EXCEPT: Final = frozenset(
    ["but", "than", "only", "senao", "sino", "quam", "nisi", "als", "que", "che"]
)


def evidence(sentence: str, passage: str) -> Evidence:
    """The evidence ``passage`` gives for ``sentence`` (plain text, markers left out)."""
    own = _side(sentence)
    read = _passage(passage)
    other, normal, folded = read.side, read.normal, read.folded
    quoted = own.quotes
    quote_found = all(_found(q, normal, folded) for q in quoted) if quoted else None
    found = tuple(sorted(own.numbers & other.numbers, key=_by_value))
    # A number the passage lacks is contradicted when the passage gives another of its
    # length in its place, or another number of the same thing ("12 weeks" for "8 weeks",
    # "8 semanas": units of time are one word in every language).
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
    # A word is shared when its key, in either text's language, or the word itself is there.
    theirs = other.stems
    if own.stem is other.stem:  # one language (or none): one key per word
        shared = tuple(sorted({k for w, k in own.pairs if k in theirs or w in other.words}))
    else:  # two languages: a word is shared in either's keys, or as a cognate
        stem = other.stem
        kin = other.prefixes
        shared = tuple(
            sorted(
                {
                    k
                    for w, k in own.pairs
                    if k in theirs or w in other.words or stem(w) in theirs or cognate(w) in kin
                }
            )
        )
    keys = own.words | own.stems
    if own.stem is not other.stem:
        keys = keys | {other.stem(w) for w in own.words} | cognates(own.words)
    return Evidence(
        quote_found,
        found,
        contradicted,
        shared,
        len(own.stems),
        _negation_differs(own, keys, read)
        or (quote_found is True and not own.negated and _quotes_denied(quoted, read)),
        _coverage(own, shared, found),
        own.quoted,
    )


#: How much a number of the sentence weighs in its coverage: as much as the longest word
#: (numbers are the same in every language, and a claim's most checkable part).
NUMBER: Final = 1.0


def _coverage(own: _Side, shared: tuple[str, ...], found: tuple[str, ...]) -> float:
    """The weighted share of the sentence's content words and numbers the passage has."""
    total = sum(own.weights.values()) + NUMBER * len(own.numbers)
    if not total:
        return 0.0
    # Summed in the sentence's own order, as the total is: a sentence whose every word the
    # passage has covers exactly 1, whatever order ``shared`` came in.
    has = set(shared)
    return (sum(w for k, w in own.weights.items() if k in has) + NUMBER * len(found)) / total


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
#: The weight of the meaning against the words' coverage with an embedding model: alike.
MEANING: Final = 0.5
#: What a quote found lifts the score to, when it holds ``QUOTE_HALF`` of the sentence's
#: content words or more; a shorter quote (a title, a name) lifts it in proportion.
QUOTE_LIFT: Final = 0.9
QUOTE_HALF: Final = 0.5


def meaning(similarity: float) -> float:
    """A cosine similarity stretched to [0, 1] (``UNRELATED`` to ``MATCHING``)."""
    return min(1.0, max(0.0, (similarity - UNRELATED) / (MATCHING - UNRELATED)))


def score(found: Evidence, similarity: float | None = None) -> float:
    """The support of one piece of evidence, in [0, 1] (see the module), with the cosine
    similarity of the two texts' vectors when an embedding model gave them."""
    value = found.coverage
    if similarity is not None:  # what the words show and what the meaning shows
        value = (1.0 - MEANING) * value + MEANING * meaning(similarity)
    if found.quote_found:
        value = max(value, QUOTE_LIFT * min(1.0, found.quoted / QUOTE_HALF))
    against = (found.quote_found is False) + bool(found.numbers_contradicted) + found.negated
    if against:  # below every pair nothing speaks against, however many words it shares
        return FLOOR * min(1.0, max(0.0, value)) / (against + 1)
    return FLOOR + (1.0 - FLOOR) * min(1.0, max(0.0, value))


#: The support from which a pair is ``"supported"``, and ``"partial"``.
SUPPORTED: Final = 0.5
PARTIAL: Final = 0.25


def verdict(support: float) -> str:
    """``"supported"``, ``"partial"`` or ``"unsupported"`` for a support score."""
    if support >= SUPPORTED:
        return "supported"
    return "partial" if support >= PARTIAL else "unsupported"
