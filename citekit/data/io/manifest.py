"""What makes a folder a citekit dataset: its manifest, and the claim a writer holds on it.

``to_parquet`` writes ``citekit-dataset.json`` last, as the commit of a dataset: it names every
Parquet file of the dataset (its table, provider, month, rows and bytes) and what wrote them.
A folder is a dataset only when it carries one; overwriting removes only the files it names
(checked to be the files citekit wrote: where they belong, of the size written), never a file
beside them. Scans read exactly the files it names.

While a dataset is written its folder is claimed (an exclusive ``flock`` on the folder, let go
by the kernel when the writer ends, however it ends): a second writer is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Final
from urllib.parse import quote

from ...core.files import write_text

__all__ = [
    "MANIFEST",
    "Part",
    "claim",
    "part_path",
    "read_manifest",
    "remove_parts",
    "write_manifest",
]

#: The manifest's file name, in the dataset's folder.
MANIFEST: Final = "citekit-dataset.json"
_FORMAT: Final = "citekit-parquet-dataset"
_VERSION: Final = 1
_TABLES: Final = ("answers", "citations", "references", "sources")
_MONTH: Final = re.compile(r"(?:\d{4}-\d{2}|undated)")
_NAME: Final = re.compile(r"part-[0-9a-f]{8,32}\.parquet")


@dataclass(frozen=True, slots=True)
class Part:
    """One Parquet file of a dataset: where it is (relative, ``/``-separated) and what it holds."""

    path: str
    table: str
    provider: str
    month: str
    rows: int
    bytes: int


def part_path(table: str, provider: str, month: str, token: str) -> str:
    """Where a part lives: Hive folder names, escaping what a path cannot hold as Hive and
    Spark do (``%2F``)."""
    return f"{table}/provider={quote(provider, safe='')}/month={month}/part-{token}.parquet"


def _valid(part: Part) -> bool:
    """A part where citekit writes one, never outside its table: a manifest edited by hand
    cannot point overwriting at any other file."""
    if part.table not in _TABLES or not _MONTH.fullmatch(part.month):
        return False
    parts = PurePosixPath(part.path).parts
    folders = (part.table, f"provider={quote(part.provider, safe='')}", f"month={part.month}")
    return len(parts) == 4 and parts[:3] == folders and _NAME.fullmatch(parts[3]) is not None


def _part(entry: Any) -> Part:
    if not isinstance(entry, dict):
        raise ValueError("a part that is not an object")
    texts = [entry.get(name) for name in ("path", "table", "provider", "month")]
    counts = [entry.get(name) for name in ("rows", "bytes")]
    if not all(isinstance(t, str) for t in texts) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts
    ):
        raise ValueError(f"a part of the wrong types: {entry!r:.200}")
    part = Part(*texts, *counts)  # type: ignore[arg-type]  # checked just above
    if not _valid(part):
        raise ValueError(f"a part outside the dataset's tables: {part.path!r:.200}")
    return part


def read_manifest(folder: Path) -> list[Part] | None:
    """The parts the manifest in ``folder`` names; ``None`` when there is no manifest.

    Raises
    ------
    ValueError
        When there is a manifest citekit cannot read (saying which and what to do).
    """
    path = folder / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"cannot read {path} ({exc}): move it away or choose another folder"
        ) from None
    try:
        body = json.loads(text)
        if not isinstance(body, dict) or body.get("format") != _FORMAT:
            raise ValueError("not a citekit dataset manifest")
        if body.get("version") != _VERSION:
            raise ValueError(f"version {body.get('version')!r}, this citekit reads {_VERSION}")
        entries = body.get("parts")
        if not isinstance(entries, list):
            raise ValueError("no list of parts")
        return [_part(entry) for entry in entries]
    except ValueError as exc:  # json.JSONDecodeError is one
        raise ValueError(
            f"{path} is not a manifest this citekit can read ({exc}): write the dataset to "
            "another folder, or move the folder away"
        ) from None


def write_manifest(folder: Path, parts: list[Part], rows: dict[str, int]) -> None:
    """Write the manifest, whole or not at all: the moment the dataset becomes this one."""
    from ... import __version__

    body = {
        "format": _FORMAT,
        "version": _VERSION,
        "written_by": f"citekit {__version__} (ck.to_parquet)",
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rows": rows,
        "parts": [asdict(part) for part in parts],
    }
    write_text(folder / MANIFEST, json.dumps(body, ensure_ascii=False, indent=1) + "\n")


def remove_parts(folder: Path, parts: list[Part]) -> None:
    """Remove the files of ``parts`` that are still the ones citekit wrote (a regular file, not
    a link, of the size written), then the partition folders left empty."""
    for part in parts:
        if not _valid(part):
            continue
        path = folder / part.path
        try:
            info = path.lstat()
        except OSError:
            continue
        if not path.is_symlink() and path.is_file() and info.st_size == part.bytes:
            with contextlib.suppress(OSError):
                path.unlink()
        for above in (path.parent, path.parent.parent):  # month=, provider=; never the table
            try:
                above.rmdir()  # only when empty: a file of the user's keeps it
            except OSError:
                break


@contextlib.contextmanager
def claim(folder: Path) -> Iterator[None]:
    """Hold ``folder`` for one writer; a second one is refused with ``FileExistsError``."""
    try:
        import fcntl
    except ImportError:  # no flock on this system: one writer is the caller's to ensure
        yield
        return
    handle = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FileExistsError(
                f"{folder} is being written by another process (ck.to_parquet or citekit log "
                "export --parquet): wait for it to end, or choose another folder"
            ) from None
        yield
    finally:
        os.close(handle)  # lets the lock go
