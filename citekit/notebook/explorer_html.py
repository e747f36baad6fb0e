"""The explorer's HTML and front end: a page of the table, the selected row, its answer, the
chart as SVG, and the two small anywidget front ends (the clickable table, the search box).

Every value from a provider is escaped and links pass ``safe_url``; an answer that fails to
render shows as plain text and a chart that fails as a note, so a display never breaks the
explorer. vl-convert is imported when a chart is drawn.

Colours follow the front end's theme: CSS variables that read JupyterLab's ``--jp-*``, then VS
Code's ``--vscode-*``, then a literal, with dark literals under JupyterLab's, VS Code's and
Colab's dark themes and under ``prefers-color-scheme: dark`` (unless the page says it is
light). The markup carries classes only; the style sheet (``EXPLORER_CSS``) styles them.
"""

from __future__ import annotations

import html
from typing import Any, Final

import polars as pl

from ..data.charts import UNKNOWN_AUTHOR, UNKNOWN_SOURCE, UNTITLED
from ..model import Answer
from ..render.chart import drawable, why_not_drawn

__all__ = [
    "EXPLORER_CSS",
    "SEARCH_CSS",
    "SEARCH_ESM",
    "TABLE_ESM",
    "answer_html",
    "chart_html",
    "empty_html",
    "row_html",
    "status_html",
    "table_html",
]

_CELL_CHARS: Final = 300

_COLUMNS: Final[dict[str, tuple[tuple[str, str, str], ...]]] = {
    # (column, heading, CSS width: "" takes what is left)
    "citations": (
        ("marker", "Note", "3.2em"),
        ("document_author", "Author", "16%"),
        ("document_year", "Year", "4.2em"),
        ("document_title", "Document", "24%"),
        ("document_reference", "Ref.", "4.2em"),
        ("cited_text", "Cited passage", ""),
    ),
    "references": (
        ("rank", "Rank", "3.4em"),
        ("score", "Score", "4.4em"),
        ("document_title", "Source", "30%"),
        ("cited_text", "Chunk", ""),
    ),
}
#: Columns a phone hides (the detail below the table still shows them).
_NARROW_HIDDEN: Final = frozenset({"document_year", "document_reference", "marker", "rank"})

_DARK_SELECTORS: Final = (
    'body[data-jp-theme-light="false"]',  # JupyterLab, Notebook 7
    "body.vscode-dark",
    "body.vscode-high-contrast:not(.vscode-high-contrast-light)",
    "html[theme=dark]",  # Colab
)
_LIGHT_THEMES: Final = (
    ':root:not([theme=light]) body:not([data-jp-theme-light="true"])'
    ":not(.vscode-light):not(.vscode-high-contrast-light)"
)


def _palette(fg: str, muted: str, line: str, head: str, sel_bg: str, sel_fg: str, link: str) -> str:
    """The explorer's colours: the front end's own variable first (JupyterLab, then VS Code),
    then a literal for pages that define neither (Colab, a bare page)."""
    return (
        f"--ck-ex-fg:var(--jp-content-font-color1,var(--vscode-editor-foreground,{fg}));"
        f"--ck-ex-muted:var(--jp-content-font-color2,var(--vscode-descriptionForeground,{muted}));"
        f"--ck-ex-line:var(--jp-border-color2,var(--vscode-panel-border,{line}));"
        f"--ck-ex-head:var(--jp-layout-color0,var(--vscode-editor-background,{head}));"
        # a selected row sets its background and its text together, so they always contrast
        f"--ck-ex-sel-bg:var(--vscode-list-inactiveSelectionBackground,{sel_bg});"
        f"--ck-ex-sel-fg:var(--vscode-list-inactiveSelectionForeground,{sel_fg});"
        f"--ck-ex-link:var(--jp-content-link-color,var(--vscode-textLink-foreground,{link}));"
    )


