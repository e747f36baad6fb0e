"""The ``citekit`` command: ask a question, run the offline demo, read the answer log.

::

    citekit ask "What is subsidiarity?" --provider magisterium --html out.html
    citekit demo --out citekit-demo.html
    citekit log list --provider magisterium --since 2026-11-01
    citekit log show 12
    citekit log export refs.bib

Exit codes: 0 success, 1 the provider or the network failed, 2 wrong usage or setup (a missing
API key), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ._errors import CitekitError, ConfigurationError
from ._models import Answer, ProviderName, TextDelta

__all__ = ["build_parser", "main"]

PROVIDERS: tuple[ProviderName, ...] = ("magisterium", "maritaca", "gptbots")
_DISPLAY_NAMES = {"magisterium": "Magisterium AI", "maritaca": "Maritaca AI", "gptbots": "GPTBots"}


class UsageError(Exception):
    """A command line that cannot work; reported with exit code 2."""


def make_client(
    provider: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
) -> Any:
    """A client of ``provider`` configured from the environment."""
    options: dict[str, Any] = {"base_url": base_url, "api_key": api_key}
    if provider == "gptbots":
        if model:
            raise UsageError("--model does not apply to GPTBots (the agent picks its model)")
        from .providers.gptbots import GPTBots

        return GPTBots(**options)
    if provider == "magisterium":
        from .providers.magisterium import Magisterium

        return Magisterium(model=model, **options)
    if provider == "maritaca":
        from .providers.maritaca import Maritaca

        return Maritaca(model=model, **options)
    raise UsageError(f"unknown provider {provider!r}; use one of {', '.join(PROVIDERS)}")


# -- printing an answer -----------------------------------------------------------------------
def source_lines(answer: Answer) -> list[str]:
    """``[n] Title — Author (Year), refs <url>`` for each source of ``answer``."""
    lines = []
    for number, group in answer.citation_groups().items():
        c = group[0]
        label = c.document_title or "Untitled"
        if c.document_author:
            label += f" — {c.document_author}"
        if c.document_year:
            label += f" ({c.document_year})"
        places = ", ".join(
            dict.fromkeys(g.document_reference for g in group if g.document_reference)
        )
        if places:
            label += f", {places}"
        lines.append(f"[{number}] {label}" + (f" <{c.source_url}>" if c.source_url else ""))
    for ref in answer.references or ():
        label = ref.data_name or "knowledge chunk"
        if ref.score is not None:
            label += f" (score {ref.score:.2f})"
        lines.append(f"[{ref.rank}] {label}" + (f" <{ref.source_url}>" if ref.source_url else ""))
    return lines


def print_sources(answer: Answer, out: TextIO) -> None:
    lines = source_lines(answer)
    if lines:
        out.write("\nSources:\n" + "".join(f"  {line}\n" for line in lines))
    for note in answer.notes:
        out.write(f"\nNote: {note}\n")
    if answer.sample:
        out.write(f"\n(recorded sample {answer.sample}, not a live answer)\n")
    out.flush()


def _ask(args: argparse.Namespace, out: TextIO) -> int:
    client = make_client(args.provider, base_url=args.base_url, model=args.model)
    stream = args.stream if args.stream is not None else not args.json
    answer: Answer | None = None
    if stream and not args.json:
        for event in client.stream(args.question):
            if type(event) is TextDelta and event.choice == 0:
                out.write(event.text)
                out.flush()
            elif isinstance(event, Answer):
                answer = event
        out.write("\n")
    else:
        answer = client.ask(args.question, stream=stream, display=False)
        if not args.json:
            out.write(answer.text.rstrip() + "\n")
    assert answer is not None
    if args.json:
        from .exports import answer_json

        out.write(json.dumps(answer_json(answer), ensure_ascii=False, indent=2) + "\n")
    else:
        print_sources(answer, out)
    if args.html:
        from .exports import export_answer

        path = export_answer(answer, args.html)
        print(f"Wrote {path}", file=sys.stderr)
    return 0


# -- the answer log ---------------------------------------------------------------------------
def _filters(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "provider": args.provider,
        "since": args.since,
        "until": args.until,
        "question_contains": args.contains,
        "limit": args.limit,
    }


def _log(args: argparse.Namespace, out: TextIO) -> int:
    from .store import log

    if args.log_command == "path":
        out.write(f"{log.path}\n")
        return 0
    if args.log_command == "show":
        try:
            answer = log.get(args.id)
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
        if args.json:
            from .exports import answer_json

            out.write(json.dumps(answer_json(answer), ensure_ascii=False, indent=2) + "\n")
            return 0
        out.write(f"{answer.provider} · {answer.question or ''}\n\n{answer.text.rstrip()}\n")
        print_sources(answer, out)
        return 0
    if args.log_command == "export":
        path = Path(args.path)
        if args.rows:
            frame = log.frame(**_filters(args))
            suffix = path.suffix.lower()
            if suffix == ".csv":
                frame.write_csv(path)
            elif suffix == ".parquet":
                frame.write_parquet(path)
            elif suffix in (".json", ".jsonl", ".ndjson"):
                frame.write_ndjson(path)
            else:
                raise UsageError("log export --rows writes .csv, .parquet or .jsonl files")
            out.write(f"Wrote {frame.height} log rows to {path}\n")
            return 0
        from .exports import export_citations

        answers = log.answers(**_filters(args))
        export_citations(answers, path)
        out.write(f"Wrote the sources of {len(answers)} answers to {path}\n")
        return 0
    rows = log.rows(**_filters(args))
    if not rows:
        out.write(f"No calls logged in {log.path} match.\n")
        return 0
    for row in rows:
        when = row["time"].astimezone().strftime("%Y-%m-%d %H:%M")
        what = row["question"] or ""
        if row["error_type"]:
            what = f"{what}  !! {row['error_type']}: {row['error_message'] or ''}"
        what = " ".join(what.split())
        elapsed = f"{row['elapsed']:.1f}s" if row["elapsed"] is not None else "-"
        out.write(
            f"{row['id']:>6}  {when}  {row['provider']:<11} {row['n_citations']:>3} src "
            f"{elapsed:>6}  {what[:90]}\n"
        )
    return 0


# -- the offline demo -------------------------------------------------------------------------
_DEMO_NOTE = (
    "Every answer on this page is a <strong>recorded sample</strong> served by citekit's "
    "loopback test server and fetched through citekit's real clients: no API key, no network, "
    "not a live answer."
)


def _esc(value: Any) -> str:
    import html

    return html.escape("" if value is None else str(value))


def _table_html(frame: Any, *, limit: int = 15) -> str:
    head = "".join(f'<th style="text-align: left">{_esc(c)}</th>' for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in row) + "</tr>"
        for row in frame.head(limit).iter_rows()
    )
    return f'<table style="border-collapse: collapse"><tr>{head}</tr>{body}</table>'


def _answers_section(provider: str, answers: list[Answer]) -> str:
    from .exports import _answer_html

    parts = [f"<h2>{_esc(_DISPLAY_NAMES.get(provider, provider))}</h2>"]
    for answer in answers:
        parts.append(f"<h3>{_esc(answer.question)}</h3>")
        try:
            parts.append(_answer_html(answer))
        except Exception as exc:  # one answer that cannot render must not sink the page
            parts.append(f"<p><em>Could not render this answer: {_esc(exc)}</em></p>")
        label = answer.sample or "unlabelled"
        parts.append(f'<p style="color: #666"><em>Recorded sample ({_esc(label)})</em></p>')
    return "\n".join(parts)


def _frames_section(answers: list[Answer]) -> tuple[str, dict[str, Any]]:
    try:
        import polars as pl

        from .frames import answers_frame, citations_frame, references_frame
    except ImportError as exc:
        return f"<h2>Frames</h2><p><em>Frames are not available: {_esc(exc)}</em></p>", {}
    cites = citations_frame(answers)
    refs = references_frame(answers)
    overview = answers_frame(answers).select(
        "provider", "question", "n_citations", "n_references", "total_tokens"
    )
    documents = (
        cites.group_by("document_title", "document_author", "document_year")
        .agg(pl.len().alias("passages"), pl.col("answer_id").n_unique().alias("answers"))
        .sort(["passages", "document_title"], descending=[True, False])
    )
    chunks = (
        refs.group_by("data_name")
        .agg(pl.len().alias("chunks"), pl.col("score").mean().round(3).alias("mean_score"))
        .sort(["chunks", "data_name"], descending=[True, False])
    )
    html = (
        "<h2>Frames</h2>"
        f"<p>citations_frame: {cites.height} rows; references_frame: {refs.height} rows.</p>"
        f"<h3>Answers</h3>{_table_html(overview)}"
        f"<h3>Most cited documents</h3>{_table_html(documents)}"
        f"<h3>Knowledge files (GPTBots)</h3>{_table_html(chunks)}"
    )
    return html, {"citations": cites, "references": refs}


def _charts_section(frames: dict[str, Any]) -> str:
    if not frames:
        return "<h2>Charts</h2><p><em>Charts need the frames, which are not available.</em></p>"
    try:
        import importlib

        import vl_convert

        charts = importlib.import_module("citekit.charts")
    except ImportError as exc:
        return f"<h2>Charts</h2><p><em>Charts are not available: {_esc(exc)}</em></p>"
    parts = ["<h2>Charts</h2>"]
    for name, source in (
        ("authors", "citations"),
        ("years", "citations"),
        ("documents", "citations"),
        ("scores", "references"),
    ):
        try:
            chart = getattr(charts, name)(frames[source])
            parts.append(f"<h3>{name.capitalize()}</h3>")
            parts.append(f"<div>{vl_convert.vegalite_to_svg(chart.to_dict())}</div>")
        except Exception as exc:  # a chart that fails is skipped with a note, not fatal
            parts.append(f"<p><em>Chart {name!r} skipped: {_esc(exc)}</em></p>")
    return "\n".join(parts)


def run_demo(path: Path, *, open_browser: bool = False, out: TextIO | None = None) -> int:
    """Ask every recorded sample question of each provider offline and write one HTML page."""
    from .batch import ask_many
    from .exports import html_document
    from .providers._chat import ContentFilteredWarning
    from .store import log
    from .testing import ProviderServer

    out = out if out is not None else sys.stdout
    sections = [f"<p>{_DEMO_NOTE}</p>"]
    every: list[Answer] = []
    with ProviderServer() as server, log.options(log=False), warnings.catch_warnings():
        # Withheld sample answers carry a note on the page; no warning on the terminal.
        warnings.simplefilter("ignore", ContentFilteredWarning)
        for provider in PROVIDERS:
            questions = [s.question for s in server.samples(provider)]
            if not questions:
                sections.append(f"<p><em>No {provider} samples found.</em></p>")
                continue
            client = make_client(
                provider, base_url=server.base_url(provider), api_key="citekit-demo"
            )
            answers = ask_many(client, questions, concurrency=4, progress=False)
            every += answers
            sections.append(_answers_section(provider, answers))
            for answer in answers:
                out.write(f"\n== {provider}: {answer.question}\n")
                text = " ".join(answer.text.split())
                out.write(f"{text[:300]}{'...' if len(text) > 300 else ''}\n")
                for line in source_lines(answer):
                    out.write(f"  {line}\n")
    frames_html, frames = _frames_section(every)
    sections += [frames_html, _charts_section(frames)]
    page = html_document("citekit demo: recorded sample answers", "\n".join(sections))
    path.write_text(page, encoding="utf-8")
    out.write(f"\n{len(every)} sample answers. Wrote {path.resolve()}\n")
    if open_browser:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())
    return 0


# -- parser and entry point -------------------------------------------------------------------
def _log_filters(parser: argparse.ArgumentParser, limit: int | None) -> None:
    parser.add_argument("--provider", choices=PROVIDERS)
    parser.add_argument("--since", help="ISO date or time, e.g. 2026-11-01")
    parser.add_argument("--until", help="ISO date or time (exclusive)")
    parser.add_argument("--contains", help="only questions containing this text")
    parser.add_argument("--limit", type=int, default=limit, help="the most recent N")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citekit", description="Sourced answers from Magisterium AI, Maritaca AI, GPTBots."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ask = commands.add_parser("ask", help="ask one question and print the answer with sources")
    ask.add_argument("question")
    ask.add_argument("--provider", choices=PROVIDERS, default="magisterium")
    ask.add_argument("--model", help="model name (Magisterium, Maritaca)")
    ask.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print the answer as it arrives (default, except with --json)",
    )
    ask.add_argument("--json", action="store_true", help="print the raw answer JSON")
    ask.add_argument("--html", metavar="PATH", help="also write the answer as an HTML page")
    ask.add_argument("--base-url", help="send requests here instead of the provider's API")

    demo = commands.add_parser("demo", help="offline: sample answers, frames, charts in one page")
    demo.add_argument("--out", default="citekit-demo.html", help="the HTML file to write")
    demo.add_argument("--open", action="store_true", help="open the page in a browser")

    log = commands.add_parser("log", help="the local log of every answer")
    log_commands = log.add_subparsers(dest="log_command", required=True, metavar="ACTION")
    _log_filters(log_commands.add_parser("list", help="list logged calls"), 20)
    show = log_commands.add_parser("show", help="print one logged answer")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true", help="print the raw answer JSON")
    export = log_commands.add_parser("export", help="write logged sources (.bib .json .csv ...)")
    export.add_argument("path")
    export.add_argument("--rows", action="store_true", help="write the log rows instead")
    _log_filters(export, None)
    log_commands.add_parser("path", help="print where the log file is")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    out = sys.stdout
    try:
        if args.command == "ask":
            return _ask(args, out)
        if args.command == "demo":
            return run_demo(Path(args.out), open_browser=args.open, out=out)
        return _log(args, out)
    except (UsageError, ConfigurationError) as exc:
        print(f"citekit: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"citekit: error: {exc}", file=sys.stderr)
        return 2
    except CitekitError as exc:
        print(f"citekit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"citekit: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ncitekit: interrupted", file=sys.stderr)
        return 130
