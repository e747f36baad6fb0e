"""The HTML of a ``Comparison``: answers in columns, shared works marked, failures as cards.

Each answer is ``citekit.render.html.answer_html`` as it is (its own id token, footnotes and
all); around it this module writes a header per column (a letter key, the label, model, counts,
the recorded-sample label), the column's works with the shared ones marked, a "Shared works"
strip above the columns, and an error card for a client that failed. Everything written here
is escaped; provider text is wrapped in ``dir="auto"`` spans, so a right-to-left title cannot
reorder the text around it.

Layout: inline styles alone give columns side by side that wrap onto their own lines on a
narrow screen (flex, each at least 15em wide); a scoped ``<style>`` (kept where the output is
trusted: JupyterLab's own session, VS Code, nbconvert) makes them an equal-width grid, one
column at 600px and below, and takes border colours from the JupyterLab / VS Code theme
variables. Colours are translucent tints over the inherited text colour, so light and dark
themes keep the notebook's own contrast.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import polars as pl

from ...core.errors import (
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    InsufficientCreditsError,
    ProviderError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    TransportError,
)
from ...core.names import display_name, find_provider
from ...model import SAMPLE_FIELD, Answer
from ...render._sources import listed_sources
from ...render.html import answer_html
from ...render.support import plain_sentence
from ...text.escape import STYLE, esc, new_token

if TYPE_CHECKING:
    from .comparison import Comparison

__all__ = ["comparison_html", "failure", "fallback_html"]

_ROOT = "line-height:1.5"
_QUESTION = "font-size:1.1em; margin:0 0 0.2em 0"
_STATUS = STYLE.SMALL_MUTED + "; margin:0 0 0.6em 0"
_GRID = "display:flex; flex-wrap:wrap; gap:0.8em; align-items:flex-start"
_COLUMN = (
    "flex:1 1 15em; min-width:0; box-sizing:border-box; padding:0.6em 0.8em;"
    " overflow-wrap:anywhere; border:1px solid rgba(127,127,127,0.4); border-radius:6px"
)
_HEADER = "margin:0 0 0.5em 0; padding:0 0 0.4em 0; border-bottom:1px solid rgba(127,127,127,0.35)"
_TITLE = "font-weight:bold; font-size:1.05em"
_KEY = (
    "display:inline-block; min-width:1.3em; margin:0 0.35em 0 0; padding:0 0.2em;"
    " text-align:center; font-weight:bold; font-size:0.85em;"
    " color:inherit; border:1px solid rgba(127,127,127,0.7); border-radius:3px"
)
_SHARED_BADGE = STYLE.BADGE + "; margin:0 0 0 0.3em; background-color:rgba(33,150,243,0.2)"
_STRIP = (
    "margin:0 0 0.8em 0; padding:0.4em 0.7em; border-left:3px solid rgba(33,150,243,0.75);"
    " background-color:rgba(33,150,243,0.08); border-radius:3px"
)
_WORKS = "margin:0 0 0.6em 0; font-size:0.9em"
_ERROR = (
    "margin:0.2em 0 0 0; padding:0.5em 0.7em; border-left:4px solid rgba(220,50,50,0.85);"
    " background-color:rgba(220,50,50,0.12); border-radius:3px"
)
_ERROR_LINE = "margin:0.25em 0 0 0"


def _key(index: int) -> str:
    """The short key of a column: A, B, C ... then numbers past Z."""
    return chr(ord("A") + index) if index < 26 else str(index + 1)


def _text(value: object) -> str:
    """Provider or user text, escaped and isolated from the text around it."""
    return f'<span dir="auto">{esc(value)}</span>'


def _style(token: str, columns: int) -> str:
    template = (
        f"repeat({columns}, minmax(0, 1fr))"
        if columns <= 4
        else "repeat(auto-fill, minmax(16em, 1fr))"
    )
    scope = f".{token}"
    border = "var(--jp-border-color2, var(--vscode-panel-border, rgba(127,127,127,0.4)))"
    link = "var(--jp-content-link-color, var(--vscode-textLink-foreground, {}))"
    dark = "body.vscode-dark, html[theme=dark], body[data-jp-theme-light=false]"
    return (
        "<style>"
        f"{scope} .citekit-compare-grid{{display:grid; grid-template-columns:{template};"
        " align-items:start}"
        f"{scope} .citekit-compare-column{{border-color:{border}}}"
        f"{scope} a{{color:{link.format('#0b57d0')}}}"
        "@media (prefers-color-scheme: dark){"
        f"{scope} a{{color:{link.format('#8ab4f8')}}}}}"
        + ", ".join(f"{d} {scope} a" for d in dark.split(", "))
        + f"{{color:{link.format('#8ab4f8')}}}"
        + ""
        f"@media (max-width: 600px){{{scope} .citekit-compare-grid"
        "{grid-template-columns:minmax(0, 1fr)}}"
        "</style>"
    )


def failure(exc: BaseException, provider: str | None = None) -> tuple[str, str, str]:
    """``(what failed, the error's message, what to do)`` for an error card."""
    name = display_name(provider) if provider else "The provider"
    what = type(exc).__name__
    message = str(exc)
    if isinstance(exc, ProviderError):
        facts = [f"HTTP {exc.status}"] if exc.status is not None else []
        if exc.code is not None and exc.code != exc.status:
            facts.append(f"code {exc.code}")
        what = f"{what} ({', '.join(facts)})" if facts else what
        message = exc.message
        if exc.request_id:
            message += f" (request id {exc.request_id})"
    entry = find_provider(provider)
    env = entry.api_key_env if entry is not None else "the provider's API key variable"
    advice: str
    if isinstance(exc, ProviderError) and exc.hint:
        advice = exc.hint
    elif isinstance(exc, AuthenticationError):
        advice = f"Check the key in {env} or the api_key= you passed"
    elif isinstance(exc, InsufficientCreditsError):
        advice = f"Check the plan and billing of the account with {name}"
    elif isinstance(exc, RateLimitError):
        wait = f" {exc.retry_after:g} s" if exc.retry_after else " a while"
        advice = f"Wait{wait} and ask again, or give the client a rate_limit="
    elif isinstance(exc, ServerError):
        advice = f"{name} failed on its side: ask again later"
    elif isinstance(exc, BadRequestError):
        advice = "The request was refused as invalid: check the options passed for this client"
    elif isinstance(exc, APITimeoutError):
        advice = "No answer in time: ask again, or pass a longer deadline= or timeout="
    elif isinstance(exc, TransportError):
        advice = "citekit could not reach the provider: check the network and the base_url"
    elif isinstance(exc, ResponseFormatError):
        advice = "The reply was not in the provider's documented format: ask again later"
    elif isinstance(exc, TypeError | ValueError):
        advice = "Check the options given to compare() for this client (see the message)"
    else:
        advice = "Ask this client alone (client.ask(question)) to see the whole error"
    return what, message, advice


def comparison_html(cmp: Comparison) -> str:
    """The whole comparison as one self-contained HTML fragment."""
    token = new_token()
    frame = cmp.frame()
    shared = cmp.shared()
    named = _names_in_languages(cmp)
    keys = {label: _key(i) for i, label in enumerate(cmp.labels)}
    failed = len(cmp.errors)
    status = [f"{len(cmp.labels)} asked", f"{len(cmp.labels) - failed} answered"]
    if failed:
        status.append(f"{failed} failed")
    status.append(f"{shared.height} shared work{'' if shared.height == 1 else 's'}")
    out = [
        f'<div class="citekit-compare {token}" id="{token}" style="{_ROOT}">\n',
        _style(token, len(cmp.labels)),
        f'<div class="citekit-compare-question" style="{_QUESTION}">',
        f"<strong>Question:</strong> {_text(cmp.question)}</div>\n",
        f'<div class="citekit-compare-status" style="{_STATUS}">{esc(" · ".join(status))}</div>\n',
        _strip(shared, keys, token, named.get(None, {})),
        _supported(cmp, keys, token),
        f'<div class="citekit-compare-grid" style="{_GRID}">\n',
    ]
    for i, label in enumerate(cmp.labels):
        value = cmp.answers[label]
        mine = frame.filter(pl.col("label") == label)
        out.append(f'<div class="citekit-compare-column" id="{token}-col-{i}" style="{_COLUMN}">\n')
        if isinstance(value, Answer):
            out.append(_header(label, keys[label], value, mine.height))
            out.append(_works(mine, keys, named.get(label, {})))
            out.append(answer_html(_inner(value)))
        else:
            out.append(_error_card(label, keys[label], value, cmp._providers.get(label)))
        out.append("</div>\n")
    out.append("</div>\n</div>\n")
    return "".join(out)


def _inner(answer: Answer) -> Answer:
    """The answer as its column shows it: the question and the recorded-sample label are in
    the comparison's own heading and the column's header, so the answer does not repeat them."""
    refs = answer.references
    if refs is not None and SAMPLE_FIELD in refs.raw:
        refs = replace(refs, raw={k: v for k, v in refs.raw.items() if k != SAMPLE_FIELD})
    raw = {k: v for k, v in answer.raw.items() if k != SAMPLE_FIELD}
    return replace(answer, question=None, raw=raw, references=refs)


def _names_in_languages(cmp: Comparison) -> dict[str | None, dict[str, str]]:
    """label -> work_id -> the work's name in the language that label's answer cites in
    (the language most of its works were cited in, where the alias table knows it), and under
    ``None`` the names in the comparison's ``lang=`` or, without one, the language most
    columns cite in: an English answer's column names the Compendium in English even when a
    Portuguese answer cites it too."""
    from collections import Counter

    from ..corpus.works import works_frame
    from ..identity.aliases import Aliases

    if cmp.sources.height == 0:
        return {}
    try:
        table = Aliases.resolve(cmp._aliases)
    except Exception:  # an alias table that cannot be read names nothing anew
        return {}
    languages: dict[str, str] = {}
    for label in cmp.answered:
        mine = cmp.sources.filter(pl.col("label") == label).drop("label")
        seen = Counter(code for codes in works_frame(mine)["languages"] for code in codes)
        if seen:
            languages[label] = min(seen, key=lambda code: (-seen[code], code))
    ids = cmp.frame()["work_id"].unique().to_list()

    def names(lang: str | None) -> dict[str, str]:
        return {w: n for w in ids if lang and (n := table.work_name(w, lang))}

    out: dict[str | None, dict[str, str]] = {
        label: names(lang) for label, lang in languages.items()
    }
    most = Counter(languages.values())
    overall = cmp._lang or (min(most, key=lambda code: (-most[code], code)) if most else None)
    out[None] = names(overall)
    return out


def _strip(shared: pl.DataFrame, keys: dict[str, str], token: str, names: dict[str, str]) -> str:
    title = f'<div style="{STYLE.SECTION_TITLE}">Shared works ({shared.height})</div>'
    if shared.height == 0:
        inner = f'<div style="{STYLE.MUTED}">No work is cited by more than one answer.</div>'
    else:
        order = list(keys)
        items = []
        for row in shared.iter_rows(named=True):
            by = "".join(
                f'<a class="citekit-compare-key" href="#{token}-col-{order.index(label)}"'
                f' title="{esc(label)}"><span style="{_KEY}">{esc(keys[label])}</span></a>'
                for label in row["labels"]
            )
            author = (
                f' <span style="{STYLE.SMALL_MUTED}">— {_text(row["author"])}</span>'
                if row["author"]
                else ""
            )
            work = names.get(row["work_id"]) or row["work"] or row["work_id"]
            items.append(f'<li style="{STYLE.ITEM}">{by} {_text(work)}{author}</li>\n')
        inner = f'<ul style="{STYLE.LIST}">\n{"".join(items)}</ul>'
    return f'<div class="citekit-compare-shared" style="{_STRIP}">{title}{inner}</div>\n'


def _supported(cmp: Comparison, keys: dict[str, str], token: str) -> str:
    """:func:`_supported_strip`, or nothing when support cannot be read: the columns show."""
    try:
        return _supported_strip(cmp.support(), keys, token)
    except Exception as exc:
        from ...render.fallback import report_render_error

        report_render_error("Comparison support as text/html", exc)
        return ""


def _supported_strip(support: pl.DataFrame, keys: dict[str, str], token: str) -> str:
    """The claims two or more answers support with the same work, grouped by work: each
    label's sentences with their verdict and score (nothing when no work supports the claims
    of two answers)."""
    together = support.filter(pl.col("supported_with").list.len() > 0)
    if together.height == 0:
        return ""
    order = list(keys)
    items: list[str] = []
    for (work,), rows in together.group_by("work", maintain_order=True):
        claims = []
        for row in rows.iter_rows(named=True):
            label = row["label"]
            key = (
                f'<a class="citekit-compare-key" href="#{token}-col-{order.index(label)}"'
                f' title="{esc(label)}"><span style="{_KEY}">{esc(keys[label])}</span></a>'
            )
            claims.append(
                f'<li style="{STYLE.ITEM}">{key} “{_text(_claim(row["sentence"]))}”'
                f' <span style="{STYLE.SMALL_MUTED}">{esc(row["verdict"])},'
                f" support {row['support']:.2f}</span></li>"
            )
        items.append(
            f'<li style="{STYLE.ITEM}"><strong>{_text(work)}</strong>'
            f'<ul style="{STYLE.LIST}; padding:0 0 0 1em">{"".join(claims)}</ul></li>\n'
        )
    title = (
        f'<div style="{STYLE.SECTION_TITLE}">Claims supported by the same work</div>'
        f'<div style="{STYLE.SMALL_MUTED}">sentences whose cited passage of the work supports them'
        " at least partly (shared words, not verification)</div>"
    )
    return (
        f'<div class="citekit-compare-supported" style="{_STRIP}">{title}'
        f'<ul style="{STYLE.LIST}">\n{"".join(items)}</ul></div>\n'
    )


def _claim(sentence: str) -> str:
    """A sentence as a claim: on one line, at most about 200 characters."""
    flat = plain_sentence(sentence)
    return flat if len(flat) <= 200 else flat[:199].rstrip() + "…"


def _header(label: str, key: str, answer: Answer, works: int) -> str:
    # Provider and model where the label does not already say them; the counts in the words
    # of core.columns.COUNTS, as the answer below lists them.
    facts = [x for x in (display_name(answer.provider), answer.model) if x and x not in label]
    sources, citations = listed_sources(answer), len(answer.citations)
    facts.append(f"{sources} source{'' if sources == 1 else 's'}")
    if citations:
        facts.append(f"{citations} citation{'' if citations == 1 else 's'}")
    facts.append(f"{works} work{'' if works == 1 else 's'}")
    sample = ""
    if answer.sample:
        sample = (
            f'<div><span class="citekit-label" style="{STYLE.BADGE_SAMPLE}"'
            ' title="Built from a recorded-format file in sample_data/, not a live answer">'
            f"recorded sample · {esc(answer.sample)}</span></div>"
        )
    return (
        f'<div class="citekit-compare-header" style="{_HEADER}">'
        f'<div style="{_TITLE}"><span style="{_KEY}">{esc(key)}</span>{_text(label)}</div>'
        f'<div style="{STYLE.SMALL_MUTED}">{esc(" · ".join(facts))}</div>{sample}</div>\n'
    )


def _works(mine: pl.DataFrame, keys: dict[str, str], names: dict[str, str]) -> str:
    if mine.height == 0:
        return ""
    items = []
    for row in mine.iter_rows(named=True):
        author = (
            f' <span style="{STYLE.SMALL_MUTED}">— {_text(row["author"])}</span>'
            if row["author"]
            else ""
        )
        mark = ""
        if row["shared_with"]:
            others = ", ".join(row["shared_with"])
            letters = " ".join(keys[x] for x in row["shared_with"] if x in keys)
            mark = (
                f'<span class="citekit-compare-shared-mark" style="{_SHARED_BADGE}"'
                f' title="Also cited by: {esc(others)}">shared · {esc(letters)}</span>'
            )
        work = names.get(row["work_id"]) or row["work"] or row["work_id"]
        items.append(f'<li style="{STYLE.ITEM}">{_text(work)}{author}{mark}</li>\n')
    return (
        f'<div class="citekit-compare-works" style="{_WORKS}">'
        f'<div style="{STYLE.SECTION_TITLE}">Works cited</div>'
        f'<ul style="{STYLE.LIST}">\n{"".join(items)}</ul></div>\n'
    )


def _error_card(label: str, key: str, exc: BaseException, provider: str | None) -> str:
    if provider is None:
        given = getattr(exc, "provider", None)
        provider = given if isinstance(given, str) else None
    what, message, advice = failure(exc, provider)
    name = display_name(provider) if provider else "This client"
    return (
        f'<div class="citekit-compare-header" style="{_HEADER}">'
        f'<div style="{_TITLE}"><span style="{_KEY}">{esc(key)}</span>{_text(label)}</div>'
        f'<div style="{STYLE.SMALL_MUTED}">no answer</div></div>\n'
        f'<div class="citekit-compare-error" style="{_ERROR}">'
        f'<div style="font-weight:bold">{esc(name)} did not answer</div>'
        f'<div style="{_ERROR_LINE}"><strong>What failed:</strong> {esc(what)}</div>'
        f'<div style="{_ERROR_LINE}"><strong>Message:</strong> {_text(message)}</div>'
        f'<div style="{_ERROR_LINE}"><strong>What to do:</strong> {esc(advice)}</div>'
        "</div>\n"
    )


def fallback_html(cmp: Comparison) -> str:
    """The plain-text summary, escaped: shown when the HTML could not be made."""
    return f"<pre>{esc(repr(cmp))}</pre>"
