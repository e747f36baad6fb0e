"""Plain text for answers and reference lists (``text/plain``, terminals, logs).

The answer text is kept as written (Markdown reads well as text), with markers normalised to
``[n]`` and definition lines moved into a numbered source list. On a colour terminal,
:class:`StyledTerminal` renders that Markdown with ``rich`` (imported only then).
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from ..text.reader import carets_only, read
from ._sources import (
    CUT_SHORT,
    Footnote,
    answer_notes,
    chunk_markers,
    empty_reason,
    file_facts,
    footnotes,
    format_score,
    marked,
    passage_caption,
    reference_title,
    references_notes,
    snippet,
    unmatched_notice,
)

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from ..model import Answer, References

__all__ = [
    "SourceItem",
    "StyledTerminal",
    "TerminalLines",
    "TerminalText",
    "answer_text",
    "body_text",
    "print_sources",
    "references_text",
    "source_items",
    "source_lines",
    "sources_text",
    "terminal_safe",
]

_SNIPPET = 240


def _notes_text(notes: list[tuple[str, str]]) -> list[str]:
    return [f"[{text}]" if kind != "note" else f"Note: {text}" for kind, text in notes]


def _footnote_text(note: Footnote, cited: bool) -> list[str]:
    head = f"  [{note.number}] {note.display_title}"
    byline = note.byline()
    if byline:
        head += f" — {byline}"
    if not cited:
        head += " (not cited inline)"
    lines = [head]
    if note.url:
        lines.append(f"      {note.url.strip()}")
    for citation in note.quoted():
        quote = snippet(citation.cited_text, _SNIPPET)
        if quote:
            caption = passage_caption(citation, note, fallback=False)
            lines.append(f"      {caption}: “{quote}”" if caption else f"      “{quote}”")
    return lines


def _references_text(refs: References, notes: Mapping[int, Footnote] | None = None) -> list[str]:
    """The chunks, rank 1 first; beside an answer's footnotes a chunk of a footnoted source
    carries that source's number (one number per source, as the HTML does), its rank in words."""
    lines: list[str] = []
    numbers = chunk_markers(refs.items, notes or {})
    for ref, number in zip(refs.items, numbers, strict=True):
        score = format_score(ref.score)
        if notes:
            label = f"[{number}]" if number is not None else "(not cited)"
            head = f"  {label} {reference_title(ref)} (rank {ref.rank}"
            head += f", score {score})" if score is not None else ")"
        else:
            head = f"  {ref.rank}. {reference_title(ref)}"
            if score is not None:
                head += f" (score {score})"
        lines.append(head)
        if ref.source_url:
            lines.append(f"      {ref.source_url.strip()}")
        excerpt = snippet(ref.content, _SNIPPET)
        if excerpt:
            lines.append(f"      {excerpt}")
    return lines


def sources_text(answer: Answer, *, cited: set[int] | None = None) -> str:
    """The numbered source list, related questions and references (no answer text)."""
    notes = footnotes(answer.citations)
    if cited is None:
        cited = set(read(answer.text).numbers)
    lines: list[str] = []
    if notes:
        lines.append("Sources:")
        for n, note in sorted(notes.items()):
            lines.extend(_footnote_text(note, n in cited or note.linked))
    questions = [q for q in answer.related_questions if isinstance(q, str) and q.strip()]
    if questions:
        lines.append("Related questions:")
        lines.extend(f"  - {q.strip()}" for q in questions)
    if answer.references is not None and answer.references.items:
        lines.append("Sources (ranked by relevance):")
        lines.extend(_references_text(answer.references, notes))
    return "\n".join(lines)


def body_text(answer: Answer, notes: Mapping[int, Footnote] | None = None) -> tuple[str, set[int]]:
    """The answer's text without its definition lines, every marker that has a source written
    ``[n]`` (``$[1]$`` and ``[^1]`` alike); and the numbers so cited."""
    if notes is None:
        notes = footnotes(answer.citations)
    notes = marked(notes)
    body = read(answer.text).body
    markers = read(body).markers
    if carets_only(body):  # the usual text: each [^n] loses its caret when all have a source
        numbers = {m.number for m in markers}
        if all(n in notes for n in numbers):
            return body.replace("^", ""), numbers  # (every "^" is a marker's)
    pieces: list[str] = []
    pos = 0
    cited: set[int] = set()
    for m in markers:
        pieces.append(body[pos : m.start])
        if m.number in notes:
            cited.add(m.number)
            pieces.append(f"[{m.number}]")
        else:
            pieces.append(body[m.start : m.end])
        pos = m.end
    pieces.append(body[pos:])
    return "".join(pieces), cited


