"""The notebooks the browser tests open, built with nbformat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

#: Cell indexes in the two-answers notebook.
FIRST, SECOND, RANKED, STREAMED, PROBE = 1, 2, 3, 4, 5

_SETUP = """\
from citekit.model import Answer, Citation, Reference, References

FILLER = "\\n\\n".join(
    f"Paragraph {i}: filler that pushes the source list below the fold." for i in range(1, 41)
)


def footnoted(tag):
    return Answer(
        provider="magisterium",
        model="magisterium-1",
        question=f"Question {tag}",
        text=f"## Answer {tag}\\n\\nA claim[^1] and a *second* claim[^2].\\n\\n" + FILLER,
        citations=(
            Citation(
                cited_text=f"First passage of answer {tag}.",
                document_index=0,
                document_title=f"First source {tag}",
                source_url=f"https://example.org/{tag}/1",
            ),
            Citation(
                cited_text=f"The cited passage of answer {tag}, document two.",
                document_index=1,
                document_title=f"Second source {tag}",
                document_author="Pius XI",
                document_year="1931",
                document_reference="79",
                cited_text_heading="Subsidiarity",
                source_url=f"https://example.org/{tag}/2",
            ),
        ),
        related_questions=("What is the common good?",),
    )


first, second = footnoted("A"), footnoted("B")
ranked = Answer(
    provider="gptbots",
    text="The answer text; the ranked sources follow.",
    references=References(
        items=(
            Reference(content="Most relevant chunk.", rank=1, data_name="guide.pdf", score=0.8),
            Reference(
                content="Second chunk.",
                rank=2,
                data_name="Web page",
                source_url="https://example.org/page",
                score=0.4,
            ),
        )
    ),
)
"""

_STREAMED = """\
import time
from citekit.render import LiveAnswer

live = LiveAnswer.start(provider="magisterium", question="Streamed question")
for word in first.text.split(" ")[:120]:
    live.add(word + " ")
    time.sleep(0.002)
live.finish(first)
"""

_PROBE = """\
from IPython.display import HTML

HTML('<span class="citekit-probe" data-probe="1">probe</span>')
"""


def _notebook(cells: list[str]) -> Any:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


def two_answers_notebook() -> Any:
    """Setup, two footnoted answers, a ranked GPTBots answer, a streamed one, a probe."""
    return _notebook([_SETUP, "first", "second", "ranked", _STREAMED, _PROBE])


PAYLOADS = [
    "<script>alert('XSS-1'); console.log('XSS-1')</script>",
    "<img src=x onerror=\"alert('XSS-2'); console.log('XSS-2')\">",
    '" onmouseover="console.log(\'XSS-3\')" x="',
    "' onfocus='console.log(`XSS-4`)' autofocus='",
    "<svg onload=\"console.log('XSS-5')\"></svg>",
    "</details></li></ol></div><script>console.log('XSS-6')</script>",
    "<a href=\"javascript:console.log('XSS-7')\">click</a>",
    "[click me](javascript:console.log('XSS-8'))",
    "<style>*{background:url(javascript:console.log('XSS-9'))}</style>",
    "<iframe src=\"javascript:console.log('XSS-10')\"></iframe>",
    "<details open ontoggle=\"console.log('XSS-11')\">",
    "<body onload=\"console.log('XSS-12')\">",
]
EVIL_URLS = [
    "javascript:console.log('XSS-URL-1')",
    " JaVaScRiPt:alert('XSS-URL-2')",
    "data:text/html,<script>console.log('XSS-URL-3')</script>",
    "https://example.org/\" onmouseover=\"console.log('XSS-URL-4')",
]

_EVIL = f"""\
from citekit.model import Answer, Citation, Reference, References, ToolCall

P = {PAYLOADS!r}
U = {EVIL_URLS!r}
text = "\\n\\n".join(f"{{p}} marker[^{{i % 3 + 1}}]" for i, p in enumerate(P))
evil = Answer(
    provider=P[0],
    model=P[1],
    question=P[2],
    text=text,
    citations=tuple(
        Citation(
            cited_text=P[i],
            document_index=i % 3,
            cited_text_heading=P[(i + 1) % len(P)],
            document_title=P[(i + 2) % len(P)],
            document_author=P[(i + 3) % len(P)],
            document_year=P[(i + 4) % len(P)],
            document_reference=P[(i + 5) % len(P)],
            source_url=U[i % len(U)],
        )
        for i in range(len(P))
    ),
    references=References(
        items=tuple(
            Reference(
                content=P[i],
                rank=i + 1,
                data_name=P[i - 1],
                data_id=P[i - 2],
                source_url=U[i % len(U)],
                score=0.5,
            )
            for i in range(4)
        ),
        note=P[5],
    ),
    related_questions=tuple(P),
    notes=tuple(P[:3]),
    tool_calls=(ToolCall(id=P[0], name=P[1], arguments=P[2]),),
    raw={{"citekit_sample": P[6]}},
)
"""

_STRICT = """\
from IPython.display import HTML

HTML(evil.to_html(strict=True))
"""

# A script that must run in a trusted output: proves the console listener would catch one.
_CONTROL = """\
from IPython.display import HTML

HTML("<script>console.log('CONTROL-' + 'SCRIPT-RAN')</script>")
"""


def payload_notebook() -> Any:
    """An answer with script and handler payloads in every field, its strict HTML, a control."""
    return _notebook([_EVIL, "evil", _STRICT, _CONTROL])


def write(nb: Any, path: Path) -> Path:
    nbformat.write(nb, str(path))
    return path


def execute(nb: Any, cwd: Path) -> Any:
    """Run ``nb`` with nbclient in the venv kernel (outputs are saved untrusted)."""
    from nbclient import NotebookClient

    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return nb
