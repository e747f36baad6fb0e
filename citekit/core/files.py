"""The one way citekit writes a file: beside the target, then renamed over it.

``replacing(path)`` gives a new file in the target's folder, on the same file system, made
with the mode the user's umask gives (or the mode of the file it replaces); once the body is
written and flushed to disk it is renamed over ``path`` in one step. A full disk, an error or
an interruption midway leaves the previous file whole and no part behind. A disk that fills
(``ENOSPC``, ``EDQUOT``, or ``EFBIG`` past a file size limit) is a ``DiskFullError`` saying so,
whichever writer (Python, polars) met it.

Every file citekit writes goes through here: exports, ``citekit log export --rows``, the
Parquet dataset's files and manifest, the chart runtime cache, saved provider files, the
demo page.

``safe_file_name`` makes a name from outside (a provider's file name) a file name that is safe
and visible: only the last part of the name is kept (it never writes outside the folder it is
saved in);
control, format and separator characters (``\\n``, ``\\t``, zero-width spaces, a non-breaking
space) become ``_``, as does a leading dot (a hidden file); spaces at either end are dropped;
a name left empty is ``fallback``. A name longer than the file system takes (255 bytes on
most) is shortened in its stem, its extension kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from .errors import DiskFullError

__all__ = [
    "NAME_BYTES",
    "DiskFullError",
    "replacing",
    "safe_file_name",
    "unwritable",
    "write_bytes",
    "write_text",
]

#: The errors that mean "no room to write": a full disk, a full quota, a file size limit.
_NO_ROOM: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
# polars (and other Rust writers) raise their I/O errors with the errno only in the text.
_RUST_ERRNO: Final = re.compile(r"\(os error (\d+)\)")


def no_room(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) says the disk or quota is full."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes, never a cycle
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in _NO_ROOM:
            return True
        if any(int(n) in _NO_ROOM for n in _RUST_ERRNO.findall(str(seen))):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def disk_full(path: Path, exc: BaseException) -> DiskFullError:
    """citekit's message for a write that found no room."""
    code = exc.errno if isinstance(exc, OSError) and exc.errno in _NO_ROOM else errno.ENOSPC
    return DiskFullError(
        code,
        f"No room to write {path} (the disk or quota is full, or a file size limit was met): "
        f"free some space or write elsewhere; {path} is as it was before",
    )


def _beside(target: Path) -> tuple[Path, int]:
    """A new, empty file next to ``target``: created by the kernel with the umask applied,
    so it gets the mode any new file of the user's gets (``mkstemp`` would make it 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        # The temporary name must fit the file system too: a target's name already at the
        # limit (``safe_file_name`` makes them so) is cut in the temporary's name only.
        token = secrets.token_hex(4)
        stem = _cut(target.name, NAME_BYTES - len(f"..{token}.part"))
        temporary = target.with_name(f".{stem}.{token}.part")
        try:
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue


def _naming(target: Path, exc: OSError) -> OSError:
    """``exc`` about ``target``, the path the caller named (not the temporary file beside it):
    ``[Errno 20] Not a directory: 'notes.txt/out.html'``."""
    named = OSError(exc.errno, exc.strerror or str(exc), str(target))
    if exc.errno in _NO_ROOM:
        return disk_full(target, exc)
    return named


def unwritable(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written (``"it is a folder"``), or ``None`` when it can as far
    as can be told before writing: checked before paying for the work that fills it."""
    target = Path(path)
    if target.is_dir():
        return "it is a folder"
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"no permission to write in {folder}"
    return None


def _full(temporary: Path) -> bool:
    """Whether the file that failed to be written can grow no more: some writers lose the
    errno (polars: "Invalid thrift: transport error"), so the disk is asked again."""
    try:
        with open(temporary, "ab") as probe:
            probe.write(bytes(1 << 16))
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        return exc.errno in _NO_ROOM
    return False


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` to write the whole file to; on leaving the block it
    replaces ``path`` (the folder made if missing). Raises ``DiskFullError`` when the disk
    fills; on any error ``path`` is left as it was and the temporary file removed."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary, handle = _beside(target)
    except OSError as exc:  # the file the user named, never the temporary one
        raise _naming(target, exc) from None
    try:
        with contextlib.suppress(OSError):  # replacing a file keeps its mode
            mode = stat.S_IMODE(os.stat(target).st_mode)
            os.fchmod(handle, mode)
        os.close(handle)
        try:
            yield temporary
            with open(temporary, "rb+") as written:  # on disk before it is the file
                os.fsync(written.fileno())
            os.replace(temporary, target)
        except Exception as exc:
            if no_room(exc) or _full(temporary):
                raise disk_full(target, exc) from exc
            if isinstance(exc, OSError) and temporary.name in str(exc):
                raise _naming(target, exc) from exc
            raise
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (see :func:`replacing`)."""
    target = Path(path)
    with replacing(target) as temporary, open(temporary, "wb") as out:
        out.write(data)
    return target


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` whole or not at all (see :func:`replacing`)."""
    return write_bytes(path, text.encode("utf-8"))


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
