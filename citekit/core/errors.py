"""The errors citekit raises, one tree::

    CitekitError
    ├── ConfigurationError          (also a ValueError: no key, unknown region, bad base_url)
    ├── ProviderError               provider, status, code, message, request_id
    │   ├── BadRequestError         400 / invalid parameter
    │   │   └── TokenLimitError     400 "Token limit exceeded", GPTBots 20040
    │   ├── AuthenticationError     401 / 403, GPTBots 40127
    │   ├── InsufficientCreditsError  "Invalid billing", GPTBots 40379 / 20022
    │   ├── NotFoundError           404, GPTBots 40356 / 40358 / 40378
    │   ├── UnsupportedFeatureError GPTBots 200222 / 20055 / 40364
    │   ├── RateLimitError          429 (retry_after)
    │   │   └── QuotaExceededError  the client's own quota (rate_limit="100/day") is spent
    │   └── ServerError             5xx, GPTBots 50000
    ├── TransportError              connect / read failures, timeouts (after retries)
    │   └── APITimeoutError         a timeout, or the call's deadline (alias TimeoutError)
    │       └── StreamTimeout       ... once a stream began: also a StreamInterrupted
    ├── ResponseFormatError         a body that is not what the protocol promises
    │   └── ResponseTooLargeError   a body or stream line past max_body_bytes / max_line_bytes
    ├── StreamInterrupted           a stream that broke mid-way; ``.answer`` is the partial Answer
    └── DiskFullError               no room to write a file (also an OSError); the old file stays

``CitekitWarning`` is the package's own warning class. Catch ``CitekitError`` for anything
citekit raises, ``ProviderError`` for a refusal by the provider, or one of its subclasses.

No message or repr here ever holds an API key: every error leaving a call has the client's
key scrubbed out of it, in place (``citekit.core.secrets.scrub_error``), whatever the server
echoed into its message, its request id or the exceptions it was raised from.
"""

from __future__ import annotations

import sys
import warnings
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .names import display_name

if TYPE_CHECKING:
    from ..model import Answer

__all__ = [
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "CitekitError",
    "CitekitWarning",
    "ConfigurationError",
    "DiskFullError",
    "InsufficientCreditsError",
    "NotFoundError",
    "ProviderError",
    "QuotaExceededError",
    "RateLimitError",
    "ResponseFormatError",
    "ResponseTooLargeError",
    "ServerError",
    "StreamInterrupted",
    "StreamTimeout",
    "TimeoutError",
    "TokenLimitError",
    "TransportError",
    "UnsupportedFeatureError",
    "warn",
]


class CitekitWarning(UserWarning):
    """Warnings citekit itself issues."""


class CitekitError(Exception):
    """Base of every error citekit raises."""


class ConfigurationError(CitekitError, ValueError):
    """A client was set up wrongly (no key, unknown region, bad URL).

    Raised when the client is made, before anything is sent:

    >>> try:
    ...     ck.Maritaca(api_key="")
    ... except ck.ConfigurationError as exc:
    ...     print(exc)
    No API key for Maritaca: set MARITACA_API_KEY or pass api_key=
    >>> ck.GPTBots(endpoint="eu")
    Traceback (most recent call last):
    ...
    citekit.core.errors.ConfigurationError: endpoint='eu' is not a GPTBots region; use one of ...

    Credentials in a base URL are refused without being repeated (httpx would send them as
    Basic auth in place of the key):

    >>> ck.Maritaca(base_url="https://me:s3cret-token@chat.maritaca.ai/api")
    Traceback (most recent call last):
    ...
    citekit.core.errors.ConfigurationError: base_url= has a user name or password before '@' ...
    """


class DiskFullError(CitekitError, OSError):
    """No room to write a file (a full disk or quota, or a file size limit); the file that
    was there before is as it was. Also an ``OSError``, with the errno met."""

    def __str__(self) -> str:
        return str(self.strerror)


