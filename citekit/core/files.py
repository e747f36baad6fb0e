"""A name from outside (a provider's file name) as a file name that is safe and visible.

Only the last part of the name is kept (it never writes outside the folder it is saved in);
control, format and separator characters (``\\n``, ``\\t``, zero-width spaces, a non-breaking
space) become ``_``, as does a leading dot (a hidden file); spaces at either end are dropped;
a name left empty is ``fallback``. A name longer than the file system takes (255 bytes on
most) is shortened in its stem, its extension kept.
"""

from __future__ import annotations

import os
import unicodedata
from typing import Final

__all__ = ["NAME_BYTES", "safe_file_name"]

#: Bytes of a file name most file systems take (ext4, APFS, NTFS in UTF-16 units, tmpfs).
NAME_BYTES: Final = 255
#: The longest ending kept whole as an extension when a name is shortened (``.parquet``).
_SUFFIX_CHARS: Final = 16


def _visible(char: str) -> str:
    if char == " ":
        return char
    # C*: control, format (zero-width), surrogate, private, unassigned; Z*: separators.
    return "_" if unicodedata.category(char)[0] in "CZ" else char


def _size(text: str) -> int:
    return len(os.fsencode(text))


def _cut(text: str, limit: int) -> str:
    """The longest start of ``text`` that fits in ``limit`` bytes."""
    while text and _size(text) > limit:
        text = text[: max(len(text) - max((_size(text) - limit) // 4, 1), 0)]
    return text


def safe_file_name(name: str, *, fallback: str = "file", limit: int = NAME_BYTES) -> str:
    """``name`` as one visible file name of at most ``limit`` bytes (never empty)."""
    last = name.replace("\\", "/").rsplit("/", 1)[-1]
    shown = "".join(map(_visible, last)).strip(" ")
    if not shown.strip("."):  # "", ".", "..": no name at all
        shown = fallback
    if shown.startswith("."):
        shown = "_" + shown[1:]
    if _size(shown) <= limit:
        return shown
    stem, dot, suffix = shown.rpartition(".")
    if not dot or not stem or len(suffix) > _SUFFIX_CHARS:
        stem, suffix = shown, ""
    ending = f".{suffix}" if suffix else ""
    return (_cut(stem, limit - _size(ending)).rstrip(" ") or "_") + ending
