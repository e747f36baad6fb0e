"""Which sources are the same work: their addresses and titles.

Two citations of one work rarely carry the same URL or the same title. One URL has ``http://``
and ``www.``, another a trailing slash, a ``#paragraph`` fragment or a ``utm_source``
parameter, and vatican.va serves the same encyclical under a language segment
(``/content/francesco/en/...`` and ``/pt/``) or a language suffix (``..._en.html`` and
``..._po.html``). ``canonical_url`` removes what never changes the document; ``work_url`` also
removes the language, so that translations of one document share a key. ``title_key`` does
the same for a title: case, accents, punctuation and a leading article (English, Portuguese,
Spanish, Italian, French, German) apart.

>>> from citekit.data.identity.keys import canonical_url, title_key, work_url
>>> canonical_url("HTTP://WWW.Example.org:80/a/b/?utm_source=x&id=3#p5")
'https://example.org/a/b?id=3'
>>> work_url("https://www.vatican.va/content/francesco/pt/encyclicals/documents/"
...          "papa-francesco_20150524_enciclica-laudato-si.html")
'https://vatican.va/content/francesco/encyclicals/documents/papa-francesco_20150524_enciclica-laudato-si.html'
>>> title_key("The Joy of the Gospel"), title_key("«Laudato si’»"), title_key("La Gaudium et Spes")
('joy of the gospel', 'laudato si', 'gaudium et spes')
>>> work_url("https://www.vatican.va/archive/hist_councils/ii_vatican_council/documents/"
...          "vat-ii_const_19651207_gaudium-et-spes_fr.html")
'https://vatican.va/archive/hist_councils/ii_vatican_council/documents/vat-ii_const_19651207_gaudium-et-spes.html'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Final
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "GENERIC_TITLES",
    "NUMBERED_PARTS",
    "NUMBERED_WORKS",
    "author_key",
    "canonical_url",
    "content_key",
    "file_title",
    "genre_free_key",
    "is_locator",
    "names_which",
    "title_key",
    "title_parts",
    "url_language",
    "work_title",
    "work_url",
]

#: Query parameters that track a click and never choose the document.
_TRACKING: Final = re.compile(
    r"^(utm_[a-z_]+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|igshid|yclid|_ga|_gl|ref_src)$",
    re.IGNORECASE,
)
_DEFAULT_PORTS: Final = {"80", "443"}
#: The language codes vatican.va puts in a path segment (``/content/<who>/<lang>/``) or as a
#: file name suffix (``..._po.html``): its own two-letter codes and the ISO ones it also uses.
_VATICAN_LANGS: Final = frozenset(
    [
        "ar",
        "be",
        "de",
        "en",
        "es",
        "fr",
        "ge",
        "hr",
        "hu",
        "it",
        "la",
        "lt",
        "nl",
        "pl",
        "po",
        "pt",
        "ru",
        "sp",
        "sw",
        "uk",
        "zh",
    ]
)
#: The suffix follows one underscore: the Catechism's archive pages ``__PT.HTM`` are pages.
_VATICAN_SUFFIX: Final = re.compile(r"(?<![_/])_([a-z]{2})(\.(?:html?|pdf))$", re.IGNORECASE)
#: Other hosts of vatican.va's own pages.
_VATICAN_HOSTS: Final = frozenset({"vatican.va", "w2.vatican.va"})


def canonical_url(url: str | None) -> str | None:
    """``url`` with what never changes the document taken out: the scheme made ``https``,
    the host lower case without ``www.`` or a default port, a fragment, tracking parameters,
    a trailing slash, and percent-escapes written one way. None for anything that is not an
    http(s) URL with a host.
    """
    if not url or not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # a port that is not a number, a bracket left open
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower().rstrip(".")
    host = host.removeprefix("www.")
    if port is not None and str(port) not in _DEFAULT_PORTS:
        host = f"{host}:{port}"
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=-._~")
    path = re.sub(r"/{2,}", "/", path)
    if path.endswith("/"):
        path = path.rstrip("/")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = sorted((k, v) for k, v in query if not _TRACKING.match(k))
    return urlunsplit(("https", host, path, urlencode(kept), ""))


def _vatican(url: str | None) -> tuple[str, str | None] | None:
    """A vatican.va address without its language, and the language code it had (vatican.va's
    own: "po", "sp"...), or None for another site or no URL."""
    canonical = canonical_url(url)
    if canonical is None:
        return None
    parts = urlsplit(canonical)
    if parts.hostname not in _VATICAN_HOSTS:
        return None
    code = None
    segments = parts.path.split("/")
    # /content/<who>/<lang>/...: the language is the third segment.
    if len(segments) > 4 and segments[1] == "content" and segments[3] in _VATICAN_LANGS:
        code = segments.pop(3)
    path = "/".join(segments)
    suffix = _VATICAN_SUFFIX.search(path)
    if suffix and suffix.group(1).lower() in _VATICAN_LANGS:
        code = code or suffix.group(1).lower()
        path = path[: suffix.start()] + suffix.group(2)
    return urlunsplit(("https", "vatican.va", path, parts.query, "")), code


def work_url(url: str | None) -> str | None:
    """``canonical_url`` without the language of a translation, where the site's addresses
    say it (vatican.va): the key that an encyclical's English and Portuguese pages share."""
    found = _vatican(url)
    return canonical_url(url) if found is None else found[0]


