"""Where ``citekit.data.io.dataset`` was: ``Log.to_parquet`` (``citekit.store.answer_log``)
still imports it from here. Remove once that import reads ``citekit.data.io.dataset``."""

from __future__ import annotations

from .io.dataset import ParquetDataset, log_to_parquet

__all__ = ["ParquetDataset", "log_to_parquet"]
