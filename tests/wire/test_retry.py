"""The retry policy as a pure object: which failures are sent again, how long to wait, and one
budget for every kind of failure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.errors import retry_wait, should_retry_header
from citekit.wire.retry import MAX_RETRY_AFTER, RETRY_STATUSES, RetryPolicy
from tests.budget import examples

statuses = st.integers(min_value=100, max_value=599)
attempts = st.integers(min_value=0, max_value=2000)
budgets = st.integers(min_value=0, max_value=10)
retry_afters = st.none() | st.floats(allow_nan=True, allow_infinity=True)


def http_error(status: int, retry_after: float | None = None) -> ck.ProviderError:
    return ck.ProviderError("boom", provider="magisterium", status=status, retry_after=retry_after)


@given(status=statuses, attempt=attempts, budget=budgets, received=st.booleans())
def test_http_statuses(status: int, attempt: int, budget: int, received: bool) -> None:
    policy = RetryPolicy(max_retries=budget)
    expected = status in RETRY_STATUSES and attempt < budget and not received
    assert policy.should_retry(http_error(status), attempt, received=received) is expected


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 413, 422, 451])
def test_never_other_client_errors(status: int) -> None:
    assert not RetryPolicy(max_retries=5).should_retry(http_error(status), 0, received=False)


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (ck.ServerError("internal", provider="gptbots", status=200, code=50000), True),
        (ck.ServerError("internal", provider="gptbots", status=None, code=50000), True),
        (ck.RateLimitError("too frequent", provider="gptbots", status=200, code=42900), True),
        (ck.NotFoundError("no conversation", provider="gptbots", status=200, code=40356), False),
        (ck.TokenLimitError("too long", provider="gptbots", status=200, code=20040), False),
        (ck.ProviderError("odd", provider="gptbots", status=200, code=12345), False),
        (ck.ServerError("bad", provider="gptbots", status=501), True),  # every 5xx
    ],
)
def test_in_band_errors(error: ck.ProviderError, retried: bool) -> None:
    assert RetryPolicy().should_retry(error, 0, received=False) is retried
    assert not RetryPolicy().should_retry(error, 0, received=True)  # not after the stream began


@given(attempt=attempts, budget=budgets, received=st.booleans(), connect=st.booleans())
def test_transport_errors(attempt: int, budget: int, received: bool, connect: bool) -> None:
    policy = RetryPolicy(max_retries=budget)
    expected = connect and attempt < budget and not received
    for error in (
        ck.TransportError("refused", connect=connect),
        ck.APITimeoutError("no connection in time", connect=connect),
    ):
        assert policy.should_retry(error, attempt, received=received) is expected


@pytest.mark.parametrize(
    "error",
    [ck.ResponseFormatError("not JSON"), ValueError("bad"), KeyboardInterrupt(), RuntimeError()],
)
def test_anything_else_is_not_retried(error: BaseException) -> None:
    assert not RetryPolicy(max_retries=9).should_retry(error, 0, received=False)


@given(
    attempt=attempts,
    retry_after=retry_afters,
    backoff=st.floats(min_value=0.0, max_value=10.0),
    max_backoff=st.floats(min_value=0.0, max_value=60.0),
)
def test_delay(attempt: int, retry_after: float | None, backoff: float, max_backoff: float) -> None:
    policy = RetryPolicy(backoff=backoff, max_backoff=max_backoff)
    delay = policy.delay(attempt, retry_after)
    assert 0.0 <= delay <= max(MAX_RETRY_AFTER, max_backoff)
    if retry_after is not None and not math.isnan(retry_after):
        # Retry-After is obeyed as sent, cut to the cap (and never negative).
        assert delay == min(max(retry_after, 0.0), MAX_RETRY_AFTER)
    else:
        # Equal jitter: half the backoff fixed, half random.
        ceiling = min(max_backoff, backoff * 2.0 ** min(attempt, 64))
        assert ceiling / 2 <= delay <= ceiling


@given(
    budget=budgets,
    kinds=st.lists(st.sampled_from(["503", "429", "in-band", "connect"]), min_size=1),
)
def test_one_budget_covers_every_kind(budget: int, kinds: list[str]) -> None:
    errors = {
        "503": http_error(503),
        "429": http_error(429, retry_after=1.0),
        "in-band": ck.ServerError("internal", provider="gptbots", status=200, code=50000),
        "connect": ck.TransportError("refused", connect=True),
    }
    policy = RetryPolicy(max_retries=budget)
    attempt = 0
    # The call fails every time, with the kinds in turn: it is sent max_retries + 1 times.
    while policy.should_retry(errors[kinds[attempt % len(kinds)]], attempt, received=False):
        attempt += 1
    assert attempt + 1 == budget + 1


def test_the_statuses_are_the_openai_sdks() -> None:
    """408, 409, 429 and every 5xx (openai ``_base_client._should_retry``), nothing else."""
    assert {s for s in range(100, 600) if s in RETRY_STATUSES} == {408, 409, 429} | set(
        range(500, 600)
    )


@given(status=statuses, header=st.sampled_from(["true", "false", "TRUE", " false ", "maybe", ""]))
def test_x_should_retry_overrides_the_status(status: int, header: str) -> None:
    said = should_retry_header({"x-should-retry": header})
    error = ck.ProviderError("x", provider="maritaca", status=status, should_retry=said)
    retried = RetryPolicy().should_retry(error, 0, received=False)
    if header.strip().lower() == "true":
        assert retried  # a 4xx included
    elif header.strip().lower() == "false":
        assert not retried  # a 5xx included
    else:
        assert said is None and retried is (status in RETRY_STATUSES)
    # The header never lifts the budget, nor retries a stream that began.
    assert not RetryPolicy(max_retries=0).should_retry(error, 0, received=False)
    assert not RetryPolicy().should_retry(error, 0, received=True)


header_values = st.one_of(
    st.text(max_size=40),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.datetimes().map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
)


@settings(max_examples=examples(500))
@given(
    headers=st.dictionaries(
        st.sampled_from(["retry-after-ms", "retry-after", "x-should-retry"]), header_values
    ),
    attempt=attempts,
)
def test_any_retry_headers_give_a_wait_that_is_never_negative_and_capped(
    headers: dict[str, str], attempt: int
) -> None:
    """Whatever strings a server sends in ``retry-after-ms``, ``Retry-After`` and
    ``x-should-retry``: reading them never raises, the wait is never negative, and a retry
    waits at most the cap (a longer ask is raised at once instead)."""
    wait = retry_wait(headers)
    assert wait is None or (math.isfinite(wait) and wait >= 0.0)
    error = ck.RateLimitError(
        "Busy",
        provider="maritaca",
        status=429,
        retry_after=wait,
        should_retry=should_retry_header(headers),
    )
    policy = RetryPolicy(max_retries=5)
    delay = policy.delay(attempt, error.retry_after)
    assert 0.0 <= delay <= MAX_RETRY_AFTER
    if policy.should_retry(error, 0, received=False):
        assert wait is None or wait <= MAX_RETRY_AFTER
    elif error.should_retry is not False:
        assert wait is not None and wait > MAX_RETRY_AFTER


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after-ms": "250", "retry-after": "7"}, 0.25),  # milliseconds first
        ({"retry-after-ms": "soon", "retry-after": "7"}, 7.0),  # unusable: the other one
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({"retry-after-ms": "-40"}, 0.0),
        ({"retry-after": "Fri, 31 Dec 1999 23:59:59 GMT"}, 0.0),  # a date gone by
        ({"retry-after": "0.3"}, 0.3),  # not RFC 9110, but read as meant
        ({}, None),
    ],
)
def test_retry_wait_reads_milliseconds_seconds_and_dates(
    headers: dict[str, str], wait: float | None
) -> None:
    assert retry_wait(headers) == wait


def test_retry_after_ms_is_capped_as_retry_after_is() -> None:
    for headers in ({"retry-after-ms": "3600000"}, {"retry-after": "3600"}):
        error = ck.RateLimitError(
            "Busy", provider="maritaca", status=429, retry_after=retry_wait(headers)
        )
        assert not RetryPolicy().should_retry(error, 0, received=False)
        RetryPolicy().explain_wait(error)
        assert "try again after" in str(error)


def test_an_http_date_is_read_as_seconds_from_now() -> None:
    import email.utils
    import time

    at = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = retry_wait({"retry-after": at})
    assert wait is not None and 25.0 <= wait <= 31.0
