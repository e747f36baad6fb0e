"""``citekit keys``: store an API key so no variable needs exporting.

::

    citekit keys set magisterium       # asks for the key (hidden), or reads it from a pipe
    citekit keys list                  # which providers have a key, and where from; never the key
    citekit keys remove magisterium

The keys live in ``citekit.core.keys.keys_path()`` (mode 0600); a key in the provider's
environment variable wins over the stored one.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any, TextIO

from ..core.keys import forget_key, keys_path, set_key, stored_keys
from ..core.names import ENTRIES, PROVIDERS, get_provider
from ..core.secrets import check_key
from .args import provider_name

__all__ = ["add_keys_commands", "run_keys"]


def add_keys_commands(commands: Any) -> None:
    """The ``keys`` command and its actions, on the command line's ``commands``."""
    keys = commands.add_parser("keys", help="store API keys (no variables to export)")
    actions = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    store = actions.add_parser("set", help="store a provider's key (asked for, or from a pipe)")
    store.add_argument("provider", type=provider_name, choices=PROVIDERS, help="whose key")
    listing = actions.add_parser("list", help="which providers have a key (never the key)")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    remove = actions.add_parser("remove", help="forget a provider's stored key")
    remove.add_argument("provider", type=provider_name, choices=PROVIDERS, help="whose key")


def _read_key(display: str, stdin: TextIO) -> str:
    isatty = getattr(stdin, "isatty", None)
    if callable(isatty) and isatty():
        return getpass.getpass(f"Paste the {display} API key (not shown): ")
    return stdin.readline()


def run_keys(args: argparse.Namespace, out: TextIO) -> int:
    if args.keys_command == "set":
        entry = get_provider(args.provider)
        key = _read_key(entry.display_name, sys.stdin)
        if not key.strip():
            raise ValueError(
                f"keys set {entry.name}: no key given; paste it when asked, or pipe it in "
                f"(citekit keys set {entry.name} < key.txt)"
            )
        key = check_key(key, provider=entry.display_name, env=entry.api_key_env)
        path = set_key(entry.name, key)
        out.write(f"Stored the {entry.display_name} key in {path}\n")
        if os.environ.get(entry.api_key_env, "").strip():
            out.write(f"({entry.api_key_env} is set too, and is the one used while it is.)\n")
        return 0
    if args.keys_command == "remove":
        entry = get_provider(args.provider)
        removed = forget_key(entry.name)
        out.write(
            f"Removed the stored {entry.display_name} key from {keys_path()}\n"
            if removed
            else f"No {entry.display_name} key is stored in {keys_path()}\n"
        )
        return 0
    stored = stored_keys()
    rows = []
    for entry in ENTRIES:
        if os.environ.get(entry.api_key_env, "").strip():
            where = f"environment ({entry.api_key_env})"
        elif entry.name in stored:
            where = f"stored ({keys_path()})"
        else:
            where = None
        rows.append({"provider": entry.name, "set": where is not None, "from": where})
    if args.json:
        out.write(json.dumps(rows, indent=2) + "\n")
        return 0
    for row in rows:
        shown = row["from"] or "not set: citekit keys set " + str(row["provider"])
        out.write(f"{row['provider']:<12} {shown}\n")
    return 0
