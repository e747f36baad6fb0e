"""Answers and their sources as files.

``exports`` writes one answer (``.md``, ``.html``, ``.json``) or many answers' sources
(``.csv``, ``.parquet``, ``.bib``, ``.json``); ``bibliography`` makes the BibTeX and CSL-JSON
entries, one per work; ``dataset`` writes and scans the Parquet dataset.
"""
