"""The recorded-format samples the server answers from: locating, loading, choosing one.

The layout is the one ``sample_data/README.md`` describes: ``<provider>/NN_slug.json`` holds a
question and the provider's reply, and the optional sibling ``NN_slug.sse`` holds the same
reply as the raw ``text/event-stream`` body. GPTBots samples also have ``NN_slug.jsonl``: the
same stream framed as bare JSON lines, as GPTBots sends it.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "PROVIDERS",
    "SAMPLE_DATA_ENV",
    "ProviderName",
    "Sample",
    "SampleSet",
    "choose_sample",
    "default_data_dir",
    "find_by_message_id",
    "last_user_text",
]

ProviderName = Literal["magisterium", "maritaca", "gptbots"]
PROVIDERS: tuple[ProviderName, ...] = ("magisterium", "maritaca", "gptbots")

#: Environment variable naming a sample directory to use instead of the bundled one.
SAMPLE_DATA_ENV = "CITEKIT_SAMPLE_DATA"

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, eq=False)
class Sample:
    """One recorded-format answer.

    ``response`` is the non-streaming reply body: the ``chat.completion`` for Magisterium and
    Maritaca, the blocking ``message`` body for GPTBots. ``data`` is the whole ``.json`` file.
    """

    provider: ProviderName
    name: str
    path: Path
    question: str
    response: dict[str, Any] = field(repr=False)
    request: dict[str, Any] | None = field(default=None, repr=False)
    sse: bytes | None = field(default=None, repr=False)
    #: GPTBots only: the stream as bare JSON lines (the sibling ``.jsonl`` file).
    lines: bytes | None = field(default=None, repr=False)
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def sse_path(self) -> Path | None:
        """The ``.sse`` file next to the ``.json`` one, when there is one."""
        candidate = self.path.with_suffix(".sse")
        return candidate if candidate.is_file() else None

    @property
    def label(self) -> str:
        """The ``citekit_sample`` value: ``"<provider>/<file stem>"`` unless the file says else."""
        value = self.response.get("citekit_sample")
        return value if isinstance(value, str) else f"{self.provider}/{self.name}"

    @property
    def correlate(self) -> dict[str, Any] | None:
        """GPTBots only: the recorded ``GET /v1/correlate/dataset`` body."""
        value = self.data.get("correlate")
        return value if isinstance(value, dict) else None

    @property
    def conversation_id(self) -> str | None:
        """GPTBots only: the conversation id the sample was recorded in."""
        value = self.data.get("conversation_id", self.response.get("conversation_id"))
        return value if isinstance(value, str) else None

    @property
    def message_id(self) -> str | None:
        """GPTBots only: the agent reply's ``message_id``."""
        value = self.response.get("message_id")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class SampleSet:
    """Every sample found under one directory, by provider, in file-name order."""

    root: Path
    by_provider: Mapping[ProviderName, tuple[Sample, ...]]
    models: dict[str, Any] | None
    #: Files that could not be read as samples, with the reason (kept for debugging).
    skipped: tuple[tuple[Path, str], ...] = ()
    #: Magisterium ``POST /search`` samples (``magisterium/search_*.json``, whose ``query`` is
    #: the sample's ``question`` and whose ``search_response`` is its ``response``).
    searches: tuple[Sample, ...] = ()

    def __getitem__(self, provider: ProviderName) -> tuple[Sample, ...]:
        return self.by_provider.get(provider, ())

    @classmethod
    def load(cls, root: Path) -> SampleSet:
        """Read every ``<provider>/*.json`` sample under ``root``; a missing root gives none."""
        by_provider: dict[ProviderName, tuple[Sample, ...]] = {}
        skipped: list[tuple[Path, str]] = []
        searches: list[Sample] = []
        for provider in PROVIDERS:
            found: list[Sample] = []
            folder = root / provider
            paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
            for path in paths:
                if provider == "maritaca" and path.name == "models.json":
                    continue
                search = provider == "magisterium" and path.name.startswith("search_")
                try:
                    if search:
                        searches.append(_load_sample(provider, path, search=True))
                    else:
                        found.append(_load_sample(provider, path))
                except (OSError, ValueError, TypeError) as exc:
                    skipped.append((path, str(exc)))
            by_provider[provider] = tuple(found)
        models = _read_json(root / "maritaca" / "models.json")
        return cls(
            root,
            by_provider,
            models if isinstance(models, dict) else None,
            tuple(skipped),
            tuple(searches),
        )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _load_sample(provider: ProviderName, path: Path, *, search: bool = False) -> Sample:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise TypeError("the file does not hold a JSON object")
    question = data.get("query" if search else "question")
    if not isinstance(question, str):
        raise TypeError("no 'question' string (or 'query' for a search)")
    body_key = "search_response" if search else "message" if provider == "gptbots" else "response"
    response = data.get(body_key)
    if not isinstance(response, dict):
        raise TypeError("no reply body ('response', or 'message' for gptbots)")
    request = data.get("request")
    sse_path = path.with_suffix(".sse")
    sse = sse_path.read_bytes() if sse_path.is_file() else None
    lines_path = path.with_suffix(".jsonl")
    lines = lines_path.read_bytes() if lines_path.is_file() else None
    return Sample(
        provider=provider,
        name=path.stem,
        path=path,
        question=question,
        response=response,
        request=request if isinstance(request, dict) else None,
        sse=sse,
        lines=lines,
        data=data,
    )


