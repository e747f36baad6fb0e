"""Keeping API keys out of everything citekit shows or saves: the one scrubber.

A server may echo the key it was sent: in an error message, a header (``x-request-id``), a
stream event, a citation's title. ``scrub`` takes it out of text in every form such an echo
plausibly takes (as sent; JSON-escaped, once or twice; URL-encoded, with either hex case;
HTML-escaped; as a Python ``repr`` shows it), so one call serves error messages, log columns,
exported files and terminal output. ``scrub_value`` does the same through JSON values and
citekit's own values (an ``Answer`` and its citations), ``scrub_error`` through an exception
and the exceptions it was raised from.

A key shorter than ``WHOLE_TOKEN_BELOW`` characters cannot be told apart from text (``"k"``
is in every other word), so it is replaced only where it stands as a whole token (``Bearer
k``, ``"k"``, ``key=k``); longer keys are replaced wherever they appear, in any letter case.

``check_key`` refuses, when a client is made, a key that could not be sent as it is: a
non-ASCII character (a pasted zero-width space) or a control character (a newline), naming
its position and kind, never the key.

>>> from citekit.core.secrets import scrub
>>> scrub('{"error": "bad key sk-abc123def456", "echo": "sk-abc123def456"}', ["sk-abc123def456"])
'{"error": "bad key ***", "echo": "***"}'
>>> scrub("token=sk%2Fabc123def456", ["sk/abc123def456"])
'token=***'
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus

from .errors import ConfigurationError, ProviderError, StreamInterrupted
from .names import ENTRIES

__all__ = [
    "KEY_ENVS",
    "MASK",
    "WHOLE_TOKEN_BELOW",
    "Scrubbed",
    "Scrubber",
    "TextScrub",
    "check_key",
    "echo_forms",
    "environment_keys",
    "scrub",
    "scrub_error",
    "scrub_value",
    "scrubber",
]

T = TypeVar("T")

#: What a secret is replaced with.
MASK = "***"
#: Keys shorter than this are replaced only as whole tokens.
WHOLE_TOKEN_BELOW = 8
#: Environment variables whose values are secrets wherever they appear.
KEY_ENVS = tuple(entry.api_key_env for entry in ENTRIES)
#: Characters that continue a token: a short key inside a longer word is not that key.
_TOKEN_CHARS = r"A-Za-z0-9_\-"


def environment_keys() -> tuple[str, ...]:
    """The keys set in the providers' environment variables (``KEY_ENVS``), as clients read them,
    and the keys stored with ``citekit keys set`` (``citekit.core.keys``)."""
    from .keys import stored_keys

    values = [os.environ.get(name, "").strip() for name in KEY_ENVS]
    values += [key.strip() for key in stored_keys().values()]
    return tuple(dict.fromkeys(v for v in values if v))


def echo_forms(secret: str) -> tuple[str, ...]:
    """``secret`` as a server's echo may spell it, longest first.

    Each form a transport or a serializer gives it (a JSON string as Python, PHP and Go write
    it, or with every character ``\\uXXXX``-escaped; a URL component; HTML text; a Python
    ``repr``), and each of those passed through one more (a JSON error message quoted in a
    JSON body, a URL-encoded value in a JSON string). Letter case is matched loosely apart.
    """
    once = {secret, *(encode(secret) for encode in _ENCODERS)}
    forms = set(once)
    for form in once:
        forms.update(encode(form) for encode in _SECOND)
    forms.discard("")
    return tuple(sorted(forms, key=lambda f: (-len(f), f)))


def _repr_body(text: str) -> str:
    """``text`` as it stands between the quotes of its ``repr``, in either quote style."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _json_body(text: str) -> str:
    return json.dumps(text)[1:-1]


