"""Reading a provider's JSON with the types its protocol gives, at the boundary.

Every parser reads wire values through here, so a value of the wrong type or range (an object
where a string belongs, ``"zero"``, ``1e400``, ``NaN`` or a list as an index) never reaches
the rest of citekit, where it would fail far from its cause. Two ways to read a field:

strict (``Fields``)
    for what identifies and shapes an answer (ids, model, finish reason, choice indexes, tool
    calls, the text): a wrong value raises ``ResponseFormatError`` naming the provider, the
    field's path, what came and what was expected.
lenient (``text_or_none``, ``int_or_none``, ``number_or_none``)
    for the details of one source among many (a citation's title, a reference's score, a
    search hit's year): a wrong value is left out (``None``), so one odd source never costs
    the answer.

A missing field and JSON ``null`` are both ``None``. Numbers are finite: ``NaN`` and
``Infinity`` (which ``json.loads`` accepts) and ``1e400`` (which it reads as infinity) are
refused wherever a number is expected; integers are within ``[lo, hi]`` (indexes by default
``0`` to ``2**31 - 2``, what the frames' ``Int32`` columns hold).

>>> from citekit.core.fields import Fields
>>> choice = Fields({"index": "zero"}, "maritaca", "choices[0]")
>>> choice.integer("index")
Traceback (most recent call last):
...
citekit.core.errors.ResponseFormatError: Maritaca sent choices[0].index as a string ('zero'), \
not an integer from 0 to 2147483646: citekit cannot read this response. Retry the call; if \
Maritaca keeps sending it, report it with this message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from .errors import ResponseFormatError
from .names import display_name

__all__ = [
    "MAX_INDEX",
    "MAX_INT64",
    "MAX_MICROS",
    "MIN_MICROS",
    "Fields",
    "count_or_none",
    "int_or_none",
    "json_type",
    "number_or_none",
    "opt_text",
    "parse_created",
    "representable_time",
    "text_or_none",
    "utc_micros",
    "utc_time",
    "wrong",
]

#: The largest index citekit keeps (the frames hold markers and indexes in ``Int32``).
MAX_INDEX: Final = 2**31 - 2
#: The largest integer SQLite and the frames' ``Int64`` hold (a row id, a count, a ``LIMIT``).
MAX_INT64: Final = 2**63 - 1

_DIGITS: Final = re.compile(r"-?[0-9]{1,20}")
_TYPES: Final = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def json_type(value: Any) -> str:
    """How JSON would call ``value``'s type: ``"an object"``, ``"a string"``, ``"null"``..."""
    kind = _TYPES.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def _shown(value: Any) -> str:
    if isinstance(value, dict | list):
        return ""
    text = repr(value)
    return f" ({text[:40]}{'...' if len(text) > 40 else ''})"


def wrong(provider: str, path: str, value: Any, expected: str) -> ResponseFormatError:
    """The error for a wire value that is not what the protocol gives there."""
    name = display_name(provider)
    return ResponseFormatError(
        f"{name} sent {path or 'a response'} as {json_type(value)}{_shown(value)}, not "
        f"{expected}: citekit cannot read this response. Retry the call; if {name} keeps "
        "sending it, report it with this message."
    )


def int_or_none(
    value: Any, *, lo: int = 0, hi: int = MAX_INDEX, strings: bool = False
) -> int | None:
    """``value`` as an integer in ``[lo, hi]`` (a JSON integer, or a finite float without a
    fraction; with ``strings``, a string of ASCII digits too, as GPTBots writes its citation
    indexes); ``None`` for anything else, booleans included."""
    if type(value) is int:  # the common case, first
        return value if lo <= value <= hi else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (
        isinstance(value, float) and math.isfinite(value) and value.is_integer()
    ):
        number = int(value)
    elif strings and isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        number = int(value.strip())  # at most 20 digits: no slow conversion of a huge one
    else:
        return None
    return number if lo <= number <= hi else None


