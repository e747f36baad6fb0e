"""An answer with its support, drawn: HTML with each sentence tinted by its verdict, and text.

The view (``citekit.data.corpus.support_view.SupportView``) is seen here for typing only; it
carries every verdict and score (``support_frame`` made them), and this module only draws them.

HTML, with the answer HTML's guarantees (``citekit.render.html``):

* every sentence is a ``<span>`` tinted by its verdict (a translucent colour, readable in light
  and dark themes) and followed by a glyph (✓ ◐ ✗ ? ∅) with the verdict in its ``title``: where
  a front end strips ``style`` (GitHub), the glyphs still say it;
* each marker links to its sentence's entry under the text, and its ``title`` carries the
  source, the verdict, the score and the start of the passage that fits best;
* the entry lists each source citing the sentence with its score and evidence, and the best
  passage with the words it shares with the sentence in ``<mark>`` (``<b>`` with ``strict``);
* a legend with each verdict's count, and the one-line summary on top;
* no JavaScript, every id prefixed with a per-render token, all text escaped, styles inline and
  within what JupyterLab's sanitizer keeps; ``strict=True`` uses only the tags nbconvert's
  ``sanitize_html=True`` keeps.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Any, Final, TextIO

from ..text.escape import STYLE, esc, new_token
from ..text.markdown_html import render_markdown
from ._sources import answer_notes, reference_label, snippet
from .bundle import _bundle
from .html import _notes_html, target_style
from .text import StyledTerminal, TerminalLines

if TYPE_CHECKING:
    from ..data.corpus.support_view import SentenceSupport, SourceSupport, SupportView

__all__ = [
    "GLYPHS",
    "LEGEND",
    "plain_sentence",
    "print_support",
    "support_bundle",
    "support_html",
    "support_text",
    "unused_evidence",
]

#: The glyph of each verdict: the verdict where colour is lost (stripped styles, no colour).
GLYPHS: Final = {
    "supported": "✓",
    "partial": "◐",
    "unsupported": "✗",
    "unverifiable": "?",
    "uncited": "∅",
}
#: What each verdict means, for the legend's tooltips and the text form.
LEGEND: Final = {
    "supported": "the cited passage has most of what the sentence says",
    "partial": "the cited passage has some of what the sentence says",
    "unsupported": "the cited passage says little of it, or contradicts a number or a negation",
    "unverifiable": "the source gives no passage to judge by (a web page cited by a link)",
    "uncited": "no source cites the sentence",
}
_TINT: Final = {
    "supported": "background-color:rgba(46,160,67,0.24)",
    "partial": "background-color:rgba(230,160,0,0.28)",
    "unsupported": "background-color:rgba(220,50,50,0.24)",
    "unverifiable": "background-color:rgba(127,127,127,0.2)",
    "uncited": "",
}
_SENTENCE: Final = "border-radius:3px; padding:0 0.1em"
_GLYPH: Final = "font-size:0.8em; font-weight:bold; opacity:0.8; margin:0 0.15em 0 0.1em"
_SWATCH: Final = (
    "display:inline-block; margin:0 0.5em 0.3em 0; padding:0 0.35em; font-size:0.85em;"
    " border-radius:3px; border:1px solid rgba(127,127,127,0.45)"
)
# A marker reads as a link on a tint: bold and underlined (on an inner span: marimo refuses a
# style on an in-page link); its colour comes from the scoped style, else the front end.
_MARKER: Final = "font-weight:bold; text-decoration:underline"
_SUMMARY: Final = "font-weight:bold; margin:0 0 0.3em 0"
_MARK: Final = "background-color:#ffe08a; color:#000; padding:0 0.1em; border-radius:2px"
_MISATTRIBUTED: Final = STYLE.BADGE_WARN
_CAVEAT: Final = (
    "Support counts what a sentence shares with its cited passage (words, quotes, numbers): it is "
    "not verification, and a passage in another language shares few words whatever it says."
)

_BLOCK_PREFIX = re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|[0-9]{1,9}[.)][ \t]+)+")
_PARAGRAPH = re.compile(rf'^<div style="{re.escape(STYLE.BLOCK)}">(.*)</div>\n$', re.S)


def _score(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "–"


def _verdict_words(verdict: str, support: float | None) -> str:
    return f"{verdict}, support {_score(support)}" if support is not None else verdict


def _source_name(source: SourceSupport) -> str:
    name = source.title or "untitled source"
    return f"[{source.marker}] {name}" if source.marker is not None else name


def _tooltip(source: SourceSupport) -> str:
    parts = [f"{_source_name(source)} — {_verdict_words(source.verdict, source.support)}"]
    if source.misattributed and source.best_source is not None:
        parts.append(f"[{source.best_source}] fits this sentence better")
    if source.passage:
        parts.append(f"best passage: “{snippet(source.passage, 160)}”")
    text = "; ".join(parts)
    return text if len(text) <= 400 else text[:399] + "…"


# -- HTML -----------------------------------------------------------------------------------------
def _glyph(verdict: str, support: float | None, *, strict: bool) -> str:
    glyph = GLYPHS.get(verdict, "?")
    shown = f"[{glyph}]" if strict else glyph
    return (
        f'<span class="citekit-verdict" style="{_GLYPH}"'
        f' title="{esc(_verdict_words(verdict, support))}">{shown}</span>'
    )


def _inline(text: str, markers: Callable[[int, str], str], *, strict: bool) -> str:
    """One sentence's Markdown as inline HTML (its block's markup left to the layout)."""
    text = _BLOCK_PREFIX.sub("", text)
    for pair in ("**", "__"):  # emphasis that opens in one sentence and closes in another
        if text.count(pair) % 2:
            text = text.replace(pair, "")
    rendered = render_markdown(text, strict=strict, markers=markers)
    found = _PARAGRAPH.match(rendered)
    if found is not None and "<div" not in found.group(1):
        return found.group(1)
    return esc(text)  # a table row, a stray block: as written, escaped


def _sentence_html(sentence: SentenceSupport, token: str, *, strict: bool) -> str:
    by_marker = {s.marker: s for s in sentence.sources if s.marker is not None}

    def marker(number: int, source: str) -> str:
        cited = by_marker.get(number)
        if cited is None:
            return esc(source)
        link = (
            f'<a class="citekit-marker" href="#{token}-s-{sentence.index}"'
            f' title="{esc(_tooltip(cited))}"><span style="{_MARKER}">[{number}]</span></a>'
        )
        return link if strict else f"<sup>{link}</sup>"

    verdict = sentence.verdict
    style = "; ".join(filter(None, (_TINT.get(verdict, ""), _SENTENCE)))
    title = _verdict_words(verdict, sentence.support)
    if sentence.misattributed:
        title += "; a citation fits another source better"
    return (
        f'<span class="citekit-sentence citekit-{esc(verdict)}" style="{style}"'
        f' title="{esc(title)}">{_inline(sentence.text, marker, strict=strict)}'
        f"{_glyph(verdict, sentence.support, strict=strict)}</span>"
    )


def _text_html(view: SupportView, token: str, *, strict: bool) -> str:
    """The sentences in their paragraphs: a new block where the text between two sentences
    breaks the line; a list item keeps its bullet, a heading its weight."""
    text = view.answer.text
    blocks: list[list[str]] = []
    heads: list[str] = []
    previous_end: int | None = None
    for sentence in view.sentences:
        if previous_end is None or "\n" in text[previous_end : sentence.start]:
            blocks.append([])
            line = text[text.rfind("\n", 0, sentence.start) + 1 : sentence.end]
            lead = _BLOCK_PREFIX.match(line)
            heads.append(lead.group().strip() if lead else "")
        blocks[-1].append(_sentence_html(sentence, token, strict=strict))
        previous_end = sentence.end
    out: list[str] = []
    for head, parts in zip(heads, blocks, strict=True):
        inner = " ".join(parts)
        if head.startswith("#"):
            out.append(f'<div style="{STYLE.HEADING}">{inner}</div>\n')
        elif head[:1] in ("-", "*", "+") or head[:1].isdigit():
            bullet = esc(head.split()[0]) if head[:1].isdigit() else "•"
            out.append(f'<div style="{STYLE.BLOCK}; padding:0 0 0 1.2em">{bullet} {inner}</div>\n')
        else:
            out.append(f'<div style="{STYLE.BLOCK}">{inner}</div>\n')
    return "".join(out)


def _marked(passage: str, marks: tuple[tuple[int, int], ...], *, strict: bool) -> str:
    """The passage escaped, each mark wrapped (entities in the passage read as characters)."""
    out: list[str] = []
    at = 0
    for start, end in marks:
        if start < at or end > len(passage):
            continue
        out.append(esc(html.unescape(passage[at:start])))
        word = esc(passage[start:end])
        out.append(f"<b>{word}</b>" if strict else f'<mark style="{_MARK}">{word}</mark>')
        at = end
    out.append(esc(html.unescape(passage[at:])))
    return "".join(out)


def _evidence(source: SourceSupport) -> str:
    facts: list[str] = []
    if source.quote_found is True:
        facts.append("quote found in the passage")
    elif source.quote_found is False:
        facts.append("quote not found in the passage")
    if source.numbers_found:
        facts.append("numbers found: " + ", ".join(source.numbers_found))
    if source.numbers_contradicted:
        facts.append(
            "numbers the passage gives otherwise: " + ", ".join(source.numbers_contradicted)
        )
    if source.passage and source.shared_words:
        facts.append(f"{len(source.shared_words)} shared words")
    if source.passages > 1:
        facts.append(f"best of {source.passages} passages")
    return " · ".join(facts)


def _source_html(source: SourceSupport, *, strict: bool) -> str:
    head = [
        f'<span style="{STYLE.LABEL}">{esc(_source_name(source))}</span>',
    ]
    if source.reference:
        head.append(
            f' <span style="{STYLE.SMALL_MUTED}">{esc(reference_label(source.reference))}</span>'
        )
    tint = _TINT.get(source.verdict, "")
    head.append(
        f' <span class="citekit-source-verdict" style="{STYLE.BADGE}; {tint}">'
        f"{esc(GLYPHS.get(source.verdict, '?'))}"
        f" {esc(_verdict_words(source.verdict, source.support))}</span>"
    )
    if source.misattributed and source.best_source is not None:
        head.append(
            f' <span class="citekit-misattributed" style="{_MISATTRIBUTED}"'
            f' title="Another source of this answer fits the sentence clearly better">'
            f"[{source.best_source}] fits better</span>"
        )
    parts = [f'<div class="citekit-source" style="margin:0.2em 0 0 0">{"".join(head)}']
    evidence = _evidence(source)
    if evidence:
        parts.append(f'<div style="{STYLE.SMALL_MUTED}">{esc(evidence)}</div>')
    if source.passage:
        quote = (
            f'<blockquote style="{STYLE.PASSAGE}">'
            f"{_marked(source.passage, source.marks, strict=strict)}</blockquote>"
        )
        if strict:
            parts.append(f'<div style="{STYLE.PASSAGE_PLAIN}">{quote}</div>')
        else:
            caption = "best passage, shared words marked" if source.marks else "best passage"
            parts.append(
                f'<details class="citekit-passage" style="{STYLE.DETAILS}">'
                f'<summary style="{STYLE.SUMMARY}">{caption}</summary>{quote}</details>'
            )
    parts.append("</div>")
    return "".join(parts)


def _entry_html(sentence: SentenceSupport, token: str, *, strict: bool) -> str:
    value = "" if strict else f' value="{sentence.index + 1}"'
    glyph = GLYPHS.get(sentence.verdict, "?")
    parts = [
        f'<li class="citekit-support-entry citekit-footnote" id="{token}-s-{sentence.index}"{value}'
        f' style="{STYLE.ITEM}">',
        f'<span class="citekit-{esc(sentence.verdict)}" style="{_TINT.get(sentence.verdict, "")};'
        f' {_SENTENCE}">{esc(glyph)} {esc(sentence.verdict)}</span> ',
        f'<span style="{STYLE.MUTED}">{esc(snippet(plain_sentence(sentence.text), 160))}</span>',
    ]
    parts.extend(_source_html(s, strict=strict) for s in sentence.sources)
    parts.append("</li>\n")
    return "".join(parts)


_MARKER_TEXT = re.compile(r"\$?\[\^?[0-9]+\]\$?")
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


def plain_sentence(text: str) -> str:
    """A sentence as text on one line: no block markup, markers nor emphasis marks."""
    text = _EMPHASIS.sub("", _MARKER_TEXT.sub("", _BLOCK_PREFIX.sub("", text)))
    return " ".join(text.split())


def _legend_html(view: SupportView, *, strict: bool) -> str:
    counts = view.counts()
    items = []
    for verdict, meaning in LEGEND.items():
        glyph = GLYPHS[verdict]
        tint = _TINT[verdict]
        items.append(
            f'<span class="citekit-legend-{verdict}" style="{_SWATCH}; {tint}"'
            f' title="{esc(meaning)}">{esc(glyph)} {verdict} {counts.get(verdict, 0)}</span>'
        )
    return f'<div class="citekit-support-legend">{"".join(items)}</div>\n'


def support_html(view: SupportView, *, strict: bool = False) -> str:
    """The answer with its support as one self-contained HTML fragment (see the module)."""
    token = new_token()
    answer = view.answer
    out = [f'<div class="citekit-support citekit-answer" id="{token}" style="{STYLE.ROOT}">\n']
    if not strict:
        out.append(target_style(token))
        # Markers in the text's colour (a link's blue reads poorly on a tint in a dark theme);
        # where the style is stripped, the front end's own link colour stays.
        out.append(f"<style>#{token} .citekit-sentence a{{color:inherit}}</style>")
    out.append(_notes_html(answer_notes(answer), strict=strict))
    if answer.question:
        out.append(f'<div class="citekit-question" style="{STYLE.QUESTION}">')
        out.append(f"Question: {esc(answer.question)}</div>\n")
    out.append(
        f'<div class="citekit-support-summary" style="{_SUMMARY}">{esc(view.summary())}</div>\n'
    )
    out.append(_legend_html(view, strict=strict))
    unused = unused_evidence(view)
    if unused:
        out.append(
            f'<div class="citekit-support-unused" style="{STYLE.SMALL_MUTED}; margin:0 0 0.4em 0">'
            f"{esc(unused)}</div>\n"
        )
    if view.sentences:
        out.append(f'<div class="citekit-text">\n{_text_html(view, token, strict=strict)}</div>\n')
        tag, listed = ("ul", STYLE.LIST) if strict else ("ol", STYLE.NUMBERS)
        # A sentence no source cites has nothing to list: its glyph in the text says so.
        entries = "".join(_entry_html(s, token, strict=strict) for s in view.sentences if s.sources)
        out.append(
            f'<div class="citekit-support-sentences" style="{STYLE.SECTION}">'
            f'<div style="{STYLE.SECTION_TITLE}">Cited sentences and their best passages</div>'
            f'<{tag} style="{listed}">\n{entries}</{tag}></div>\n'
        )
    else:
        out.append(f'<div style="{STYLE.MUTED}">(no sentence to judge)</div>\n')
    out.append(f'<div class="citekit-footer" style="{STYLE.FOOTER}">{esc(_CAVEAT)}</div>\n')
    out.append("</div>\n")
    return "".join(out)


# -- text -----------------------------------------------------------------------------------------
def _line_parts(sentence: SentenceSupport) -> tuple[str, str, str]:
    """``(glyph and verdict, score, sentence and its sources)`` of one sentence."""
    cites = " ".join(
        f"[{s.marker}]" + (f"→[{s.best_source}]" if s.misattributed and s.best_source else "")
        for s in sentence.sources
        if s.marker is not None
    )
    said = plain_sentence(sentence.text)
    return (
        f"{GLYPHS.get(sentence.verdict, '?')} {sentence.verdict}",
        _score(sentence.support),
        f"{said} {cites}".rstrip(),
    )


def support_text(view: SupportView) -> str:
    """The view as plain text: one line per sentence (verdict, score, the sentence and its
    markers; ``[1]→[3]`` where [3] fits better), then the summary."""
    lines = ["Support by sentence (does the cited passage say so?):"]
    for sentence in view.sentences:
        verdict, score, said = _line_parts(sentence)
        lines.append(f"  {verdict:<14} {score:>4}  {said}")
    lines.append(view.summary())
    lines.extend(_arrows(view))
    if unused_evidence(view):
        lines.append(unused_evidence(view))
    return "\n".join(lines)


def unused_evidence(view: SupportView) -> str:
    """``"Evidence left unused: [3] fits no sentence; 2 retrieved chunks never cited (ranks 4,
    5)"``, or "" when nothing is left unused."""
    parts: list[str] = []
    if view.unfit_citations:
        cited = ", ".join(f"[{n}]" for n in view.unfit_citations)
        one = len(view.unfit_citations) == 1
        parts.append(f"{cited} {'fits' if one else 'fit'} no sentence")
    if view.unused_chunks:
        n = len(view.unused_chunks)
        ranks = ", ".join(map(str, view.unused_chunks))
        parts.append(
            f"{n} retrieved chunk{'' if n == 1 else 's'} never cited "
            f"(rank{'' if n == 1 else 's'} {ranks})"
        )
    return "Evidence left unused: " + "; ".join(parts) if parts else ""


