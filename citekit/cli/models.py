"""``citekit models``: the models each provider offers, the default marked.

A provider whose client lists its models (Maritaca's ``GET /models``) is asked; the others show
their default model, or why none can be chosen (GPTBots: the agent picks its model).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from ..core.errors import ConfigurationError
from ..core.names import ENTRIES, PROVIDERS, ProviderEntry
from .args import provider_name, shell_words

__all__ = ["add_models_command", "run_models"]


def add_models_command(commands: Any) -> None:
    models = commands.add_parser("models", help="the models of each provider (default marked)")
    models.add_argument(
        "--provider", type=provider_name, choices=PROVIDERS, help="only this provider's models"
    )
    models.add_argument("--json", action="store_true", help="print the list as JSON")
    models.add_argument("--base-url", help="send requests here instead of the provider's API")


def _rows(entry: ProviderEntry, args: argparse.Namespace, *, alone: bool) -> list[dict[str, Any]]:
    from ..providers.registry import client

    row: dict[str, Any] = {"provider": entry.name, "model": entry.default_model, "default": True}
    if not entry.chooses_model:
        return [{**row, "model": None, "note": entry.no_model_choice}]
    try:
        made = client(entry.name, base_url=args.base_url if alone else None)
    except ConfigurationError as exc:
        if alone:
            raise
        return [{**row, "note": f"to list the models the key can use: {shell_words(str(exc))}"}]
    lister = getattr(made, "models", None)
    if not callable(lister):
        return [{**row, "note": None}]
    ids = [model.id for model in lister()]
    return [
        {"provider": entry.name, "model": i, "default": i == entry.default_model, "note": None}
        for i in ids
    ]


def run_models(args: argparse.Namespace, out: TextIO) -> int:
    chosen = [e for e in ENTRIES if args.provider in (None, e.name)]
    rows = [row for entry in chosen for row in _rows(entry, args, alone=args.provider is not None)]
    if args.json:
        out.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return 0
    for row in rows:
        model = row["model"] or "-"
        mark = " (default)" if row["default"] and row["model"] else ""
        note = f"  {row['note']}" if row.get("note") else ""
        out.write(f"{row['provider']:<12} {model}{mark}{note}\n")
    return 0
