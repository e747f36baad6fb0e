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
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from .errors import DiskFullError

__all__ = ["DiskFullError", "replacing", "unwritable", "write_bytes", "write_text"]

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
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
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
