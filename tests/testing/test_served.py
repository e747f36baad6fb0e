"""The loopback server says which recorded sample it served and whether it answers the question."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.testing import ProviderServer
from citekit.testing._samples import _normalise
from tests.budget import examples

SAMPLE_QUESTIONS = st.text(min_size=1, max_size=80).filter(lambda q: bool(q.strip()))


def _chat(server: ProviderServer, question: str, *, stream: bool = False) -> httpx.Response:
    body = {
        "model": "magisterium-1",
        "messages": [{"role": "user", "content": question}],
        "stream": stream,
    }
    headers = {"Authorization": "Bearer sk-test"}
    url = server.base_url("magisterium") + "/chat/completions"
    return httpx.post(url, json=body, headers=headers, timeout=10)


@settings(max_examples=examples(40))
@given(question=SAMPLE_QUESTIONS)
def test_any_other_question_is_answered_with_the_sample_question_and_false(
    server: ProviderServer, question: str
) -> None:
    questions = {_normalise(s.question) for s in server.samples("magisterium")}
    body = _chat(server, question).json()
    if _normalise(question) in questions:
        assert "citekit_sample_matched" not in body
    else:
        served = [s for s in server.samples("magisterium") if s.label == body["citekit_sample"]]
        assert body["citekit_sample_matched"] is False
        assert body["citekit_sample_question"] == served[0].question


def test_a_sample_question_is_answered_as_recorded(server: ProviderServer) -> None:
    for sample in server.samples("magisterium"):
        body = _chat(server, sample.question).json()
        assert body["citekit_sample"] == sample.label
        assert "citekit_sample_matched" not in body
        assert "citekit_sample_question" not in body
        streamed = _chat(server, sample.question, stream=True).text
        assert "citekit_sample_matched" not in streamed


def test_a_stream_for_another_question_says_so_beside_its_label(server: ProviderServer) -> None:
    text = _chat(server, "What is the best pizza topping?", stream=True).text
    labelled = [line for line in text.splitlines() if "citekit_sample" in line]
    assert labelled
    assert all('"citekit_sample_matched":false' in line for line in labelled)
