"""From any source to a frame: the readers and the three loaders.

A source (answers, saved responses, ``.json``/``.jsonl`` files and folders, the answer log) is
walked by ``sources``; saved chat completions are read column-wise by ``columnar`` (a JSON
Lines file's decoded with their types by ``typed``), the log's tables by ``log``; ``rows``
builds the rows of citations and knowledge chunks, and ``loaders`` turns them into
``citations_frame``, ``references_frame`` and ``answers_frame`` (documented there), of the
``schemas`` named there. Every package above reads its sources through these names.
"""

from __future__ import annotations

from .loaders import answers_frame, citations_frame, references_frame
from .schemas import ANSWERS_SCHEMA, CITATIONS_SCHEMA, REFERENCES_SCHEMA, source_schema
from .sources import Source, load_answers

__all__ = [
    "ANSWERS_SCHEMA",
    "CITATIONS_SCHEMA",
    "REFERENCES_SCHEMA",
    "Source",
    "answers_frame",
    "citations_frame",
    "load_answers",
    "references_frame",
    "source_schema",
]