def default_data_dir() -> Path:
    """Where the samples are: ``$CITEKIT_SAMPLE_DATA``, the installed copy, or the repository's.

    The wheel ships ``sample_data/`` as ``citekit/_sample_data``; a source checkout has it next
    to the ``citekit`` package.
    """
    env = os.environ.get(SAMPLE_DATA_ENV)
    if env:
        return Path(env).expanduser()
    package = Path(__file__).resolve().parent.parent
    installed = package / "_sample_data"
    if installed.is_dir():
        return installed
    return package.parent / "sample_data"


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        ]
        return "\n".join(parts)
    return ""


def last_user_text(messages: Any) -> str:
    """The text of the last ``user`` message (the last message of any role if none is a user's)."""
    if not isinstance(messages, list) or not messages:
        return ""
    dicts = [m for m in messages if isinstance(m, dict)]
    users = [m for m in dicts if m.get("role", "user") == "user"]
    chosen = users[-1] if users else (dicts[-1] if dicts else None)
    return _content_text(chosen.get("content")) if chosen else ""


def _words(text: str) -> frozenset[str]:
    """The words of ``text`` as stems: accents folded, cut to six letters, so that one
    question in two languages ("subsidiarity", "subsidiariedade"; "principle", "princípio")
    finds the sample recorded in the other."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return frozenset(w[:6] for w in _WORD.findall(plain))


def choose_sample(samples: Sequence[Sample], text: str) -> Sample | None:
    """The sample whose question is ``text`` (ignoring case and spacing), else the closest one.

    Closest means most words in common, then the highest share of common words; remaining ties
    go to the first file in name order, so the choice never depends on timing.
    """
    if not samples:
        return None
    wanted = _normalise(text)
    for sample in samples:
        if _normalise(sample.question) == wanted:
            return sample
    words = _words(text)
    best = samples[0]
    best_score = (-1, -1.0)
    for sample in samples:
        theirs = _words(sample.question)
        common = len(words & theirs)
        union = len(words | theirs) or 1
        score = (common, common / union)
        if score > best_score:
            best, best_score = sample, score
    return best


def find_by_message_id(samples: Iterable[Sample], message_id: str) -> Sample | None:
    """The GPTBots sample whose reply (or correlate ``answer_id``) has this id."""
    for sample in samples:
        correlate = sample.correlate or {}
        if message_id in (sample.message_id, correlate.get("answer_id")):
            return sample
    return None