#: Articles a title may open with (Italian "i" is not one here: English "I" would go too).
_ARTICLES: Final = frozenset(
    {"the", "a", "an", "o", "os", "as", "um", "uma", "el", "la", "los", "las", "un", "una"}
    | {"il", "lo", "gli", "le", "l", "une", "des", "der", "die", "das", "ein", "eine"}
)
_WORD: Final = re.compile(r"[^\W_]+")


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def title_key(title: str | None) -> str:
    """``title`` reduced to what tells works apart: lower case, accents and punctuation
    out, one space between words, without a leading article ("The", "La", "Die", "l'"...).
    "" when nothing is left (no title, or punctuation only)."""
    if not title or not isinstance(title, str):
        return ""
    folded = unicodedata.normalize("NFKD", title.casefold())
    # Case folded again after NFKD: a compatibility character may decompose to a capital
    # ("ϒ" to "Υ"), and a key must read as itself.
    plain = "".join(c for c in folded if not unicodedata.combining(c)).casefold()
    words = _WORD.findall(plain.replace("\u2019", "'").replace("l'", "l "))
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


#: Words before a name that say who rather than name: honorifics in the seven languages.
_HONORIFICS: Final = frozenset(
    {"pope", "papa", "pape", "papst", "saint", "st", "ste", "san", "sao", "sankt", "s", "ss"}
    | {"santo", "santa", "sainte", "blessed", "beato", "bl", "his", "holiness", "sua", "santita"}
    | {"santidade", "santidad", "sa", "saintete", "heiligkeit", "seine", "pontifex", "dr"}
)


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def author_key(name: str | None) -> str:
    """``name`` reduced as ``title_key`` does, also without honorifics before it ("Pope",
    "Papa", "Saint", "São", "S.S.") and the papal "PP." anywhere: "Pope Francis",
    "Papa Francesco" and "Franciscus PP." key as "francis", "francesco", "franciscus"."""
    if isinstance(name, str) and name.count(",") == 1:
        # "Ratzinger, Joseph" is Joseph Ratzinger; "Paul VI, Pope" stays as it is.
        last, first = (part.strip() for part in name.split(","))
        if 0 < len(first.split()) <= 3 and title_key(first) not in _HONORIFICS:
            name = f"{first} {last}"
    words = title_key(name).split()
    while len(words) > 1 and words[0] in _HONORIFICS:
        words = words[1:]
    while len(words) > 1 and words[-1] in _HONORIFICS:
        words = words[:-1]
    kept = [w for w in words if w != "pp"]
    return " ".join(kept or words)