def _arrows(view: SupportView) -> list[str]:
    """What ``[2]→[1]`` means, said once under the summary of a view that has one."""
    for sentence in view.sentences:
        for s in sentence.sources:
            if s.misattributed and s.best_source is not None and s.marker is not None:
                return [
                    f"[{s.marker}]→[{s.best_source}]: the sentence cites [{s.marker}], but the "
                    f"answer's source [{s.best_source}] fits it clearly better"
                ]
    return []


_RICH: Final = {
    "supported": "bold green",
    "partial": "bold yellow",
    "unsupported": "bold red",
    "unverifiable": "bold blue",
    "uncited": "dim",
}


def print_support(view: SupportView, out: TextIO, styled: StyledTerminal | None = None) -> None:
    """The view on a terminal: each sentence with its verdict and score, then the summary;
    plain text when ``styled`` is None (a pipe, ``NO_COLOR``)."""
    lines = TerminalLines(out, styled)
    lines.line()
    lines.line(("Does the cited passage say so?", "bold"))
    if styled is None:
        for sentence in view.sentences:
            verdict, score, said = _line_parts(sentence)
            out.write(f"  {verdict:<14} {score:>4}  {said}\n")
    else:
        styled.console.print(_grid(view))
    lines.line((view.summary(), "bold"))
    for arrow in _arrows(view):
        lines.line((arrow, "dim"))
    if unused_evidence(view):
        lines.line((unused_evidence(view), "dim"))
    out.flush()


def _grid(view: SupportView) -> Any:
    """The sentences as a rich grid: verdict (coloured) and score, then the sentence wrapped
    under itself. Every piece is made terminal-safe and handed to rich as text."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    from .text import terminal_safe

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True, justify="right")
    grid.add_column()
    for sentence in view.sentences:
        verdict, score, said = _line_parts(sentence)
        grid.add_row(
            Text(verdict, style=_RICH.get(sentence.verdict, "")),
            Text(score, style="bold"),
            Text(terminal_safe(said)),
        )
    return Padding(grid, (0, 0, 0, 2))


def support_bundle(
    view: SupportView,
    *,
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
) -> dict[str, str]:
    """``text/plain`` and ``text/html`` of a support view; never raises into a cell."""
    renderers: dict[str, Callable[[Any], str]] = {
        "text/plain": support_text,
        "text/html": support_html,
    }
    # No text/markdown: the front ends that prefer it to text/plain show the HTML.
    wanted = [m for m in renderers if include is None or m in include]
    return _bundle(view, renderers, [lambda: support_text(view)], wanted, exclude)
