"""The offline demo: every recorded sample asked through the real clients, one HTML page.

``citekit demo`` starts the loopback server of ``citekit.testing``, asks each provider every
sample question with the real clients, prints a short summary and writes a standalone page a
teacher can show a class: what citekit does, one answer per provider (the others folded), the
sources counted, the charts (inline SVG drawn for the page's column at three widths), the
providers side by side and the sources as one corpus. Each section is an anchor of the table
of contents; with one of them in the address (``#charts``) the page shows that section alone,
with no script.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TextIO

from ..core.columns import COUNTS
from ..core.files import write_text
from ..core.names import ENTRIES, ProviderEntry
from ..model import Answer
from ..render._sources import listed_sources

if TYPE_CHECKING:
    import polars as pl

__all__ = ["SECTIONS", "Section", "run_demo"]


_TERMINAL_NOTE: Final = (
    "citekit offline demo: every answer is a RECORDED SAMPLE from sample_data/, served by "
    "citekit's loopback test server and fetched through citekit's real clients (no API key, "
    "no network, not live answers)."
)
_INTRO: Final = (
    "<p><strong>citekit</strong> asks Magisterium AI, Maritaca AI and GPTBots questions from a "
    "notebook or the command line and shows each answer with its sources: numbered footnotes "
    "that open on the passage cited, the knowledge chunks behind an answer ranked by relevance. "
    "It lays the sources of many answers out as polars tables and charts, counting a work "
    "once whatever language, edition or provider it was cited under, and compares the "
    "providers on one question.</p>"
)
_DEMO_NOTE: Final = (
    "<p>Every answer on this page is a <strong>recorded sample</strong> served by citekit's "
    "loopback test server and fetched through citekit's real clients: no API key, no "
    "network, not a live answer.</p>"
)

#: The question the demo puts to every provider at once.
_COMPARED: Final = "What is the principle of subsidiarity?"

#: The widths (pixels) each chart is drawn at, and the narrowest screen each one is shown on:
#: the page's column is 52rem (832 px) wide, less on a smaller screen (the 1rem margins).
_CHART_WIDTHS: Final = ((760, 800), (560, 600), (340, 0))


# -- what the sections are made of ---------------------------------------------------------------


@dataclass
class DemoData:
    """What the page's sections draw from: the answers of each provider, all of them, the
    comparison of the providers on one question, and the frames the tables and charts use."""

    by_provider: list[tuple[ProviderEntry, list[Answer]]]
    answers: list[Answer]
    comparison: Any = None
    frames: dict[str, Any] = field(default_factory=dict)


class Section(NamedTuple):
    """One section of the page: its anchor, its heading (also its entry in the contents) and
    the function that writes its body."""

    anchor: str
    title: str
    body: Callable[[DemoData], str]


def _esc(value: Any) -> str:
    import html

    return html.escape("" if value is None else str(value))


#: Column names as a reader says them.
_HEADINGS: Final = {
    "n_references": "knowledge chunks",
    "total_tokens": "tokens",
    "mean_score": "mean score",
    "cited_sentences": "cited sentences",
    "n_unmarked": "listed, never marked",
    "n_unlisted": "markers without a source",
    "n_same_work": "one work, two numbers",
    "document_title": "document",
}


def _table_html(frame: Any, *, limit: int = 10) -> str:
    """A bordered table with readable headings and its rows numbered from 1; past ``limit``
    rows it says "10 of 34" and the rest opens below, numbered on."""
    import polars as pl

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.2f}"
        if isinstance(value, list | pl.Series):
            return _esc(", ".join(str(v) for v in value))
        return _esc(value)

    def rows(part: Any, first: int) -> str:
        return "".join(
            f'<tr><td class="demo-n">{first + i}</td>'
            + "".join(f"<td>{cell(v)}</td>" for v in row)
            + "</tr>"
            for i, row in enumerate(part.iter_rows())
        )

    names = [_HEADINGS.get(c, c.replace("_", " ")) for c in frame.columns]
    head = '<th class="demo-n">#</th>' + "".join(f"<th>{_esc(n)}</th>" for n in names)
    table = '<div class="demo-table"><table>'
    html = f"{table}<tr>{head}</tr>{rows(frame.head(limit), 1)}</table></div>"
    if frame.height <= limit:
        return html
    rest = f"{table}<tr>{head}</tr>{rows(frame.slice(limit), limit + 1)}</table></div>"
    return (
        f"{html}<details><summary>Show the other {frame.height - limit} of "
        f"{frame.height} rows</summary>{rest}</details>"
    )


_SVG_ID: Final = re.compile(r'\bid="([^"]+)"')


def _scoped_svg(svg: str, prefix: str) -> str:
    """``svg`` with its ids (clip paths, gradients) and the references to them prefixed, so
    several charts in one page never point at one another's (vl-convert numbers them alike)."""
    for name in set(_SVG_ID.findall(svg)):
        new = f"{prefix}-{name}"
        svg = svg.replace(f'id="{name}"', f'id="{new}"')
        svg = svg.replace(f"url(#{name})", f"url(#{new})").replace(
            f'href="#{name}"', f'href="#{new}"'
        )
    return svg