#: Where a title names a place in its work rather than another work: "Summa Theologiae, I-II,
#: q. 94", "Catechism of the Catholic Church, 1934", "Lumen gentium, n. 8", "(2nd ed.)".
_LOCATOR_WORDS: Final = frozenset(
    {"n", "no", "nn", "nos", "num", "p", "pp", "par", "para", "paragraph", "paragraphs"}
    | {"art", "article", "artigo", "articulo", "articolo", "a", "ad", "q", "qq", "question"}
    | {"quaestio", "questao", "cuestion", "questione", "pars", "part", "parte", "partie", "teil"}
    | {"cap", "c", "ch", "chap", "chapter", "capitulo", "capitolo", "chapitre", "kapitel"}
    | {"sec", "section", "secao", "seccion", "sezione", "sect", "vol", "volume", "book", "liber"}
    | {"livro", "libro", "livre", "buch", "lib", "ed", "edition", "edicao", "edicion", "edizione"}
    | {"editio", "typica", "auflage", "second", "segunda", "seconda", "deuxieme", "zweite"}
    | {"nd", "rd", "th", "st", "prologue", "prologo", "prooemium", "intro", "introduction", "sc"}
    | {"revised", "revisada", "revista", "riveduta", "revue", "rev", "expanded", "updated", "new"}
    | {"resp", "obj", "corpus", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"}
)
_NUMBERISH: Final = re.compile(r"^([a-z]{0,5}\d+[a-z]{0,2}|[ivxlc]+)$")
_SPLIT: Final = re.compile(r"\s*(?:[:;,(\[]|\s[-\u2013\u2014]\s|§)\s*")


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def is_locator(text: str) -> bool:
    """Whether ``text`` only says where in a work (numbers, roman numerals, "q.", "art.",
    "no.", "2nd ed."), so that the title before it is the work's."""
    words = title_key(text).split()
    return bool(words) and all(w in _LOCATOR_WORDS or _NUMBERISH.match(w) for w in words)


def title_parts(title: str | None) -> tuple[str, str]:
    """``title`` cut at its first separator (``:``, ``,``, ``(``, `` - ``, ``§``...) into the
    head and the rest; ("", "") for no title, (title, "") when there is no separator."""
    if not title or not isinstance(title, str):
        return "", ""
    title = title.strip()
    found = _SPLIT.search(title)
    if found is None or found.start() == 0:
        return title, ""
    return title[: found.start()].strip(), title[found.end() :].strip()


#: Words a number after names which work, wherever they stand: "Sermon 169" and "Sermon 241"
#: of Augustine, "Epistle 22" of Jerome, "Psalm 23", "Homily 2", "General Audience 12", in
#: the languages of the alias table (as ``title_key`` reads them: "Sermão" is "sermao").
NUMBERED_WORKS: Final = frozenset(
    {"sermon", "sermo", "sermone", "sermao", "serm", "predigt", "homily", "homilia", "omelia"}
    | {"homelie", "homilie", "hom", "letter", "epistle", "epistola", "epistula", "lettera"}
    | {"carta", "lettre", "epitre", "brief", "ep", "epist", "psalm", "psalmus", "salmo"}
    | {"psaume", "ps", "audience", "audiencia", "udienza", "audienz", "generalaudienz"}
    | {"audientia", "catechesis", "catequese", "catequesis", "catechesi", "catechese"}
    | {"katechese", "address", "discourse", "discurso", "discorso", "discours", "ansprache"}
    | {"oratio", "oration", "speech", "message", "mensagem", "mensaje", "messaggio", "botschaft"}
    | {"nuntius", "tractate", "tractatus", "trattato", "tratado", "traite", "traktat", "hymn"}
    | {"hymnus", "inno", "hino", "himno", "hymne", "interview", "entrevista", "intervista"}
)
#: Words a number after names which work when they open the title ("Question 94", "Canon
#: 915", "Chapter 3"); after another title they say where in it ("Summa Theologiae, q. 94").
NUMBERED_PARTS: Final = frozenset(
    {"question", "quaestio", "questao", "cuestion", "questione", "frage", "article"}
    | {"articulus", "artigo", "articulo", "articolo", "artikel", "chapter", "caput"}
    | {"capitulum", "capitolo", "capitulo", "chapitre", "kapitel", "canon", "canone", "kanon"}
    | {"book", "liber", "livro", "libro", "livre", "buch"}
)


def names_which(words: Sequence[str], at: int) -> bool:
    """Whether the number ``words[at]`` of a title names which work rather than a place in it:
    the word before it names a numbered work ("Sermon 169"), or a numbered part that opens
    the title ("Question 94"). The one rule ``work_title`` keeps such numbers by."""
    if at < 1:
        return False
    before = title_key(words[at - 1])
    opens = at == 1 or (at == 2 and title_key(words[0]) in _ARTICLES)  # "The Question 94"
    return before in NUMBERED_WORKS or (opens and before in NUMBERED_PARTS)


_FIRST_NUMBER: Final = re.compile(r"(?<!\w)\d+(?!\w)")


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def work_title(title: str | None) -> str:
    """The title of the work ``title`` cites: without a trailing place in it ("Summa
    Theologiae, I-II, q. 94" -> "Summa Theologiae"; "Catechism of the Catholic Church 2427"
    -> "Catechism of the Catholic Church"). Other subtitles are kept: "Laborem Exercens: A
    Commentary" is its own work; so is a number that names which work (``names_which``):
    "Sermon 169, 3" -> "Sermon 169", "Psalm, 23" -> "Psalm 23"."""
    if not title or not isinstance(title, str):
        return ""
    title = title.strip()
    # The first separator after which only a place follows: "Augustine, Sermon 169 (3)".
    cut = next(
        (s for s in _SPLIT.finditer(title) if s.start() > 0 and is_locator(title[s.end() :])),
        None,
    )
    if cut is not None:
        head, rest = title[: cut.start()].strip(), title[cut.end() :]
        title = head
        # "Sermo, 169, 3": the first number after the head says which sermon.
        found = _FIRST_NUMBER.search(rest)
        number = found.group(0) if found else None
        words = head.split()
        if number is not None and names_which([*words, number], len(words)):
            title = f"{head} {number}"
    words = title.split()
    # A bare trailing paragraph number ("Catechism of the Catholic Church 1934"), not a year
    # ("Message for the World Day of Peace 2015" is not the 2020 one).
    while (
        len(words) > 1
        and words[-1].isdecimal()
        and not 1000 <= int(words[-1]) <= 2100
        and not names_which(words, len(words) - 1)
    ):
        words.pop()
    return " ".join(words).strip(" ,;:.-\u2013\u2014")


#: vatican.va's own language codes that are not ISO 639-1 ("lt" is its Latin: the Nova Vulgata).
_VATICAN_ISO: Final = {"po": "pt", "sp": "es", "ge": "de", "lt": "la"}


def url_language(url: str | None) -> str | None:
    """The language a vatican.va address serves its page in (its language segment or
    suffix, as an ISO 639-1 code), else None."""
    found = _vatican(url)
    code = None if found is None else found[1]
    return None if code is None else _VATICAN_ISO.get(code, code)


_FILE_NAME: Final = re.compile(
    r"\.(pdf|docx?|odt|rtf|txt|md|html?|epub|mobi|pptx?|xlsx?|csv|json)$", re.IGNORECASE
)
#: Language codes a file name ends with ("Laudato_Si_PT.pdf").
_FILE_LANGS: Final = frozenset({"pt", "br", "es", "it", "fr", "de", "en", "la", "lat", "eng"})


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def file_title(title: str | None) -> str:
    """A knowledge file's name read as a title: "Laudato_Si_PT.pdf" -> "Laudato Si",
    "Catecismo-da-Igreja-Catolica.pdf" -> "Catecismo da Igreja Catolica". Other titles are
    returned as they are."""
    if not title or not isinstance(title, str):
        return ""
    found = _FILE_NAME.search(title.strip())
    if found is None:
        return title
    words = re.split(r"[\s_\-]+", title.strip()[: found.start()])
    while len(words) > 1 and words[-1].lower() in _FILE_LANGS:
        words.pop()
    return " ".join(w for w in words if w)


#: Words that name a document's genre before its title ("Carta Encíclica Laudato si'",
#: "Constituição dogmática Dei Filius", "Apostolic Exhortation Evangelii gaudium").
_GENRE: Final = frozenset(
    {"encyclical", "enciclica", "enzyklika", "encyclique", "carta", "letter", "lettera"}
    | {"lettre", "brief", "schreiben", "apostolic", "apostolica", "apostolique", "apostolisches"}
    | {"apostolico", "exhortation", "exortacao", "exhortacion", "esortazione", "adhortatio"}
    | {"constitution", "constituicao", "constitucion", "costituzione", "konstitution"}
    | {"dogmatic", "dogmatica", "dogmatique", "dogmatische", "pastoral", "pastorale"}
    | {"postsynodal", "post", "synodal", "pos", "sinodal", "postsinodale", "nachsynodales"}
    | {"declaration", "declaracao", "declaracion", "dichiarazione", "erklarung", "decree"}
    | {"decreto", "decret", "dekret", "bull", "bula", "bolla", "bulle", "motu", "proprio"}
    | {"litterae", "encyclicae", "do", "del", "della", "de", "des", "der", "of", "the", "da"}
)


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def genre_free_key(title: str | None) -> str:
    """``title_key`` without a leading genre ("Carta Encíclica", "Dogmatic Constitution"),
    "" when the title has none or is only genre words."""
    words = title_key(title).split()
    n = 0
    while n < len(words) and words[n] in _GENRE:
        n += 1
    if n == 0 or n == len(words) or words[n - 1] in {"do", "del", "della", "de", "des", "der"}:
        return ""
    return " ".join(words[n:])


#: Titles many documents share: a title alone never makes them one work.
GENERIC_TITLES: Final = frozenset(
    {"homily", "homilia", "omelia", "homelie", "predigt", "general audience", "audiencia"}
    | {"audiencia general", "udienza generale", "audience generale", "generalaudienz"}
    | {"angelus", "regina caeli", "message", "mensagem", "mensaje", "messaggio", "botschaft"}
    | {"address", "discurso", "discorso", "discours", "ansprache", "speech", "letter", "carta"}
    | {"lettera", "lettre", "brief", "catechesis", "catequese", "catequesis", "catechesi"}
    | {"interview", "entrevista", "intervista", "introduction", "preface", "prefacio"}
    | {"foreword", "conclusion", "index", "home", "inicio", "news", "noticias", "faq"}
)


#: Words a title can drop or reorder without naming another work (file names drop them).
_FUNCTION_WORDS: Final = _ARTICLES | frozenset(
    {"da", "de", "do", "das", "dos", "del", "della", "delle", "dei", "di", "du", "der", "den"}
    | {"of", "and", "e", "y", "et", "und", "on", "in", "em", "en", "no", "na", "nel", "im"}
    | {"to", "for", "para", "per", "pour", "fur", "sobre", "sur", "uber", "about"}
)


@lru_cache(maxsize=1 << 16)  # titles repeat across sources: each is read once
def content_key(title: str | None) -> str:
    """The content words of ``title`` in order of the alphabet, without articles and
    prepositions: "Compendio_Doutrina_Social_Igreja.pdf" and "Compêndio da Doutrina Social da
    Igreja" both give "compendio doutrina igreja social"."""
    words = {w for w in title_key(file_title(title)).split() if w not in _FUNCTION_WORDS}
    return " ".join(sorted(words))
