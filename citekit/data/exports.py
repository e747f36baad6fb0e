"""Answers and their sources written to files: Markdown, HTML, CSV, Parquet, BibTeX, CSL-JSON.

``export_answer(answer, "answer.md")`` writes one answer (``.md``, ``.html``, ``.json``);
``export_citations(answers, "refs.bib")`` writes the sources of many answers (``.csv`` and
``.parquet``: one row per cited passage or knowledge chunk, with the column names of every
table of sources, ``citekit.core.columns``; ``.bib`` and ``.json`` (CSL-JSON): one entry per
document, however many passages of it were cited, with those formats' own field names).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.columns import CITATION_COLUMNS, COLUMNS, REFERENCE_COLUMNS
from ..core.models import Answer, valid_text
from ..core.secrets import environment_keys, scrub, scrub_value
from ..core.years import parse_year, parse_year_span

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "SOURCE_COLUMNS",
    "Document",
    "balanced_braces",
    "bibtex",
    "csl_json",
    "csv_safe",
    "csv_safe_text",
    "documents",
    "export_answer",
    "export_citations",
    "html_document",
    "source_rows",
    "sources_frame",
    "write_csv",
]

ANSWER_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".json")
CITATION_SUFFIXES = (".csv", ".parquet", ".bib", ".json")

#: Columns of ``sources_frame`` (and the CSV / Parquet exports): (name, kind), named and typed
#: as every table of sources is (``citekit.core.columns``).
SOURCE_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (name, COLUMNS[name].kind)
    for name in (
        "provider",
        "answer_id",
        "question",
        "kind",  # "citation" (a cited passage) or "reference" (a knowledge chunk)
        "marker",
        "document_index",
        "rank",
        "document_title",
        "document_author",
        "document_year",
        "document_reference",
        "cited_text_heading",
        "cited_text",
        "source_url",
        "score",
        "data_id",
    )
)
_STOPWORDS = frozenset(
    {"a", "an", "the", "of", "on", "in", "and", "or", "to", "for", "de", "da", "do", "das"}
    | {"dos", "la", "le", "les", "el", "los", "del", "et"}
)


# -- one answer --------------------------------------------------------------------------------
def export_answer(answer: Answer, path: str | os.PathLike[str]) -> Path:
    """Write ``answer`` to ``path``: Markdown with footnotes (``.md``), a standalone HTML
    page (``.html``), or its JSON (``.json``), by suffix. Returns the path."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in (".md", ".markdown"):
        text = answer_markdown(answer)
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


def answer_markdown(answer: Answer) -> str:
    """``# question``, the answer with ``[^n]`` footnotes, and the footnote definitions."""
    from ..render.markdown import md_escape

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


# -- many answers' sources ---------------------------------------------------------------------
def source_rows(answers: Iterable[Answer]) -> list[dict[str, Any]]:
    """One dict per cited passage and per knowledge chunk, with the ``SOURCE_COLUMNS`` keys."""
    empty = dict.fromkeys(name for name, _ in SOURCE_COLUMNS)
    rows: list[dict[str, Any]] = []
    for answer in _answers(answers):
        base = {"provider": answer.provider, "answer_id": answer.id, "question": answer.question}
        for c in answer.citations:
            row = {**empty, **base, "kind": "citation"}
            row.update((name, getattr(c, name)) for name in CITATION_COLUMNS)
            rows.append(row)
        for r in answer.references or ():
            row = {**empty, **base, "kind": "reference"}
            row.update((name, getattr(r, field)) for name, field in REFERENCE_COLUMNS.items())
            rows.append(row)
    return rows


def _answers(answers: Iterable[Answer] | Answer) -> list[Answer]:
    if isinstance(answers, Answer):
        return [answers]
    return [a for a in answers if isinstance(a, Answer)]  # Failed / None slots are skipped


def sources_frame(answers: Iterable[Answer]) -> pl.DataFrame:
    """``source_rows`` as a polars frame (typed even when empty)."""
    import polars as pl

    from .frames import source_schema

    schema = source_schema(name for name, _ in SOURCE_COLUMNS)
    return pl.DataFrame(source_rows(answers), schema=schema)


