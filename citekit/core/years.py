"""The one rule that reads a year out of a provider's free-text year field.

Providers send ``document_year`` as text: ``"1891"``, ``"c. 1270"``, ``"1962-1965"``,
``"33 AD"``, ``"500 a.C."``, ``"19th century"``, ``""``. The frames (``year`` column), the
BibTeX keys and CSL-JSON ``issued`` all read it with this rule:

* A year is a run of 1 to 4 ASCII digits standing alone: no digit or ASCII letter touches it
  (``"19th"``, ``"1234567"`` hold none), except a decade suffix (``"1960s"``, ``"1960's"``,
  German ``"1960er"``: the decade's first year). Other writing systems' digits are not read
  (``"١٩٩٠"``, full-width ``"１９９０"``): none of the providers writes them, and a Thai
  ``"๒๕๖๗"`` would be a Buddhist-era year anyway.
* A 3 or 4 digit number is a year wherever it stands (``"c. 1270"``, ``"May 24, 2015"``,
  ``"Rome, 1891."``). A 1 or 2 digit number is one only with an era written next to it
  (``"33 AD"``, ``"AD 33"``, ``"44 a.C."``, ``"5 v. Chr."``) or as the whole text (``"33"``),
  so day numbers, volumes and ``"19th century"`` are not taken for years.
* The first such year in the text is the year; a range (``"1891-1893"``, ``"1545–1563"``,
  ``"1931/32"``) gives its first year (:func:`parse_year_span` gives both ends).
* An era word of "before Christ" right after the year or its range, or right before the year,
  makes it negative: ``"500 BC"`` and ``"500–400 BC"`` give -500. Recognised, in the
  languages of the samples: en ``BC``, ``B.C.``, ``BCE``; es/pt/it ``a.C.``, ``a. C.``,
  ``aC``, ``a. de C.``, ``a.J.C.``, ``a.n.e.``, ``a.E.C.``, ``a.e.v.``; fr ``av. J.-C.``,
  ``avant J.-C.``, ``avant Jésus-Christ``, ``AEC``; de ``v. Chr.``, ``vor Christus``,
  ``v. u. Z.``. Their "anno Domini" counterparts (``AD``, ``A.D.``, ``CE``, ``d.C.``,
  ``d. de C.``, ``d.n.e.``, ``d.E.C.``, ``d.e.v.``, ``ap. J.-C.``, ``apr. J.-C.``,
  ``après J.-C.``, ``n. Chr.``, ``nach Christus``, ``n. u. Z.``) keep it positive and let a
  short number be a year.
* Year 0 does not exist: ``"0"`` gives no year. Nothing else is guessed: ``"s.f."``,
  ``"n.d."``, ``"XIII secolo"`` give none.

The rule is one regular expression, :data:`YEAR_PATTERN`, that Python's ``re`` and polars'
Rust engine read the same way (no look-around, ASCII classes, no case folding), so
:func:`parse_year` and :func:`year_expr` agree on every text (``tests/core/test_years.py`` checks
it on arbitrary text). This module imports nothing of citekit, and polars only inside
:func:`year_expr`.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "AD_PATTERN",
    "BC_PATTERN",
    "YEAR_PATTERN",
    "parse_year",
    "parse_year_span",
    "year_expr",
    "year_series",
]

# Spaces that may separate a number from its era: space, tab, no-break, narrow no-break, thin.
_SP = "[ \t\u00a0\u202f\u2009]"
_DASH = "[-\u2010\u2011\u2012\u2013\u2014/]"

#: Era words meaning "before Christ" (a regular expression, no groups).
BC_PATTERN: Final = "|".join(
    [
        f"[Bb]\\.?{_SP}?[Cc]\\.?(?:[Ee]\\.?)?",  # BC, B.C., BCE, B.C.E.
        f"a\\.{_SP}?(?:de{_SP}+)?(?:J\\.?{_SP}?)?C\\.?",  # a.C., a. C., a. de C., a.J.C.
        "aC\\.?",
        f"a\\.{_SP}?n\\.{_SP}?e\\.",  # a.n.e. (antes de nuestra era)
        f"a\\.{_SP}?E\\.{_SP}?C\\.",  # a.E.C. (antes da Era Comum)
        f"a\\.{_SP}?e\\.{_SP}?v\\.",  # a.e.v. (avanti era volgare)
        f"av\\.?{_SP}?J\\.?-?{_SP}?C\\.?",  # av. J.-C.
        f"avant{_SP}+(?:J\\.?-?{_SP}?C\\.?|Jésus-Christ)",
        "AEC",
        f"v\\.?{_SP}?Chr\\.?",  # v. Chr.
        f"vor{_SP}+Chr(?:istus|\\.)?",
        f"v\\.{_SP}?u\\.{_SP}?Z\\.?",  # v. u. Z.
    ]
)
#: Era words meaning "anno Domini" (a regular expression, no groups).
AD_PATTERN: Final = "|".join(
    [
        f"A\\.?{_SP}?D\\.?",  # AD, A.D.
        f"C\\.?{_SP}?E\\.?",  # CE, C.E.
        f"d\\.{_SP}?(?:de{_SP}+)?(?:J\\.?{_SP}?)?C\\.?",  # d.C., d. C., d. de C.
        "dC\\.?",
        f"d\\.{_SP}?n\\.{_SP}?e\\.",
        f"d\\.{_SP}?E\\.{_SP}?C\\.",
        f"d\\.{_SP}?e\\.{_SP}?v\\.",
        f"apr?\\.?{_SP}?J\\.?-?{_SP}?C\\.?",  # ap. J.-C., apr. J.-C.
        f"après{_SP}+(?:J\\.?-?{_SP}?C\\.?|Jésus-Christ)",
        f"n\\.?{_SP}?Chr\\.?",  # n. Chr.
        f"nach{_SP}+Chr(?:istus|\\.)?",
        f"n\\.{_SP}?u\\.{_SP}?Z\\.?",  # n. u. Z.
    ]
)

_BEFORE = "(?:^|[^0-9A-Za-z])"  # what may stand before a year (nothing, or not a digit/letter)
_AFTER = "(?:$|[^0-9A-Za-z])"


def _era(n: int) -> str:
    # "bcN" is set when the era says "before Christ".
    return f"(?:(?P<bc{n}>{BC_PATTERN})|(?:{AD_PATTERN})){_AFTER}"


def _range(n: int) -> str:
    return f"(?:{_SP}*{_DASH}{_SP}*(?P<end{n}>[0-9]{{1,4}}))?"


_BLANK = "[ \t\n\r\x0b\x0c\u00a0\u202f\u2009]*"

#: The year rule as one regular expression (Python ``re`` and polars read it alike). Named
#: groups: ``yearN`` the year's digits, ``endN`` a range's second number, ``bcN`` a "before
#: Christ" era; N is 1 (era before: ``"AD 33"``), 2 (3-4 digits: ``"1891"``), 3 (1-2 digits
#: with an era after: ``"33 AD"``) or 4 (1-2 digits as the whole text: ``"33"``).
YEAR_PATTERN: Final = (
    f"{_BEFORE}(?:"
    f"{_era(1)}{_SP}*(?P<year1>[0-9]{{1,4}}){_range(1)}{_AFTER}"
    f"|(?P<year2>[0-9]{{3,4}})(?:s|'s|\u2019s|er)?{_range(2)}(?:{_SP}*{_era(2)}|{_AFTER})"
    f"|(?P<year3>[0-9]{{1,2}}){_range(3)}{_SP}*{_era(3)}"
    f")|^{_BLANK}(?P<year4>[0-9]{{1,2}}){_BLANK}$"
)


@functools.cache
def _year_re() -> re.Pattern[str]:
    # Compiled on first use: the pattern takes about 15 ms to compile, a tenth of what
    # ``import citekit`` may cost.
    return re.compile(YEAR_PATTERN)


_GROUPS = (("year1", "end1", "bc1"), ("year2", "end2", "bc2"), ("year3", "end3", "bc3"))


def parse_year(text: str | None) -> int | None:
    """The year ``text`` gives (negative before Christ), or ``None`` (see the module's rule).

    >>> from citekit.core.years import parse_year
    >>> parse_year("c. 1270"), parse_year("1891-1893"), parse_year("500 a.C.")
    (1270, 1891, -500)
    >>> parse_year("19th century") is None
    True
    """
    span = parse_year_span(text)
    return None if span is None else span[0]


def parse_year_span(text: str | None) -> tuple[int, int] | None:
    """The first and last year of ``text`` (the same year twice when it holds no range), or
    ``None``.

    A range's second number may be shortened (``"1962-65"``, ``"1931/2"``); it must come after
    the first, else the text is a date and not a range (``"2015-05-24"`` gives 2015, 2015).
    Before Christ the numbers fall (``"500–400 BC"`` gives -500, -400).
    """
    if not text:
        return None
    found = _year_re().search(text)
    if found is None:
        return None
    digits = found["year4"]
    end = bc = None
    for year_group, end_group, bc_group in _GROUPS:
        if found[year_group] is not None:
            digits, end, bc = found[year_group], found[end_group], found[bc_group]
            break
    year = int(digits)
    if year == 0:
        return None
    if bc is not None:
        last = -int(end) if end is not None else -year
        year = -year
        return (year, last) if year < last else (year, year)
    if end is None:
        return year, year
    if len(end) < len(digits):  # "1962-65": the end borrows the start's first digits
        end = digits[: len(digits) - len(end)] + end
    last = int(end)
    return (year, last) if last > year else (year, year)


def year_expr(expr: pl.Expr | str) -> pl.Expr:
    """:func:`parse_year` as a polars expression (dtype ``Int32``) over a ``String`` column.

    Parameters
    ----------
    expr
        A column name or an expression of dtype ``String``.
    """
    import polars as pl

    text = pl.col(expr) if isinstance(expr, str) else expr
    groups = text.str.extract_groups(YEAR_PATTERN)
    year = pl.coalesce([groups.struct.field(f"year{n}") for n in (1, 2, 3, 4)]).cast(pl.Int32)
    before_christ = pl.any_horizontal(
        [groups.struct.field(f"bc{n}").is_not_null() for n in (1, 2, 3)]
    )
    return (
        pl.when(year == 0).then(None).when(before_christ).then(-year).otherwise(year).cast(pl.Int32)
    )


def year_series(document_year: pl.Series) -> pl.Series:
    """:func:`year_expr` of a whole ``String`` series (``Int32``), each distinct text parsed
    once: year strings repeat, one per document."""
    import polars as pl

    distinct = document_year.unique()
    # A column, not ``pl.lit(distinct)``: polars 2.1 panics on a literal series holding both
    # a year and a "0" (the when/then of year_expr); a frame's column does not.
    parsed = pl.DataFrame({"year": distinct}).select(year_expr("year")).to_series()
    return document_year.replace_strict(distinct, parsed, default=None, return_dtype=pl.Int32)
