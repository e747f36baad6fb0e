"""API keys stored for the user (``citekit keys set PROVIDER``): one JSON file in the user's
config folder, readable by the user alone (mode 0600), read after the environment: a key in
``MAGISTERIUM_API_KEY`` wins over the stored one.

The file is ``$CITEKIT_HOME/keys.json`` when ``CITEKIT_HOME`` is set, else ``keys.json`` in
the platform's config folder (``~/.config/citekit`` on Linux). A stored key is a secret like a
key in the environment: scrubbed from every error, log row and output.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from .names import get_provider

__all__ = ["forget_key", "keys_path", "set_key", "stored_key", "stored_keys"]

HOME_ENV = "CITEKIT_HOME"
FILE_NAME = "keys.json"
_cache: dict[Path, tuple[tuple[int, int], dict[str, str]]] = {}


def keys_path() -> Path:
    """Where stored keys live (the file may not exist yet).

    Read at each use (every record of an answer among them), so a change of the variables it
    depends on takes effect at once; the path of each setting is made once.
    """
    home = os.environ.get(HOME_ENV)
    if home and not home.startswith("~"):
        setting: tuple[str | None, ...] = (home,)
    else:  # the user's home folder decides
        setting = (home, *(os.environ.get(name) for name in _HOME_VARIABLES))
    path = _PATHS.get(setting)
    if path is None:
        path = _PATHS[setting] = _keys_path(home)
    return path


#: What ``Path.home()`` and the platform's configuration folder are read from.
_HOME_VARIABLES = ("HOME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "XDG_CONFIG_HOME", "APPDATA")
#: Each setting's path (a few per process).
_PATHS: dict[tuple[str | None, ...], Path] = {}


def _keys_path(home: str | None) -> Path:
    if home:
        return Path(home).expanduser() / FILE_NAME
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "citekit" / FILE_NAME


def stored_keys() -> dict[str, str]:
    """The stored keys by provider name (none when the file is missing or unreadable)."""
    path = keys_path()
    try:
        info = path.stat()
    except OSError:
        return {}
    stamp = (info.st_mtime_ns, info.st_size)
    cached = _cache.get(path)
    if cached is not None and cached[0] == stamp:
        return dict(cached[1])
    try:
        data: Any = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        data = {}
    keys = (
        {k: v for k, v in data.items() if isinstance(v, str) and v.strip()}
        if isinstance(data, dict)
        else {}
    )
    _cache[path] = (stamp, keys)
    return dict(keys)


def stored_key(provider: str) -> str | None:
    """The stored key of ``provider``, or ``None``."""
    return stored_keys().get(provider)


def _write(keys: dict[str, str]) -> Path:
    from .files import replacing

    path = keys_path()
    with replacing(path) as temporary:
        os.chmod(temporary, 0o600)  # before the key is in it
        temporary.write_text(json.dumps(keys, indent=2, sort_keys=True) + "\n", "utf-8")
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)
    return path


def set_key(provider: str, key: str) -> Path:
    """Store ``key`` for ``provider``; returns the file. Check it first as a client does
    (``citekit.core.secrets.check_key``): a client refuses a key it cannot send."""
    entry = get_provider(provider)
    keys = stored_keys()
    keys[entry.name] = key.strip()
    return _write(keys)


def forget_key(provider: str) -> bool:
    """Remove ``provider``'s stored key; whether there was one."""
    entry = get_provider(provider)
    keys = stored_keys()
    if keys.pop(entry.name, None) is None:
        return False
    _write(keys)
    return True