def _escaped(text: str) -> str:
    """``text`` as ``json.dumps(..., ensure_ascii=False)`` writes it inside a string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _go_json(text: str) -> str:
    """Go's ``json.Marshal``: ``<``, ``>`` and ``&`` as ``\\u003c`` ..., for HTML pages."""
    body = _json_body(text)
    return body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_ENCODERS = (
    _json_body,
    _escaped,
    lambda s: _json_body(s).replace("/", "\\/"),  # PHP's json_encode
    _go_json,
    lambda s: "".join(f"\\u{ord(c):04x}" for c in s) if s.isascii() else s,
    lambda s: quote(s, safe=""),
    quote,
    lambda s: quote_plus(s, safe=""),
    html.escape,
    lambda s: html.escape(s, quote=False),
    _repr_body,
)
_SECOND = (_json_body, _repr_body, lambda s: quote(s, safe=""), html.escape)


class Scrubber:
    """Replaces a fixed set of secrets (in every echo form) with ``MASK``."""

    __slots__ = (
        "_dumped",
        "_dumped_anchors",
        "_dumped_found",
        "_exact",
        "_folded",
        "_folded_forms",
        "_forms",
        "_found_anchors",
        "_found_forms",
        "_gate",
        "_pattern",
        "_singles",
        "gate",
        "has_whole",
        "longest",
        "secrets",
    )

    def __init__(self, secrets: Iterable[str]) -> None:
        #: The secrets it replaces: what a value it scrubbed is marked clean of (``Scrubbed``).
        self.secrets = frozenset(s for s in secrets if s)
        alternatives: list[str] = []
        prefixes: list[tuple[str, bool]] = []
        for secret in dict.fromkeys(s for s in secrets if s):
            whole = len(secret) < WHOLE_TOKEN_BELOW
            for form in echo_forms(secret):
                if whole:
                    alternatives.append(
                        f"(?<![{_TOKEN_CHARS}]){re.escape(form)}(?![{_TOKEN_CHARS}])"
                    )
                else:
                    alternatives.append(f"(?i:{re.escape(form)})")
                prefixes.append((form if whole else form.casefold(), whole))
        # Longest first, so the fullest spelling of an echo is the one replaced.
        alternatives.sort(key=len, reverse=True)
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None
        self._forms = tuple(f for f, whole in prefixes if whole)
        self._folded_forms = tuple(f for f, whole in prefixes if not whole)
        # For ``_may_hold``: the folded forms with re's two other i's made "i", as the text is.
        self._found_forms = tuple(_plain_i(f) for f in self._folded_forms)
        # For ``may_hold_any``: each form as it stands in a JSON dump of a string holding it.
        self._dumped = tuple(_escaped(f) for f in self._forms)
        self._dumped_found = tuple(_escaped(f) for f in self._found_forms)
        # What must be in a text, as it is, for a folded form to be in it folded.
        self._found_anchors = _anchors(self._found_forms)
        self._dumped_anchors = _anchors(self._dumped_found)
        # The first one and two characters of every form: most candidates fail on these.
        self._exact = frozenset(f[:n] for f in self._forms for n in (1, 2))
        self._folded = frozenset(f[:n] for f in self._folded_forms for n in (1, 2))
        #: Whether a key is matched as a whole token only (then context matters).
        self.has_whole = bool(self._forms)
        self._singles = frozenset(
            c for f, whole in prefixes if len(f) == 1 for c in ({f} if whole else _cases(f))
        )
        firsts = {c for form, whole in prefixes for c in ({form[0]} if whole else _cases(form[0]))}
        # Where a form may start: a character class, scanned in C.
        gate = "".join(sorted(re.escape(c) for c in firsts))
        self._gate = re.compile(f"[{gate}]") if gate else None
        # The quick test of a delta: text holds no secret and ends in no beginning of one
        # unless it has a form's first two characters, or ends in a form's first character.
        pairs = {f[:2] for f, whole in prefixes if whole} | self._singles
        folded_pairs = {f[:2] for f, whole in prefixes if not whole}
        alternatives = [re.escape(p) for p in sorted(pairs)]
        alternatives += [f"(?i:{re.escape(p)})" for p in sorted(folded_pairs)]
        if gate:
            alternatives.append(f"[{gate}]\\Z")
        #: Truthy when text may hold or end in the beginning of a secret (None when it cannot).
        self.gate: Callable[[str], object] = (
            re.compile("|".join(alternatives)).search if alternatives else _none
        )
        #: The length of the longest form: how much text could still be the start of one.
        self.longest = max((len(f) for f, _ in prefixes), default=0)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``MASK``."""
        if self._pattern is None or not self.gate(text):
            return text
        if len(text) > 256 and not self._may_hold(text):
            return text
        return self._pattern.sub(MASK, text)

    def _may_hold(self, text: str) -> bool:
        """Whether a form is in ``text``, by substring searches (C speed, where the full
        pattern tries every alternative at every position): false only when no form is.

        The case-insensitive forms are looked for in the case-folded text, where the two
        letters ``re`` also takes for ``i`` (U+0130, U+0131) are made ``i``.
        """
        if any(form in text for form in self._forms):
            return True
        if not self._found_forms:
            return False
        anchors = self._found_anchors
        if anchors is not None and not any(anchor in text for anchor in anchors):
            return False
        folded = _plain_i(text.casefold())
        return any(form in folded for form in self._found_forms)

    def may_hold_any(self, value: Any) -> bool:
        """Whether a form may be in a string of ``value`` (any value ``scrub_value`` walks),
        looked for in one JSON dump of it: false only when no string the walk would scrub
        holds one, so a value that is clean (nearly every one) costs a dump and a few
        substring searches, not a walk.

        JSON escapes a string character by character, so a form in a string stands in the
        dump as the form escaped; letter case folds the same way in and out of escapes.
        """
        try:
            text = json.dumps(value, ensure_ascii=False, default=_walked_parts)
        except (TypeError, ValueError, RecursionError):
            return True  # what JSON cannot write (a tuple key, a cycle, deep nesting): walk it
        if any(form in text for form in self._dumped):
            return True
        if not self._dumped_found:
            return False
        anchors = self._dumped_anchors
        if anchors is not None and not any(anchor in text for anchor in anchors):
            return False
        folded = _plain_i(text.casefold())
        return any(form in folded for form in self._dumped_found)

    def held(self, text: str) -> int:
        """Where the end of ``text`` may begin a secret that the next text would complete:
        the index of the earliest such start, ``len(text)`` when none can."""
        size = len(text)
        if self._gate is None:
            return size
        exact, folded = self._exact, self._folded
        for match in self._gate.finditer(text, max(0, size - self.longest + 1)):
            at = match.start()
            pair = text[at : at + 2]  # most starts fail by their second character: test it first
            if (pair in exact or pair.casefold() in folded) and self._begins(text[at:]):
                return at
        return size

    def emit(self, text: str, start: int, end: int) -> tuple[str, int]:
        """``text[start:end]`` scrubbed, where ``text`` around it is context; and the end
        actually reached: a secret begun before ``end`` and complete in ``text`` is taken
        whole."""
        if self._pattern is None or not self._starts_in(text, start, end):
            return text[start:end], end
        if end - start > 256 and not self._may_hold(text):
            return text[start:end], end  # long text with no form in it (most): no pattern run
        pieces = []
        at = start
        for match in self._pattern.finditer(text, start):
            if match.start() >= end:
                break
            pieces.append(text[at : match.start()])
            pieces.append(MASK)
            at = match.end()
            end = max(end, at)
        pieces.append(text[at:end])
        return "".join(pieces), end

    def _starts_in(self, text: str, start: int, end: int) -> bool:
        """Whether a form may start in ``text[start:end]``: its first two characters are
        there (a quick test that spares the full pattern most text)."""
        if self._gate is None:
            return False
        exact, folded, singles = self._exact, self._folded, self._singles
        for match in self._gate.finditer(text, start, end):
            at = match.start()
            pair = text[at : at + 2]
            if pair in exact or pair.casefold() in folded or text[at] in singles:
                return True
        return False

    def _begins(self, tail: str) -> bool:
        folded = tail.casefold()
        return any(f.startswith(tail) for f in self._forms) or any(
            f.startswith(folded) for f in self._folded_forms
        )


def _walked_parts(value: Any) -> Any:
    """What ``_walk`` looks into of a value JSON cannot write, in ``_walk``'s order: a
    mapping's items (a dataclass that is also a mapping too), a dataclass's fields; None for
    what it leaves as it is (bytes, dates, sets)."""
    if isinstance(value, Mapping):
        return dict(value)
    fields = _init_fields(type(value))
    if fields is not None:
        return [getattr(value, name) for name in fields]
    return None


def _init_fields(kind: type) -> tuple[str, ...] | None:
    """The names of a dataclass's ``__init__`` fields (what ``_walk_fields`` walks); None for
    a class that is not a dataclass. Read once per class: an answer's dump meets a dozen."""
    if kind not in _FIELDS:
        _FIELDS[kind] = (
            tuple(f.name for f in dataclasses.fields(kind) if f.init)
            if dataclasses.is_dataclass(kind)
            else None
        )
    return _FIELDS[kind]