_MARK: Final = re.compile(
    r'<(path|rect|circle)\s([^>]*?\baria-label="([^"]*)"[^>]*?role="graphics-symbol"[^>]*?)/>'
)


def _with_tooltips(svg: str) -> str:
    """``svg`` with each mark's description (its label whole, its counts) as its ``<title>``:
    the browser's tooltip on a static chart, where a label on the axis is cut short."""

    def titled(match: re.Match[str]) -> str:
        tag, attributes, label = match.groups()
        lines = [part for part in label.split("; ") if not part.startswith("label: ")]
        return f"<{tag} {attributes}><title>{chr(10).join(lines)}</title></{tag}>"

    return _MARK.sub(titled, svg)


def _chart_html(name: str, draw: Callable[[int], Any]) -> str:
    """The chart ``draw(width)`` makes, drawn at each of ``_CHART_WIDTHS`` for the page's
    column: the stylesheet shows the one that fits the screen, so no chart is wider than its
    column and none is scaled down to text smaller than the charts' 12 px."""
    import vl_convert

    parts = []
    for i, (width, _) in enumerate(_CHART_WIDTHS):
        try:
            svg = vl_convert.vegalite_to_svg(draw(width).to_dict())
        except Exception as exc:  # a chart that fails is skipped with a note, not fatal
            return f"<p><em>Chart {name!r} skipped: {_esc(exc)}</em></p>"
        svg = _with_tooltips(_scoped_svg(svg, f"demo-{name}-{i}"))
        parts.append(f'<div class="demo-chart demo-w{i}" data-width="{width}">{svg}</div>')
    return f'<figure class="demo-figure" data-chart="{name}">{"".join(parts)}</figure>'


# -- the sections ----------------------------------------------------------------------------------


def _answer_html(answer: Answer) -> str:
    try:
        # carries its own "recorded sample" badge; the page's style reads the class
        return f'<article class="demo-answer">{answer.to_html()}</article>'
    except Exception as exc:  # one answer that cannot render must not sink the page
        label = answer.sample or "unlabelled"
        return (
            f"<p><em>Recorded sample ({_esc(label)}): could not render this answer: "
            f"{_esc(exc)}</em></p>"
        )


def _first_answers(data: DemoData) -> str:
    parts = [
        "<p>One recorded answer of each provider, as a notebook shows it: click a footnote "
        "number to reach its source, and a source to read the passage cited.</p>"
    ]
    for entry, answers in data.by_provider:
        parts.append(f"<h3>{_esc(entry.long_name)}</h3><p>{entry.about}</p>")
        parts.append(_answer_html(answers[0]) if answers else "<p><em>No samples.</em></p>")
    return "\n".join(parts)