@dataclass
class Document:
    """One cited document (or knowledge file) and the places it was cited from."""

    key: str
    title: str | None
    author: str | None
    year: str | None
    url: str | None
    kind: str
    places: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)

    @property
    def note(self) -> str | None:
        if not self.places:
            return None
        label = "Cited at" if self.kind == "citation" else "Knowledge chunks"
        return f"{label}: {', '.join(self.places)}"


def documents(answers: Iterable[Answer]) -> list[Document]:
    """The distinct documents behind ``answers``, in order of first appearance."""
    found: dict[tuple[Any, ...], Document] = {}
    keys: set[str] = set()
    for row in source_rows(answers):
        title, author, year = row["document_title"], row["document_author"], row["document_year"]
        # A titled document is one entry whatever page of it a passage links to (Magisterium
        # gives each cited paragraph its own URL); an untitled one is known by its URL.
        url = "" if _norm(title) else (row["source_url"] or "").strip()
        ident = (row["kind"], _norm(title), _norm(author), _norm(year), url)
        doc = found.get(ident)
        if doc is None:
            key = _unique(_bib_key(author, year, title), keys)
            doc = found[ident] = Document(key, title, author, year, row["source_url"], row["kind"])
        # Where in the document: a passage's reference, or the id of a knowledge chunk's file.
        place = row["document_reference"] if row["kind"] == "citation" else row["data_id"]
        if place and place not in doc.places:
            doc.places.append(place)
        if row["provider"] not in doc.providers:
            doc.providers.append(row["provider"])
    return list(found.values())


def _norm(value: str | None) -> str:
    return " ".join((value or "").split()).casefold()


def _ascii_words(text: str | None) -> list[str]:
    plain = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    return re.findall(r"[a-z0-9]+", plain.lower())


def _bib_key(author: str | None, year: str | None, title: str | None) -> str:
    names = _ascii_words(author)
    number = parse_year(year)
    when = "nd" if number is None else f"{-number}bc" if number < 0 else str(number)
    words = [w for w in _ascii_words(title) if w not in _STOPWORDS][:2]
    return (names[0] if names else "anon") + when + "".join(words)


def _unique(key: str, taken: set[str]) -> str:
    candidate, n = key, 0
    while candidate in taken:
        candidate = key + chr(ord("a") + n % 26) + ("" if n < 26 else str(n // 26))
        n += 1
    taken.add(candidate)
    return candidate


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX))


def balanced_braces(text: str) -> str:
    """``text`` without the braces that have no partner: BibTeX and pybtex count braces
    whatever stands before them (``\\}`` included), so one unpaired brace would end a field
    early or swallow the rest of the file. Paired braces are kept.

    >>> from citekit.data.exports import balanced_braces
    >>> balanced_braces("Rerum {Novarum}} and {more")
    'Rerum {Novarum} and more'
    """
    if "{" not in text and "}" not in text:
        return text
    dropped: set[int] = set()
    opened: list[int] = []
    for i, ch in enumerate(text):
        if ch == "{":
            opened.append(i)
        elif ch == "}":
            if opened:
                opened.pop()
            else:
                dropped.add(i)
    dropped.update(opened)
    return "".join(ch for i, ch in enumerate(text) if i not in dropped)


def latex_escape(text: str) -> str:
    """``text`` safe inside a BibTeX ``{...}`` value: braces balanced
    (:func:`balanced_braces`), LaTeX specials escaped, on one line."""
    return _LATEX_RE.sub(lambda m: _LATEX[m.group(0)], balanced_braces(" ".join(text.split())))


def _bib_url(url: str) -> str:
    # url fields are read verbatim; only what would unbalance the braces is percent-encoded.
    return (
        url.strip().replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")
    )


def bibtex(answers: Iterable[Answer]) -> str:
    """A BibTeX file: one ``@misc`` entry per document, authors kept as written."""
    entries = []
    for doc in documents(answers):
        fields: list[tuple[str, str]] = [("title", latex_escape(doc.title or "Untitled"))]
        if doc.author:
            # Double braces: an author such as "Catholic Church" is a name, not First Last.
            fields.append(("author", "{" + latex_escape(doc.author) + "}"))
        if doc.year:
            fields.append(("year", latex_escape(doc.year)))
        if doc.url:
            fields.append(("url", _bib_url(doc.url)))
        if doc.note:
            fields.append(("note", latex_escape(doc.note)))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@misc{{{doc.key},\n{body}\n}}\n")
    return "\n".join(entries)


