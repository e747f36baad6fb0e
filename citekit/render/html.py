"""HTML for answers and reference lists: footnotes without JavaScript.

The design follows what notebook front ends do to HTML (``shared/reference/notebooks.md``):

* every id starts with a token drawn for this render, so two answers in one notebook (or in
  VS Code's single shared document) never collide;
* each marker is ``<sup><a href="#TOKEN-fn-N" title="...">[N]</a></sup>``: the ``title``
  tooltip and the always-visible source list in the same output keep the information where
  ids are stripped (untrusted JupyterLab outputs);
* the footnote list sits in the same output as its markers (JupyterLab renders only the cells
  on screen, Colab isolates outputs), each passage in a ``<details>`` disclosure;
* in-page links (``href="#..."``) carry no ``style`` attribute: marimo rebuilds them as React
  elements with their attributes as given, and a ``style`` string there breaks the whole
  output ("Minified React error #62");
* styling is inline and limited to what JupyterLab's sanitizer keeps; ``strict=True`` uses
  only the tags nbconvert's ``sanitize_html=True`` keeps (no ``<sup>``, ``<details>``, ``<p>``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..text.escape import STYLE, esc, new_token, safe_url
from ..text.incremental import fill_markers
from ..text.markdown_html import render_markdown
from ..text.reader import read
from ._sources import (
    Footnote,
    answer_notes,
    chunk_markers,
    empty_reason,
    file_facts,
    footnotes,
    format_score,
    format_size,
    marked,
    passage_caption,
    reference_title,
    references_notes,
    score_fractions,
    snippet,
    unmatched_notice,
)

if TYPE_CHECKING:
    from ..model import Answer, Citation, GeneratedFile, References

__all__ = ["answer_html", "references_html"]

_MAX_BACKLINKS = 20
#: Images up to this size are shown inline (as a ``data:`` URI); larger ones are listed.
MAX_INLINE_IMAGE = 2 * 1024 * 1024


def target_style(token: str) -> str:
    """The answer's scoped style: the footnote, knowledge chunk or marker a link lands on
    (``:target``) is highlighted. A ``<style>`` element is kept where the output is trusted
    (JupyterLab's own session, VS Code, nbconvert, a page) and dropped elsewhere with nothing
    lost; it holds constants and the render's token only, never provider text."""
    scope = f"#{token}"
    targets = ", ".join(
        f"{scope} .{name}:target"
        for name in ("citekit-footnote", "citekit-reference", "citekit-marker")
    )
    return f"<style>{targets}{{{STYLE.TARGET}}}</style>"


def landing_style(token: str, footnotes: Iterable[int], markers: Mapping[int, int]) -> str:
    """The footnote (or marker) a clicked link leads to, highlighted where the page keeps no
    ``#`` in its address: JupyterLab handles an in-page link's click itself (it scrolls to the
    target without changing the address, so ``:target`` never matches). The link keeps the
    focus the click gave it, and a rule per target highlights the element a focused link points
    to (``:has``). Like ``target_style``, kept where the output is trusted, and holding only
    the render's token and numbers."""
    scope = f"#{token}"
    hrefs = [f"{token}-fn-{n}" for n in footnotes]
    hrefs += [
        f"{token}-m-{n}-{k}"
        for n, count in markers.items()
        for k in range(1, min(count, _MAX_BACKLINKS) + 1)
    ]
    if not hrefs:
        return ""
    rules = ", ".join(f'{scope}:has(a[href="#{h}"]:focus) [id="{h}"]' for h in hrefs)
    return f"<style>{rules}{{{STYLE.TARGET}}}</style>"


class _MarkerLinks:
    """Renders inline markers of one answer and remembers how often each number occurs."""

    def __init__(self, token: str, notes: Mapping[int, Footnote], *, strict: bool) -> None:
        self.token = token
        self.notes = notes
        self.strict = strict
        self.occurrences: dict[int, int] = {}
        # A number's link before and after its occurrence count, made once per footnote.
        self._pieces: dict[int, tuple[str, str]] = {}

    def __call__(self, number: int, source: str) -> str:
        pieces = self._pieces.get(number)
        if pieces is None:
            note = self.notes.get(number)
            if note is None:
                return esc(source)
            pieces = self._pieces[number] = self._link_pieces(number, esc(note.tooltip()))
        count = self.occurrences.get(number, 0) + 1
        self.occurrences[number] = count
        return f"{pieces[0]}{count}{pieces[1]}"

    def _link_pieces(self, number: int, title: str) -> tuple[str, str]:
        head = f'<a class="citekit-marker" id="{self.token}-m-{number}-'
        tail = f'" href="#{self.token}-fn-{number}" title="{title}">[{number}]</a>'
        return (head, tail) if self.strict else (f"<sup>{head}", f"{tail}</sup>")


def _notes_html(notes: list[tuple[str, str]], *, strict: bool) -> str:
    if not notes:
        return ""
    badges: list[str] = []
    blocks: list[str] = []
    for kind, text in notes:
        if kind == "note":
            blocks.append(f'<div class="citekit-note" style="{STYLE.NOTE}">{esc(text)}</div>')
            continue
        style = {"sample": STYLE.BADGE_SAMPLE, "warn": STYLE.BADGE_WARN}.get(kind, STYLE.BADGE)
        title = (
            ' title="Built from a recorded-format file in sample_data/, not a live answer"'
            if kind == "sample"
            else ""
        )
        label = f"[{esc(text)}]" if strict else esc(text)
        badges.append(f'<span class="citekit-label" style="{style}"{title}>{label}</span>')
    head = f'<div class="citekit-labels">{" ".join(badges)}</div>' if badges else ""
    return head + "".join(blocks)


def _link(url: str | None, text: str) -> str:
    """``text`` as a link to ``url`` when the URL is allowed, else text followed by the URL
    itself as plain text."""
    href = safe_url(url)
    if href is not None:
        return f'<a href="{esc(href)}" target="_blank" rel="noopener noreferrer">{esc(text)}</a>'
    if url and url.strip():
        shown = url.strip()
        shown = shown if len(shown) <= 120 else shown[:119] + "…"
        return f'{esc(text)} <span style="{STYLE.SMALL_MUTED}">({esc(shown)})</span>'
    return esc(text)


def _passage_html(citation: Citation, note: Footnote, *, strict: bool) -> str:
    body = render_markdown(citation.cited_text, strict=strict, top_heading=5) or (
        f'<div style="{STYLE.MUTED}">(no passage text)</div>'
    )
    own_url = safe_url(citation.source_url)
    extra = ""
    if own_url is not None and own_url != safe_url(note.url):
        extra = f'<div style="{STYLE.SMALL_MUTED}">{_link(own_url, "open this passage")}</div>'
    caption = esc(passage_caption(citation, note))
    quote = f'<blockquote style="{STYLE.PASSAGE}">{body}</blockquote>{extra}'
    if strict:
        return (
            f'<div class="citekit-passage" style="{STYLE.PASSAGE_PLAIN}">'
            f"<div><em>{caption}</em></div>{quote}</div>"
        )
    return (
        f'<details class="citekit-passage" style="{STYLE.DETAILS}">'
        f'<summary style="{STYLE.SUMMARY}">{caption}</summary>{quote}</details>'
    )


def _footnote_html(note: Footnote, token: str, occurrences: int, *, strict: bool) -> str:
    n = note.number
    value = "" if strict else f' value="{n}"'
    parts = [
        f'<li class="citekit-footnote" id="{token}-fn-{n}"{value} style="{STYLE.ITEM}">',
        f'<span style="{STYLE.LABEL}">[{n}]</span> ',
        _link(note.url, note.display_title),
    ]
    byline = note.byline()
    if byline:
        parts.append(f' <span style="{STYLE.SMALL_MUTED}">— {esc(byline)}</span>')
    if occurrences:
        for k in range(1, min(occurrences, _MAX_BACKLINKS) + 1):
            text = "↩" if k == 1 else str(k)
            parts.append(
                f' <a class="citekit-backlink" href="#{token}-m-{n}-{k}"'
                f' title="Back to marker [{n}] in the text">{text}</a>'
            )
    elif not note.linked:
        parts.append(
            f' <span class="citekit-uncited" style="{STYLE.BADGE}">not cited inline</span>'
        )
    parts.extend(_passage_html(c, note, strict=strict) for c in note.quoted())
    parts.append("</li>\n")
    return "".join(parts)


def _section(title: str, inner: str, css_class: str) -> str:
    return (
        f'<div class="{css_class}" style="{STYLE.SECTION}">'
        f'<div style="{STYLE.SECTION_TITLE}">{esc(title)}</div>{inner}</div>\n'
    )


def _footnotes_html(
    notes: Mapping[int, Footnote], token: str, occurrences: Mapping[int, int], *, strict: bool
) -> str:
    tag = "ul" if strict else "ol"
    items = "".join(
        _footnote_html(note, token, occurrences.get(n, 0), strict=strict)
        for n, note in sorted(notes.items())
    )
    return _section("Sources", f'<{tag} style="{STYLE.LIST}">\n{items}</{tag}>', "citekit-sources")


def _references_list(
    refs: References, token: str, *, strict: bool, notes: Mapping[int, Footnote] | None = None
) -> str:
    """The chunks in the provider's order. A chunk of a source the answer's footnotes list
    carries that footnote's number (and links to it), so one source has one number on the
    whole answer; its rank is said in words, not as a second numbering."""
    if not refs.items:
        return f'<div style="{STYLE.MUTED}">No knowledge chunks were retrieved.</div>'
    items: list[str] = []
    numbers = chunk_markers(refs.items, notes or {})
    for ref, fraction, number in zip(refs.items, score_fractions(refs.items), numbers, strict=True):
        if not notes:  # no footnotes: the chunks are the only list, no number to match
            label = ""
        elif number is not None:
            label = (
                f'<a class="citekit-chunk-source" href="#{token}-fn-{number}"'
                f' title="Source [{number}] in the list above">[{number}]</a>'
            )
        else:
            label = f'<span style="{STYLE.SMALL_MUTED}">not cited</span>'
        parts = [
            f'<li class="citekit-reference" id="{token}-ref-{ref.rank}" style="{STYLE.ITEM}">',
            f'<span style="{STYLE.LABEL}">{label}</span> ' if label else "",
            _link(ref.source_url, reference_title(ref)),
            f' <span style="{STYLE.SMALL_MUTED}">rank {ref.rank}</span>',
        ]
        score = format_score(ref.score)
        if score is not None:
            if fraction is not None and not strict:
                parts.append(
                    f'<span class="citekit-score-bar" title="relevance score {score}"'
                    f' style="{STYLE.BAR}"><span style="{STYLE.BAR_FILL};'
                    f' width:{fraction * 100:.1f}%"></span></span>'
                )
            parts.append(f' <span style="{STYLE.SMALL_MUTED}">score {score}</span>')
        body = render_markdown(ref.content, strict=strict, top_heading=5) or (
            f'<div style="{STYLE.MUTED}">(empty chunk)</div>'
        )
        quote = f'<blockquote style="{STYLE.PASSAGE}">{body}</blockquote>'
        if strict:
            parts.append(f'<div style="{STYLE.PASSAGE_PLAIN}">{quote}</div>')
        else:
            parts.append(
                f'<details class="citekit-passage" style="{STYLE.DETAILS}">'
                f'<summary style="{STYLE.SUMMARY}">{esc(snippet(ref.content, 70) or "Passage")}'
                f"</summary>{quote}</details>"
            )
        parts.append("</li>\n")
        items.append("".join(parts))
    return f'<ul style="{STYLE.LIST}">\n{"".join(items)}</ul>'


def _file_html(position: int, file: GeneratedFile) -> str:
    """One generated file: an image inline (PNG, JPEG, GIF or WebP up to
    ``MAX_INLINE_IMAGE``, as a ``data:`` URI of its decoded bytes), anything else by name."""
    data = file.data
    kind = (file.mime_type or "").strip().lower()
    caption = (
        f"<code>{esc(file.name)}</code>"
        f' <span style="{STYLE.SMALL_MUTED}">({esc(file_facts(file))})</span>'
    )
    if data is not None and file.is_image and len(data) <= MAX_INLINE_IMAGE:
        # The type comes from the allow-list and the base64 is ours: nothing else reaches src.
        src = f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
        return (
            f'<figure class="citekit-file" style="{STYLE.FIGURE}">'
            f'<img src="{src}" alt="{esc(file.name)}" style="{STYLE.IMAGE}">'
            f"<figcaption>{caption}</figcaption></figure>\n"
        )
    why = ""
    if data is None:
        why = file.note or "no bytes were sent"
    elif file.is_image:
        why = (
            f"not shown: over the {format_size(MAX_INLINE_IMAGE)} inline limit; "
            f"save it with answer.files[{position}].save(path)"
        )
    note = f' <span style="{STYLE.SMALL_MUTED}">— {esc(why)}</span>' if why else ""
    return f'<li class="citekit-file" style="{STYLE.ITEM}">{caption}{note}</li>\n'


def _files_html(files: tuple[GeneratedFile, ...]) -> str:
    if not files:
        return ""
    shown = [_file_html(i, f) for i, f in enumerate(files)]
    figures = "".join(h for h in shown if h.startswith("<figure"))
    listed = "".join(h for h in shown if h.startswith("<li"))
    inner = figures + (f'<ul style="{STYLE.LIST}">{listed}</ul>' if listed else "")
    return _section("Files", inner, "citekit-files")


def _related_html(questions: tuple[str, ...]) -> str:
    items = "".join(f"<li>{esc(q)}</li>" for q in questions if isinstance(q, str) and q.strip())
    if not items:
        return ""
    return _section(
        "Related questions", f'<ul style="{STYLE.BULLETS}">{items}</ul>', "citekit-related"
    )


def _footer(answer: Answer) -> str:
    parts = [answer.provider]
    if answer.model:
        parts.append(answer.model)
    if answer.usage is not None and answer.usage.total_tokens is not None:
        parts.append(f"{answer.usage.total_tokens:,} tokens")
    return f'<div class="citekit-footer" style="{STYLE.FOOTER}">{esc(" · ".join(parts))}</div>'


def _split_notes(answer: Answer) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The notes shown above the question (what the answer is: a recorded sample, one served
    for another question, from cache) and those below it, next to the text they are about
    (what happened to it: withheld, cut short, interrupted; the provider's notes)."""
    notes = answer_notes(answer)
    other = answer.sample_question
    served = unmatched_notice(other) if other is not None else None
    above = [n for n in notes if n[0] in ("sample", "info") or n[1] == served]
    return above, [n for n in notes if n not in above]


def answer_html(answer: Answer, *, strict: bool = False) -> str:
    """The answer as one self-contained HTML fragment with clickable footnotes.

    Parameters
    ----------
    answer
        The answer to render.
    strict
        Use only tags that survive nbconvert's ``sanitize_html=True`` (no ``<sup>``,
        ``<details>``): passages are shown open instead of in disclosures.
    """
    return render_answer_html(answer, strict=strict)


def render_answer_html(
    answer: Answer, *, strict: bool = False, body_html: str | None = None
) -> str:
    """:func:`answer_html`, optionally with the answer text already rendered.

    ``body_html`` is the text's HTML with marker placeholders (from
    :class:`~citekit.text.incremental.IncrementalMarkdown`, the live display's renderer),
    for an answer whose text has no definition lines; it saves parsing the text twice.
    """
    token = new_token()
    notes = footnotes(answer.citations)
    links = _MarkerLinks(token, marked(notes), strict=strict)
    reading = read(answer.text)
    body, definitions = reading.body, reading.definitions
    out = [f'<div class="citekit-answer" id="{token}" style="{STYLE.ROOT}">\n']
    if not strict:  # nbconvert's sanitizer keeps no <style>
        out.append(target_style(token))
    notes_above, notes_below = _split_notes(answer)
    out.append(_notes_html(notes_above, strict=strict))
    if answer.question:
        out.append(f'<div class="citekit-question" style="{STYLE.QUESTION}">')
        out.append(f"Question: {esc(answer.question)}</div>\n")
    out.append(_notes_html(notes_below, strict=strict))
    if body_html is not None and not strict:
        text_html = fill_markers(body_html, links)
    else:
        text_html = render_markdown(body, strict=strict, markers=links)
    if not text_html and not answer.content_filtered:
        text_html = f'<div style="{STYLE.MUTED}">{esc(empty_reason(answer))}</div>'
    out.append(f'<div class="citekit-text">\n{text_html}</div>\n')
    for choice in answer.choices[1:]:
        rendered = render_markdown(choice.text, strict=strict, markers=links)
        label = f"Choice {choice.index + 1}"
        if strict:
            out.append(f"<div><em>{label}</em></div><div>{rendered}</div>\n")
        else:
            out.append(
                f'<details style="{STYLE.BLOCK}"><summary style="{STYLE.SUMMARY}">{label}'
                f"</summary>{rendered}</details>\n"
            )
    for call in answer.tool_calls:
        out.append(
            f'<div class="citekit-tool-call" style="{STYLE.BLOCK}">'
            f'<span style="{STYLE.SMALL_MUTED}">tool call</span> <code>{esc(call.name)}</code>'
            f'<pre style="{STYLE.PRE}"><code>{esc(call.arguments)}</code></pre></div>\n'
        )
    out.append(_files_html(answer.files))
    loose = {n: d for n, d in sorted(definitions.items()) if n not in notes and d}
    if loose:
        items = "".join(f"<li>[{n}] {esc(d)}</li>" for n, d in loose.items())
        out.append(
            _section(
                "Notes in the answer text",
                f'<ul style="{STYLE.LIST}">{items}</ul>',
                "citekit-definitions",
            )
        )
    if notes:
        out.append(_footnotes_html(notes, token, links.occurrences, strict=strict))
    out.append(_related_html(answer.related_questions))
    if answer.references is not None:
        refs_notes = [n for n in references_notes(answer.references) if n[0] != "sample"]
        inner = _notes_html(refs_notes, strict=strict) + _references_list(
            answer.references, token, strict=strict, notes=notes
        )
        out.append(_section("Sources (ranked by relevance)", inner, "citekit-references"))
    out.append(_footer(answer))
    if not strict:
        out.append(landing_style(token, notes, links.occurrences))
    out.append("</div>\n")
    return "".join(out)


def references_html(refs: References, *, strict: bool = False) -> str:
    """A GPTBots reference list: ranked chunks, each with its relevance score as a bar."""
    token = new_token()
    out = [f'<div class="citekit-references" id="{token}" style="{STYLE.ROOT}">\n']
    if not strict:
        out.append(target_style(token))
    out.append(_notes_html(references_notes(refs), strict=strict))
    out.append(f'<div style="{STYLE.SECTION_TITLE}">Sources (ranked by relevance)</div>\n')
    out.append(_references_list(refs, token, strict=strict))
    if refs.message_id:
        out.append(f'<div style="{STYLE.FOOTER}">message {esc(refs.message_id)}</div>')
    out.append("</div>\n")
    return "".join(out)