def _more_answers(data: DemoData) -> str:
    parts = ["<p>Every other recorded answer, folded: open a question to read its answer.</p>"]
    for entry, answers in data.by_provider:
        rest = answers[1:]
        if not rest:
            continue
        parts.append(f"<h3>{_esc(entry.long_name)}: {len(rest)} more answers</h3>")
        for answer in rest:
            facts = f"{listed_sources(answer)} sources"
            parts.append(
                f'<details class="demo-more"><summary>{_esc(answer.question or "(no question)")}'
                f' <span class="demo-soft">({facts})</span></summary>{_answer_html(answer)}'
                "</details>"
            )
    return "\n".join(parts)


def _glossary() -> str:
    items = "".join(
        f"<dt>{_esc(word)}</dt><dd>{_esc(meaning)}</dd>" for word, meaning in COUNTS.items()
    )
    return f'<dl class="demo-glossary">{items}</dl>'


def _counts_section(data: DemoData) -> str:
    import polars as pl

    from ..data.corpus.works import works_frame

    cits = data.frames["citations"]
    refs = data.frames["references"]
    works = works_frame(cits)
    per_answer = cits.group_by("answer_id", "provider").agg(
        pl.col("work_id").drop_nulls().n_unique().alias("works")
    )
    overview = pl.DataFrame(
        {
            "provider": [a.provider for a in data.answers],
            "answer_id": [a.id for a in data.answers],
            "question": [a.question for a in data.answers],
            "sources": [listed_sources(a) for a in data.answers],
            "citations": [len(a.citations) for a in data.answers],
            "knowledge chunks": [len(a.references or ()) for a in data.answers],
        },
        schema_overrides={"answer_id": pl.String, "question": pl.String},
    )
    overview = (
        overview.join(per_answer, on=["answer_id", "provider"], how="left", nulls_equal=True)
        .with_columns(pl.col("works").fill_null(0))
        .select("provider", "question", "sources", "citations", "works", "knowledge chunks")
    )
    chunks = (
        refs.group_by("document_title")
        .agg(pl.len().alias("chunks"), pl.col("score").mean().round(3).alias("mean_score"))
        .sort(["chunks", "document_title"], descending=[True, False])
    )
    shown_works = works.select("work", "author", "year", "citations", "answers", "providers")
    n_sources = int(overview["sources"].sum())
    return (
        "<p>Every answer and every source as polars frames, the tables a notebook charts. "
        "citekit counts three things, each always under the same name:</p>"
        f"{_glossary()}"
        f"<p>{len(data.answers)} answers list {n_sources} sources: {cits.height} citations "
        f"of {works.height} works, and {refs.height} knowledge chunks.</p>"
        f"<h3>Answers</h3>{_table_html(overview)}"
        "<h3>Most cited works</h3><p>One row per work, whatever the language, edition or "
        "page it was cited under, and whichever provider cited it.</p>"
        f"{_table_html(shown_works)}"
        f"<h3>Knowledge files (GPTBots)</h3>{_table_html(chunks)}"
    )


def _charts_section(data: DemoData) -> str:
    from ..data import charts
    from ..data.frames import answers_frame

    cits, refs = data.frames["citations"], data.frames["references"]
    drawn: tuple[tuple[str, str, Callable[[int], Any]], ...] = (
        ("authors", "Who is cited", lambda w: charts.authors(cits, width=w)),
        ("works", "Which works", lambda w: charts.works(cits, width=w)),
        ("years", "When they were written", lambda w: charts.years(cits, width=w)),
        (
            "citations_per_answer",
            "How many citations an answer carries",
            lambda w: charts.citations_per_answer(answers_frame(data.answers), width=w),
        ),
        ("scores", "How relevant GPTBots' knowledge was", lambda w: charts.scores(refs, width=w)),
    )
    parts = [
        "<p>Authors and works counted by identity, the centuries cited, citations per answer "
        "and GPTBots' relevance scores. Hover a bar for its whole label and its counts.</p>"
    ]
    for name, heading, draw in drawn:
        parts.append(f"<h3>{heading}</h3>{_chart_html(name, draw)}")
    return "\n".join(parts)