def answer_text(answer: Answer) -> str:
    """The answer as readable plain text with a numbered source list."""
    notes = footnotes(answer.citations)
    definitions = read(answer.text).definitions
    body, cited = body_text(answer, notes)
    lines = _notes_text(answer_notes(answer))
    text = body.strip("\n")
    if text:
        lines.append(text)
    elif not answer.content_filtered:
        lines.append(empty_reason(answer))
    for n, definition in sorted(definitions.items()):
        if n not in notes and definition:
            lines.append(f"[{n}] {definition}")
    if answer.files:
        lines += ["", "Files:"]
        for i, file in enumerate(answer.files):
            note = f" — {file.note}" if file.note else ""
            lines.append(f"  {file.name} ({file_facts(file)}){note}  [answer.files[{i}]]")
    sources = sources_text(answer, cited=cited)
    if sources:
        lines += ["", sources]
    return "\n".join(lines)


def references_text(refs: References) -> str:
    """A GPTBots reference list as numbered plain text, rank 1 first."""
    lines = _notes_text(references_notes(refs))
    lines.append("Sources (ranked by relevance):")
    if not refs.items:
        lines.append("  (none retrieved)")
    lines.extend(_references_text(refs))
    return "\n".join(lines)


# -- an answer's sources in a terminal, one line each ---------------------------------------------
class SourceItem(NamedTuple):
    """One source as a terminal lists it: ``[1] Title — Author (Year), refs <url>``."""

    marker: str
    title: str
    #: `` — Author (Year), refs`` for a footnote, `` (score 0.87)`` for a knowledge chunk.
    detail: str
    url: str | None

    def line(self) -> str:
        """The item on one line, its address in ``<>``."""
        return f"{self.marker} {self.title}{self.detail}" + (f" <{self.url}>" if self.url else "")


def source_items(answer: Answer) -> list[SourceItem]:
    """Each footnote of ``answer`` (as every format numbers and groups them), then each of
    its knowledge chunks, as a terminal lists them."""
    items: list[SourceItem] = []
    for number, note in sorted(footnotes(answer.citations).items()):
        detail = ""
        if note.author:
            detail += f" — {note.author}"
        if note.year:
            detail += f" ({note.year})"
        if note.references:
            detail += f", {', '.join(note.references)}"
        items.append(SourceItem(f"[{number}]", note.title or "Untitled", detail, note.url))
    for ref in answer.references or ():
        detail = f" (score {ref.score:.2f})" if ref.score is not None else ""
        items.append(
            SourceItem(f"[{ref.rank}]", ref.data_name or "knowledge chunk", detail, ref.source_url)
        )
    return items


def source_lines(answer: Answer) -> list[str]:
    """``[n] Title — Author (Year), refs <url>`` for each source of ``answer``."""
    return [item.line() for item in source_items(answer)]


class TerminalLines:
    """Lines of ``(text, style)`` parts: plain text on ``out``, or styled on a colour terminal
    (``styled``; the styles are citekit's own constants, never provider text). Plain text is
    written as it is: the stream in front of a terminal cleans it (``TerminalText``)."""

    def __init__(self, out: TextIO, styled: StyledTerminal | None = None) -> None:
        self.out = out
        self.styled = styled

    def line(self, *parts: tuple[str, str]) -> None:
        if self.styled is not None:
            self.styled.line(*parts)
        else:
            self.out.write("".join(text for text, _ in parts) + "\n")

    def source(self, item: SourceItem) -> None:
        if self.styled is not None:
            self.styled.item(item.marker, (item.title, "bold"), (item.detail, ""), url=item.url)
        else:
            self.out.write(f"  {item.line()}\n")

    def markdown(self, text: str) -> None:
        """The answer's text: rendered on a colour terminal, as written elsewhere."""
        if self.styled is not None:
            self.styled.markdown(text)
        else:
            self.out.write(text + "\n")


