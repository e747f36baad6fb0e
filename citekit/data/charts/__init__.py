"""Charts of sources, works and references, as altair charts you can chain and display.

Every function takes a frame first (a ``sources_frame``, ``citations_frame`` or
``references_frame``; any other source those accept is loaded for you), aggregates it in
polars, and returns an altair chart of the small aggregated table, so a million citations chart
as fast as ten and never hit altair's 5000-row limit. Nothing is displayed: the caller shows,
chains (``.properties(...)``) or saves (``.save("chart.png")`` with vl-convert) the chart.

A polars ``LazyFrame`` of the same columns (``ck.scan_citations(folder)``, ``scan_sources``,
``scan_references``, ``scan_answers`` over a Parquet dataset, or any ``frame.lazy()``) is
aggregated lazily: polars' streaming engine reads it in batches and only the aggregated rows
(one per author, work, period, count) are collected, so ten million citations chart in well
under a gigabyte and a half (``tests/data/io/test_dataset.py``). ``cocitation`` takes an eager
frame.

Authors and works are counted by identity (``citekit.data.identity.clusters``): Francis,
Francesco and Franziskus are one author, the Catechism cited in six languages one work. A
``sources_frame``
carries its identity (``work_id``, ``author_id``); any other frame or source is identified on
the way, with the shipped alias table.

Missing values are labelled, not dropped: a source without an author counts for
``"unknown author"``, one with neither a title nor an address for ``"untitled document"``, a
chunk without a knowledge source for ``"unknown source"``. Sources without a year are left out
of ``years`` and counted in its subtitle.

The package keeps the aggregation apart from the drawing: ``tables`` computes each chart's
rows as a plain polars table (``tables.top_authors(src).table``; nothing there imports
altair), ``draw`` and ``heatmap`` encode them, and ``style`` holds the look and the one
switch to citekit's offline renderer (``style.drawn``, which every chart passes through
before it is made). altair is imported when a chart is made, so ``import citekit`` stays
light.

Examples
--------
>>> mg = ck.Magisterium()
>>> answers = [
...     mg.ask("What is the principle of subsidiarity?"),
...     mg.ask("How does the Church define the common good?"),
... ]
>>> src = ck.sources_frame(answers)
>>> src.height
15
>>> chart = ck.charts.authors(src)
>>> type(chart).__name__, chart.data.height  # one row per author, not per citation
('Chart', 8)
>>> chart = chart.properties(title="Who the answers cite")  # chain like any altair chart

In a notebook, ``chart`` on its own draws it; ``chart.save("authors.png")`` writes a file.
"""

from __future__ import annotations

from .draw import (
    MAX_ROWS,
    UNKNOWN_AUTHOR,
    UNKNOWN_SOURCE,
    UNTITLED,
    authors,
    citations_per_answer,
    cocitation,
    documents,
    scores,
    works,
    years,
)
from .support import support

__all__ = [
    "MAX_ROWS",
    "UNKNOWN_AUTHOR",
    "UNKNOWN_SOURCE",
    "UNTITLED",
    "authors",
    "citations_per_answer",
    "cocitation",
    "documents",
    "scores",
    "support",
    "works",
    "years",
]
