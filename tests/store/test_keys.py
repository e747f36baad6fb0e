"""Cache keys stay what they were: a log written before answers from its keys after."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.store.keys import canonical_json, request_key
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