def _compare_section(data: DemoData) -> str:
    if data.comparison is None:
        return "<p><em>Fewer than two providers answered: nothing to compare.</em></p>"
    return (
        "<p>The same question to each provider; works cited by two or more are marked.</p>"
        + str(data.comparison._repr_html_())
    )


#: The recorded answers the support section shows: one whose passages say it, say something
#: else and fit another marker better; GPTBots' corner citations; a web answer (no passage).
_SUPPORT_SAMPLES: Final = (
    "magisterium/18_sunday_rest",
    "gptbots/11_travel_policy_corner_citations",
)


def _support_section(data: DemoData) -> str:
    from ..data.corpus.support_view import show_support, support_section_html

    chosen = [a for name in _SUPPORT_SAMPLES for a in data.answers if a.sample == name]
    first, *rest = chosen or data.answers[:1]
    folded = "".join(  # the page stays short: the other answers open on a click
        f"<details><summary>{_esc(a.question or a.sample)}</summary>"
        f"{show_support(a).to_html()}</details>"
        for a in rest
    )
    return support_section_html([first], heading=False) + folded


def _corpus_section(data: DemoData) -> str:
    """Co-citation and citation health."""
    from ..data import charts
    from ..data.corpus.cocitation import cocitation_frame
    from ..data.corpus.health import health_frame

    parts = [
        "<p>The same work cited in several languages, or by several providers, counted once: "
        "which works are read together, and how well each answer marks its sources.</p>"
    ]
    try:
        co = cocitation_frame(data.answers)
        parts.append(
            "<h3>Works read together</h3><p>How many answers cite both works of a pair.</p>"
            + _chart_html(
                "cocitation", lambda w: charts.cocitation(co, top=12 if w > 400 else 8, width=w)
            )
        )
    except Exception as exc:  # a chart that fails is skipped with a note, not fatal
        parts.append(f"<p><em>Co-citation skipped: {_esc(exc)}</em></p>")
    health = health_frame(data.answers).select(
        "provider",
        "question",
        "sentences",
        "cited_sentences",
        "coverage",
        "n_unmarked",
        "n_unlisted",
        "n_same_work",
    )
    parts.append(
        "<h3>Citation health</h3><p>Per answer: sentences that carry a footnote, sources listed "
        "but never marked, markers without a source, works cited under two numbers.</p>"
        f"{_table_html(health)}"
    )
    return "\n".join(parts)


#: The page's sections in order: one line each, its anchor, its title and what writes it.
SECTIONS: Final[list[Section]] = [
    Section("answers", "One answer per provider", _first_answers),
    Section("counts", "Sources, citations, works", _counts_section),
    Section("charts", "Charts", _charts_section),
    Section("compare", "One question, three providers", _compare_section),
    Section("corpus", "Sources as one corpus", _corpus_section),
    Section("support", "Does the source say so?", _support_section),
    Section("more", "All recorded answers", _more_answers),
]