def print_notice(answer: Answer, out: TextIO, styled: StyledTerminal | None = None) -> bool:
    """The notice of a recorded answer served for another question, on a line of its own
    (nothing for any other answer); whether there was one."""
    other = answer.sample_question
    if other is None:
        return False
    lines = TerminalLines(out, styled)
    lines.line((unmatched_notice(other), "bold"))
    lines.line()
    out.flush()
    return True


def print_sources(answer: Answer, out: TextIO, styled: StyledTerminal | None = None) -> None:
    """What follows an answer's text in a terminal: the tool calls it asked for, its sources
    (:func:`source_items`), its notes, and whether it is a recorded sample."""
    lines = TerminalLines(out, styled)
    for call in answer.tool_calls:  # an answer may be only tool calls: show what was asked
        lines.line()
        arguments = " ".join(call.arguments.split())
        lines.line(("Tool call: ", "bold"), (f"{call.name}({arguments})", ""))
    items = source_items(answer)
    if items:
        lines.line()
        lines.line(("Sources:", "bold"))
        for item in items:
            lines.source(item)
    notes = list(answer.notes)
    if answer.finish_reason == "length":
        notes.insert(0, CUT_SHORT[1])
    for note in notes:
        lines.line()
        lines.line(("Note: ", "bold"), (note, ""))
    if answer.sample:
        lines.line()
        lines.line((f"(recorded sample {answer.sample}, not a live answer)", "dim"))
    out.flush()


# -- text for a terminal --------------------------------------------------------------------------
# Escape sequences whole (their parameters would otherwise print as text): CSI (colours, cursor
# moves), OSC / DCS / SOS / PM / APC strings up to their terminator (titles, clipboard writes,
# hyperlinks), and the two-character escapes; in their 7-bit (ESC ...) and 8-bit (C1) forms.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
# A sequence the text ends inside of (the rest may come with the next piece of a stream).
_UNFINISHED = re.compile(
    r"(?:(?:\x1b\[|\x9b)[0-?]*[ -/]*"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*\x1b?"
    r"|\x1b[ -/]*|\r)\Z"
)
# C0 controls but tab and newline, DEL, and C1 controls.
# C0 (but tab and newline), DEL, C1; and the bidirectional embeddings, overrides and isolates,
# which reorder what a terminal shows (text that reads one way and is another).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CARRY_LIMIT = 4096


def terminal_safe(text: str) -> str:
    """``text`` fit to print on a terminal: escape sequences (ESC and 8-bit C1 forms, with
    their parameters) removed, line ends made ``\\n``, and every other C0 control (but tab and
    newline), DEL, C1 control and bidirectional override dropped, so a provider's text can
    neither set the title, write the clipboard, hide text, move the cursor nor show itself
    reordered.

    >>> from citekit.render.text import terminal_safe
    >>> terminal_safe("red \\x1b[31mtext\\x1b[0m\\x1b]52;c;aGk=\\x07 ok\\r\\n")
    'red text ok\\n'
    """
    if text.isascii() and text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _ESCAPE.sub("", text))


class TerminalText:
    """:func:`terminal_safe` for text that comes in pieces (a stream): an escape sequence cut
    between two pieces is held back until it ends, so it is removed whole too.

    >>> from citekit.render.text import TerminalText
    >>> clean = TerminalText()
    >>> clean.feed("Title\x1b]0;ow"), clean.feed("ned\x07 text"), clean.flush()
    ('Title', ' text', '')
    """

    __slots__ = ("_carry",)

    def __init__(self) -> None:
        self._carry = ""

    def feed(self, piece: str) -> str:
        """What of ``text`` so far can be printed now."""
        text = self._carry + piece
        self._carry = ""
        unfinished = _UNFINISHED.search(text)
        if unfinished is not None and len(text) - unfinished.start() <= _CARRY_LIMIT:
            self._carry = text[unfinished.start() :]
            text = text[: unfinished.start()]
        return terminal_safe(text)

    def flush(self) -> str:
        """The rest, as :func:`terminal_safe` makes it (a sequence never finished loses its
        control characters; what followed them prints as text)."""
        text, self._carry = self._carry, ""
        return terminal_safe(text)


# -- a colour terminal ----------------------------------------------------------------------------
@functools.cache
def _markdown_class() -> Any:
    """rich's Markdown with every heading flush left (rich centres the first level)."""
    from rich.markdown import Heading, Markdown

    class LeftHeading(Heading):
        LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")

    class LeftMarkdown(Markdown):
        elements = {**Markdown.elements, "heading_open": LeftHeading}  # noqa: RUF012

    return LeftMarkdown


