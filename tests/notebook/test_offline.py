"""``ck.offline()`` and ``%ask --offline``: the recorded samples for the session, no key."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import citekit as ck
from citekit.core.names import ENTRIES
from citekit.notebook.magic import ask_cell, ask_line
from citekit.providers.loopback import current

NOTICE = "No recorded answer for this question; showing the recorded answer to "


@pytest.fixture(autouse=True)
def _no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path / "home"))
    for entry in ENTRIES:
        monkeypatch.delenv(entry.api_key_env, raising=False)
        monkeypatch.delenv(entry.base_url_env, raising=False)


def test_offline_as_a_context_points_new_clients_at_the_samples_and_undoes_it() -> None:
    with ck.offline() as session:
        assert current() is session
        for client in (ck.Magisterium(), ck.Maritaca(), ck.GPTBots()):
            answer = client.ask("What is the best pizza topping?")
            assert answer.sample and answer.sample_question
            assert answer.to_markdown().startswith("> **" + NOTICE)
        matched = ck.Magisterium().ask("What is the principle of subsidiarity?")
        assert matched.sample_question is None and NOTICE not in matched.to_html()
    assert current() is None
    assert all(entry.base_url_env not in os.environ for entry in ENTRIES)
    with pytest.raises(ck.ConfigurationError):
        ck.Magisterium()  # no key again


def test_offline_as_a_plain_call_lasts_until_stopped_and_is_one_session() -> None:
    session = ck.offline()
    try:
        assert ck.offline() is session
        assert ck.Maritaca().ask("Qual é a melhor pizza?").sample_question
    finally:
        session.stop()
    session.stop()  # again: nothing
    assert current() is None


def test_the_magic_offline_needs_no_key_and_keeps_the_notice() -> None:
    shell = SimpleNamespace(user_ns={})
    try:
        answer = ask_line(shell, "--offline What is the best pizza topping?")
        assert answer is not None and answer.question == "What is the best pizza topping?"
        assert NOTICE in answer.to_html()
        shell.user_ns["mg"] = object()
        cell = ask_cell(
            shell, "gptbots --offline --out ans", "What is the principle of subsidiarity?"
        )
        assert cell is shell.user_ns["ans"] and cell is not None and cell.sample
    finally:
        session = current()
        if session is not None:
            session.stop()