#: The page's own style: a light and a dark theme (``prefers-color-scheme``); one section at a
#: time when the address names one (``:target``; the whole page otherwise); each chart drawn
#: at three widths, the one that fits the column shown; tables scroll in their own box; answer
#: headings below the page's section headings; the vl-convert charts' text, grid and mark
#: outlines recoloured for the dark theme (their marks keep their colours).
_PAGE_STYLE: Final = """
:root { color-scheme: light dark; --bg: #fff; --fg: #111; --soft: #444; --link: #0b57d0;
  --visited: #6a3fb5; --rule: rgba(127,127,127,0.45); }
@media (prefers-color-scheme: dark) {
  :root { --bg: #121212; --fg: #e3e3e3; --soft: #b8b8b8; --link: #8ab4f8; --visited: #c9a8f5; }
}
html { background: var(--bg); color: var(--fg); scroll-behavior: auto; }
body { background: var(--bg); color: var(--fg); overflow-wrap: break-word; }
a { color: var(--link); overflow-wrap: anywhere; }
a:visited { color: var(--visited); }
h2 { font-size: 1.5em; margin: 1.2em 0 0.4em 0; padding-bottom: 0.2em;
  border-bottom: 2px solid var(--rule); }
h3 { font-size: 1.2em; }
.demo-soft { color: var(--soft); font-weight: normal; }
.demo-contents ol { margin: 0.3em 0 0 0; padding-left: 1.6em; }
.demo-contents li { margin: 0.15em 0; }
.demo-pager { margin: 2em 0 0 0; padding-top: 0.4em; border-top: 1px solid var(--rule);
  display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; }
body:has(.demo-section:target) .demo-section:not(:target):not(:has(:target)) { display: none; }
.demo-glossary dt { font-weight: 600; }
.demo-glossary dd { margin: 0 0 0.4em 1.2em; }
.demo-answer .citekit-question { font-size: 1.15em !important; font-weight: 600;
  opacity: 1 !important; margin: 0.2em 0 0.5em 0 !important; }
.demo-answer .citekit-text h3 { font-size: 1.05em; }
.demo-answer .citekit-text h4, .demo-answer .citekit-text h5,
.demo-answer .citekit-text h6 { font-size: 1em; }
details.demo-more { margin: 0.3em 0; padding: 0.3em 0.6em; border: 1px solid var(--rule);
  border-radius: 4px; }
details.demo-more > summary { cursor: pointer; font-weight: 600; }
.demo-table { overflow-x: auto; max-width: 100%; }
.demo-table table { border-collapse: collapse; }
.demo-table td, .demo-table th { text-align: left; vertical-align: top; padding: 2px 6px;
  border: 1px solid var(--rule); }
.demo-table th { font-weight: 600; }
.demo-table .demo-n { text-align: right; color: var(--soft); }
.demo-figure { margin: 0 0 1em 0; }
.demo-chart { max-width: 100%; overflow: hidden; display: none; }
.demo-chart svg { display: block; max-width: 100%; height: auto; }
.demo-w2 { display: block; }
@media (min-width: 600px) { .demo-w2 { display: none; } .demo-w1 { display: block; } }
@media (min-width: 800px) { .demo-w1 { display: none; } .demo-w0 { display: block; } }
pre, table { max-width: 100%; }
@media (max-width: 600px) { .demo-table { font-size: 0.9em; } }
@media (prefers-color-scheme: dark) {
  .demo-chart svg > rect:first-child { fill: transparent; }
  .demo-chart svg g:not(.role-mark) > text { fill: var(--fg); }
  .demo-chart svg .role-title-subtitle > text { fill: var(--soft); }
  .demo-chart svg [stroke="#ddd"] { stroke: rgba(255,255,255,0.16); }
  .demo-chart svg [stroke="white"] { stroke: var(--bg); }
  .demo-chart svg .role-legend-symbol [fill="black"] { fill: var(--fg); }
}
"""


def _contents(sections: list[Section]) -> str:
    items = "".join(f'<li><a href="#{s.anchor}">{_esc(s.title)}</a></li>' for s in sections)
    return (
        '<nav class="demo-contents" id="contents"><strong>Contents</strong>'
        f"<ol>{items}</ol>"
        '<p class="demo-soft">A section opens alone; <a href="#contents">the whole page</a> '
        "shows every section.</p></nav>"
    )


