"""How the ``citekit`` command reads its command line, and how it words what went wrong for
someone at a shell: a parser that suggests the option or name meant (``--provder``: did you
mean ``--provider``?), provider names read case-blind, a question from stdin, and messages
that name the environment variable rather than a Python argument.

>>> from citekit.cli.args import provider_name
>>> provider_name("Magisterium")
'magisterium'
>>> provider_name("magistrium")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: unknown provider 'magistrium'; ... (did you mean magisterium?)
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from typing import NoReturn, TextIO

from ..core.names import ENTRIES, PROVIDERS, ProviderName, did_you_mean, unknown_provider

__all__ = ["CliParser", "provider_name", "read_question", "shell_words"]


def provider_name(text: str) -> ProviderName:
    """``--provider``'s value: a provider's name in any case; an unknown name is refused with
    the closest known one."""
    folded = text.strip().lower()
    for name in PROVIDERS:
        if name == folded:
            return name
    message = str(unknown_provider(text)) + did_you_mean(text, PROVIDERS)
    raise argparse.ArgumentTypeError(message)


_UNRECOGNIZED = re.compile(r"^unrecognized arguments: (.*)$", re.DOTALL)
_INVALID_CHOICE = re.compile(r"invalid choice: '(.*?)' \(choose from (.*)\)$", re.DOTALL)


def _option_strings(parser: argparse.ArgumentParser) -> Iterator[str]:
    """Every option of ``parser`` and of its commands, their commands' too."""
    for action in parser._actions:
        yield from action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _option_strings(sub)


class CliParser(argparse.ArgumentParser):
    """argparse's parser with a suggestion after an unknown option or command (``--provder``
    -> ``--provider``); usage errors still exit with status 2."""

    def error(self, message: str) -> NoReturn:
        unknown = _UNRECOGNIZED.match(message)
        if unknown:
            options = sorted(set(_option_strings(self)))
            for word in unknown.group(1).split():
                if word.startswith("-"):
                    hint = did_you_mean(word.split("=", 1)[0], options)
                    if hint:
                        message = f"{message}{hint}"
                        break
        choice = _INVALID_CHOICE.search(message)
        if choice:
            known = [c.strip().strip("'") for c in choice.group(2).split(",")]
            message += did_you_mean(choice.group(1), known)
        super().error(message)


def read_question(question: str | None, stdin: TextIO | None = None) -> str:
    """The question of ``citekit ask``: as given, or read from stdin for ``-`` or when none
    is given and stdin is a pipe. A ``ValueError`` says what to do when there is none."""
    source = stdin if stdin is not None else sys.stdin
    if question is None or question == "-":
        isatty = getattr(source, "isatty", None)
        if question is None and (source is None or (callable(isatty) and isatty())):
            raise ValueError(
                'ask: give the question, quoted (citekit ask "What is grace?"), '
                "or pipe it in (echo 'What is grace?' | citekit ask -)"
            )
        question = source.read() if source is not None else ""
    if not question.strip():
        raise ValueError("ask: the question is empty; write it after `ask`, or pipe it in")
    return question.strip()


_PASS_API_KEY = re.compile(r"(\b[A-Z]+_API_KEY\b)( or pass api_key=| or the api_key= you passed)")


def shell_words(message: str) -> str:
    """A message of the library worded for the command line: a key is set in its environment
    variable or with ``citekit keys set``, never passed as ``api_key=``.

    >>> from citekit.cli.args import shell_words
    >>> shell_words("No API key for Maritaca: set MARITACA_API_KEY or pass api_key=")
    'No API key for Maritaca: set MARITACA_API_KEY or run `citekit keys set maritaca`'
    """

    def reword(match: re.Match[str]) -> str:
        env = match.group(1)
        name = next((e.name for e in ENTRIES if e.api_key_env == env), None)
        if name is None:
            return env
        verb = " or run" if "pass" in match.group(2) else ", or the one stored with"
        return f"{env}{verb} `citekit keys set {name}`"

    return _PASS_API_KEY.sub(reword, message)
