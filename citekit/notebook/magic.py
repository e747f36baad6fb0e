"""The ``%%ask`` cell magic and the ``%ask`` line magic, loaded with ``%load_ext citekit``::

    %%ask magisterium --out ans
    What does {document} say about subsidiarity?

    %ask What is the principle of subsidiarity?
    %ask mg --stream What is the common good?

The options come first: a provider (``magisterium``, ``maritaca``, ``gptbots``, or the name of
a client variable such as ``mg``), ``--stream``, ``--model M``, ``--out NAME``,
``--base-url URL`` and ``--offline`` (the recorded samples of a loopback server, started once
for the session: no key, no network); ``%%ask --help`` prints them. ``%ask --error`` explains
the last failure of a call (``citekit.last_error``). ``{name}`` in the
question is replaced by the value of ``name`` in the notebook (``{{`` and ``}}`` for literal
braces). The answer is displayed and kept in ``_`` (and in ``NAME``). A line ending in ``?``
is a question, not IPython's help request.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import string
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from ..core.errors import ConfigurationError
from ..core.names import (
    DEFAULT_PROVIDER,
    ENTRIES,
    PROVIDERS,
    check_model_choice,
    did_you_mean,
    find_provider,
)
from ..model import Answer

__all__ = ["interpolate", "load_ipython_extension"]

PROVIDER_ENV = "CITEKIT_PROVIDER"
_clients: dict[tuple[str, str | None, str | None], Any] = {}
#: Who takes --model: "Magisterium, Maritaca".
_MODEL_CHOOSERS = ", ".join(e.display_name for e in ENTRIES if e.chooses_model)


class _MagicUsage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            known = [o for action in self._actions for o in action.option_strings]
            word = message.split()[2].split("=")[0]
            message += did_you_mean(word, known) + "; the options come before the question"
        raise _MagicUsage(f"%%ask: {message}\n{self.format_usage().strip()}")


def _parser() -> _Parser:
    parser = _Parser(
        prog="%%ask",
        add_help=False,
        description="Ask the question written below %%ask (or after %ask on its line); "
        "{name} in it is replaced by the notebook's variable name.",
    )
    parser.add_argument(
        "provider",
        nargs="?",
        default=None,
        help=f"{', '.join(PROVIDERS)}, or a client variable such as mg "
        f"(default: ${PROVIDER_ENV}, else {DEFAULT_PROVIDER})",
    )
    parser.add_argument("--stream", action="store_true", help="show the answer as it arrives")
    parser.add_argument("--model", help=f"the model ({_MODEL_CHOOSERS})")
    parser.add_argument("--out", metavar="NAME", help="also keep the answer in this variable")
    parser.add_argument("--base-url", help="send requests here instead of the provider's API")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="answer from recorded samples (a loopback server for the session; no key)",
    )
    parser.add_argument(
        "--error",
        action="store_true",
        help="explain the last failure of a call (citekit.last_error): its type, the "
        "provider, the HTTP status, the message, what to do",
    )
    parser.add_argument("-h", "--help", action="store_true", help="print this help")
    return parser


#: A word that is meant as an option: ``--x``, ``-x`` (not ``-`` or ``-5``).
_OPTION_LIKE = re.compile(r"-[A-Za-z-]")
#: Options of the line that take no value.
_FLAGS = ("-h", "--help", "--stream", "--offline", "--error")
#: Options of the line that take a value.
_VALUED = ("--model", "--out", "--base-url")


def split_line(line: str, namespace: Mapping[str, Any]) -> tuple[list[str], str]:
    """``%ask``'s line as its options and its question: the options are the leading words that
    start with ``-`` (with the value of those that take one; an unknown one is kept, for the
    parser to refuse) and a first word that names a provider or a client variable, or that
    options follow (``mg --out ans``: the name of a client, refused when there is none); the
    rest, as written, is the question.

    >>> from citekit.notebook.magic import split_line
    >>> split_line("mg --stream What's the common good?", {"mg": ck.Magisterium()})
    (['mg', '--stream'], "What's the common good?")
    >>> split_line("What is subsidiarity?", {})
    ([], 'What is subsidiarity?')
    >>> split_line("mg --outt ans What is it?", {})
    (['mg', '--outt'], 'ans What is it?')
    """
    options: list[str] = []
    rest = line.strip()
    named = False
    while rest:
        word, _, after = rest.partition(" ")
        if word in _FLAGS or word.split("=")[0] in _VALUED:
            options.append(word)
            if word in _VALUED:
                value, _, after = after.strip().partition(" ")
                options.append(value)
        elif _OPTION_LIKE.match(word):  # an option misspelt is refused, never asked
            options.append(word)
        elif not named and (
            word in PROVIDERS
            or callable(getattr(namespace.get(word), "ask", None))
            or (word.isidentifier() and _OPTION_LIKE.match(after.strip()))
        ):
            options.append(word)
            named = True
        else:
            break
        rest = after.strip()
    return options, rest


class _NamespaceFormatter(string.Formatter):
    """``str.format`` over the notebook's names: ``{x}``, ``{x.attr}``, ``{x[0]}``, ``{x:>5}``."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = namespace

    def get_value(self, key: int | str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        if isinstance(key, int):
            raise _MagicUsage(
                "%%ask: '{}' needs a variable name inside; write {{ and }} for literal braces"
            )
        if key not in self.namespace:
            raise _MagicUsage(
                f"%%ask: {{{key}}} names no variable of the notebook; define {key} first, "
                "or write {{ and }} for literal braces"
            )
        return self.namespace[key]


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    """``text`` with each ``{name}`` replaced from ``namespace``.

    ``str.format`` rules apply: ``{{`` and ``}}`` are literal braces, and attributes, items
    and format specs work.

    >>> from citekit.notebook.magic import interpolate
    >>> encyclicals = ["Rerum novarum", "Laudato si'"]
    >>> interpolate("What does {doc[1]} say about {topic}?", {"doc": encyclicals, "topic": "water"})
    "What does Laudato si' say about water?"
    >>> interpolate("Why is {{1, 2}} a set?", {})
    'Why is {1, 2} a set?'
    """
    try:
        return _NamespaceFormatter(namespace).vformat(text, (), {})
    except (ValueError, AttributeError, IndexError, KeyError, TypeError) as exc:
        raise _MagicUsage(f"%%ask: cannot fill in the question: {exc}") from None


def _client_for(args: argparse.Namespace, namespace: Mapping[str, Any]) -> Any:
    name = args.provider or os.environ.get(PROVIDER_ENV) or DEFAULT_PROVIDER
    found = namespace.get(name)
    if args.offline and found is not None and isinstance(getattr(found, "name", None), str):
        name = found.name  # a fresh client of that provider, sent to the recorded samples
        found = None
    if found is not None and callable(getattr(found, "ask", None)):
        if args.model or args.base_url:
            raise _MagicUsage(f"%%ask: {name} is a client; set its model and base_url on it")
        return found
    from ..providers.registry import client

    if name not in PROVIDERS:
        raise _MagicUsage(
            f"%%ask: {name!r} is neither a provider ({', '.join(PROVIDERS)})"
            f"{did_you_mean(name, PROVIDERS)} nor a client variable of the notebook; "
            f"define it first ({name} = ck.Magisterium()) or name a provider"
        )
    base_url = args.base_url
    if args.offline:
        from ..providers.loopback import offline

        base_url = offline().base_url(name)
    key = (name, base_url, args.model)
    if key not in _clients:
        try:
            if args.model:
                check_model_choice(name, "--model")
            options = {"base_url": base_url}
            if args.model:
                options["model"] = args.model
            _clients[key] = client(name, **options)
        except (ValueError, ConfigurationError) as exc:
            raise _MagicUsage(f"%%ask: {exc}") from None
    return _clients[key]


def _ask(client: Any, question: str, *, stream: bool, model: str | None) -> Answer:
    options: dict[str, Any] = {}
    entry = find_provider(getattr(client, "name", None))
    if model and (entry is None or entry.chooses_model):
        options["model"] = model
    if stream:
        answer: Answer = client.ask(question, stream=True, display=True, **options)
    else:
        answer = client.ask(question, display=False, **options)
    return answer


def ask_cell(shell: Any, line: str, cell: str) -> Any:
    """What ``%%ask`` does with its ``line`` and ``cell`` in ``shell``.

    ``shell`` is IPython's shell; only its ``user_ns`` (the notebook's variables) is used, so
    the magic can be run without a kernel:

    >>> from types import SimpleNamespace
    >>> from citekit.notebook.magic import ask_cell
    >>> shell = SimpleNamespace(user_ns={"mg": ck.Magisterium(), "topic": "subsidiarity"})
    >>> ans = ask_cell(shell, "mg --out ans", "What is the principle of {topic}?")
    >>> ans.question, shell.user_ns["ans"] is ans
    ('What is the principle of subsidiarity?', True)
    >>> ask_cell(shell, "mg", "What is the principle of {topc}?")
    Traceback (most recent call last):
    ...
    IPython.core.error.UsageError: %%ask: {topc} names no variable of the notebook; define topc
    first, or write {{ and }} for literal braces
    """
    from IPython.core.error import UsageError

    namespace: dict[str, Any] = shell.user_ns
    try:
        try:
            words = shlex.split(line)
        except ValueError as exc:  # an unbalanced quote
            raise _MagicUsage(f"%%ask: cannot read the options {line!r}: {exc}") from None
        parser = _parser()
        args = parser.parse_args(words)
        if args.help:
            print(parser.format_help())
            return None
        if args.error:
            return _last_error()
        if args.out is not None and not args.out.isidentifier():
            raise _MagicUsage(f"%%ask: --out {args.out!r} is not a valid variable name")
        question = interpolate(cell, namespace).strip()
        if not question:
            raise _MagicUsage("%%ask: the cell is empty; write the question below %%ask")
        client = _client_for(args, namespace)
    except _MagicUsage as exc:
        raise UsageError(str(exc)) from None
    try:
        answer = _ask(client, question, stream=args.stream, model=args.model)
    except Exception as exc:
        from ..providers.failure import remember_error

        remember_error(exc)  # also what failed before a request was sent
        exc.add_note("%ask --error explains this failure (citekit.last_error)")
        raise
    if args.out:
        namespace[args.out] = answer
    if args.stream:
        namespace["_"] = answer  # already on screen: no second display through Out[]
        return None
    return answer


def _last_error() -> Any:
    """``%ask --error``: the last failure explained (displayed by the cell), or a line saying
    there was none."""
    from ..providers.failure import last_error

    failure = last_error()
    if failure is None:
        print("No call has failed in this session.")
    return failure


def ask_line(shell: Any, line: str) -> Any:
    """What ``%ask`` does with its line: the options, then the question (``split_line``)."""
    options, question = split_line(line, shell.user_ns)
    return ask_cell(shell, shlex.join(options), question)


def _question_marks(lines: list[str]) -> list[str]:
    """IPython reads a line ending in ``?`` as a help request before any magic runs; a
    ``%ask`` line is rewritten into the call of the magic first, its text kept whole. A
    ``%%ask --help`` cell with nothing below is the help (IPython refuses an empty cell
    magic)."""
    head = lines[0].strip() if lines else ""
    asks_help = head.startswith("%%ask ") and {"-h", "--help"} & set(head.split())
    if asks_help and not "".join(lines[1:]).strip():  # IPython refuses an empty cell magic
        return [f"get_ipython().run_line_magic('ask', {head[len('%%ask ') :]!r})\n"]
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("%ask ") and line.rstrip().endswith("?"):
            indent = line[: len(line) - len(stripped)]
            text = stripped[len("%ask ") :].rstrip("\r\n")
            out.append(f"{indent}get_ipython().run_line_magic('ask', {text!r})\n")
        else:
            out.append(line)
    return out


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%ask`` and ``%ask`` (``%load_ext citekit``)."""

    def ask(line: str, cell: str | None = None) -> Any:
        if cell is None:
            return ask_line(ipython, line)
        return ask_cell(ipython, line, cell)

    ask.__doc__ = __doc__
    ipython.register_magic_function(ask, magic_kind="line_cell", magic_name="ask")
    cleanup = ipython.input_transformers_cleanup
    if _question_marks not in cleanup:
        cleanup.append(_question_marks)
