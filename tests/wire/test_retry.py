"""The retry policy as a pure object: which failures are sent again, how long to wait, and one
budget for every kind of failure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import citekit as ck
from citekit.wire.retry import MAX_RETRY_AFTER, RETRY_STATUSES, RetryPolicy

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


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 409, 413, 422, 451])
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
        (ck.ServerError("bad", provider="gptbots", status=501), False),
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