def number_or_none(value: Any, *, strings: bool = False) -> float | None:
    """``value`` as a finite float (a JSON number; with ``strings``, a number written as a
    string too); ``None`` for anything else, ``NaN`` and infinities included."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and strings and len(value) <= 64:
        try:
            number = float(value)
        except ValueError:
            return None
    elif isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def text_or_none(value: Any, *, numbers: bool = False) -> str | None:
    """``value`` when it is a string; with ``numbers``, an integer as its digits too (a year
    ``1992``, an id ``42``). ``None`` for anything else."""
    if isinstance(value, str):
        return value
    if numbers:
        number = int_or_none(value, lo=-(2**63), hi=2**63)
        if number is not None:
            return str(number)
    return None


class Fields:
    """One JSON object of a provider's reply, read field by field (strictly: a wrong value
    raises ``ResponseFormatError`` naming its path).

    ``path`` is where the object sits in the reply (``"choices[0].message"``; ``""`` for the
    body itself). Building one from anything that is not a JSON object raises too.
    """

    __slots__ = ("data", "path", "provider")

    def __init__(self, data: Any, provider: str, path: str = "") -> None:
        if not isinstance(data, Mapping):
            raise wrong(provider, path, data, "an object")
        self.data: Mapping[str, Any] = data
        self.provider = provider
        self.path = path

    def at(self, key: str | int) -> str:
        """The path of ``key`` in this object (``choices[0].index``)."""
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def wrong(self, key: str, value: Any, expected: str) -> ResponseFormatError:
        return wrong(self.provider, self.at(key), value, expected)

    def string(self, key: str, *, numbers: bool = False) -> str | None:
        """A string field (``numbers``: an integer is taken as its digits, as ids may be)."""
        value = self.data.get(key)
        if value is None or isinstance(value, str):
            return value
        text = text_or_none(value, numbers=numbers)
        if text is None:
            raise self.wrong(key, value, "a string" + (" or an integer" if numbers else ""))
        return text

    def integer(self, key: str, *, lo: int = 0, hi: int = MAX_INDEX) -> int | None:
        """An integer field in ``[lo, hi]``."""
        value = self.data.get(key)
        if value is None:
            return None
        number = int_or_none(value, lo=lo, hi=hi)
        if number is None:
            raise self.wrong(key, value, f"an integer from {lo} to {hi}")
        return number

    def array(self, key: str) -> list[Any]:
        """An array field; a missing or null one is empty."""
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.wrong(key, value, "an array")
        return value

    def object(self, key: str) -> Fields | None:
        """An object field, itself read as ``Fields``; ``None`` when missing or null."""
        value = self.data.get(key)
        if value is None:
            return None
        return Fields(value, self.provider, self.at(key))

    def objects(self, key: str) -> list[Fields]:
        """An array of objects (``choices``), each read as ``Fields``."""
        path = self.at(key)
        return [
            Fields(item, self.provider, f"{path}[{i}]") for i, item in enumerate(self.array(key))
        ]


def opt_text(value: Any) -> str | None:
    """A wire string, or an integer as its digits (ids, years); anything else is not one."""
    return text_or_none(value, numbers=True)


def parse_created(value: Any) -> datetime | None:
    """A Unix time in seconds or milliseconds (GPTBots uses both), or an ISO time, as an aware
    datetime (UTC unless the text gives an offset); None when it is not one, or when it has no
    UTC form (``representable_time``)."""
    number = number_or_none(value, strings=True)
    if number is None:
        if isinstance(value, str) and len(value) <= 64:
            try:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
            return representable_time(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
        return None
    # Seconds since 1970 stay below 1e11 until the year 5138; milliseconds are above it.
    if abs(number) >= 1e11:
        number /= 1000.0
    try:
        return datetime.fromtimestamp(number, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def representable_time(value: datetime | None) -> datetime | None:
    """The one rule for times at the edges: ``value`` when its UTC form is a datetime too (a
    naive one, taken as UTC, always is), else None, as any other time that cannot be read.

    ``9999-12-31T23:59:59-05:00`` is in the year 10000 in UTC, ``0001-01-01T00:00+05:00`` in
    the year 0: neither is a datetime, a log's ``created_us`` or a dataset's month, so such a
    time is no time at all, everywhere (the parser, ``Answer``, the log, the datasets).
    """
    if value is None or value.utcoffset() is None:
        return value
    try:
        value.astimezone(UTC)
    except OverflowError:
        return None
    return value


def utc_time(value: datetime | None) -> datetime | None:
    """``value`` in UTC (a naive one taken as UTC), None past the edges (by
    ``representable_time``): what a frame's ``created`` column holds."""
    value = representable_time(value)
    if value is None:
        return None
    if value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def utc_micros(value: datetime | None) -> int | None:
    """Whole microseconds since 1970 UTC of ``value`` (``utc_time``): what the log's
    ``created_us`` holds."""
    value = utc_time(value)
    return None if value is None else (value - _EPOCH) // _MICROSECOND


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
#: ``created_us`` of the first and the last microsecond a datetime holds in UTC.
MIN_MICROS: Final = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _MICROSECOND
MAX_MICROS: Final = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // _MICROSECOND


def count_or_none(value: Any) -> int | None:
    """A count as a provider writes it (a number or its digits); beyond 2**63 is not a count."""
    return int_or_none(value, lo=-MAX_INT64, hi=MAX_INT64, strings=True)
