"""Where ``citekit.data.io.exports`` was: ``Answer.export`` (``citekit.core.models``) still
imports it from here. Remove once that import reads ``citekit.data.io.exports``."""

from __future__ import annotations

from .io.exports import export_answer

__all__ = ["export_answer"]