class ProviderError(CitekitError):
    """The provider answered with an error.

    Attributes
    ----------
    provider
        ``"magisterium"``, ``"maritaca"`` or ``"gptbots"``.
    status
        The HTTP status (GPTBots may report errors with 200).
    code
        The provider's error code, when it gives one.
    message
        The provider's own message.
    request_id
        The ``x-request-id`` header, to quote to the provider's support.
    retry_after
        Seconds the server asked to wait (``retry-after-ms`` or ``Retry-After``), if it said.
    should_retry
        The reply's ``x-should-retry`` (True for ``true``, False for ``false``), which
        overrides the status when citekit decides to retry; None when it did not say.
    answer
        The answer the failed call carried, when it carried one (Maritaca's Responses API
        reports a failed response with what was generated): nothing is lost.
    """

    answer: Answer | None = None

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        code: int | str | None = None,
        request_id: str | None = None,
        hint: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
    ) -> None:
        self.provider = provider
        self.retry_after = retry_after
        self.should_retry = should_retry
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.hint = hint
        super().__init__(self._describe())

    def _describe(self) -> str:
        head = f"{display_name(self.provider)} returned"
        parts = []
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.code is not None and self.code != self.status:
            parts.append(f"code {self.code}")
        text = f"{head} {', '.join(parts) or 'an error'}: {self.message}"
        if self.hint:
            text += f". {self.hint}"
        if self.request_id:
            text += f" (request id {self.request_id})"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(provider={self.provider!r}, status={self.status!r}, "
            f"code={self.code!r}, message={self.message!r}, request_id={self.request_id!r})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        fields = {
            "provider": self.provider,
            "status": self.status,
            "code": self.code,
            "request_id": self.request_id,
            "hint": self.hint,
            "retry_after": self.retry_after,
            "should_retry": self.should_retry,
        }
        return (_rebuild_provider_error, (type(self), self.message, fields))


def _rebuild_provider_error(
    cls: type[ProviderError], message: str, fields: dict[str, Any]
) -> ProviderError:
    return cls(message, **fields)


class BadRequestError(ProviderError):
    """The request was refused as invalid (HTTP 400, GPTBots 40000)."""


class TokenLimitError(BadRequestError):
    """The prompt is too long for the model."""


class AuthenticationError(ProviderError):
    """The API key was refused.

    ``citekit.testing`` serves a Magisterium that accepts one key only, to try this out:

    >>> from citekit.testing import serve
    >>> with serve() as srv:
    ...     url = srv.base_url("magisterium", api_key="the-right-key")
    ...     mg = ck.Magisterium(api_key="a-wrong-key", base_url=url)
    ...     try:
    ...         mg.ask("What is the principle of subsidiarity?")
    ...     except ck.AuthenticationError as exc:
    ...         error = exc
    >>> error.provider, error.status
    ('magisterium', 401)
    >>> print(error)
    Magisterium returned HTTP 401: Incorrect API key provided. Check the key in
    MAGISTERIUM_API_KEY or the api_key= you passed (request id req_...)
    >>> "a-wrong-key" in str(error) or "a-wrong-key" in repr(error)
    False
    """


class InsufficientCreditsError(ProviderError):
    """The account has no credits or no valid billing."""


class NotFoundError(ProviderError):
    """The conversation, agent or endpoint does not exist (or is not yours)."""


class UnsupportedFeatureError(ProviderError):
    """The agent or API does not offer this feature."""


class RateLimitError(ProviderError):
    """Too many requests; ``retry_after`` is the server's advice in seconds, if any.

    Clients retry it ``max_retries`` times (2 by default), waiting as ``Retry-After`` says,
    before raising it:

    >>> from citekit.testing import serve
    >>> with serve() as srv:
    ...     busy = srv.base_url("maritaca", fault="status", status=429, retry_after=30)
    ...     try:
    ...         ck.Maritaca(base_url=busy, max_retries=0).ask("O que é o Pix?")
    ...     except ck.RateLimitError as exc:
    ...         error = exc
    >>> error.status, error.retry_after
    (429, 30.0)
    """


class QuotaExceededError(RateLimitError):
    """A quota of ``rate_limit=`` (a window of an hour or more, ``"100/day"``) is spent and
    the limiter was told ``on_quota="raise"``; nothing was sent. ``retry_after`` is the seconds
    until the quota frees a request, ``resets_at`` that moment (UTC).
    """

    def __init__(
        self, message: str, *, provider: str, retry_after: float, resets_at: datetime | None
    ) -> None:
        self.resets_at = resets_at
        super().__init__(message, provider=provider, retry_after=retry_after, should_retry=False)

    def _describe(self) -> str:  # citekit's own limit, not the provider's reply
        return f"{self.message}. {self.hint}" if self.hint else self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_quota_error,
            (self.message, self.provider, self.retry_after, self.resets_at),
        )


def _rebuild_quota_error(
    message: str, provider: str, retry_after: float, resets_at: datetime | None
) -> QuotaExceededError:
    return QuotaExceededError(
        message, provider=provider, retry_after=retry_after, resets_at=resets_at
    )


class ServerError(ProviderError):
    """The provider failed (HTTP 5xx)."""


