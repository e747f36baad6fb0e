"""The guard scrubs an answer once: where it enters citekit (the wire, the log), never again.

Counted, not timed: the texts the scrubber is handed while a call runs."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.core.secrets import Scrubber, scrub_value, scrubber
from citekit.model import Answer, Citation
from citekit.testing import ProviderServer
from tests.budget import examples

pytestmark = pytest.mark.filterwarnings("ignore::citekit.ContentFilteredWarning")

KEY = "sk-test-guard-0123456789"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    for name in ("MAGISTERIUM_API_KEY", "MARITACA_API_KEY", "GPTBOTS_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def looked_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every text the scrubber is handed; an answer looked at whole (in one JSON dump, the
    look that spares a clean answer its walk) counts as its text handed once."""
    seen: list[str] = []
    scrub = Scrubber.__call__
    look = Scrubber.may_hold_any

    def counting(self: Scrubber, text: str) -> str:
        seen.append(text)
        return scrub(self, text)

    def looking(self: Scrubber, value: object) -> bool:
        if isinstance(value, Answer):
            seen.append(value.text)
        return look(self, value)

    monkeypatch.setattr(Scrubber, "__call__", counting)
    monkeypatch.setattr(Scrubber, "may_hold_any", looking)
    yield seen


@pytest.mark.parametrize("provider", ["magisterium", "maritaca", "gptbots"])
def test_a_cached_answer_is_not_scrubbed_again(
    server: ProviderServer, provider: str, looked_at: list[str]
) -> None:
    client = ck.client(provider, api_key=KEY, base_url=server.base_url(provider))  # type: ignore[arg-type]
    question = next(s.question for s in server.samples(provider))  # type: ignore[arg-type]
    live = client.ask(question, cache=True, display=False)
    live_looks = looked_at.count(live.text)
    looked_at.clear()
    scrub_value(dataclasses.replace(live), [KEY])  # one walk of an unmarked answer
    per_walk = looked_at.count(live.text)  # the text is in it more than once (raw, choices)
    assert per_walk >= 1
    # The live answer: walked once (by the log's write; the guard finds it marked), and the
    # text column written once more.
    assert live_looks <= per_walk + 1
    looked_at.clear()
    for _ in range(3):
        again = client.ask(question, cache=True, display=False)
        assert again.cached and again.text == live.text
    # Read from the log, scrubbed where it enters, once; the reads after it not at all.
    assert looked_at.count(live.text) <= per_walk


def test_an_answer_without_a_log_is_scrubbed_by_the_guard_once(
    server: ProviderServer, looked_at: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEKIT_LOG", "0")
    client = ck.Magisterium(api_key=KEY, base_url=server.base_url("magisterium"))
    question = next(s.question for s in server.samples("magisterium"))
    answer = client.ask(question, display=False)
    looks = looked_at.count(answer.text)
    looked_at.clear()
    scrub_value(dataclasses.replace(answer), [KEY])
    assert looks == looked_at.count(answer.text) >= 1  # the guard's one walk


keys = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=16, max_size=40)
texts = st.text(max_size=60)


@settings(max_examples=examples(100), deadline=None)
@given(key=keys, before=texts, after=texts, title=texts)
def test_the_mark_is_private_and_a_changed_answer_is_scrubbed_anew(
    key: str, before: str, after: str, title: str
) -> None:
    answer = Answer(
        provider="magisterium",
        text=before + key + after,
        citations=(Citation(cited_text=key, document_index=0, document_title=title + key),),
        raw={"echo": [key, {key: title}]},
    )
    clean = scrub_value(answer, [key])
    assert key not in repr(clean)
    # The mark changes nothing a user compares, prints or saves.
    twin = Answer(provider="magisterium", text=clean.text, citations=clean.citations, raw=clean.raw)
    assert clean == twin and repr(clean) == repr(twin)
    assert pickle.loads(pickle.dumps(clean)) == clean
    # Marked: the same secrets (or fewer) return it as it is, looked at no more.
    assert scrub_value(clean, [key]) is clean
    assert scrub_value(clean, scrubber([key])) is clean
    # A value made from it (replace, copy) is unmarked: a key put in it is taken out.
    for made in (
        dataclasses.replace(clean, text=key),
        copy.copy(dataclasses.replace(clean, text=key)),
        pickle.loads(pickle.dumps(dataclasses.replace(clean, text=key))),
    ):
        assert key not in scrub_value(made, [key]).text
    # Another secret is not covered by the mark.
    other = key[::-1] + "x"
    assert other not in scrub_value(dataclasses.replace(clean, text=other), [key, other]).text
    marked_other = scrub_value(clean, [other])
    assert scrub_value(marked_other, [key, other]) is marked_other