_LIGHT: Final = _palette("#1b1b1b", "#545454", "#d0d0d0", "#fff", "#d3e3fd", "#0b1d36", "#0b57d0")
_DARK: Final = _palette("#e6e6e6", "#b4b4b4", "#4a4a4a", "#1e1e1e", "#264f78", "#fff", "#8ab4f8")

#: The explorer's style sheet, scoped to ``.citekit-ex`` (the explorer's outer box). It ships
#: with the table widget (anywidget's ``_css``), so it is present wherever the explorer shows.
EXPLORER_CSS: Final = (
    f".citekit-ex{{{_LIGHT}}}"
    + ",".join(f"{d} .citekit-ex" for d in _DARK_SELECTORS)
    + f"{{{_DARK}}}"
    + f"@media (prefers-color-scheme: dark){{{_LIGHT_THEMES} .citekit-ex{{{_DARK}}}}}"
    + """
.citekit-ex a{color:var(--ck-ex-link);text-decoration:underline}
.citekit-ex .citekit-ex-muted{color:var(--ck-ex-muted)}
.citekit-ex .citekit-ex-status{display:block;white-space:nowrap;overflow:hidden;
  text-overflow:ellipsis;line-height:28px;padding-right:1em}
.citekit-ex .citekit-ex-status-box,.citekit-ex .citekit-ex-status-box .widget-html-content{
  flex:1 1 auto;min-width:0;overflow:hidden}
.citekit-ex-scroll{max-height:420px;overflow:auto;outline:none;
  border:1px solid var(--ck-ex-line);border-radius:3px}
.citekit-ex-scroll:focus-visible{outline:2px solid var(--ck-ex-link);outline-offset:1px}
.citekit-ex-grid{border-collapse:collapse;table-layout:fixed;width:100%;font-size:12px}
.citekit-ex-grid th{position:sticky;top:0;z-index:1;text-align:left;padding:4px 6px;
  font-weight:600;background:var(--ck-ex-head);border-bottom:1px solid var(--ck-ex-line)}
.citekit-ex-grid td{padding:3px 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;
  border-bottom:1px solid var(--ck-ex-line)}
.citekit-ex-grid tbody tr{cursor:pointer}
.citekit-ex-grid tbody tr:hover{background:rgba(127,127,127,0.12)}
.citekit-ex-grid tbody tr.citekit-ex-selected{background:var(--ck-ex-sel-bg);
  color:var(--ck-ex-sel-fg);box-shadow:inset 3px 0 0 var(--ck-ex-link)}
.citekit-ex-grid tr.citekit-ex-selected .citekit-ex-muted{color:inherit}
.citekit-ex-empty{padding:1.5em 1em}
.citekit-ex-passage{margin:4px 0 8px 0;padding-left:8px;border-left:3px solid var(--ck-ex-line)}
.citekit-ex-detail hr{border:none;border-top:1px solid var(--ck-ex-line);margin:6px 0}
.citekit-ex-detail .widget-html-content{line-height:1.45}
@media (max-width: 600px){.citekit-ex .citekit-ex-narrow-hidden{display:none}
  .citekit-ex col.citekit-ex-col-name{width:28% !important}}
"""
)

