"""The explorer's HTML: a page of the table, the selected row, its answer and the chart as SVG.

Every value from a provider is escaped and links pass ``safe_url``; an answer that fails to
render shows as plain text and a chart that fails as a note, so a display never breaks the
explorer. vl-convert is imported when a chart is drawn.
"""

from __future__ import annotations

import html
from typing import Any, Final

import polars as pl

from ..core.models import Answer
from ..data.charts import UNKNOWN_AUTHOR, UNKNOWN_SOURCE, UNTITLED

__all__ = ["answer_html", "row_html", "svg_html", "table_html"]

_CELL_CHARS: Final = 180

_COLUMNS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "citations": (
        ("marker", "Note"),
        ("document_author", "Author"),
        ("document_year", "Year"),
        ("document_title", "Document"),
        ("document_reference", "Ref."),
        ("cited_text", "Cited passage"),
    ),
    "references": (
        ("rank", "Rank"),
        ("score", "Score"),
        ("document_title", "Source"),
        ("cited_text", "Chunk"),
    ),
}


#: Links look like links, in the front end's own link colour where it has one.
_LINK = (
    "color:var(--jp-content-link-color,var(--vscode-textLink-foreground,#1a5fb4));"
    "text-decoration:underline"
)


def _cell(value: Any, column: str) -> str:
    if value is None:
        return "<span style='color:#888'>—</span>"
    if column == "score":
        return f"{float(value):.3f}"
    text = str(value)
    if len(text) > _CELL_CHARS:
        text = text[: _CELL_CHARS - 1].rstrip() + "…"
    return html.escape(text)


def table_html(page: pl.DataFrame, kind: str, *, first: int, selected: int) -> str:
    columns = [(c, title) for c, title in _COLUMNS[kind] if c in page.columns]
    head = "".join(
        f"<th style='text-align:left;padding:3px 6px;border-bottom:1px solid #999'>{t}</th>"
        for t in ["#", *(title for _, title in columns)]
    )
    body = []
    for offset, row in enumerate(page.iter_rows(named=True)):
        index = first + offset
        shade = "background:#fff3c4;" if index == selected else ""
        cells = [str(index), *(_cell(row.get(c), c) for c, _ in columns)]
        tds = "".join(
            f"<td style='padding:3px 6px;vertical-align:top;{shade}'>{cell}</td>" for cell in cells
        )
        body.append(f"<tr style='border-bottom:1px solid #eee'>{tds}</tr>")
    return (
        "<div style='max-height:420px;overflow:auto'>"
        "<table style='border-collapse:collapse;font-size:12px;width:100%'>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def row_html(row: dict[str, Any], kind: str) -> str:
    from ..render import safe_url
    from ..render._mdhtml import render_markdown

    if kind == "citations":
        title = row.get("document_title") or UNTITLED
        facts = [row.get("document_author") or UNKNOWN_AUTHOR]
        facts += [x for x in (row.get("document_year"), row.get("document_reference")) if x]
        heading = row.get("cited_text_heading")
        text = row.get("cited_text") or ""
        label = f"[{row.get('marker')}] {title}"
    else:
        facts = [f"rank {row.get('rank')}"]
        if row.get("score") is not None:
            facts.append(f"score {float(row['score']):.3f}")
        heading = None
        text = row.get("cited_text") or ""
        label = row.get("document_title") or UNKNOWN_SOURCE
    url = safe_url(row.get("source_url"))
    name = html.escape(str(label))
    link = (
        f"<a href='{html.escape(url, quote=True)}' target='_blank' rel='noopener' "
        f"style='{_LINK}'>{name}</a>"
        if url
        else name
    )
    parts = [f"<div><b>{link}</b> <span style='color:#666'>"]
    parts.append(html.escape(" · ".join(str(f) for f in facts)) + "</span></div>")
    if heading:
        parts.append(f"<div style='color:#666;font-style:italic'>{html.escape(heading)}</div>")
    # The passage's Markdown rendered as the answer's footnotes render it: no raw asterisks.
    passage = render_markdown(text, top_heading=5) if text.strip() else ""
    parts.append(
        "<blockquote style='margin:4px 0 8px 0;padding-left:8px;border-left:3px solid #ccc'>"
        f"{passage}</blockquote>"
    )
    return "<div style='font-size:13px'>" + "".join(parts) + "</div>"


def answer_html(answer: Answer) -> str:
    try:
        body = answer.to_html()  # shows the question, the footnotes and the sources
    except Exception:  # a display must not break: show the text as it is
        question = answer.question
        asked = f"<div><b>Question:</b> {html.escape(question)}</div>" if question else ""
        body = f"{asked}<pre style='white-space:pre-wrap'>{html.escape(answer.text)}</pre>"
    return f"<hr style='margin:6px 0'><div>{body}</div>"


def svg_html(chart: Any) -> str:
    import vl_convert

    try:
        svg: str = vl_convert.vegalite_to_svg(chart.to_dict())
    except Exception as exc:  # a chart failure must not break the explorer
        return f"<div style='color:#a00'>Chart unavailable: {html.escape(str(exc))}</div>"
    return f"<div style='overflow:auto'>{svg}</div>"
