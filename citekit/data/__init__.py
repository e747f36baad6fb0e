"""Answers as data: frames, identity, the corpus, Parquet and files, charts, comparisons.

Six packages, each importing only the ones below it (``pyproject.toml``'s import-linter
contract keeps the order):

``compare``
    several clients asked one question, side by side (``Comparison``, its HTML, ``compare``)
``charts``
    altair charts (``ck.charts``) over small tables aggregated in polars (``charts.tables``)
``io``
    files: one answer or many answers' sources exported (``exports``), BibTeX and CSL-JSON
    (``bibliography``), the Parquet dataset and its scans (``dataset``)
``corpus``
    every source of many answers with its work and author (``works``), citation health
    (``health``), co-citation (``cocitation``)
``identity``
    which sources are one work: address and title keys (``keys``), the alias table and its
    shipped ``aliases.json`` (``aliases``), the clustering (``clusters``)
``frames``
    the one reading route from a source to a frame: ``sources`` walks what the loaders take
    (answers, saved responses, files, folders, the log), ``columnar`` reads saved chat
    completions column-wise, ``log`` reads the answer log's tables with SQL, and ``loaders``
    builds ``citations_frame``, ``references_frame`` and ``answers_frame``

One citation, from a saved response to ``ck.charts.works``: ``charts.draw.works`` asks
``charts.tables.top_works``, which reads its source through ``charts.parts.identified``:
``frames.citations_frame`` (``frames.columnar.read_source`` walks the source with
``frames.sources`` and reads the saved body column-wise, ``frames.rows`` lays out its
citations), then ``identity.clusters.identify`` gives it a work, and
``corpus.works.works_frame`` counts the work; ``charts.draw`` encodes the table
(``charts.style``). Every step goes down a floor or stays on it.
"""