#: rich's Markdown headings made bold (its second level is only underlined).
_THEME = {
    "markdown.h1": "bold underline",
    "markdown.h2": "bold underline",
    "markdown.h3": "bold",
    "markdown.h4": "bold italic",
}


class StyledTerminal:
    r"""Answers on a colour terminal, through ``rich`` (imported on first use): Markdown shown
    as headings, bold, lists and code; lines in a chosen style.

    Every piece of text is made :func:`terminal_safe` first and handed to rich as text, never
    as markup: what a provider sends can neither write its own escape sequences nor style
    itself (``[bold red]`` prints as written), and links print their address, not a hidden
    terminal hyperlink. The only escape sequences written are rich's own styling.

    >>> import io
    >>> from citekit.render.text import StyledTerminal
    >>> out = io.StringIO()
    >>> styled = StyledTerminal(out, width=40, color_system="standard")
    >>> styled.markdown("## Grace\n\nA **free** gift [1]. [bold red]x\x1b]0;owned\x07")
    >>> styled.line(("[1] ", "bold"), ("Catechism", ""))
    >>> import re
    >>> print(re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).rstrip())
    Grace
    <BLANKLINE>
    A free gift [1]. [bold red]x
    [1] Catechism
    """

    def __init__(
        self, file: TextIO, *, width: int | None = None, color_system: str | None = "auto"
    ) -> None:
        from rich.console import Console
        from rich.theme import Theme

        self.console = Console(
            file=file,
            theme=Theme(_THEME),
            force_terminal=True,
            color_system=color_system,  # type: ignore[arg-type]
            markup=False,
            emoji=False,
            highlight=False,
            width=width,
        )

    def renderable(self, text: str) -> Any:
        """``text`` (Markdown) as rich renders it."""
        return _markdown_class()(terminal_safe(text), code_theme="ansi_dark", hyperlinks=False)

    def markdown(self, text: str) -> None:
        """Print ``text`` rendered as Markdown."""
        self.console.print(self.renderable(text))

    def line(self, *parts: str | tuple[str, str]) -> None:
        """Print one line made of ``parts``: plain strings, or ``(text, rich style)`` pairs
        (the style is citekit's own constant, never provider text)."""
        self.console.print(self._text(parts))

    def item(self, marker: str, *parts: str | tuple[str, str], url: str | None = None) -> None:
        """A numbered entry: ``marker`` (``[1]``) and ``parts`` wrapped under their own first
        word; ``url`` on the next line, never wrapped (terminals find it whole)."""
        from rich.padding import Padding
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        grid.add_row(Text(terminal_safe(marker), style="bold cyan"), self._text(parts))
        self.console.print(Padding(grid, (0, 0, 0, 2)))
        if url:
            indent = " " * (3 + len(marker))
            self.console.print(
                Text(indent + " ".join(terminal_safe(url).split()), style="blue"), soft_wrap=True
            )

    @staticmethod
    def _text(parts: tuple[str | tuple[str, str], ...]) -> Any:
        from rich.text import Text

        line = Text(end="\n")
        for part in parts:
            text, style = (part, "") if isinstance(part, str) else part
            line.append(terminal_safe(text), style=style or None)
        return line

    @contextlib.contextmanager
    def live(self) -> Iterator[Callable[[str], None]]:
        """While a text streams in: ``update(text so far)`` shows the last screenful of it
        rendered; all of it is erased on leaving (print the whole with :meth:`markdown`)."""
        from rich.live import Live

        tail = _Tail(self)
        with Live(
            tail,
            console=self.console,
            transient=True,
            refresh_per_second=8,
            vertical_overflow="crop",
        ):
            yield tail.update


class _Tail:
    """The last screenful of a growing Markdown text (rich's live display cannot scroll)."""

    def __init__(self, terminal: StyledTerminal) -> None:
        self._terminal = terminal
        self._text = ""

    def update(self, text: str) -> None:
        self._text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        lines = console.render_lines(
            self._terminal.renderable(self._text), options.update(height=None), pad=False
        )
        for line in lines[-max(1, console.size.height - 1) :]:
            yield from line
            yield Segment.line()
