"""The ``citekit`` command: ask a question, run the offline demo, read the answer log.

::

    citekit ask "What is subsidiarity?" --provider magisterium --html out.html
    citekit ask "What is subsidiarity?" --support
    citekit ask -c "And who wrote about it first?"     # continues the last conversation
    citekit chat                                        # a question a line, Ctrl-D to end
    citekit demo --out citekit-demo.html
    citekit log list --provider magisterium --since 2026-11-01
    citekit log show 12
    citekit log search "dignity of work"
    citekit log export refs.bib
    citekit log export corpus/ --parquet

On a terminal, answers print as styled Markdown (``--color never`` or ``NO_COLOR=1`` for
plain text, which is also what a pipe gets).

``citekit --offline ...`` runs any command against the loopback server of recorded samples
(no key, no network, nothing to export).

Exit codes: 0 success, 1 the provider or the network failed, 2 wrong usage or setup (a missing
API key), 3 offline: no recorded answer for this question, the one shown is the recorded answer
to another (the notice above it names that question), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sqlite3
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from ..core.errors import CitekitError, CitekitWarning, ConfigurationError, DiskFullError
from ..core.fields import MAX_INT64
from ..core.names import DEFAULT_PROVIDER, ENTRIES, PROVIDERS, check_model_choice, display_name
from ..model import Answer, TextDelta
from ..render._sources import format_size
from ..render.text import (
    StyledTerminal,
    TerminalLines,
    TerminalText,
    body_text,
    print_notice,
    print_sources,
)
from .args import CliParser, provider_name, read_question, shell_words
from .chat import Conversation, NoConversation, last_conversation, questions
from .keys import add_keys_commands, run_keys
from .logview import list_json, list_table, row_json, search_json, search_table, show_markdown
from .models import add_models_command, run_models

if TYPE_CHECKING:
    from ..store import Log, LogSelection

__all__ = ["EXIT_OTHER_QUESTION", "build_parser", "main"]

#: ``citekit ask``'s exit code when the answer shown is a recorded answer to another question.
EXIT_OTHER_QUESTION = 3


class UsageError(Exception):
    """A command line that cannot work; reported with exit code 2."""


def make_client(
    provider: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    **extra: Any,
) -> Any:
    """A client of ``provider`` configured from the environment (``extra``: more options of
    that provider's client)."""
    from ..providers.registry import client

    options: dict[str, Any] = {"base_url": base_url, "api_key": api_key, **extra}
    if model:
        options["model"] = model
    try:
        if model:
            check_model_choice(provider, "--model")
        return client(provider, **options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# -- what reaches the terminal ----------------------------------------------------------------
_JSON_UNESCAPED = re.compile("[\x7f-\x9f]")


class TerminalOut:
    """A text stream in front of ``stream`` that lets no control sequence through: text is
    cleaned by :class:`citekit.render.text.TerminalText` (one for the whole command, so a
    sequence cut between two writes of a stream is removed whole); with ``json=True`` the
    text is JSON, whose escapes already cover C0, and DEL and C1 get escaped the JSON way
    (``\\u009b``) so the data stays whole. Piped output is cleaned too: it ends up in a
    terminal or a pager all the same."""

    def __init__(self, stream: TextIO, *, json: bool = False) -> None:
        self._stream = stream
        self._json = json
        self._clean = TerminalText()

    def write(self, text: str) -> int:
        if self._json:
            self._stream.write(_JSON_UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
        else:
            self._stream.write(self._clean.feed(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def finish(self) -> None:
        """Write what an unfinished sequence held back (the sequence itself dropped)."""
        if not self._json:
            self._stream.write(self._clean.flush())
        self._stream.flush()


# -- printing an answer -----------------------------------------------------------------------
def _stream_styled(events: Any, styled: StyledTerminal) -> Answer | None:
    """Stream an answer onto a colour terminal: the last screenful rendered as it arrives,
    then the whole answer rendered once (what arrived, when Ctrl-C stops it)."""
    answer: Answer | None = None
    text = ""
    with events:  # Ctrl-C reaches the stream, which keeps the text
        try:
            with styled.live() as show:
                for event in events:
                    if type(event) is TextDelta and event.choice == 0:
                        text += event.text
                        show(text)
                    elif isinstance(event, Answer):
                        answer = event
        except KeyboardInterrupt:
            styled.markdown(text)
            raise
    styled.markdown(body_text(answer)[0].rstrip() if answer is not None else text)
    return answer


def _answer(
    args: argparse.Namespace,
    client: Any,
    conversation: Conversation,
    question: str,
    out: TextIO,
    styled: StyledTerminal | None,
) -> Answer:
    """Ask ``question`` in ``conversation`` and print the answer (``ask`` and each turn of
    ``chat``): streamed or whole, a notice on top when it is another question's recorded
    answer, its sources under it; or its JSON with ``--json``."""
    json_out = getattr(args, "json", False)
    # Offline, an answer comes whole unless --stream is asked: whether it is another
    # question's recorded answer is known before its text is printed, so the notice is on top.
    stream = args.stream if args.stream is not None else not (json_out or args.offline)
    answer: Answer | None = None
    noticed = False
    if stream and styled is not None:
        answer = _stream_styled(conversation.stream(client, question), styled)
    elif stream and not json_out:
        # As a context: Ctrl-C while the text is printed (not only while it is read) reaches
        # the stream, which keeps what arrived (logged as partial).
        with conversation.stream(client, question) as events:
            for event in events:
                if type(event) is TextDelta and event.choice == 0:
                    out.write(event.text)
                    out.flush()
                elif isinstance(event, Answer):
                    answer = event
        out.write("\n")
    else:
        answer = conversation.ask(client, question)
        if not json_out:
            noticed = print_notice(answer, out, styled)
            TerminalLines(out, styled).markdown(body_text(answer)[0].rstrip())
    assert answer is not None
    if json_out:
        from ..data.io.exports import answer_json

        out.write(json.dumps(answer_json(answer), ensure_ascii=False, indent=2) + "\n")
    else:
        if not noticed:  # streamed: the notice comes when the answer has said whose it is
            print_notice(answer, out, styled)
        print_sources(answer, out, styled)
        if getattr(args, "support", False):
            from ..data.corpus.support_view import show_support
            from ..render.support import print_support

            print_support(show_support(answer), out, styled)
    conversation.went_on(question, answer)
    return answer


def _conversation(args: argparse.Namespace) -> tuple[Conversation, Any]:
    """The conversation the command goes on with (the last one of the log with ``-c``, else
    a new one) and the client it is held with."""
    from ..store import log

    conversation = Conversation(args.provider or DEFAULT_PROVIDER)
    if args.continue_conversation:
        try:
            conversation = last_conversation(log, args.provider)
        except NoConversation as exc:
            raise UsageError(str(exc)) from None
        note = conversation.masked_note()
        if note is not None:
            print(note, file=sys.stderr)
    model = args.model or conversation.model
    client = make_client(conversation.provider, base_url=args.base_url, model=model)
    held = conversation.base_url
    if conversation.conversation_id and held and held.rstrip("/") != client.base_url:
        # GPTBots knows a conversation only where it was held (an offline one ended with
        # the loopback server of its command): a new one is started, and said so.
        print(
            f"citekit: note: the last {display_name(conversation.provider)} conversation was "
            f"held at {held}, not {client.base_url}: a new conversation is started",
            file=sys.stderr,
        )
        conversation = Conversation(conversation.provider)
    return conversation, client


def _ask(args: argparse.Namespace, out: TextIO, styled: StyledTerminal | None) -> int:
    if args.html:
        from ..data.io.exports import ANSWER_SUFFIXES

        _require_suffix("--html", Path(args.html), ANSWER_SUFFIXES)  # before paying for an answer
        _require_writable("--html", Path(args.html))
    question = read_question(args.question)
    conversation, client = _conversation(args)
    answer = _answer(args, client, conversation, question, out, styled)
    if args.html:
        from ..data.io.exports import export_answer

        try:
            path = export_answer(answer, args.html)
        except DiskFullError:
            raise
        except OSError as exc:  # the answer is in the log: `citekit log show` has it
            raise UsageError(f"--html {args.html}: cannot write it ({exc.strerror})") from None
        print(f"Wrote {path}", file=sys.stderr)
    return 0 if answer.sample_question is None else EXIT_OTHER_QUESTION


def _chat(args: argparse.Namespace, out: TextIO, styled: StyledTerminal | None) -> int:
    """``citekit chat``: a question a line, each answer continuing the conversation, until
    Ctrl-D (or ``exit``). A failed turn is reported and the chat goes on; Ctrl-C stops the
    answer being printed (kept as partial in the log), a second one at the prompt ends."""
    conversation, client = _conversation(args)
    err = cast(TextIO, TerminalOut(sys.stderr))
    if sys.stdin.isatty():
        name = display_name(conversation.provider)
        how = (
            "continuing the last conversation"
            if conversation.messages or (conversation.conversation_id)
            else "a new conversation"
        )
        print(f"Chatting with {name}, {how}. Ctrl-D (or exit) to end.", file=sys.stderr)
    for question in questions(out=out):
        try:
            _answer(args, client, conversation, question, out, styled)
        except CitekitError as exc:
            _failed(exc, err)
            err.write("citekit: the question was not answered; ask again, or Ctrl-D to end\n")
        except KeyboardInterrupt:
            err.write("\ncitekit: interrupted; the next question goes on (Ctrl-D to end)\n")
        out.write("\n")
        out.flush()
    return 0


# -- the answer log ---------------------------------------------------------------------------
def _selection(args: argparse.Namespace, log: Log) -> LogSelection:
    """The calls the options choose (``--provider``, ``--since``, ``--until``, ``--contains``,
    ``--limit``)."""
    return log.where(
        provider=args.provider,
        since=args.since,
        until=args.until,
        question_contains=args.contains,
        limit=args.limit,
    )


def _log(args: argparse.Namespace, out: TextIO, styled: StyledTerminal | None) -> int:
    from ..store import log

    if args.log_command == "path":
        if args.json:
            there = log.path.exists()
            data = {
                "path": str(log.path),
                "exists": there,
                "bytes": log.size() if there else 0,
                "calls": log.count() if there else 0,
            }
            out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
            return 0
        # The path alone on stdout (scripts read it); its size for the reader on stderr.
        out.write(f"{log.path}\n")
        if log.path.exists():
            print(
                f"{format_size(log.size())}, {log.count():,} calls logged "
                "(`citekit log vacuum` gives back the space of deleted rows)",
                file=sys.stderr,
            )
        else:
            print("no log yet: the first answer creates it", file=sys.stderr)
        return 0
    if args.log_command == "vacuum":
        before, after = log.vacuum()
        if args.json:
            data = {"path": str(log.path), "bytes_before": before, "bytes_after": after}
            out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
            return 0
        out.write(f"{log.path}: {format_size(before)} before, {format_size(after)} after\n")
        return 0
    if args.log_command == "show":
        try:
            answer = log.get(args.id)
        except KeyError as exc:
            failed = next((r for r in log.rows() if r["id"] == args.id and r["error_type"]), None)
            if failed is None:
                raise UsageError(str(exc.args[0])) from None
            # A failed call has no answer: what was asked, and how it failed.
            if args.json:
                row_json(failed, out)
                return 0
            when = _when(failed["time"])
            out.write(
                f"{failed['provider']} · {failed['question'] or ''}\n\n"
                f"Failed at {when}: {failed['error_type']}: {failed['error_message'] or ''}\n"
            )
            return 0
        if args.json:
            from ..data.io.exports import answer_json

            out.write(json.dumps(answer_json(answer), ensure_ascii=False, indent=2) + "\n")
            return 0
        if styled is None:  # a pipe, a file, NO_COLOR: Markdown
            show_markdown(answer, args.id, out)
            return 0
        lines = TerminalLines(out, styled)
        lines.line((answer.provider, "bold"), (" · ", "dim"), (answer.question or "", "bold"))
        lines.line()
        lines.markdown(body_text(answer)[0].rstrip())
        print_sources(answer, out, styled)
        return 0
    if args.log_command == "search":
        return _search(args, out, styled)
    if args.log_command == "export":
        path = Path(args.path)
        if args.parquet:
            return _export_parquet(args, path, out)
        if args.rows:
            _require_suffix("log export --rows", path, _ROW_SUFFIXES)
            frame = _exported(args, log).frame()
            if frame.height == 0:
                return _nothing_to_export(path, out)
            suffix = path.suffix.lower()
            if suffix == ".csv":
                from ..data.io.exports import write_csv

                write_csv(frame, path)  # cells that would be formulas are quoted
            else:
                from ..core.files import replacing

                with replacing(path) as temporary:  # whole or not at all
                    if suffix == ".parquet":
                        frame.write_parquet(temporary)
                    elif suffix == ".json":
                        frame.write_json(temporary)
                    else:  # .jsonl, .ndjson
                        frame.write_ndjson(temporary)
            out.write(f"Wrote {frame.height} log rows to {path}\n")
            return 0
        from ..data.io.exports import CITATION_SUFFIXES, export_citations

        _require_suffix("log export", path, CITATION_SUFFIXES)  # before reading the log
        answers = _exported(args, log).answers()
        if not answers:
            return _nothing_to_export(path, out)
        export_citations(answers, path, include_samples=True)  # chosen by _exported
        out.write(f"Wrote the sources of {len(answers)} answers to {path}\n")
        return 0
    rows = _selection(args, log).rows()
    if args.json:
        list_json(rows, out)
    elif not rows:
        out.write(f"No calls logged in {log.path} match.\n")
    else:
        list_table(rows, out)
    return 0


def _search(args: argparse.Namespace, out: TextIO, styled: StyledTerminal | None) -> int:
    """``log search WORDS``: the calls whose question, answer or cited passages hold every
    word, best first, each with the part of its text that matched; exit 1 when none does."""
    from ..store import log
    from ..store.search import match_query, search_hits

    text = " ".join(args.words)
    if match_query(text) is None:
        raise UsageError(
            f"log search: {text.strip()[:40]!r} has no word to search for; "
            'give words (citekit log search "dignity of work")'
        )
    chosen = log.where(provider=args.provider, since=args.since, until=args.until)
    hits = search_hits(log, text, chosen, args.limit)
    if args.json:
        search_json(hits, out)
    elif hits:
        search_table(hits, out, styled)
    else:
        out.write(f"No logged answer in {log.path} holds {text.strip()!r}.\n")
    return 0 if hits else 1


def _exported(args: argparse.Namespace, log: Log) -> LogSelection:
    """What ``log export`` writes: the chosen calls, without the recorded samples unless
    ``--include-samples`` (a line on stderr says how many were left out)."""
    from ..data.io.exports import live_selection

    return live_selection(
        _selection(args, log), include_samples=args.include_samples, option="--include-samples"
    )


def _when(time: datetime | None) -> str:
    """A row's time as the listing shows it (``?`` for a damaged row's, read as None)."""
    return time.astimezone().strftime("%Y-%m-%d %H:%M") if time is not None else "?" * 16


def _export_parquet(args: argparse.Namespace, folder: Path, out: TextIO) -> int:
    """``log export folder/ --parquet``: the log's dataset (``ck.to_parquet``)."""
    from ..data.io.dataset import to_parquet
    from ..store import log

    if args.rows:
        raise UsageError("log export: --parquet writes the whole dataset; leave out --rows")
    chosen = _exported(args, log)
    if not replace(chosen, limit=1).rows(errors=False):  # before anything is written
        return _nothing_to_export(folder, out)
    try:
        written = to_parquet(chosen, folder, overwrite=args.overwrite, include_samples=True)
    except FileExistsError as exc:
        raise UsageError(str(exc).replace("overwrite=True", "--overwrite")) from None
    out.write(f"{written}\n")
    return 0


#: What ``log export --rows`` writes.
_ROW_SUFFIXES = (".csv", ".parquet", ".json", ".jsonl", ".ndjson")


def _require_suffix(option: str, path: Path, suffixes: Sequence[str]) -> None:
    """A usage error unless ``path`` ends in one of ``suffixes``: checked before any work."""
    if path.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {path}: the file name must end in one of {', '.join(suffixes)}")


def _require_writable(option: str, path: Path) -> None:
    """A usage error when ``path`` cannot be written: checked before any work."""
    from ..core.files import unwritable

    reason = unwritable(path)
    if reason is not None:
        raise UsageError(f"{option} {path}: cannot write it ({reason})")


def _nothing_to_export(path: Path, out: TextIO) -> int:
    from ..store import log

    out.write(f"No calls logged in {log.path} match: {path} not written.\n")
    return 1


# -- parser and entry point -------------------------------------------------------------------
def _log_filters(parser: argparse.ArgumentParser, limit: int | None) -> None:
    parser.add_argument(
        "--provider", type=provider_name, choices=PROVIDERS, help="only this provider's calls"
    )
    parser.add_argument("--since", help="ISO date or time, e.g. 2026-11-01")
    parser.add_argument("--until", help="ISO date or time (exclusive)")
    parser.add_argument("--contains", help="only questions containing this text")
    parser.add_argument(
        "-n",
        "--limit",
        type=_row_count,
        default=limit,
        help="the most recent N"
        + (f" (default {limit})" if limit is not None else " (default all)"),
    )


def _whole_number(text: str, *, lo: int, what: str) -> int:
    """A number from the command line, ``lo`` to ``MAX_INT64`` (what SQLite holds), else a usage
    error that argparse reports with the other arguments' (exit 2, one line)."""
    try:
        number = int(text)
    except ValueError:  # not digits, or more digits than int() reads
        number = lo - 1
    if not lo <= number <= MAX_INT64:
        raise argparse.ArgumentTypeError(
            f"expected {what}, {lo} or more (up to {MAX_INT64}), got {text[:40]!r}"
        )
    return number


def _row_count(text: str) -> int:
    """``--limit``: a number of rows, 0 or more."""
    return _whole_number(text, lo=0, what="a number of rows")


def _row_id(text: str) -> int:
    """``log show ID``: a row id, 1 or more."""
    return _whole_number(text, lo=1, what="a row id")


def _asking(parser: argparse.ArgumentParser) -> None:
    """The options of ``ask`` and ``chat``."""
    parser.add_argument(
        "--provider",
        type=provider_name,
        choices=PROVIDERS,
        help=f"who answers (default {DEFAULT_PROVIDER}, or with -c the last conversation's); "
        "its key comes from <PROVIDER>_API_KEY or `citekit keys set`",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_conversation",
        action="store_true",
        help="continue the last conversation of the log (of --provider, when given)",
    )
    choosers = ", ".join(e.display_name for e in ENTRIES if e.chooses_model)
    parser.add_argument("--model", help=f"model name ({choosers})")
    parser.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print the answer as it arrives (default, except with --json and --offline)",
    )
    parser.add_argument("--base-url", help="send requests here instead of the provider's API")


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="citekit",
        description=f"Sourced answers from {', '.join(e.long_name for e in ENTRIES)}.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"citekit {__version__}")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="answers as styled Markdown: auto (default) on a terminal unless NO_COLOR is set",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="answer from the recorded samples of a loopback server (no key, no network); "
        f"ask exits {EXIT_OTHER_QUESTION} when the answer shown is another question's",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ask = commands.add_parser("ask", help="ask one question and print the answer with sources")
    ask.add_argument(
        "question", nargs="?", help="the question, quoted; - (or none, from a pipe): read stdin"
    )
    _asking(ask)
    ask.add_argument("--json", action="store_true", help="print the raw answer JSON")
    ask.add_argument(
        "--support",
        action="store_true",
        help="then each sentence with its verdict and support score: does the cited passage "
        "say so?",
    )
    ask.add_argument("--html", metavar="PATH", help="also write the answer as an HTML page")
    chat = commands.add_parser(
        "chat", help="a conversation: a question a line, Ctrl-D to end (-c: the last one)"
    )
    _asking(chat)

    demo = commands.add_parser("demo", help="offline: sample answers, frames, charts in one page")
    demo.add_argument(
        "--out", default="citekit-demo.html", help="the .html file to write (default %(default)s)"
    )
    demo.add_argument("--open", action="store_true", help="open the page in a browser")

    add_keys_commands(commands)
    add_models_command(commands)
    log = commands.add_parser("log", help="the local log of every answer")
    log_commands = log.add_subparsers(dest="log_command", required=True, metavar="ACTION")
    listing = log_commands.add_parser("list", help="list logged calls, the most recent first")
    _log_filters(listing, 20)
    listing.add_argument("--json", action="store_true", help="print the rows as JSON")
    show = log_commands.add_parser("show", help="print one logged answer")
    show.add_argument("id", type=_row_id, help="the id `citekit log list` shows")
    show.add_argument("--json", action="store_true", help="print the raw answer JSON")
    search = log_commands.add_parser(
        "search", help="full-text search of questions, answers and cited passages"
    )
    search.add_argument(
        "words",
        nargs="+",
        help='the words (all of them are found; "a phrase" in quotes, work* for words '
        "starting so; accents and case do not matter)",
    )
    search.add_argument(
        "--provider", type=provider_name, choices=PROVIDERS, help="only this provider's calls"
    )
    search.add_argument("--since", help="ISO date or time, e.g. 2026-11-01")
    search.add_argument("--until", help="ISO date or time (exclusive)")
    search.add_argument(
        "-n", "--limit", type=_row_count, default=20, help="the best N (default %(default)s)"
    )
    search.add_argument("--json", action="store_true", help="print the hits as JSON")
    export = log_commands.add_parser("export", help="write logged sources (.bib .json .csv ...)")
    export.add_argument("path", help="the file to write: .bib .json .csv .parquet")
    export.add_argument("--rows", action="store_true", help="write the log rows instead")
    export.add_argument(
        "--parquet",
        action="store_true",
        help="write a Parquet dataset (answers, citations, references, sources) into the "
        "folder PATH, partitioned by provider and month",
    )
    export.add_argument(
        "--overwrite", action="store_true", help="with --parquet: replace the dataset in PATH"
    )
    export.add_argument(
        "--include-samples",
        action="store_true",
        help="also export the recorded samples (offline answers); left out by default",
    )
    _log_filters(export, None)
    where = log_commands.add_parser("path", help="print where the log file is (its size on stderr)")
    where.add_argument("--json", action="store_true", help="the path, size and calls as JSON")
    vacuum = log_commands.add_parser("vacuum", help="rewrite the log file without free space")
    vacuum.add_argument("--json", action="store_true", help="the sizes before and after as JSON")
    return parser


def _styled_terminal(args: argparse.Namespace) -> StyledTerminal | None:
    """A colour terminal for answers (``ask``, ``log show``): with ``--color auto`` only when
    stdout is a terminal, ``NO_COLOR`` is unset and ``TERM`` is not ``dumb``; never for
    JSON. Elsewhere everything prints as plain text."""
    answers = args.command in ("ask", "chat") or getattr(args, "log_command", None) in (
        "show",
        "search",
    )
    if not answers or getattr(args, "json", False) or args.color == "never":
        return None
    if args.color == "auto":
        if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
            return None
        isatty = getattr(sys.stdout, "isatty", None)
        if not callable(isatty) or not isatty():
            return None
    return StyledTerminal(sys.stdout)


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if args.offline and args.command != "demo":  # the demo runs its own server
        from ..providers.loopback import offline

        with offline():
            return _commands(args, out)
    return _commands(args, out)


def _commands(args: argparse.Namespace, out: TextIO) -> int:
    styled = _styled_terminal(args)
    if args.command == "ask":
        return _ask(args, out, styled)
    if args.command == "chat":
        return _chat(args, out, styled)
    if args.command == "keys":
        return run_keys(args, out)
    if args.command == "models":
        return run_models(args, out)
    if args.command == "demo":
        from .demo import run_demo

        _require_suffix("--out", Path(args.out), (".html", ".htm"))  # the demo page is HTML
        return run_demo(Path(args.out), open_browser=args.open, out=out)
    return _log(args, out, styled)


def _failed(exc: CitekitError, err: TextIO) -> None:
    """A failed call on stderr: the error, then what to do about it (``citekit.last_error``'s
    advice, worded for a shell)."""
    from ..providers.failure import explain, generic_advice

    print(f"citekit: {type(exc).__name__}: {shell_words(str(exc))}", file=err)
    advice = explain(exc, shell=True).advice
    # A provider's own hint is in the message already; an error of citekit's own (a full
    # disk) says all in its message.
    if advice not in str(exc) and advice != generic_advice(shell=True):
        print(f"citekit: what to do: {shell_words(advice)}", file=err)


@contextlib.contextmanager
def _warnings_as_notes(err: TextIO) -> Iterator[None]:
    """citekit's warnings as one line each ("citekit: note: ..."), not Python's
    ``file.py:266: Warning: ...`` with its source line. A content-filtered answer is left to
    its own note under the answer."""
    from ..providers._chat import ContentFilteredWarning

    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(category, ContentFilteredWarning):
            return
        text = " ".join(str(message).split())
        err.write(f"citekit: note: {text}\n")

    with warnings.catch_warnings():
        warnings.simplefilter("default", CitekitWarning)
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    terminal = TerminalOut(sys.stdout, json=bool(getattr(args, "json", False)))
    out = cast(TextIO, terminal)
    errors = TerminalOut(sys.stderr)  # error messages carry provider text too
    err = cast(TextIO, errors)
    try:
        with _warnings_as_notes(err):
            return _run(args, out)
    except (UsageError, ConfigurationError) as exc:
        print(f"citekit: error: {shell_words(str(exc))}", file=err)
        if "No API key" in str(exc):
            print("citekit: to try citekit offline, without a key: citekit demo", file=err)
        return 2
    except ValueError as exc:
        print(f"citekit: error: {exc}", file=err)
        return 2
    except CitekitError as exc:
        _failed(exc, err)
        return 1
    except sqlite3.Error as exc:
        print(f"citekit: error: cannot read the answer log: {exc}", file=err)
        return 1
    except OSError as exc:
        print(f"citekit: error: {exc}", file=err)
        return 1
    except KeyboardInterrupt:
        print("\ncitekit: interrupted", file=err)
        return 130
    finally:
        # What an unfinished sequence held back is written (the sequence dropped): an error
        # whose provider text opens an escape and never ends it still ends with its advice.
        for each in (terminal, errors):
            with contextlib.suppress(OSError, ValueError):  # a closed or broken pipe
                each.finish()
