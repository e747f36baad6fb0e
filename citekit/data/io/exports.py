"""Answers and their sources written to files: Markdown, HTML, CSV, Parquet, BibTeX, CSL-JSON.

``export_answer(answer, "answer.md")`` writes one answer (``.md``, ``.html``, ``.json``);
``export_citations(answers, "refs.bib")`` writes the sources of many answers (``.csv`` and
``.parquet``: one row per source, ``citekit.sources_frame``'s rows with the column names of
every table of sources, ``citekit.core.columns``; ``.bib`` and ``.json`` (CSL-JSON,
``citekit.data.io.bibliography``): one entry per work (the same encyclical cited in two
languages, the Catechism under five titles, is one entry), with those formats' own field
names).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import CitekitWarning, warn
from ...core.files import replacing, write_text
from ...core.secrets import environment_keys, scrub, scrub_value
from ...core.unicode import valid_text
from ...model import Answer
from .bibliography import bibtex, csl_json
from .rows import answers_only, export_frame

if TYPE_CHECKING:
    import polars as pl

    from ...store import LogSelection
    from ..identity.aliases import AliasSpec

__all__ = [
    "SamplesLeftOut",
    "csv_safe",
    "csv_safe_text",
    "export_answer",
    "export_citations",
    "html_document",
    "write_csv",
]

ANSWER_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".json")
CITATION_SUFFIXES = (".csv", ".parquet", ".bib", ".json")


# -- one answer --------------------------------------------------------------------------------
def export_answer(answer: Answer, path: str | os.PathLike[str]) -> Path:
    """Write ``answer`` to ``path``: Markdown with footnotes (``.md``), a standalone HTML
    page (``.html``), or its JSON (``.json``), by suffix. Returns the path."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in (".md", ".markdown"):
        text = markdown_document(answer)
    elif suffix in (".html", ".htm"):
        text = html_document(answer.question or "Answer", answer.to_html())
    elif suffix == ".json":
        text = json.dumps(answer_json(answer), ensure_ascii=False, indent=2) + "\n"
    else:
        raise ValueError(
            f"Cannot export an answer as {suffix or 'a file without suffix'!r}: "
            f"use one of {', '.join(ANSWER_SUFFIXES)}"
        )
    _write_text(target, text)
    return target


def answer_json(answer: Answer) -> dict[str, Any]:
    """The provider's JSON with the question and, for GPTBots, the correlate body; any key
    set in the providers' environment variables scrubbed out (``citekit ask --json`` prints
    this)."""
    out: dict[str, Any] = {"provider": answer.provider, "question": answer.question}
    out["response"] = dict(answer.raw)
    if answer.references is not None:
        out["correlate"] = dict(answer.references.raw)
    return scrub_value(out, environment_keys())


def markdown_document(answer: Answer) -> str:
    """``# question``, the answer with ``[^n]`` footnotes, and the footnote definitions."""
    from ...render.markdown import md_escape

    # The question is the provider's echo or the user's text: escaped like every other value.
    head = f"# {md_escape(answer.question)}\n\n" if answer.question else ""
    return head + answer.to_markdown().rstrip() + "\n"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def html_document(title: str, body: str, *, lang: str = "en") -> str:
    """A complete, self-contained HTML page around ``body`` (which must be safe HTML)."""
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{html.escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(_one_line(title))}</title>\n</head>\n"
        '<body style="max-width: 52rem; margin: 2rem auto; padding: 0 1rem; '
        'font-family: system-ui, sans-serif; line-height: 1.5">\n'
        f"<h1>{html.escape(_one_line(title))}</h1>\n{body}\n</body>\n</html>\n"
    )


# -- recorded samples --------------------------------------------------------------------------
class SamplesLeftOut(CitekitWarning):
    """An export left recorded samples out (answers of the offline loopback server, not of a
    provider): a study's files hold live answers only unless ``include_samples=True``."""


def samples_left_out(count: int, *, option: str = "include_samples=True") -> str:
    """The sentence saying that ``count`` recorded samples were left out of an export."""
    if count == 1:
        return (
            "left out 1 recorded sample (an offline answer citekit ships, not a provider's); "
            f"{option} exports it too"
        )
    return (
        f"left out {count} recorded samples (offline answers citekit ships, not a "
        f"provider's); {option} exports them too"
    )


def live_answers(answers: list[Answer], *, include_samples: bool) -> list[Answer]:
    """``answers`` without the recorded samples (unless ``include_samples``), with a
    ``SamplesLeftOut`` warning saying how many were left out."""
    if include_samples:
        return answers
    live = [a for a in answers if a.sample is None]
    if len(live) < len(answers):
        warn(samples_left_out(len(answers) - len(live)), SamplesLeftOut)
    return live