_FIELDS: dict[type, tuple[str, ...] | None] = {}


#: A run of characters that case folding neither changes nor makes out of another: ASCII
#: digits, punctuation and spaces (no character folds to one, and each folds to itself).
_UNFOLDED_RUN = re.compile(r"[\x00-\x40\x5b-\x60\x7b-\x7f]+")


def _anchors(folded_forms: Iterable[str]) -> tuple[str, ...] | None:
    """For each folded form, its longest run of ASCII non-letters: a text whose folded
    (``_plain_i(text.casefold())``) holds the form holds that run as it is, so a text holding
    none of the runs needs no folding to be known clean. None when a form has no such run
    (all letters, or letters and other scripts): then only folding tells."""
    anchors = []
    for form in folded_forms:
        runs = _UNFOLDED_RUN.findall(form)
        if not runs:
            return None
        anchors.append(max(runs, key=len))
    return tuple(dict.fromkeys(anchors))


def _plain_i(folded: str) -> str:
    """Case-folded text with the dotless i and the dotted capital I's fold made "i"."""
    if "\u0131" in folded or "\u0307" in folded:
        return folded.replace("\u0131", "i").replace("i\u0307", "i")
    return folded


class TextScrub:
    """Scrubs text that arrives in pieces (a stream's deltas), per choice.

    What could be the start of a secret the next piece completes is held back until it is
    known not to be one (or has become ``***``); ``flush`` gives what is left at the end.
    """

    __slots__ = ("_before", "_clean", "_gate", "_held", "_whole")

    def __init__(self, clean: Scrubber) -> None:
        self._clean = clean
        self._gate = clean.gate
        self._whole = clean.has_whole
        self._held: dict[int, str] = {}
        #: The last character given out per choice: context for a whole-token match.
        self._before: dict[int, str] = {}

    def feed(self, text: str, choice: int = 0) -> str:
        """What of the text so far can be shown now, scrubbed."""
        held = self._held.pop(choice, "") if self._held else ""
        if not held and not self._gate(text):  # most deltas: nothing to look at (hot path)
            if self._whole and text:
                self._before[choice] = text[-1]
            return text
        clean = self._clean
        pending = held + text
        before = self._before.get(choice, "")
        full = before + pending
        start = len(before)
        out, end = clean.emit(full, start, start + clean.held(pending))
        if end < len(full):
            self._held[choice] = full[end:]
        if end > start:
            self._before[choice] = full[end - 1]
        # The text as it came, when that is what is shown: its deltas can be handed on as
        # they are (the guard tells a changed text by identity).
        return text if not held and out == text else out

    def flush(self) -> dict[int, str]:
        """What is still held, per choice, scrubbed: the text's end has come."""
        out = {}
        for choice, pending in self._held.items():
            before = self._before.get(choice, "")
            out[choice] = self._clean.emit(before + pending, len(before), len(before + pending))[0]
        self._held.clear()
        return out


