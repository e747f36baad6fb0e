"""``Scrubber.may_hold_any``: the one JSON dump that spares a clean value its walk must never
call a value clean that the walk would change."""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.core.secrets import _anchors, _plain_i, _walk, echo_forms, scrub_value, scrubber
from tests.budget import examples
from tests.conftest import sample_records
from tests.guarantees.test_hostile_secrets import ENCODINGS

PROPERTY = settings(
    max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

#: Key characters, among them those JSON, URL and HTML encodings change.
KEY_CHARS = string.ascii_letters + string.digits + "-_.~+/=" + "\"\\<>&%'"
#: Text around a key: what JSON escapes (quotes, backslashes, control characters), letters
#: whose case folds oddly (the i's, the long s, the Kelvin sign), combining marks.
NOISE = st.text(
    st.sampled_from(list('ab "\\\n\t\x00\x1f/iIkKsS\u0130\u0131\u017f\u212a\u0307\u00e9<&%\u2028')),
    max_size=6,
)


@dataclasses.dataclass(frozen=True)
class _Box:
    label: Any
    items: Any = ()
    hidden: Any = dataclasses.field(default=None, init=False)


@dataclasses.dataclass(frozen=True)
class _Sheet(Mapping[Any, Any]):
    """A dataclass that is also a mapping, whose items are not its fields: the walk reads it
    as a mapping, and so must the dump."""

    title: Any
    cells: dict[Any, Any] = dataclasses.field(default_factory=dict, init=False)

    def __getitem__(self, key: Any) -> Any:
        return self.cells[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)


def _sheet(title: Any, cells: dict[Any, Any]) -> _Sheet:
    sheet = _Sheet(title)
    object.__setattr__(sheet, "cells", cells)
    return sheet


def _texts(key: str) -> st.SearchStrategy[str]:
    """Strings holding the key in some spelling and case, or a piece of it, or none."""
    spelled = st.one_of(
        st.sampled_from(sorted(ENCODINGS)).map(lambda name: ENCODINGS[name](key)),
        st.sampled_from(echo_forms(key)),  # each spelling the scrubber knows, twice encoded too
    )
    piece = st.integers(1, max(1, len(key) - 1)).map(lambda n: key[:n])
    body = st.one_of(spelled, piece, st.just(""), spelled.map(str.swapcase))
    return st.tuples(NOISE, body, NOISE).map("".join)


def _values(key: str) -> st.SearchStrategy[Any]:
    scalars = st.one_of(_texts(key), st.none(), st.integers(), st.floats(), st.binary(max_size=4))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(_texts(key), inner, max_size=3),
            st.tuples(inner, inner).map(lambda li: _Box(*li)),
            st.tuples(inner, st.dictionaries(_texts(key), inner, max_size=2)).map(
                lambda pair: _sheet(*pair)
            ),
        ),
        max_leaves=10,
    )


@PROPERTY
@given(
    key=st.one_of(
        st.text(KEY_CHARS, min_size=8, max_size=24).map(lambda k: "sk-" + k),
        st.text(KEY_CHARS, min_size=1, max_size=7),  # short: whole tokens only
    ),
    data=st.data(),
)
def test_a_value_called_clean_is_one_the_walk_leaves_alone(key: str, data: st.DataObject) -> None:
    clean = scrubber([key])
    value = data.draw(_values(key))
    walked = _walk(value, clean)
    if not clean.may_hold_any(value):
        assert walked is value
    assert scrub_value(value, clean) == walked


def test_a_sample_answer_is_clean_in_one_dump_and_marked() -> None:
    clean = scrubber(["sk-bench-0123456789"])
    for _, record in sample_records("magisterium"):
        answer = ck.parse_response(record["response"], provider="magisterium")
        assert not clean.may_hold_any(answer)
        assert scrub_value(answer, clean) is answer
    echoed = dataclasses.replace(answer, text=answer.text + " sk-bench-0123456789")
    assert clean.may_hold_any(echoed)
    assert "sk-bench" not in scrub_value(echoed, clean).text


def test_every_spelling_in_any_string_is_seen_in_the_dump() -> None:
    for key in ('sk-ab"cd\\ef/gh<i>&%k', "sk-\u0130\u0131ksS-0123", 'a"b', "k\\"):
        clean = scrubber([key])
        for form in echo_forms(key):
            for text in (form, f"x{form}y", f'"{form}"\n', form.swapcase()):
                value = {"raw": [text], text: _Box(label=(text,))}
                assert clean.may_hold_any(value) or _walk(value, clean) is value, (key, form)
                sheet = _sheet("title", {"cell": text})  # in the items, not in the fields
                assert clean.may_hold_any(sheet) or _walk(sheet, clean) is sheet, (key, form)


#: What a letter may become in a text a case-insensitive match still finds it in.
_FOLDS = {"k": "K\u212a", "s": "S\u017f", "i": "I\u0130\u0131", "e": "E\u00e9"}


@PROPERTY
@given(
    form=st.text(KEY_CHARS + "ik\u00df\u0130", min_size=1, max_size=12),
    around=st.tuples(NOISE, NOISE),
    data=st.data(),
)
def test_a_form_found_folded_has_its_anchor_in_the_text_as_it_is(
    form: str, around: tuple[str, str], data: st.DataObject
) -> None:
    """The quick test before folding a dump: a text whose folded spelling holds a form holds
    the form's anchor (its longest run of ASCII non-letters) as it is."""
    spelled = "".join(
        data.draw(st.sampled_from([c, c.swapcase(), *_FOLDS.get(c.lower(), "")])) for c in form
    )
    text = around[0] + spelled + around[1]
    folded_form = _plain_i(form.casefold())
    if folded_form in _plain_i(text.casefold()):
        anchors = _anchors([folded_form])
        assert anchors is None or any(anchor in text for anchor in anchors)
