"""How ``citekit log`` prints the log: ``log list`` as a table with a header row (or JSON
with ``--json``), ``log show`` as a Markdown document when it is not styled for a terminal,
so ``citekit log show 12 > answer.md`` is a page any Markdown reader shows, and ``log search``
as its hits, best first, each with the part of its text that matched."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from ..core.names import display_name
from ..model import Answer
from ..render.text import StyledTerminal, TerminalLines
from ..store.search import MARK_END, MARK_START, starred

__all__ = [
    "list_json",
    "list_table",
    "row_json",
    "search_json",
    "search_table",
    "show_markdown",
]

#: ``log list``'s header, aligned with its rows.
HEADER = (
    f"{'id':>6}  {'time':<16}  {'provider':<11} {'sources':>7} {'elapsed':>7}  "
    f"{'kind':<6}  question"
)


def _when(row: Mapping[str, Any]) -> str:
    """A row's time as the listing shows it (``?`` for a damaged row's, read as None)."""
    time: dt.datetime | None = row["time"]
    return time.astimezone().strftime("%Y-%m-%d %H:%M") if time is not None else "?" * 16


def _kind(row: Mapping[str, Any]) -> str:
    """``sample`` for a recorded sample (the loopback server's, offline), ``live`` else."""
    return "sample" if row.get("sample") else "live"


def list_table(rows: Sequence[Mapping[str, Any]], out: TextIO) -> None:
    """The rows of ``log list`` under a header: id, time, provider, sources, elapsed, whether
    the answer is a recorded sample or live, the question (a failed call's error after it)."""
    out.write(HEADER + "\n")
    for row in rows:
        what = row["question"] or ""
        if row["error_type"]:
            what = f"{what}  !! {row['error_type']}: {row['error_message'] or ''}"
        what = " ".join(what.split())
        elapsed = f"{row['elapsed']:.1f}s" if row["elapsed"] is not None else "-"
        sources = (row["n_citations"] or 0) + (row["n_references"] or 0)  # chunks too
        out.write(
            f"{row['id']:>6}  {_when(row):<16}  {row['provider'] or '?':<11} {sources:>7} "
            f"{elapsed:>7}  {_kind(row):<6}  {what[:90]}\n"
        )


def _marked(snippet: str, *, bold: str = "bold") -> list[tuple[str, str]]:
    """A hit's snippet as ``(text, style)`` parts: the words found in ``bold``."""
    parts: list[tuple[str, str]] = []
    for i, piece in enumerate(snippet.replace(MARK_END, MARK_START).split(MARK_START)):
        if piece:
            parts.append((piece, bold * (i % 2)))
    return parts


def search_table(
    hits: Sequence[Mapping[str, Any]], out: TextIO, styled: StyledTerminal | None = None
) -> None:
    """The hits of ``log search``, best first: id, time, provider and question on one line,
    the matching part of the text under it (the words found in bold, or in ``**`` when not
    styled)."""
    lines = TerminalLines(out, styled)
    for hit in hits:
        question = " ".join((hit["question"] or "").split())[:90]
        lines.line(
            (f"{hit['id']:>6}  ", "bold"),
            (f"{_when(hit)}  {hit['provider'] or '?':<11} ", "dim"),
            (question, "bold"),
        )
        snippet = " ".join((hit["snippet"] or "").split())
        if styled is None:
            lines.line(("        " + starred(snippet), ""))
        else:
            lines.line(("        ", ""), *_marked(snippet))


def search_json(hits: Sequence[Mapping[str, Any]], out: TextIO) -> None:
    """The hits of ``log search --json``: a JSON array, the words found in ``**``."""
    data = [
        {
            **{key: _plain(value) for key, value in hit.items()},
            "snippet": starred(hit["snippet"]),
        }
        for hit in hits
    ]
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


def list_json(rows: Sequence[Mapping[str, Any]], out: TextIO) -> None:
    """The rows of ``log list --json``: one JSON array of the log's rows, times in ISO 8601."""
    data = [{key: _plain(value) for key, value in row.items()} for row in rows]
    out.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def row_json(row: Mapping[str, Any], out: TextIO) -> None:
    """``log show --json`` of a failed call (no answer to print): its row as a JSON object."""
    data = {key: _plain(value) for key, value in row.items()}
    out.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def show_markdown(answer: Answer, row_id: int, out: TextIO) -> None:
    """``log show`` as Markdown: ``# question``, who answered, the answer with ``[^n]``
    footnotes and their definitions (the same document ``export_answer(..., "a.md")`` writes)."""
    from ..data.io.exports import markdown_document

    document = markdown_document(answer)
    head, sep, body = document.partition("\n\n") if answer.question else ("", "", document)
    meta = f"*{display_name(answer.provider)} · call {row_id} of the log*"
    if sep:
        out.write(f"{head}\n\n{meta}\n\n{body}")
    else:
        out.write(f"{meta}\n\n{document}")