#: The table widget's front end: rows select on click, up/down keys move the selection, the
#: selected row is marked and scrolled into view inside the table (never the page).
TABLE_ESM: Final = """
function render({ model, el }) {
  el.classList.add("citekit-ex-table");
  const box = document.createElement("div");
  box.className = "citekit-ex-scroll";
  box.tabIndex = 0;
  box.setAttribute("role", "listbox");
  box.setAttribute("aria-label", "rows: click to select, up and down keys to move");
  el.appendChild(box);
  const select = (row) => {
    const count = model.get("count");
    if (count <= 0) return;
    row = Math.max(0, Math.min(count - 1, row));
    if (row === model.get("selected")) return;
    model.set("selected", row);
    model.save_changes();
  };
  const reveal = (tr) => {
    const head = box.querySelector("thead");
    const top = tr.offsetTop - (head ? head.offsetHeight : 0);
    const bottom = tr.offsetTop + tr.offsetHeight;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight;
  };
  const mark = () => {
    const selected = model.get("selected");
    for (const tr of box.querySelectorAll("tr[data-row]")) {
      const on = Number(tr.dataset.row) === selected;
      tr.classList.toggle("citekit-ex-selected", on);
      tr.setAttribute("aria-selected", on ? "true" : "false");
      if (on) reveal(tr);
    }
  };
  const draw = () => { box.innerHTML = model.get("value"); mark(); };
  box.addEventListener("click", (event) => {
    if (event.target.closest("a")) return;
    const tr = event.target.closest("tr[data-row]");
    if (tr) { select(Number(tr.dataset.row)); box.focus({ preventScroll: true }); }
  });
  const steps = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
  box.addEventListener("keydown", (event) => {
    let row = null;
    if (event.key in steps) row = model.get("selected") + steps[event.key];
    else if (event.key === "Home") row = 0;
    else if (event.key === "End") row = model.get("count") - 1;
    if (row === null) return;
    event.preventDefault();
    event.stopPropagation();  // the notebook must not move to another cell
    select(row);
  });
  model.on("change:value", draw);
  model.on("change:selected", mark);
  draw();
  return () => {
    model.off("change:value", draw);
    model.off("change:selected", mark);
  };
}
export default { render };
"""

#: The search box's front end: the value reaches Python once typing pauses for ``delay``
#: milliseconds (or on Enter), so each keystroke does not filter the whole frame.
SEARCH_ESM: Final = """
function render({ model, el }) {
  el.classList.add("citekit-ex-search", "widget-inline-hbox");
  const label = document.createElement("span");
  label.className = "widget-label";
  label.textContent = model.get("description");
  const input = document.createElement("input");
  input.type = "search";
  input.placeholder = model.get("placeholder");
  input.value = model.get("value");
  input.setAttribute("aria-label", model.get("description"));
  el.append(label, input);
  let timer = null;
  const commit = () => {
    clearTimeout(timer);
    timer = null;
    if (model.get("value") !== input.value) {
      model.set("value", input.value);
      model.save_changes();
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(commit, model.get("delay"));
  });
  input.addEventListener("keydown", (event) => { if (event.key === "Enter") commit(); });
  const pull = () => {
    if (timer === null && input.value !== model.get("value")) input.value = model.get("value");
  };
  model.on("change:value", pull);
  return () => { clearTimeout(timer); model.off("change:value", pull); };
}
export default { render };
"""

SEARCH_CSS: Final = """
.citekit-ex-search{display:flex;align-items:center;width:360px;max-width:100%}
.citekit-ex-search .widget-label{flex:0 0 auto}
.citekit-ex-search input{flex:1 1 auto;min-width:0;box-sizing:border-box;height:28px;
  padding:2px 6px;margin-left:var(--jp-widgets-inline-margin,4px);font:inherit;
  color:var(--jp-widgets-input-color,inherit);
  background:var(--jp-widgets-input-background-color,transparent);
  border:var(--jp-widgets-input-border-width,1px) solid
    var(--jp-widgets-input-border-color,#8c8c8c)}
.citekit-ex-search input:focus{outline:none;
  border-color:var(--jp-widgets-input-focus-border-color,#1a73e8)}
"""


def _cell(value: Any, column: str) -> tuple[str, str]:
    """The cell's escaped text and, when it is cut, the whole text for its tooltip."""
    if value is None:
        return "<span class='citekit-ex-muted'>—</span>", ""
    if column == "score":
        return f"{float(value):.3f}", ""
    text = " ".join(str(value).split())
    whole = text
    if len(text) > _CELL_CHARS:
        text = text[: _CELL_CHARS - 1].rstrip() + "…"
    return html.escape(text), html.escape(whole, quote=True)


