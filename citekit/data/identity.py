"""Which sources are the same work: their addresses and titles.

Two citations of one work rarely carry the same URL or the same title. One URL has ``http://``
and ``www.``, another a trailing slash, a ``#paragraph`` fragment or a ``utm_source``
parameter, and vatican.va serves the same encyclical under a language segment
(``/content/francesco/en/...`` and ``/pt/``) or a language suffix (``..._en.html`` and
``..._po.html``). ``canonical_url`` removes what never changes the document; ``work_url`` also
removes the language, so that translations of one document share a key. ``title_key`` does
the same for a title: case, accents, punctuation and a leading article (English, Portuguese,
Spanish, Italian, French, German) apart.

>>> from citekit.data.identity import canonical_url, title_key, work_url
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
from typing import Final
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["canonical_url", "title_key", "work_url"]

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
_VATICAN_SUFFIX: Final = re.compile(r"_([a-z]{2})(\.(?:html?|pdf))$", re.IGNORECASE)


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


def work_url(url: str | None) -> str | None:
    """``canonical_url`` without the language of a translation, where the site's addresses
    say it (vatican.va): the key that an encyclical's English and Portuguese pages share."""
    canonical = canonical_url(url)
    if canonical is None:
        return None
    parts = urlsplit(canonical)
    if parts.hostname != "vatican.va":
        return canonical
    segments = parts.path.split("/")
    # /content/<who>/<lang>/...: the language is the third segment.
    if len(segments) > 4 and segments[1] == "content" and segments[3] in _VATICAN_LANGS:
        del segments[3]
    path = "/".join(segments)
    suffix = _VATICAN_SUFFIX.search(path)
    if suffix and suffix.group(1).lower() in _VATICAN_LANGS:
        path = path[: suffix.start()] + suffix.group(2)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


#: Articles a title may open with (Italian "i" is not one here: English "I" would go too).
_ARTICLES: Final = frozenset(
    {"the", "a", "an", "o", "os", "as", "um", "uma", "el", "la", "los", "las", "un", "una"}
    | {"il", "lo", "gli", "le", "l", "une", "des", "der", "die", "das", "ein", "eine"}
)
_WORD: Final = re.compile(r"[^\W_]+")


def title_key(title: str | None) -> str:
    """``title`` reduced to what tells works apart: lower case, accents and punctuation
    out, one space between words, without a leading article ("The", "La", "Die", "l'"...).
    "" when nothing is left (no title, or punctuation only)."""
    if not title or not isinstance(title, str):
        return ""
    folded = unicodedata.normalize("NFKD", title.casefold())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    words = _WORD.findall(plain.replace("\u2019", "'").replace("l'", "l "))
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)