_NUMBERS_ONLY = re.compile(r"\s*[0-9]{1,4}\s*(?:[-\u2013/]\s*[0-9]{1,4}\s*)?")


def _issued(year: str | None) -> dict[str, Any] | None:
    """CSL ``issued``: the year (or both ends of a range; negative before Christ, as CSL-JSON
    writes it) read by ``parse_year_span``, with the provider's text as ``raw`` when it says
    more than the numbers; text without a year is kept as ``literal``."""
    if not year or not year.strip():
        return None
    span = parse_year_span(year)
    if span is None:
        return {"literal": year.strip()}
    first, last = span
    issued: dict[str, Any] = {"date-parts": [[first]] if first == last else [[first], [last]]}
    if not _NUMBERS_ONLY.fullmatch(year):  # "c. 1270", "500 BC": keep what the source wrote
        issued["raw"] = year.strip()
    return issued


def csl_json(answers: Iterable[Answer]) -> list[dict[str, Any]]:
    """CSL-JSON items (type ``document``), one per document."""
    items = []
    for doc in documents(answers):
        item: dict[str, Any] = {"id": doc.key, "type": "document", "title": doc.title or ""}
        if doc.author:
            item["author"] = [{"literal": doc.author}]
        issued = _issued(doc.year)
        if issued is not None:
            item["issued"] = issued
        if doc.url:
            item["URL"] = doc.url
        if doc.note:
            item["note"] = doc.note
        items.append(item)
    return items


def export_citations(answers: Iterable[Answer] | Answer, path: str | os.PathLike[str]) -> Path:
    """Write the sources of ``answers`` to ``path`` by suffix: ``.csv`` / ``.parquet`` (one row
    per passage or chunk), ``.bib`` / ``.json`` (CSL-JSON; one entry per document).

    ``Failed`` or ``None`` items (from ``ask_many``) are skipped. Returns the path.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    items = _answers(answers)
    if suffix == ".csv":
        write_csv(sources_frame(items), target)
    elif suffix == ".parquet":
        with _replacing(target) as temporary:
            sources_frame(items).write_parquet(temporary)
    elif suffix == ".bib":
        _write_text(target, bibtex(items))
    elif suffix == ".json":
        text = json.dumps(csl_json(items), ensure_ascii=False, indent=2)
        _write_text(target, text + "\n")
    else:
        raise ValueError(
            f"Cannot export citations as {suffix or 'a file without suffix'!r}: "
            f"use one of {', '.join(CITATION_SUFFIXES)}"
        )
    return target


# A cell starting with one of these is a formula to Excel, LibreOffice and Google Sheets
# (with the full-width forms some of them also read): OWASP's "CSV Injection" advice is to
# put a single quote before it, which spreadsheets show as text.
_FORMULA_START = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_FORMULA = f"^[{re.escape(_FORMULA_START)}]"


def csv_safe_text(value: str) -> str:
    """``value`` as a CSV cell no spreadsheet runs: a leading ``= + - @``, tab or carriage
    return (or a full-width ``＝ ＋ － ＠``) gets a ``'`` before it.

    >>> from citekit.data.exports import csv_safe_text
    >>> csv_safe_text("=SUM(A1:A9)"), csv_safe_text("-1"), csv_safe_text("Rerum Novarum")
    ("'=SUM(A1:A9)", "'-1", 'Rerum Novarum')
    """
    return "'" + value if value[:1] and value[0] in _FORMULA_START else value


def csv_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every text cell made safe by :func:`csv_safe_text` (numbers, dates and
    the other columns as they are): what every CSV citekit writes goes through.

    >>> import polars as pl
    >>> from citekit.data.exports import csv_safe
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
    with _replacing(target) as temporary:
        csv_safe(frame).write_csv(temporary)
    return target


@contextlib.contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target`` that replaces it only once fully written: a full
    disk or an error midway leaves the previous file whole (and no half-written one)."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _write_text(target: Path, text: str) -> None:
    """Write ``text`` as UTF-8 through :func:`_replacing` (any lone surrogate made U+FFFD),
    without any key set in the providers' environment variables."""
    with _replacing(target) as temporary:
        temporary.write_bytes(valid_text(scrub(text, environment_keys())).encode("utf-8"))
