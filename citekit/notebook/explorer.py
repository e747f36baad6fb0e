"""``explore``: browse citations or knowledge references with filters, a chart and the answer.

ipywidgets dropdowns and sliders and a search box filter a polars frame; a table shows one
page of it, and a click on a row (or the up and down keys) selects it; a chart of the filtered
rows is drawn as inline SVG by vl-convert (so it needs no CDN); and the selected row is shown
with the full passage and its answer rendered with footnotes. The table and the search box are
two small anywidgets (their front ends are in ``explorer_html``): the search box sends its text
once typing pauses, the table sends the row clicked. Every control is an attribute of the
returned ``Explorer`` and ``Explorer.filtered`` is the current frame, so the explorer can be
driven from code, and tested, without a browser: setting a value from Python filters at once.

ipywidgets, anywidget, altair and vl-convert are imported when an explorer is built.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, Literal

import polars as pl

from ..data import charts
from ..data.charts.parts import labelled
from ..data.frames import Source, citations_frame, load_answers, references_frame
from ..model import Answer, References
from ..render.chart_runtime import widget_esm
from .explorer_html import (
    EXPLORER_CSS,
    SEARCH_CSS,
    SEARCH_ESM,
    TABLE_ESM,
    answer_html,
    chart_html,
    empty_html,
    row_html,
    status_html,
    table_html,
)

__all__ = ["ALL", "Explorer", "explore"]

#: The dropdown value that means "no filter".
ALL: Final = "(all)"
_ANSWER: Final = "__answer"
_GROUP: Final = "__group"
_HIDDEN: Final = (_ANSWER, _GROUP)

Kind = Literal["citations", "references"]

_SEARCHED: Final[dict[str, tuple[str, ...]]] = {
    "citations": (
        "cited_text",
        "cited_text_heading",
        "document_title",
        "document_author",
        "document_reference",
        "question",
    ),
    "references": ("cited_text", "document_title", "source_url"),
}
_CHARTS: Final[dict[str, tuple[str, ...]]] = {
    "citations": ("authors", "years", "documents"),
    "references": ("scores",),
}


def explore(
    source: Source | pl.DataFrame,
    *,
    kind: Literal["auto", "citations", "references"] = "auto",
    page_size: int = 50,
    chart: bool = True,
    provider: str | None = None,
) -> Explorer:
    """An interactive table of the citations (or knowledge references) of some answers.

    Parameters
    ----------
    source
        Answers (or anything ``citations_frame`` accepts), a ``References``, or a frame made
        by ``citations_frame`` / ``references_frame``. From a frame the explorer cannot show
        the answers themselves, only the rows.
    kind
        ``"citations"`` or ``"references"``; ``"auto"`` takes citations when there are any,
        else references.
    page_size
        Rows per table page (at most 200).
    chart
        Draw a chart of the filtered rows.
    provider
        The provider of saved responses that do not name it.

    Returns
    -------
    An ``Explorer``; it displays itself in a notebook.

    Examples
    --------
    >>> mg = ck.Magisterium()
    >>> answers = [
    ...     mg.ask("What does Catholic social teaching say about the dignity of human work?"),
    ...     mg.ask("What is a just wage according to Catholic teaching?"),
    ... ]
    >>> ex = ck.explore(answers)
    >>> ex
    <Explorer of 16 citations, 16 shown after filters>

    The controls can be set from code as well as clicked:

    >>> ex.author.value = "Leo XIII"
    >>> ex.filtered.select("marker", "document_title", "document_reference").rows()
    [(5, 'Rerum novarum', '20'), (1, 'Rerum novarum', '45'), (1, 'Rerum novarum', '45')]
    >>> ex.selected_answer().question
    'What does Catholic social teaching say about the dignity of human work?'
    """
    answers: list[Answer] = []
    if isinstance(source, pl.DataFrame):
        columns = set(source.columns)
        is_citations = bool({"marker", "document_index"} & columns)  # chunks have rank
        if not is_citations and not {"cited_text", "score"} <= columns:
            raise ValueError(
                "explore() takes a citations_frame() or references_frame() frame; this one "
                f"has columns {', '.join(source.columns) or '(none)'}"
            )
        found: Kind = "citations" if is_citations else "references"
        frame = source.with_columns(pl.lit(None, dtype=pl.Int64).alias(_ANSWER))
        if kind not in ("auto", found):
            raise ValueError(f"kind={kind!r}, but the frame holds {found}")
        return Explorer(frame, found, answers, page_size=page_size, chart=chart)
    items = load_answers(source, provider=provider)
    answers = [item for item in items if isinstance(item, Answer)]
    cits = citations_frame(answers).with_columns(
        pl.Series(_ANSWER, [i for i, a in enumerate(answers) for _ in a.citations], pl.Int64)
    )
    if kind == "citations" or (kind == "auto" and cits.height):
        return Explorer(cits, "citations", answers, page_size=page_size, chart=chart)
    owners: list[int | None] = []
    position = 0
    for item in items:
        if isinstance(item, References):
            owners.extend([None] * len(item))
        else:
            owners.extend([position] * len(item.references or ()))
            position += 1
    refs = references_frame(items).with_columns(pl.Series(_ANSWER, owners, pl.Int64))
    return Explorer(refs, "references", answers, page_size=page_size, chart=chart)


def _groups(frame: pl.DataFrame, kind: Kind) -> pl.Expr | pl.Series:
    """Each row's entry in the author (citations) or source (knowledge chunks) dropdown. An
    author is counted by identity, as the authors chart counts (Francis, Francesco and
    Franziskus are one entry, under the chart's label); a source by its name."""
    if kind == "references" or frame.height == 0:
        unknown = charts.UNKNOWN_AUTHOR if kind == "citations" else charts.UNKNOWN_SOURCE
        column = "document_author" if kind == "citations" else "document_title"
        return labelled(column, unknown).alias(_GROUP)
    from ..data.charts.tables import MAX_ROWS, top_authors
    from ..data.identity.clusters import identify

    ided = identify(frame.select("document_author", "document_title", "source_url"))
    tally = top_authors(ided, top=MAX_ROWS).table
    names = tally.select("author_id", pl.col("author").alias(_GROUP))
    label = ided.select("author_id").join(
        names, on="author_id", how="left", nulls_equal=True, maintain_order="left"
    )
    return label[_GROUP].fill_null(charts.UNKNOWN_AUTHOR)


def _plus_one(value: int) -> int:
    return value + 1


def _minus_one(value: int) -> int:
    return value - 1


def _count(n: int, noun: str) -> str:
    """``"1 citation"``, ``"5 citations"``, ``"2 knowledge chunks"``."""
    return f"{n} {noun[:-1] if n == 1 else noun}"


def traitlets_link(source: tuple[Any, str], target: tuple[Any, str], **options: Any) -> Any:
    import traitlets

    return traitlets.link(source, target, **options)


@functools.cache
def _widget_classes() -> tuple[type[Any], type[Any], type[Any]]:
    """The table, search-box and chart widget classes (anywidget is imported on first use)."""
    import anywidget
    import traitlets

    class RowTable(anywidget.AnyWidget):
        """One page of rows as HTML (``value``); a click or an up/down key sets ``selected``
        (0-based in the filtered rows, of which there are ``count``)."""

        _esm = TABLE_ESM
        _css = EXPLORER_CSS
        value = traitlets.Unicode("").tag(sync=True)
        selected = traitlets.Int(0).tag(sync=True)
        count = traitlets.Int(0).tag(sync=True)

        @traitlets.validate("selected")
        def _in_range(self, proposal: Any) -> int:
            # a row from the front end is clamped to the rows there are
            return max(0, min(int(proposal["value"]), self.count - 1))

    class SearchBox(anywidget.AnyWidget):
        """A text box whose ``value`` reaches Python once typing pauses ``delay`` ms."""

        _esm = SEARCH_ESM
        _css = SEARCH_CSS
        value = traitlets.Unicode("").tag(sync=True)
        description = traitlets.Unicode("Search").tag(sync=True)
        placeholder = traitlets.Unicode("").tag(sync=True)
        delay = traitlets.Int(250).tag(sync=True)

    class ChartView(anywidget.AnyWidget):
        """A chart: ``value`` is its static SVG (or a message) as HTML, drawn live from the
        compiled Vega ``spec`` where the front end runs the widget (citekit.render.chart)."""

        _esm = widget_esm()
        value = traitlets.Unicode("").tag(sync=True)
        spec = traitlets.Dict().tag(sync=True)

    return RowTable, SearchBox, ChartView


class Explorer:
    """Filters, a clickable paged table, a chart and the selected row's answer, as widgets.

    Attributes
    ----------
    kind
        ``"citations"`` or ``"references"``.
    frame
        Every row (the ``citations_frame`` or ``references_frame``).
    filtered
        The rows the filters keep, in the same schema (updated as the controls change).
    author, source
        The dropdown of authors (citations) or knowledge sources (references); the other is
        ``None``. ``ALL`` (the default) keeps every row; missing names read "unknown author"
        / "unknown source".
    years
        An ``IntRangeSlider`` over the cited years (citations only, else ``None``); at its
        full range it also keeps undated rows.
    min_score
        A ``FloatSlider`` (references only, else ``None``); above 0 it drops unscored chunks.
        The scores chart draws its threshold there and counts the chunks that reach it.
    search
        A search box: rows whose text, title, author (or chunk, source) contains its
        ``value``, ignoring case. Typed text filters once typing pauses (250 ms); a value set
        from code filters at once.
    chart_kind
        ``ToggleButtons`` choosing the chart (citations: authors, years, documents).
    page, selected
        The table page (1-based) and the selected row (0-based in ``filtered``): a click on a
        row, the up and down keys in the table, or a value set from code select it.
    table, chart, detail, status
        The outputs: ``table.value`` is the current page's HTML; ``chart``, ``detail`` and
        ``status`` are HTML widgets. ``widget`` is the whole ``VBox``.

    Examples
    --------
    A GPTBots answer has knowledge chunks instead of citations:

    >>> ex = ck.explore([ck.GPTBots().ask("Why was the Great Wall built?")], chart=False)
    >>> ex.kind, ex.author is None
    ('references', True)
    >>> ex.min_score.value = 0.8
    >>> ex.filtered.select("rank", "document_title", "score").rows()
    [(1, 'great_wall_history.pdf', 0.9349), ...]
    >>> ex.status_text
    '1–4 of 4 knowledge chunks (filtered from 8)'
    >>> ex.selected.value = 2
    >>> ex.selected_row()["rank"]
    3
    """

    def __init__(
        self,
        frame: pl.DataFrame,
        kind: Kind,
        answers: list[Answer],
        *,
        page_size: int = 50,
        chart: bool = True,
    ) -> None:
        import ipywidgets as w

        row_table, search_box, chart_view = _widget_classes()
        self.kind: Kind = kind
        self.answers = answers
        self.page_size = max(1, min(int(page_size), 200))
        self._draw_chart = chart
        self._rows = frame.with_columns(_groups(frame, kind))
        self.frame = self._rows.drop(_HIDDEN, strict=False)
        self._kept = self._rows
        self._busy = False
        self._noun = "citations" if kind == "citations" else "knowledge chunks"
        self.status_text = ""

        counts = self._rows.group_by(_GROUP).len().sort(["len", _GROUP], descending=[True, False])
        # "All authors (21)" counts authors, as the authors chart does; each one's count is
        # of the rows the table lists (citations, or knowledge chunks).
        noun = "authors" if kind == "citations" else "sources"
        options = [(f"All {noun} ({counts.height})", ALL)]
        options += [(f"{name} ({_count(n, self._noun)})", name) for name, n in counts.iter_rows()]
        group = w.Dropdown(
            options=options,
            value=ALL,
            description="Author" if kind == "citations" else "Source",
            layout=w.Layout(width="320px"),
        )
        self.author: Any = group if kind == "citations" else None
        self.source: Any = group if kind == "references" else None
        self._group = group

        self.years: Any = None
        self.min_score: Any = None
        if kind == "citations":
            low, high = self._rows.select(a=pl.col("year").min(), b=pl.col("year").max()).row(0)
            dated = low is not None
            self.years = w.IntRangeSlider(
                min=int(low) if dated else 0,
                max=int(high) if dated else 0,
                value=(int(low), int(high)) if dated else (0, 0),
                description="Years",
                disabled=not dated,
                continuous_update=False,
                layout=w.Layout(width="360px"),
            )
            range_control = self.years
        else:
            best = self._rows.select(pl.col("score").max()).item()
            self.min_score = w.FloatSlider(
                min=0.0,
                max=max(1.0, float(best)) if best is not None else 1.0,
                step=0.01,
                value=0.0,
                description="Min score",
                continuous_update=False,
                readout_format=".2f",
                layout=w.Layout(width="360px"),
            )
            range_control = self.min_score
        self.search: Any = search_box(
            placeholder="search the passages, titles, authors…"
            if kind == "citations"
            else "search the chunks and sources…",
            layout=w.Layout(width="360px"),
        )
        self.chart_kind: Any = w.ToggleButtons(
            options=list(_CHARTS[kind]), value=_CHARTS[kind][0], description="Chart"
        )
        small = {"description_width": "initial"}
        self.page: Any = w.BoundedIntText(
            value=1, min=1, max=1, description="Page", style=small, layout=w.Layout(width="7.5em")
        )
        # The row as the table numbers it, from 1 like the pages; ``selected`` is its index.
        self.row: Any = w.BoundedIntText(
            value=1, min=1, max=1, description="Row", style=small, layout=w.Layout(width="8em")
        )
        self.selected: Any = w.BoundedIntText(value=0, min=0, max=0)
        traitlets_link(
            (self.selected, "value"), (self.row, "value"), transform=(_plus_one, _minus_one)
        )
        # The count line takes what the page and row boxes leave, and never wraps onto them.
        self.status: Any = w.HTML(layout=w.Layout(flex="1 1 auto", min_width="0", width="auto"))
        self.status.add_class("citekit-ex-status-box")
        self.table: Any = row_table(layout=w.Layout(width="100%"))
        self.chart: Any = chart_view()
        self.detail: Any = w.HTML(layout=w.Layout(width="100%"))
        self.detail.add_class("citekit-ex-detail")
        w.link((self.table, "selected"), (self.selected, "value"))

        for control in (group, range_control, self.search):
            control.observe(self._on_filter, names="value")
        self.chart_kind.observe(lambda _: self._render_chart(), names="value")
        self.page.observe(lambda _: self._render_table(), names="value")
        self.selected.observe(self._on_select, names="value")

        filters = w.HBox([group, range_control, self.search], layout=w.Layout(flex_flow="wrap"))
        chart_row = [self.chart_kind] if len(_CHARTS[kind]) > 1 else []
        paging = w.HBox(
            [self.status, self.page, self.row],
            layout=w.Layout(width="100%", align_items="center", flex_flow="row nowrap"),
        )
        self.widget: Any = w.VBox(
            [filters, *chart_row, self.chart, paging, self.table, self.detail],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("citekit-ex")
        self._apply()

    # -- state ------------------------------------------------------------------------------

    @property
    def filtered(self) -> pl.DataFrame:
        """The rows the current filters keep (same columns as ``frame``)."""
        return self._kept.drop(_HIDDEN, strict=False)

    def selected_row(self) -> dict[str, Any] | None:
        """The selected row as a dict (``frame``'s columns), ``None`` when no row matches."""
        if self._kept.height == 0:
            return None
        row = self._kept.row(self.selected.value, named=True)
        return {k: v for k, v in row.items() if k not in _HIDDEN}

    def selected_answer(self) -> Answer | None:
        """The answer of the selected row, when the explorer was built from answers."""
        if self._kept.height == 0:
            return None
        position = self._kept[_ANSWER][self.selected.value]
        return self.answers[position] if position is not None else None

    def _filter_expr(self, *, score: bool = True) -> pl.Expr:
        conditions: list[pl.Expr] = []
        if self._group.value != ALL:
            conditions.append(pl.col(_GROUP) == self._group.value)
        if self.years is not None and not self.years.disabled:
            low, high = self.years.value
            if (low, high) != (self.years.min, self.years.max):
                conditions.append(pl.col("year").is_between(low, high))
        if score and self.min_score is not None and self.min_score.value > 0:
            conditions.append(pl.col("score") >= self.min_score.value)
        needle = self.search.value.strip().lower()
        if needle:
            hits = [
                pl.col(c).str.to_lowercase().str.contains(needle, literal=True)
                for c in _SEARCHED[self.kind]
                if c in self._rows.columns
            ]
            conditions.append(pl.any_horizontal(hits).fill_null(False) if hits else pl.lit(False))
        return pl.all_horizontal(conditions) if conditions else pl.lit(True)

    def _on_filter(self, _change: Any = None) -> None:
        if not self._busy:
            self._apply()

    def _apply(self) -> None:
        self._kept = self._rows.filter(self._filter_expr())
        pages = max(1, -(-self._kept.height // self.page_size))
        self._busy = True
        try:
            self.page.max = pages
            self.page.value = 1
            self.row.max = max(1, self._kept.height)
            self.selected.max = max(0, self._kept.height - 1)
            self.selected.value = 0
        finally:
            self._busy = False
        self._render_table()
        self._render_chart()
        self._render_detail()

    def _on_select(self, _change: Any = None) -> None:
        if self._busy:
            return
        page = self.selected.value // self.page_size + 1
        if page != self.page.value:
            self.page.value = page  # draws the table of that page (the widget marks the row)
        self._render_detail()

    # -- output -----------------------------------------------------------------------------

    def _render_table(self) -> None:
        total = self._kept.height
        start = (self.page.value - 1) * self.page_size
        page = self._kept.slice(start, self.page_size)
        if total:
            shown = f"{start + 1:,}–{start + page.height:,} of {total:,} {self._noun}"
        else:
            shown = f"no {self._noun} match"
        if total != self._rows.height:
            shown += f" (filtered from {self._rows.height:,})"
        self.status_text = shown
        self.status.value = status_html(shown)
        self.table.count = total
        self.table.value = (
            table_html(page, self.kind, first=start) if total else empty_html(self._noun)
        )

    def _chart_rows(self) -> pl.DataFrame:
        if self.chart_kind.value == "scores":
            # The scores chart shows the chunks the minimum score cuts too, below its threshold.
            return self._rows.filter(self._filter_expr(score=False)).drop(_HIDDEN, strict=False)
        return self.filtered

    def _render_chart(self) -> None:
        if not self._draw_chart:
            self._show_chart("", {})
            return
        rows = self._chart_rows()
        if rows.height == 0:  # a chart of nothing would be an empty frame and a lone "0"
            self._show_chart(empty_html(self._noun), {})
            return
        kind = self.chart_kind.value
        if kind == "scores":
            spec = charts.scores(rows, threshold=round(float(self.min_score.value), 4))
        else:
            make: Callable[[pl.DataFrame], Any] = getattr(charts, kind)
            spec = make(rows)
        self._show_chart(*chart_html(spec))

    def _show_chart(self, static: str, vega: dict[str, Any]) -> None:
        """The one place a chart is displayed: its static HTML, drawn live from ``vega``."""
        with self.chart.hold_sync():
            self.chart.value = static
            self.chart.spec = vega

    def _render_detail(self) -> None:
        row = self.selected_row()
        if row is None:
            self.detail.value = ""
            return
        parts = [row_html(row, self.kind)]
        answer = self.selected_answer()
        if answer is not None:
            parts.append(answer_html(answer))
        self.detail.value = "".join(parts)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        shown = self._kept.height
        return f"<Explorer of {self.frame.height} {self.kind}, {shown} shown after filters>"
