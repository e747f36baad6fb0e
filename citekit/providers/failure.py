"""The last failure of a call, explained: ``citekit.last_error`` and ``%ask --error``.

Every call of a client leaves through one place (``_client._remembered``), which keeps the
exception a call failed with; :func:`explain` reads it as a :class:`Failure`: the exception's
type, the provider, the HTTP status, the provider's message and what to do about it (the
provider's own hint when it gave one, else the advice for that kind of failure). A
``Failure`` prints as lines of text (a terminal, ``print``), and shows as Markdown or HTML in
a notebook.

>>> from citekit.testing import serve
>>> with serve() as srv:
...     url = srv.base_url("maritaca", fault="status", status=429, retry_after=30)
...     try:
...         ck.Maritaca(base_url=url, max_retries=0).ask("O que é o Pix?")
...     except ck.RateLimitError:
...         pass
>>> print(ck.last_error)  # doctest: +ELLIPSIS
RateLimitError from Maritaca (HTTP 429)
...
What to do: ... (the provider asked to wait 30 s)
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from ..core import errors
from ..core.names import display_name, find_provider

__all__ = ["Failure", "explain", "last_error", "remember_error"]

_last: BaseException | None = None


def remember_error(exc: BaseException) -> None:
    """Keep ``exc`` as the last failure (Ctrl-C and cancellations are not failures)."""
    global _last
    if isinstance(exc, Exception):
        _last = exc


def last_error() -> Failure | None:
    """The last failure of a call in this process, explained; None while none failed."""
    return explain(_last) if _last is not None else None


def _key_advice(provider: str | None, shell: bool) -> str:
    entry = find_provider(provider.lower() if provider else None)
    if entry is None:
        return "check the API key"
    if shell:
        return f"check the key: set {entry.api_key_env} or run `citekit keys set {entry.name}`"
    return (
        f"check the key: set {entry.api_key_env} (or run `citekit keys set {entry.name}`), "
        "or pass api_key= to the client"
    )


def _advice(exc: BaseException, provider: str | None, shell: bool) -> str:
    """What to do about ``exc``: the most specific advice of its kind (``shell``: worded for
    the command line)."""
    offline = "citekit --offline ..." if shell else "ck.offline()"
    more_time = "" if shell else ", or allow more time with deadline="
    retry = getattr(exc, "retry_after", None)
    wait = f"wait {retry:g} s and ask again" if retry else "wait a moment and ask again"
    option = getattr(exc, "option", None)
    advice: list[tuple[type[BaseException], str]] = [
        (errors.AuthenticationError, _key_advice(provider, shell)),
        (errors.InsufficientCreditsError, "add credits or billing on the provider's site"),
        (
            errors.QuotaExceededError,
            f"citekit's own rate_limit= quota is spent, nothing was sent: {wait}",
        ),
        (
            errors.RateLimitError,
            f"the provider limits how often it is asked: {wait} (ask_many spaces the calls)",
        ),
        (
            errors.TokenLimitError,
            "the question (with its history) is too long for the model: shorten it, "
            "or lower max_tokens",
        ),
        (
            errors.NotFoundError,
            "check the model name (`citekit models`) and the base URL",
        ),
        (
            errors.UnsupportedFeatureError,
            "this provider does not offer what was asked: leave that option out",
        ),
        (
            errors.BadRequestError,
            "the provider refused the request as sent: change what its message names",
        ),
        (
            errors.ServerError,
            "the provider failed on its side (citekit already retried): ask again later",
        ),
        (
            errors.StreamInterrupted,
            "the stream broke off: what arrived is in citekit.last_answer; ask again",
        ),
        (
            errors.APITimeoutError,
            f"no answer in time: ask again{more_time}",
        ),
        (
            errors.TransportError,
            "the provider could not be reached: check the network and the base URL, or "
            f"work offline ({offline})",
        ),
        (
            errors.ResponseTooLargeError,
            f"the reply passed citekit's size limit: raise {option or 'the limit'}",
        ),
        (
            errors.ResponseFormatError,
            "the provider sent something citekit cannot read: ask again; if it goes on, "
            "report it with the request id",
        ),
        (errors.ConfigurationError, "fix the setting the message names"),
        (errors.ProviderError, "read the provider's message above"),
    ]
    for kind, text in advice:
        if isinstance(exc, kind):
            return text
    return generic_advice(shell)


def generic_advice(shell: bool) -> str:
    """The advice for an error that is none of a provider's (a full disk, a bad path): the
    message says it all, so the command line prints no second line for it."""
    return "not a failure of the provider: " + (
        "see the message" if shell else "see the traceback (%tb in a notebook)"
    )


@dataclass(frozen=True)
class Failure:
    """A failed call explained (``citekit.last_error``).

    Attributes
    ----------
    error
        The exception itself.
    kind
        Its type's name (``"AuthenticationError"``).
    provider
        The provider's name, when the failure came from one.
    status
        The HTTP status, when there was a reply.
    code
        The provider's error code, when it gave one.
    message
        The provider's message (or the exception's).
    request_id
        The reply's request id, to quote to the provider's support.
    advice
        What to do about it.
    """

    error: BaseException
    kind: str
    provider: str | None
    status: int | None
    code: int | str | None
    message: str
    request_id: str | None
    advice: str

    def _head(self) -> str:
        head = self.kind
        if self.provider:
            head += f" from {display_name(self.provider)}"
        details = []
        if self.status is not None:
            details.append(f"HTTP {self.status}")
        if self.code is not None and self.code != self.status:
            details.append(f"code {self.code}")
        if details:
            head += f" ({', '.join(details)})"
        return head

    def _lines(self) -> list[tuple[str, str]]:
        lines = [("Message", self.message)]
        if self.request_id:
            lines.append(("Request id", self.request_id))
        lines.append(("What to do", self.advice))
        return lines

    def __str__(self) -> str:
        return "\n".join([self._head(), *(f"{k}: {v}" for k, v in self._lines())])

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        from ..render.markdown import md_escape

        rows = [f"**{md_escape(self._head())}**", ""]
        rows += [f"- {k}: {md_escape(v)}" for k, v in self._lines()]
        return "\n".join(rows) + "\n"

    def _repr_html_(self) -> str:
        items = "".join(
            f"<dt style='font-weight:600'>{html.escape(k)}</dt>"
            f"<dd style='margin:0 0 .4em 0;overflow-wrap:anywhere'>{html.escape(v)}</dd>"
            for k, v in self._lines()
        )
        return (
            "<div class='citekit-failure' role='alert' style='border-left:3px solid #c0392b;"
            "padding:.4em .8em;line-height:1.45;color:inherit'>"
            f"<div style='font-weight:700;margin-bottom:.3em'>{html.escape(self._head())}</div>"
            f"<dl style='margin:0'>{items}</dl></div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {
            "text/plain": str(self),
            "text/markdown": self._repr_markdown_(),
            "text/html": self._repr_html_(),
        }


def explain(exc: BaseException, *, shell: bool = False) -> Failure:
    """``exc`` as a :class:`Failure`: its type, provider, status, message and what to do
    (``shell``: the advice worded for the command line)."""
    provider = getattr(exc, "provider", None)
    provider = provider if isinstance(provider, str) else None
    status = getattr(exc, "status", None)
    message = getattr(exc, "message", None)
    if not isinstance(message, str) or not message:
        message = str(exc) or type(exc).__name__
    hint = getattr(exc, "hint", None)
    advice = hint if isinstance(hint, str) and hint else _advice(exc, provider, shell)
    retry = getattr(exc, "retry_after", None)
    if isinstance(retry, int | float) and retry > 0 and f"{retry:g} s" not in advice:
        advice = f"{advice.rstrip('.')} (the provider asked to wait {retry:g} s)"
    code = getattr(exc, "code", None)
    return Failure(
        error=exc,
        kind=type(exc).__name__,
        provider=provider,
        status=status if isinstance(status, int) else None,
        code=code if isinstance(code, int | str) else None,
        message=" ".join(message.split()),
        request_id=getattr(exc, "request_id", None),
        advice=advice,
    )
