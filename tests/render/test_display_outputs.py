"""The display's outputs stay byte for byte what they were when the fast routes were measured.

``display_outputs.json`` holds, for every answer in ``sample_data/`` and for texts generated
from a fixed seed (markers ``[^N]``, ``[N]``, ``$[N]$``, links, headings, lists, code, tables,
HTML-like text), a SHA-256 digest of each output: the bundle's ``text/plain``,
``text/markdown`` and ``text/html``, the strict HTML, and the final bundle of the notebook live
display fed the text in pieces (ids' per-render tokens written ``TOKEN``). The digests were
written by the code before the display's speed-ups; an intended change of an output rewrites
them with ``python -m tests.render.test_display_outputs --write`` and says so in its commit.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

from citekit.model import Answer, Citation
from citekit.render import NotebookLiveAnswer, answer_bundle, answer_html
from tests.conftest import sample_answers

DIGESTS = Path(__file__).with_name("display_outputs.json")

_PIECES = [
    "Work has dignity",
    " and value",
    "[^1]",
    "[2]",
    "$[3]$",
    "[^1][^2]",
    "[9]",
    "*em*",
    "**strong**",
    "*",
    "_u_",
    " ",
    "\n",
    "\n\n",
    "## ",
    "# Title\n\n",
    "- item [1]\n",
    "1. first\n",
    "> quoted [^2]\n",
    "    indented\n",
    "```\ncode [1] <b>\n```\n",
    "`span [2] <i>`",
    "| a | b |\n|---|---|\n| 1 [^1] | 2 |\n",
    "[link [1]](https://example.org/a)",
    "[x](javascript:alert(1))",
    "![img](https://example.org/i.png)",
    "<https://example.org/[2]>",
    "[ref]: https://example.org\n",
    "[^1]: a definition line\n",
    "[^7]: a loose note\n",
    "&amp; &#x; <b>x</b> {: onclick=1} \\*",
    '"quoted" (aside), — «x»',
    "é 漢字",
    "\t",
    "\r\n",
]


def _citations() -> tuple[Citation, ...]:
    return tuple(
        Citation(
            cited_text=f"Passage {i} *quoted* <b>{i}</b>.",
            document_index=i,
            document_title=f"Document {i}",
            document_author="Author" if i % 2 else None,
            document_reference=str(i + 1),
            source_url=f"https://example.org/doc/{i}",
        )
        for i in range(4)
    )


def _generated(count: int = 200, seed: int = 27) -> list[tuple[str, Answer]]:
    rng = random.Random(seed)
    citations = _citations()
    out = []
    for i in range(count):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 40)))
        answer = Answer(
            provider="magisterium",
            model="m",
            text=text,
            citations=citations,
            question="Why?" if i % 3 else None,
        )
        out.append((f"generated/{i}", answer))
    return out


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


class _Display:
    def __init__(self) -> None:
        self.shown: list[dict[str, str]] = []

    def __call__(self, obj: dict[str, str], **kw: Any) -> _Display:
        self.shown.append(obj)
        return self

    def update(self, obj: dict[str, str], **kw: Any) -> None:
        self.shown.append(obj)


def _digest(text: str) -> str:
    text = re.sub(r"ck[0-9a-f]{10}", "TOKEN", text)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _live_final(answer: Answer, rng: random.Random) -> dict[str, str]:
    display = _Display()
    live = NotebookLiveAnswer("magisterium", None, display=display, clock=_Clock(), interval=0.0)
    text, pos = answer.text, 0
    while pos < len(text):
        step = rng.randint(1, 400)
        live.add(text[pos : pos + step])
        pos += step
    live.finish(answer)
    return display.shown[-1]


def outputs() -> dict[str, dict[str, str]]:
    """Every case's digests, by output."""
    rng = random.Random(5)
    out: dict[str, dict[str, str]] = {}
    for name, answer in sample_answers() + _generated():
        digests = {mime: _digest(value) for mime, value in answer_bundle(answer).items()}
        digests["strict html"] = _digest(answer_html(answer, strict=True))
        for mime, value in _live_final(answer, rng).items():
            digests[f"live {mime}"] = _digest(value)
        out[name] = digests
    return out


def test_every_output_is_byte_for_byte_the_recorded_one() -> None:
    recorded = json.loads(DIGESTS.read_text(encoding="utf-8"))
    now = outputs()
    assert len(now) > 200  # the samples were found
    assert set(now) == set(recorded)
    changed = [
        f"{name}: {kind}"
        for name, digests in now.items()
        for kind, digest in digests.items()
        if recorded[name].get(kind) != digest
    ]
    assert not changed, changed[:20]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    DIGESTS.write_text(json.dumps(outputs(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
