"""The offline demo: every recorded sample asked through the real clients, one HTML page.

``citekit demo`` starts the loopback server of ``citekit.testing``, asks each provider every
sample question with the real clients, prints each answer with its numbered sources, and
writes a standalone page with the rendered answers, frame summaries and charts (inline SVG).
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..core.files import write_text
from ..core.names import ENTRIES, ProviderEntry
from ..model import Answer
from ..render.text import body_text, source_lines

if TYPE_CHECKING:
    import polars as pl

__all__ = ["run_demo"]


_TERMINAL_NOTE = (
    "citekit offline demo: every answer below is a RECORDED SAMPLE from sample_data/, served by "
    "citekit's loopback test server and fetched through citekit's real clients. No API key, no "
    "network, not live answers."
)
_DEMO_NOTE = (
    "Every answer on this page is a <strong>recorded sample</strong> served by citekit's "
    "loopback test server and fetched through citekit's real clients: no API key, no network, "
    "not a live answer."
)


_CONTENTS = (
    '<nav><strong>Contents</strong><ul style="margin-top: 0.3em">'
    + "".join(f'<li><a href="#{e.name}">{e.long_name}</a></li>' for e in ENTRIES)
    + '<li><a href="#frames">Frames</a></li>'
    '<li><a href="#charts">Charts</a></li>'
    '<li><a href="#corpus">Sources as one corpus</a></li>'
    "</ul></nav>"
)

#: The page's own style: a light and a dark theme (``prefers-color-scheme``), nothing wider
#: than a phone (tables scroll in their own box, charts scale down, long words wrap), answer
#: headings below the page's section headings, and the vl-convert charts' text, grid and mark
#: outlines recoloured for the dark theme (their marks keep their colours).
_PAGE_STYLE = """
:root { color-scheme: light dark; --bg: #fff; --fg: #111; --soft: #444; --link: #0b57d0;
  --visited: #6a3fb5; --rule: rgba(127,127,127,0.45); }
@media (prefers-color-scheme: dark) {
  :root { --bg: #121212; --fg: #e3e3e3; --soft: #b8b8b8; --link: #8ab4f8; --visited: #c9a8f5; }
}
html { background: var(--bg); color: var(--fg); }
body { background: var(--bg); color: var(--fg); overflow-wrap: break-word; }
a { color: var(--link); overflow-wrap: anywhere; }
a:visited { color: var(--visited); }
h2 { font-size: 1.5em; margin: 2em 0 0.4em 0; padding-bottom: 0.2em;
  border-bottom: 2px solid var(--rule); }
h3 { font-size: 1.2em; }
.demo-answer .citekit-question { font-size: 1.15em !important; font-weight: 600;
  opacity: 1 !important; margin: 0.2em 0 0.5em 0 !important; }
.demo-answer .citekit-text h3 { font-size: 1.05em; }
.demo-answer .citekit-text h4, .demo-answer .citekit-text h5,
.demo-answer .citekit-text h6 { font-size: 1em; }
.demo-table { overflow-x: auto; max-width: 100%; }
.demo-table table { border-collapse: collapse; }
.demo-table td, .demo-table th { text-align: left; vertical-align: top; padding: 2px 6px;
  border: 1px solid var(--rule); }
.demo-table th { font-weight: 600; }
.demo-chart { overflow-x: auto; margin: 0 0 1em 0; }
.demo-chart svg { display: block; max-width: 100%; height: auto; }
pre, table { max-width: 100%; }
@media (max-width: 600px) { .demo-table { font-size: 0.9em; } }
.demo-narrow { display: none; font-style: italic; }
@media (max-width: 700px) { .demo-narrow { display: block; } }
@media (prefers-color-scheme: dark) {
  .demo-chart svg > rect:first-child { fill: transparent; }
  .demo-chart svg g:not(.role-mark) > text { fill: var(--fg); }
  .demo-chart svg .role-title-subtitle > text { fill: var(--soft); }
  .demo-chart svg [stroke="#ddd"] { stroke: rgba(255,255,255,0.16); }
  .demo-chart svg [stroke="white"] { stroke: var(--bg); }
  .demo-chart svg .role-legend-symbol [fill="black"] { fill: var(--fg); }
}
"""

#: The question the demo puts to every provider at once.
_COMPARED = "What is the principle of subsidiarity?"


def _esc(value: Any) -> str:
    import html

    return html.escape("" if value is None else str(value))


#: Column names as a reader says them.
_HEADINGS = {
    "n_citations": "citations",
    "n_references": "knowledge chunks",
    "total_tokens": "tokens",
    "mean_score": "mean score",
    "cited_sentences": "cited sentences",
    "n_unmarked": "listed, never marked",
    "n_unlisted": "markers without a source",
    "n_same_work": "one work, two numbers",
    "document_title": "document",
}


def _table_html(frame: Any, *, limit: int = 15) -> str:
    """A bordered table with readable headings; past ``limit`` rows it says "15 of 34" and
    the rest opens below."""
    import polars as pl

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.2f}"
        if isinstance(value, list | pl.Series):
            return _esc(", ".join(str(v) for v in value))
        return _esc(value)

    def rows(part: Any) -> str:
        return "".join(
            "<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
            for row in part.iter_rows()
        )

    names = [_HEADINGS.get(c, c.replace("_", " ")) for c in frame.columns]
    head = "".join(f"<th>{_esc(n)}</th>" for n in names)
    table = '<div class="demo-table"><table>'
    html = f"{table}<tr>{head}</tr>{rows(frame.head(limit))}</table></div>"
    if frame.height <= limit:
        return html
    rest = f"{table}<tr>{head}</tr>{rows(frame.slice(limit))}</table></div>"
    return (
        f"{html}<p>{limit} of {frame.height} rows.</p>"
        f"<details><summary>Show the other {frame.height - limit}</summary>{rest}</details>"
    )


#: How far a chart shrinks to fit a narrow screen: not at all, so its text stays at 12 px or
#: more (charts.style.TEXT_SIZE); a narrower screen scrolls the chart inside its own box.
_CHART_MIN_SCALE = 1.0


def _chart_html(svg: str) -> str:
    """A vl-convert SVG that scales down with the page to ``_CHART_MIN_SCALE`` of its size, and
    scrolls in its box on a narrower one."""
    width = re.search(r'<svg[^>]*?\swidth="([0-9.]+)"', svg)
    if width is not None:
        floor = round(float(width.group(1)) * _CHART_MIN_SCALE)
        svg = svg.replace("<svg ", f'<svg style="min-width: {floor}px" ', 1)
    return f'<div class="demo-chart">{svg}</div>'


def _answers_section(provider: ProviderEntry, answers: list[Answer]) -> str:
    parts = [
        f'<h2 id="{provider.name}">{_esc(provider.long_name)}</h2>',
        f"<p>{provider.about}</p>",
    ]
    for answer in answers:
        parts.append('<hr style="border: 0; border-top: 1px solid #8886; margin: 1.5em 0">')
        try:
            # carries its own "recorded sample" badge; the page's style reads the class
            parts.append(f'<article class="demo-answer">{answer.to_html()}</article>')
        except Exception as exc:  # one answer that cannot render must not sink the page
            label = answer.sample or "unlabelled"
            parts.append(
                f"<p><em>Recorded sample ({_esc(label)}): could not render this answer: "
                f"{_esc(exc)}</em></p>"
            )
    return "\n".join(parts)


def _frames_section(answers: list[Answer]) -> tuple[str, dict[str, pl.DataFrame]]:
    import polars as pl

    from ..data.corpus.works import sources_frame, works_frame
    from ..data.frames import answers_frame, references_frame

    sources = sources_frame(answers)
    refs = references_frame(answers)
    overview = answers_frame(answers).select(
        "provider", "question", "n_citations", "n_references", "total_tokens"
    )
    works = works_frame(sources).select(
        "work", "author", "year", "citations", "answers", "providers", "languages"
    )
    chunks = (
        refs.group_by("document_title")
        .agg(pl.len().alias("chunks"), pl.col("score").mean().round(3).alias("mean_score"))
        .sort(["chunks", "document_title"], descending=[True, False])
    )
    html = (
        '<h2 id="frames">Frames</h2>'
        "<p>Every answer and every source as polars frames, the tables a notebook charts.</p>"
        f"<p>{len(answers)} answers cite {sources.height} sources ({refs.height} of them "
        f"knowledge chunks) from {works.height} works.</p>"
        f"<h3>Answers</h3>{_table_html(overview)}"
        "<h3>Most cited works</h3><p>One row per work, whatever the language, edition or "
        "page it was cited under, and whichever provider cited it.</p>"
        f"{_table_html(works)}"
        f"<h3>Knowledge files (GPTBots)</h3>{_table_html(chunks)}"
    )
    cited = sources.filter(pl.col("kind") == "citation")
    return html, {"citations": cited, "sources": sources, "references": refs}


def _corpus_section(answers: list[Answer], comparison: Any) -> str:
    """Co-citation, the providers side by side on one question, citation health."""
    import vl_convert

    from ..data import charts
    from ..data.corpus.cocitation import cocitation_frame
    from ..data.corpus.health import health_frame

    parts = [
        '<h2 id="corpus">Sources as one corpus</h2>',
        "<p>The same work cited in several languages, or by several providers, counted once: "
        "which works are read together, how the providers answer one question, and how well "
        "each answer marks its sources.</p>",
    ]
    try:
        co = cocitation_frame(answers)
        parts.append(
            "<h3>Works read together</h3><p>How many answers cite both works of a pair.</p>"
            f"{_chart_html(vl_convert.vegalite_to_svg(charts.cocitation(co, top=12).to_dict()))}"
        )
    except Exception as exc:  # a chart that fails is skipped with a note, not fatal
        parts.append(f"<p><em>Co-citation skipped: {_esc(exc)}</em></p>")
    if comparison is not None:
        parts.append(
            "<h3>One question, three providers</h3><p>The same question to each provider; "
            "works cited by two or more are marked.</p>"
        )
        parts.append(comparison._repr_html_())
    health = health_frame(answers).select(
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


def _charts_section(frames: dict[str, pl.DataFrame]) -> str:
    import vl_convert

    from ..data import charts

    parts = [
        '<h2 id="charts">Charts</h2>',
        "<p>Authors and works counted by identity, the centuries cited, and GPTBots' "
        "relevance scores.</p>",
        '<p class="demo-narrow">On a narrow screen a chart keeps its text readable and '
        "scrolls sideways in its own box.</p>",
    ]
    for name, source in (
        ("authors", "citations"),
        ("works", "sources"),
        ("years", "citations"),
        ("citations_per_answer", "citations"),
        ("scores", "references"),
    ):
        try:
            chart = getattr(charts, name)(frames[source])
            parts.append(f"<h3>{name.replace('_', ' ').capitalize()}</h3>")
            parts.append(_chart_html(vl_convert.vegalite_to_svg(chart.to_dict())))
        except Exception as exc:  # a chart that fails is skipped with a note, not fatal
            parts.append(f"<p><em>Chart {name!r} skipped: {_esc(exc)}</em></p>")
    return "\n".join(parts)


def run_demo(path: Path, *, open_browser: bool = False, out: TextIO | None = None) -> int:
    """Ask every recorded sample question of each provider offline and write one HTML page."""
    from ..data.io.exports import html_document
    from ..providers._chat import ContentFilteredWarning
    from ..providers.batch import ask_many
    from ..providers.registry import client as make_client
    from ..store import log
    from ..testing import ProviderServer

    out = out if out is not None else sys.stdout
    out.write(_TERMINAL_NOTE + "\n")
    sections = [f"<p>{_DEMO_NOTE}</p>", _CONTENTS]
    every: list[Answer] = []
    clients: list[Any] = []
    comparison = None
    with ProviderServer() as server, log.options(log=False), warnings.catch_warnings():
        # Withheld sample answers carry a note on the page; no warning on the terminal.
        warnings.simplefilter("ignore", ContentFilteredWarning)
        for entry in ENTRIES:
            provider = entry.name
            questions = [s.question for s in server.samples(provider)]
            if not questions:
                sections.append(f"<p><em>No {provider} samples found.</em></p>")
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
            every += answers
            sections.append(_answers_section(entry, answers))
            for answer in answers:
                label = f"recorded sample {answer.sample}" if answer.sample else "unlabelled"
                out.write(f"\n== {provider}: {answer.question}  [{label}]\n")
                text = " ".join(body_text(answer)[0].split())
                out.write(f"{text[:300]}{'...' if len(text) > 300 else ''}\n")
                for line in source_lines(answer):
                    out.write(f"  {line}\n")
                for note in answer.notes:
                    out.write(f"  Note: {note}\n")
        if len(clients) > 1:
            from ..data.compare.clients import compare

            comparison = compare(_COMPARED, clients, progress=False)
    frames_html, frames = _frames_section(every)
    sections += [frames_html, _charts_section(frames), _corpus_section(every, comparison)]
    page = html_document("citekit demo: recorded sample answers", "\n".join(sections))
    page = page.replace("</head>", f"<style>{_PAGE_STYLE}</style>\n</head>", 1)
    write_text(path, page)
    out.write(f"\n{len(every)} recorded sample answers (not live). Wrote {path.resolve()}\n")
    if open_browser:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())
    return 0