def table_html(page: pl.DataFrame, kind: str, *, first: int) -> str:
    """One page of rows as a table; row ``i`` of the filtered frame carries ``data-row="i"``.

    Each cell is one line, cut with an ellipsis (its whole text is its tooltip), so a page
    shows many rows at once. The selection is not part of it: the table widget marks it.
    """
    columns = [(c, title, width) for c, title, width in _COLUMNS[kind] if c in page.columns]

    def hidden(column: str) -> str:
        return " class='citekit-ex-narrow-hidden'" if column in _NARROW_HIDDEN else ""

    def col(column: str, width: str) -> str:
        if not width:
            return "<col>"
        named = " class='citekit-ex-col-name'" if width.endswith("%") else hidden(column)
        return f"<col{named} style='width:{width}'>"

    cols = "<col style='width:3.6em'>" + "".join(col(c, w) for c, _, w in columns)
    head = "<th>#</th>" + "".join(f"<th{hidden(c)}>{t}</th>" for c, t, _ in columns)
    body = []
    for offset, row in enumerate(page.iter_rows(named=True)):
        index = first + offset
        cells = [f"<td class='citekit-ex-muted'>{index + 1}</td>"]  # numbered from 1, as pages
        for column, _, _ in columns:
            text, whole = _cell(row.get(column), column)
            tip = f" title='{whole}'" if whole else ""
            cls = " class='citekit-ex-narrow-hidden'" if column in _NARROW_HIDDEN else ""
            cells.append(f"<td{cls}{tip}>{text}</td>")
        body.append(f"<tr data-row='{index}' role='option'>{''.join(cells)}</tr>")
    return (
        f"<table class='citekit-ex-grid'><colgroup>{cols}</colgroup>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def empty_html(noun: str) -> str:
    """What the table shows when the filters keep no row."""
    return (
        f"<div class='citekit-ex-empty citekit-ex-muted'>No {html.escape(noun)} match these "
        "filters: widen the year range, clear the search or lower the minimum score.</div>"
    )


def status_html(text: str) -> str:
    """The count line: one line, cut with an ellipsis rather than wrapped onto the controls."""
    escaped = html.escape(text)
    return f"<span class='citekit-ex-status' title='{escaped}'>{escaped}</span>"


def row_html(row: dict[str, Any], kind: str) -> str:
    from ..render import safe_url
    from ..text.markdown_html import render_markdown

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
        f"<a href='{html.escape(url, quote=True)}' target='_blank' rel='noopener'>{name}</a>"
        if url
        else name
    )
    parts = [f"<div><b>{link}</b> <span class='citekit-ex-muted'>"]
    parts.append(html.escape(" · ".join(str(f) for f in facts)) + "</span></div>")
    if heading:
        parts.append(
            f"<div class='citekit-ex-muted' style='font-style:italic'>{html.escape(heading)}</div>"
        )
    # The passage's Markdown rendered as the answer's footnotes render it: no raw asterisks.
    passage = render_markdown(text, top_heading=5) if text.strip() else ""
    parts.append(f"<blockquote class='citekit-ex-passage'>{passage}</blockquote>")
    return "<div style='font-size:13px'>" + "".join(parts) + "</div>"


def answer_html(answer: Answer) -> str:
    try:
        body = answer.to_html()  # shows the question, the footnotes and the sources
    except Exception:  # a display must not break: show the text as it is
        question = answer.question
        asked = f"<div><b>Question:</b> {html.escape(question)}</div>" if question else ""
        body = f"{asked}<pre style='white-space:pre-wrap'>{html.escape(answer.text)}</pre>"
    return f"<hr><div>{body}</div>"


def chart_html(chart: Any) -> tuple[str, dict[str, Any]]:
    """The chart as static SVG in HTML, and its compiled Vega spec for the live view (``{}``
    when the chart cannot be drawn: the HTML then says why)."""
    import vl_convert

    try:
        vega: dict[str, Any] = vl_convert.vegalite_to_vega(drawable(chart.to_dict()))
        svg: str = vl_convert.vega_to_svg(vega)
    except Exception as exc:  # a chart failure must not break the explorer
        return f"<div>Chart unavailable: {html.escape(why_not_drawn(exc))}</div>", {}
    return f"<div style='overflow:auto'>{svg}</div>", vega