class Scrubbed:
    """A value that remembers which secrets it was scrubbed of, so that none scrubs it again.

    The base of ``Answer``: ``scrub_value`` marks what it walked (where an answer enters
    citekit: the guard of a call, the log's write and the cache's read), and a later walk for
    the same secrets, or fewer, returns it at once (a cached answer served again costs no
    scrub). The mark is a private slot, not a field: it takes no part in equality, ``repr``
    or pickling, and ``dataclasses.replace`` or a copy starts unmarked (scrubbed anew).
    """

    __slots__ = ("_scrubbed_of",)


def _clean_of(value: Scrubbed, clean: Scrubber) -> bool:
    mark: Scrubber | None = getattr(value, "_scrubbed_of", None)
    return mark is not None and (mark is clean or clean.secrets <= mark.secrets)


def _mark(value: Scrubbed, clean: Scrubber) -> None:
    mark: Scrubber | None = getattr(value, "_scrubbed_of", None)
    if mark is not None and not mark.secrets <= clean.secrets:
        clean = scrubber(mark.secrets | clean.secrets)  # clean of both sets
    object.__setattr__(value, "_scrubbed_of", clean)


def _none(text: str) -> None:
    return None


def _cases(char: str) -> set[str]:
    return {char, char.lower(), char.upper(), char.casefold()}