def _section_html(sections: list[Section], i: int, data: DemoData) -> str:
    section = sections[i]
    try:
        body = section.body(data)
    except Exception as exc:  # one section that fails must not sink the page
        body = f"<p><em>This section could not be made: {_esc(exc)}</em></p>"
    pager = ['<a href="#contents">Contents</a>']
    if i > 0:
        before = sections[i - 1]
        pager.append(f'<a href="#{before.anchor}">Previous: {_esc(before.title)}</a>')
    if i + 1 < len(sections):
        after = sections[i + 1]
        pager.append(f'<a href="#{after.anchor}">Next: {_esc(after.title)}</a>')
    return (
        f'<section class="demo-section" id="{section.anchor}"><h2>{_esc(section.title)}</h2>'
        f'{body}<nav class="demo-pager">{"".join(pager)}</nav></section>'
    )


def demo_page(data: DemoData, sections: list[Section] | None = None) -> str:
    """The whole page: the introduction, the contents and the sections."""
    from ..data.io.exports import html_document

    sections = SECTIONS if sections is None else sections
    body = [_INTRO, _DEMO_NOTE, _contents(sections)]
    body += [_section_html(sections, i, data) for i in range(len(sections))]
    page = html_document("citekit demo: recorded sample answers", "\n".join(body))
    return page.replace("</head>", f"<style>{_PAGE_STYLE}</style>\n</head>", 1)


def _frames(answers: list[Answer]) -> dict[str, pl.DataFrame]:
    import polars as pl

    from ..data.corpus.works import sources_frame
    from ..data.frames import references_frame

    sources = sources_frame(answers)
    return {
        "citations": sources.filter(pl.col("kind") == "citation"),
        "sources": sources,
        "references": references_frame(answers),
    }


def run_demo(path: Path, *, open_browser: bool = False, out: TextIO | None = None) -> int:
    """Ask every recorded sample question of each provider offline and write one HTML page."""
    from ..providers._chat import ContentFilteredWarning
    from ..providers.batch import ask_many
    from ..providers.registry import client as make_client
    from ..store import log
    from ..testing import ProviderServer

    out = out if out is not None else sys.stdout
    where = path.resolve()
    out.write(_TERMINAL_NOTE + "\n")
    opener = "opening it in a browser" if open_browser else "add --open to open it in a browser"
    out.write(f"Writing {where} ({opener}).\n")
    out.flush()
    data = DemoData(by_provider=[], answers=[])
    clients: list[Any] = []
    with ProviderServer() as server, log.options(log=False), warnings.catch_warnings():
        # Withheld sample answers carry a note on the page; no warning on the terminal.
        warnings.simplefilter("ignore", ContentFilteredWarning)
        for entry in ENTRIES:
            provider = entry.name
            questions = [s.question for s in server.samples(provider)]
            if not questions:
                data.by_provider.append((entry, []))
                out.write(f"  {entry.long_name}: no recorded samples found\n")
                continue
            # Each provider asked the way its answers cite their sources.
            client: Any = make_client(
                provider,
                base_url=server.base_url(provider),
                api_key="citekit-demo",
                **entry.citing_client_options,
            )
            ask_options = dict(entry.citing_ask_options)
            clients.append((client, ask_options) if ask_options else client)
            answers = ask_many(client, questions, concurrency=4, progress=False)
            data.by_provider.append((entry, answers))
            data.answers += answers
            sources = sum(listed_sources(a) for a in answers)
            citations = sum(len(a.citations) for a in answers)
            out.write(
                f"  {entry.long_name}: {len(answers)} answers, {sources} sources, "
                f"{citations} citations\n"
            )
        if len(clients) > 1:
            from ..data.compare.clients import compare

            data.comparison = compare(_COMPARED, clients, progress=False)
    data.frames = _frames(data.answers)
    write_text(path, demo_page(data))
    out.write(f"{len(data.answers)} recorded sample answers (not live). Wrote {where}\n")
    if open_browser:
        import webbrowser

        webbrowser.open(where.as_uri())
    else:
        out.write("Open it in a browser, or run: citekit demo --open\n")
    return 0