def live_selection(selection: LogSelection, *, include_samples: bool) -> LogSelection:
    """``selection`` without the recorded samples (unless ``include_samples``, or unless it
    chose by ``samples=`` itself), with a ``SamplesLeftOut`` warning saying how many."""
    from dataclasses import replace

    if include_samples or selection.samples is not None:
        return selection
    live = replace(selection, samples=False)
    count = replace(selection, samples=True).count()
    if count:
        warn(samples_left_out(count), SamplesLeftOut)
    return live


# -- many answers' sources ---------------------------------------------------------------------
def export_citations(
    answers: Iterable[Answer] | Answer,
    path: str | os.PathLike[str],
    *,
    aliases: AliasSpec = None,
    lang: str | None = None,
    include_samples: bool = False,
) -> Path:
    """Write the sources of ``answers`` to ``path`` by suffix: ``.csv`` / ``.parquet`` (one row
    per source, ``citekit.sources_frame``'s columns and ``document_index`` and
    ``cited_text_heading``), ``.bib`` / ``.json`` (CSL-JSON; one entry per work, however many
    passages, pages, languages or titles it was cited under).

    ``aliases`` and ``lang`` are ``citekit.sources_frame``'s: they decide which sources are
    one work, and its title and author's name (``lang="pt"``: the Portuguese ones where the
    alias table has them). ``Failed`` or ``None`` items (from ``ask_many``) are skipped, and so
    are recorded samples (``Answer.sample``: the offline answers citekit ships) unless
    ``include_samples=True``, with a ``SamplesLeftOut`` warning saying how many: a study's
    files hold live answers only. Returns the path.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in CITATION_SUFFIXES:
        raise ValueError(
            f"Cannot export citations as {suffix or 'a file without suffix'!r}: "
            f"use one of {', '.join(CITATION_SUFFIXES)}"
        )
    items = live_answers(answers_only(answers), include_samples=include_samples)
    options: dict[str, Any] = {"aliases": aliases, "lang": lang}
    if suffix == ".csv":
        write_csv(export_frame(items, **options), target)
    elif suffix == ".parquet":
        with replacing(target) as temporary:
            export_frame(items, **options).write_parquet(temporary)
    elif suffix == ".bib":
        _write_text(target, bibtex(items, **options))
    elif suffix == ".json":
        text = json.dumps(csl_json(items, **options), ensure_ascii=False, indent=2)
        _write_text(target, text + "\n")
    return target


# A cell starting with one of these is a formula to Excel, LibreOffice and Google Sheets
# (with the full-width forms some of them also read): OWASP's "CSV Injection" advice is to
# put a single quote before it, which spreadsheets show as text.
_FORMULA_START = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_FORMULA = f"^[{re.escape(_FORMULA_START)}]"


def csv_safe_text(value: str) -> str:
    """``value`` as a CSV cell no spreadsheet runs: a leading ``= + - @``, tab or carriage
    return (or a full-width ``＝ ＋ － ＠``) gets a ``'`` before it.

    >>> from citekit.data.io.exports import csv_safe_text
    >>> csv_safe_text("=SUM(A1:A9)"), csv_safe_text("-1"), csv_safe_text("Rerum Novarum")
    ("'=SUM(A1:A9)", "'-1", 'Rerum Novarum')
    """
    return "'" + value if value[:1] and value[0] in _FORMULA_START else value


def csv_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every text cell made safe by :func:`csv_safe_text` (numbers, dates and
    the other columns as they are): what every CSV citekit writes goes through.

    >>> import polars as pl
    >>> from citekit.data.io.exports import csv_safe
    >>> csv_safe(pl.DataFrame({"title": ["=1+1", "Laborem"], "score": [-1.5, 0.5]})).rows()
    [("'=1+1", -1.5), ('Laborem', 0.5)]
    """
    import polars as pl

    text = pl.col(pl.String)
    return frame.with_columns(
        pl.when(text.str.contains(_FORMULA)).then(pl.lit("'") + text).otherwise(text).name.keep()
    )


def write_csv(frame: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` as CSV with :func:`csv_safe` cells, replacing ``path`` only when whole
    (``export_citations(..., ".csv")`` and ``citekit log export --rows x.csv``)."""
    target = Path(path)
    with replacing(target) as temporary:
        csv_safe(frame).write_csv(temporary)
    return target


def _write_text(target: Path, text: str) -> None:
    """Write ``text`` as UTF-8, whole or not at all (any lone surrogate made U+FFFD), without
    any key set in the providers' environment variables."""
    write_text(target, valid_text(scrub(text, environment_keys())))