@functools.lru_cache(maxsize=16)
def _cached(secrets: tuple[str, ...]) -> Scrubber:
    return Scrubber(secrets)


def scrubber(secrets: Iterable[str]) -> Scrubber:
    """The ``Scrubber`` for ``secrets`` (made once per distinct set)."""
    return _cached(tuple(sorted({s for s in secrets if s})))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret, in every echo form, replaced by ``***``."""
    return scrubber(secrets)(text)


def scrub_value(value: T, secrets: Iterable[str] | Scrubber) -> T:
    """``value`` with every secret taken out of every string in it: JSON values (keys of
    objects too), tuples, named tuples and dataclasses (an ``Answer`` with its citations,
    references and raw JSON). What holds no secret is returned as it is, not copied."""
    clean = secrets if isinstance(secrets, Scrubber) else scrubber(secrets)
    if not clean:
        return value
    if type(value) is not str and value is not None:
        if isinstance(value, Scrubbed) and _clean_of(value, clean):
            return value
        if not clean.may_hold_any(value):  # clean: nothing to walk (nearly every answer)
            if isinstance(value, Scrubbed):
                _mark(value, clean)
            return value
    walked: T = _walk(value, clean)
    return walked


def _walk(value: Any, clean: Scrubber) -> Any:
    kind = type(value)
    if kind is str:
        return clean(value)
    if value is None or kind in (int, float, bool, bytes):
        return value
    if kind is dict or kind is list:
        return _walk_json(value, clean)
    if isinstance(value, Mapping):
        items = [(_walk(k, clean), _walk(v, clean)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        walked = [_walk(v, clean) for v in value]
        if all(w is v for w, v in zip(walked, value, strict=True)):
            return value
        if isinstance(value, list):
            return walked
        return kind(*walked) if hasattr(value, "_fields") else kind(walked)
    if isinstance(value, Scrubbed):
        if _clean_of(value, clean):
            return value
        walked = _walk_fields(value, clean)
        _mark(walked, clean)
        return walked
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _walk_fields(value, clean)
    if isinstance(value, str):  # a str subclass
        return clean(str(value))
    return value


def _walk_fields(value: Any, clean: Scrubber) -> Any:
    """A dataclass with its fields walked: the same object when none changed."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if f.init:
                old = getattr(value, f.name)
                new = _walk(old, clean)
                if new is not old:
                    changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


class _Frame:
    """One dict or list being walked by ``_walk_json``: what it holds, what was built."""

    __slots__ = ("built", "changed", "entries", "key", "node")

    def __init__(self, node: dict[Any, Any] | list[Any], key: Any, *, renamed: bool) -> None:
        self.node = node
        self.key = key  # its key in the parent (scrubbed), None for a list item
        self.changed = renamed  # its key was scrubbed: the parent is rebuilt
        self.entries: Iterator[tuple[Any, Any]] = iter(
            node.items() if type(node) is dict else ((None, v) for v in node)
        )
        self.built: list[tuple[Any, Any]] = []


