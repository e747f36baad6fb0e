"""What citekit logs (``logging.getLogger("citekit")``): each retry, each cache hit, each failed
answer-log write; never an API key; nothing shown unless the application sets logging up."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import citekit as ck
from citekit.store.answer_log import LogWarning
from citekit.testing import ProviderServer
from tests.conftest import SECRET, sample_records

MAG_Q = sample_records("magisterium")[2][1]["question"]
GB_Q = sample_records("gptbots")[0][1]["question"]


def messages(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


def test_each_retry_is_logged(server: ProviderServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="citekit")
    url = server.base_url("magisterium", fault="status", status=503, retry_after=0, times=2)
    assert ck.Magisterium(api_key="k", base_url=url).ask(MAG_Q, log=False).text
    assert messages(caplog, "citekit.transport") == [
        "Retrying POST /chat/completions in 0.00 s (attempt 2 of 3): HTTP 503",
        "Retrying POST /chat/completions in 0.00 s (attempt 3 of 3): HTTP 503",
    ]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name.startswith("citekit"))


def test_in_band_and_connect_retries_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    import socket

    caplog.set_level(logging.INFO, logger="citekit")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    mg = ck.Magisterium(api_key="k", base_url=f"http://127.0.0.1:{port}/api/v1", max_retries=1)
    with pytest.raises(ck.TransportError):
        mg.ask("hello", log=False)
    (line,) = messages(caplog, "citekit.transport")
    assert line.startswith("Retrying POST /chat/completions in ") and "(attempt 2 of 2)" in line
    assert "Could not reach magisterium" in line


def test_in_band_retry_is_logged(server: ProviderServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="citekit")
    url = server.base_url("gptbots", fault="gptbots_code", code=50000, endpoint="message", times=1)
    assert ck.GPTBots(api_key="k", base_url=url).ask(GB_Q, references=False, log=False).text
    (line,) = messages(caplog, "citekit.transport")
    assert line.startswith("Retrying POST /v2/conversation/message in ")
    assert line.endswith("(attempt 2 of 3): in-band error, code 50000")


@pytest.mark.parametrize("provider", ["magisterium", "gptbots"])
def test_an_echoed_key_never_reaches_the_log(
    server: ProviderServer, caplog: pytest.LogCaptureFixture, provider: str
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f"Incorrect API key provided: {SECRET}"
    if provider == "magisterium":
        url = server.base_url(provider, fault="status", status=503, message=echo, retry_after=0)
        client: ck.Magisterium | ck.GPTBots = ck.Magisterium(api_key=SECRET, base_url=url)
    else:
        url = server.base_url(provider, fault="gptbots_code", code=50000, message=echo)
        client = ck.GPTBots(api_key=SECRET, base_url=url)
    with pytest.raises(ck.ServerError) as info:
        client.ask(GB_Q if provider == "gptbots" else MAG_Q, log=False)
    assert SECRET not in str(info.value)
    assert len(messages(caplog, "citekit.transport")) == 2
    assert SECRET not in caplog.text and SECRET[-12:] not in caplog.text
    for record in caplog.records:
        assert SECRET not in record.getMessage()


def test_cache_hits_are_logged(
    server: ProviderServer,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))
    mg.ask(MAG_Q)
    caplog.set_level(logging.INFO, logger="citekit")
    assert mg.ask(MAG_Q, cache=True).cached
    (line,) = messages(caplog, "citekit.store.call")
    assert line.startswith(f"Answered {MAG_Q[:80]!r} from the cache of ")
    assert str(tmp_path) in line and line.endswith("(magisterium)")
    assert SECRET not in caplog.text


def test_a_failed_log_write_is_a_warning(
    server: ProviderServer,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CITEKIT_HOME", str(blocker))
    caplog.set_level(logging.WARNING, logger="citekit")
    mg = ck.Magisterium(api_key=SECRET, base_url=server.base_url("magisterium"))
    with pytest.warns(LogWarning, match="could not write the answer log"):
        assert mg.ask(MAG_Q).text
    (record,) = [r for r in caplog.records if r.name == "citekit.store.answer_log"]
    assert record.levelno == logging.WARNING
    assert record.getMessage().startswith("Could not write the answer log ")
    assert SECRET not in caplog.text


def test_nothing_is_shown_unless_logging_is_set_up() -> None:
    code = (
        "import logging, citekit\n"
        "logging.getLogger('citekit.transport').warning('shown?')\n"
        "logging.getLogger('elsewhere').warning('shown')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr == "shown\n"  # Python's last-resort handler, for the other logger only
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("citekit").handlers)


def test_an_answer_held_in_memory_is_the_one_the_file_gives(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated request answered from memory (no flow, no request sent) is answered as the
    file answers it, in either twin, and becomes ``citekit.last_answer``."""
    monkeypatch.setenv("CITEKIT_HOME", str(tmp_path))
    url = server.base_url("magisterium")
    mg = ck.Magisterium(api_key=SECRET, base_url=url)
    first = mg.ask(MAG_Q)
    sent = len(server.requests)
    held = mg.ask(MAG_Q, cache=True)
    assert ck.last_answer is held
    held_async = asyncio.run(mg.aask(MAG_Q, cache=True))
    ck.log.forget()  # as in a new session: read back from the file
    from_file = mg.ask(MAG_Q, cache=True)
    assert len(server.requests) == sent
    for answer in (held, held_async):
        assert answer.cached and not first.cached
        assert answer.text == from_file.text == first.text
        assert answer.citations == from_file.citations
    assert ck.last_answer is from_file
    with pytest.raises(ck.ConfigurationError, match="deadline"):  # checked as ever
        mg.ask(MAG_Q, cache=True, deadline=0)
