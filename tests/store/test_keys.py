"""Cache keys stay what they were: a log written before answers from its keys after."""

from __future__ import annotations

import enum
import hashlib
import json
from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.store.keys import canonical_bytes, canonical_json, dumps, request_key
from tests.budget import examples

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _as_before(body: Any) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@settings(max_examples=examples(400))
@given(_JSON)
def test_canonical_json_is_the_text_it_always_was(body: Any) -> None:
    assert canonical_json(body) == _as_before(body)


@settings(max_examples=examples(200))
@given(st.dictionaries(st.text(max_size=8), _JSON, max_size=5), st.text(max_size=20))
def test_request_key_is_the_hash_it_always_was(body: dict[str, Any], base_url: str) -> None:
    kept = {k: v for k, v in body.items() if k not in ("stream", "stream_options", "response_mode")}
    text = _as_before({"provider": "magisterium", "base_url": base_url, "body": kept})
    assert request_key("magisterium", body, base_url) == hashlib.sha256(text.encode()).hexdigest()


def test_a_chat_body_has_the_key_logs_hold() -> None:
    """The key of a plain chat request, as written by every citekit since the log began."""
    body = {"model": "m", "messages": [{"role": "user", "content": "Qué?"}], "stream": True}
    text = '{"base_url":"u","body":{"messages":[{"content":"Qué?","role":"user"}],"model":"m"},'
    text += '"provider":"magisterium"}'
    assert request_key("magisterium", body, "u") == hashlib.sha256(text.encode()).hexdigest()


class _Color(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Tone(enum.StrEnum):
    WARM = "warm"


#: What a request body may hold besides JSON: values msgspec writes its own way (floats with
#: exponents, NaN, sets, bytes, dates, enums, decimals), keys that are not strings, big ints,
#: control characters and far-off code points, mappings that are not plain dicts.
_ODD_SCALARS = (
    _SCALARS
    | st.floats(allow_nan=True, allow_infinity=True).map(lambda f: f * 1e-300)
    | st.sampled_from([1e-05, 1e16, 1e15, 1e-4, 1.5e300, -0.0, 5e-324, 2.0**70, 0.1])
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.text(st.characters(codec="utf-8"), max_size=6)
    | st.binary(max_size=4)
    | st.datetimes()
    | st.dates()
    | st.decimals(allow_nan=False)
    | st.uuids()
    | st.sampled_from([_Color.RED, _Level.HIGH, _Tone.WARM])
    | st.frozensets(st.integers(0, 3), max_size=2)
)
_KEYS = st.text(max_size=8) | st.sampled_from(["\x7f", "\u2028", "é", "\U0001f600", "Z", "a"])
_ODD = st.recursive(
    _ODD_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=4)
        | st.dictionaries(st.integers(-3, 12), inner, max_size=3)
        | st.dictionaries(_KEYS, inner, max_size=3).map(OrderedDict)
        | st.sets(st.integers(0, 5), max_size=3)
    ),
    max_leaves=20,
)


def _outcome(write: Any, body: Any) -> Any:
    try:
        return write(body)
    except Exception as exc:  # the old way's error is the new way's error
        return type(exc)


@settings(max_examples=examples(1000))
@given(_ODD)
def test_the_fast_bytes_are_the_old_text_whatever_the_body_holds(body: Any) -> None:
    """Keys already in logs stay the same: msgspec's text is used only where it is the very
    text ``json.dumps`` writes, and every other body gives the old text (or the old error)."""
    old = _outcome(lambda b: _as_before(b).encode(), body)
    assert _outcome(canonical_bytes, body) == old


@settings(max_examples=examples(400))
@given(st.dictionaries(_KEYS, _ODD, max_size=5), st.text(max_size=20))
def test_request_key_of_any_body_is_the_hash_it_always_was(
    body: dict[str, Any], base_url: str
) -> None:
    kept = {k: v for k, v in body.items() if k not in ("stream", "stream_options", "response_mode")}
    old = _outcome(
        lambda b: hashlib.sha256(_as_before(b).encode()).hexdigest(),
        {"provider": "maritaca", "base_url": base_url, "body": kept},
    )
    assert _outcome(lambda b: request_key("maritaca", b, base_url), body) == old


def test_floats_msgspec_writes_otherwise_keep_their_old_text() -> None:
    for value in (1e-05, 1e16, 1.7976931348623157e308, 5e-324, float("nan"), float("inf")):
        body = {"temperature": value, "messages": [{"role": "user", "content": "q"}]}
        assert canonical_bytes(body) == _as_before(body).encode()


_SECRET = "sk-typed-0123456789abcdef"


@settings(max_examples=examples(300))
@given(typed=st.text(max_size=30), other=st.text(max_size=30), parts=st.booleans())
def test_a_logged_request_keeps_what_was_typed_and_no_key(
    typed: str, other: str, parts: bool
) -> None:
    """What the user typed is logged as typed (a word shaped like a key too), the API key
    taken out; a token shape anywhere else in the request is masked."""
    question = f"{typed} key AB12cd34ef {_SECRET}"
    content: Any = [{"type": "text", "text": question}] if parts else question
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": content}],
        "extra_body": {"note": f"{other} Bearer AB12cd34ef", f"key XY98zz76ww{other}": 1},
    }
    logged = json.loads(dumps(body, [_SECRET], request=True) or "null")
    kept = logged["messages"][0]["content"]
    kept = kept[0]["text"] if parts else kept
    assert kept == question.replace(_SECRET, "***")
    assert "AB12cd34ef" not in json.dumps(logged["extra_body"])
    assert "XY98zz76ww" not in json.dumps(logged["extra_body"])
    assert _SECRET not in json.dumps(logged)