class TransportError(CitekitError):
    """The request could not be completed: connection refused or reset, DNS, timeout.

    ``connect`` is True when no connection could be opened: the request never left, so
    sending it again cannot run it twice.
    """

    def __init__(self, message: str, *, connect: bool = False) -> None:
        self.connect = connect
        super().__init__(message)


class APITimeoutError(TransportError):
    """No answer within the configured timeout, or the call's ``deadline=`` passed.

    ``answer`` is the partial answer when a stream had begun (then the error is a
    ``StreamTimeout``), else None.
    """

    answer: Answer | None = None


class ResponseFormatError(CitekitError):
    """The provider sent something that is not valid for its protocol."""


class ResponseTooLargeError(ResponseFormatError):
    """A reply ran past the client's limit: a body over ``max_body_bytes``, or a stream line
    or event over ``max_line_bytes`` (counted after gzip/deflate). Reading stopped there, so a
    compressed "bomb" cannot take the memory; ``option`` names the client option to raise.

    >>> mg = ck.Magisterium(max_body_bytes=1000)
    >>> try:
    ...     mg.ask("What is the principle of subsidiarity?", cache=False)
    ... except ck.ResponseTooLargeError as exc:
    ...     error = exc
    >>> error.option, error.limit
    ('max_body_bytes', 1000)
    >>> print(error)
    Magisterium sent a response body over 1,000 bytes, the client's limit: citekit stopped
    reading there. If the reply is genuine, raise the limit: ck.Magisterium(max_body_bytes=2000)

    A stream that hits the limit after it began raises ``StreamInterrupted`` instead, which
    keeps the partial answer; this error is its ``__cause__``.
    """

    def __init__(self, message: str, *, limit: int, option: str) -> None:
        self.limit = limit
        self.option = option
        super().__init__(message)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_too_large, (str(self), self.limit, self.option))


def _rebuild_too_large(message: str, limit: int, option: str) -> ResponseTooLargeError:
    return ResponseTooLargeError(message, limit=limit, option=option)


class StreamInterrupted(CitekitError):
    """The stream broke before its end; ``answer`` holds what arrived, marked ``partial``.

    >>> from citekit.testing import serve
    >>> with serve() as srv:
    ...     url = srv.base_url("magisterium", fault="reset", after=3)  # cut after 3 events
    ...     try:
    ...         ck.Magisterium(base_url=url).ask("What is subsidiarity?", stream=True)
    ...     except ck.StreamInterrupted as exc:
    ...         error = exc
    >>> error.answer.partial, error.answer.text
    (True, 'The **principle of subsidiarity** holds ')
    """

    def __init__(self, message: str, *, answer: Answer) -> None:
        self.answer = answer
        super().__init__(message)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_stream_interrupted, (str(self), self.answer))


def _rebuild_stream_interrupted(message: str, answer: Answer) -> StreamInterrupted:
    return StreamInterrupted(message, answer=answer)


class StreamTimeout(APITimeoutError, StreamInterrupted):
    """A stream cut off by its deadline (or a timeout) after it began: an ``APITimeoutError``
    and a ``StreamInterrupted`` at once; ``answer`` holds what arrived, marked ``partial``.

    >>> from citekit.testing import serve
    >>> with serve() as srv:  # the stream sends 3 events, then only keep-alive comments
    ...     url = srv.base_url("magisterium", fault="keepalive", after=3, interval=0.05)
    ...     try:
    ...         ck.Magisterium(base_url=url).ask("What is subsidiarity?", stream=True,
    ...                                          deadline=0.5)
    ...     except ck.APITimeoutError as exc:
    ...         error = exc
    >>> isinstance(error, ck.StreamInterrupted), error.answer.partial, error.answer.text
    (True, True, 'The **principle of subsidiarity** holds ')
    """

    answer: Answer

    def __init__(self, message: str, *, answer: Answer) -> None:
        self.connect = False
        self.answer = answer
        CitekitError.__init__(self, message)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_stream_timeout, (str(self), self.answer))


def _rebuild_stream_timeout(message: str, answer: Answer) -> StreamTimeout:
    return StreamTimeout(message, answer=answer)


def warn(message: str, category: type[Warning] = CitekitWarning) -> None:
    """Warn, naming as the place the nearest caller outside citekit: where the reader can act.

    A call runs through flows and drivers whose depth differs between ``ask``, ``stream`` and
    their async twins, so no fixed ``stacklevel`` would name the reader's line.
    """
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("citekit."):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


#: The name before 0.2; it shadows the built-in ``TimeoutError`` on ``from citekit import *``.
TimeoutError = APITimeoutError