def _walk_json(root: dict[Any, Any] | list[Any], clean: Scrubber) -> Any:
    """``_walk`` of nested dicts and lists without recursion: a JSON value parsed from a
    server may be nested as deep as ``json.loads`` allows, deeper than a recursive walk can
    go from inside a call."""
    stack = [_Frame(root, None, renamed=False)]
    while True:
        frame = stack[-1]
        for key, child in frame.entries:
            new_key = clean(key) if type(key) is str else key
            if type(child) is dict or type(child) is list:
                stack.append(_Frame(child, new_key, renamed=new_key is not key))
                break
            new = _walk(child, clean)
            frame.changed |= new is not child or new_key is not key
            frame.built.append((new_key, new))
        else:
            stack.pop()
            node = frame.node
            if frame.changed:
                node = dict(frame.built) if type(node) is dict else [v for _, v in frame.built]
            if not stack:
                return node
            parent = stack[-1]
            parent.changed |= node is not frame.node
            parent.built.append((frame.key, node))


def scrub_error(error: BaseException, secrets: Iterable[str] | Scrubber) -> BaseException:
    """``error`` (changed in place, and returned) with the secrets out of its message, its
    fields, a partial answer it carries, and every exception in its ``__cause__`` /
    ``__context__`` chain, which a traceback prints too."""
    clean = secrets if isinstance(secrets, Scrubber) else scrubber(secrets)
    if not clean:
        return error
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        _scrub_one(current, clean)
        current = current.__cause__ or current.__context__
    return error


def _scrub_one(error: BaseException, clean: Scrubber) -> None:
    if isinstance(error, ProviderError):
        error.message = clean(error.message)
        if error.hint:
            error.hint = clean(error.hint)
        if error.request_id:
            error.request_id = clean(error.request_id)
        if isinstance(error.code, str):
            error.code = clean(error.code)
        error.args = (error._describe(),)
    else:
        error.args = tuple(_walk(a, clean) for a in error.args)
    # A broken stream's partial answer, and the one Ctrl-C or a cancellation carries.
    if isinstance(error, StreamInterrupted) or getattr(error, "answer", None) is not None:
        error.answer = _walk(error.answer, clean)  # type: ignore[attr-defined]
    notes = getattr(error, "__notes__", None)
    if isinstance(notes, list):
        notes[:] = [clean(n) if isinstance(n, str) else n for n in notes]


_KINDS = {"Cc": "a control character", "Cf": "an invisible formatting character"}


def check_key(key: str, *, provider: str, env: str) -> str:
    """``key`` without surrounding whitespace, if it can be sent as it is.

    A key goes in an HTTP header, which carries ASCII only; a character outside printable
    ASCII there is a pasting accident (a zero-width space, a newline inside the key). The
    error names the character's kind and position, never the key.

    >>> ck.Maritaca(api_key="sk-abc\\u200bdef")  # a zero-width space pasted with the key
    Traceback (most recent call last):
    ...
    citekit.core.errors.ConfigurationError: The Maritaca API key has an invisible formatting \
character (U+200B ZERO WIDTH SPACE) at position 7 of 10: API keys are printable ASCII. Copy the \
key again, or remove that character from MARITACA_API_KEY or the api_key= you passed
    """
    key = key.strip()
    for position, char in enumerate(key, 1):
        if " " < char <= "~":
            continue
        category = unicodedata.category(char)
        name = unicodedata.name(char, "")
        if char == " " or category.startswith("Z"):
            kind = "a space"
        elif category in _KINDS:
            kind = _KINDS[category]
        else:
            kind = "a non-ASCII character"
        what = f"U+{ord(char):04X}" + (f" {name}" if name else "")
        raise ConfigurationError(
            f"The {provider} API key has {kind} ({what}) at position {position} of {len(key)}: "
            "API keys are printable ASCII. Copy the key again, or remove that character from "
            f"{env} or the api_key= you passed"
        )
    return key
