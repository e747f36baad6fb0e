"""Write the log files of ``tests/store/test_migrations.py`` with the citekit of an old commit.

Each ``<layout>.sql`` is a log written by the citekit of one commit (its clients asking its own
loopback server: one Magisterium, one Maritaca and one GPTBots answer, a streamed Magisterium
answer, and a call the server failed), dumped as SQL text with its ``user_version``; beside it,
``<layout>.json`` holds what those clients returned (provider, question, text, partial,
citations, references): what a user saw. Run from the repository, with git::

    python tests/store/old_logs/make.py 8dc3e8d v1_first

The layouts, and the commits that wrote them (every layout the log ever had):

* ``v1_first`` (8dc3e8d, the first log; its clients did not log yet: the calls are recorded
  as ``ask_many`` recorded them), ``v1_last`` (04ce321): schema 1, the sources' old names;
* ``v2`` (4a22cd4): schema 2, the sources' columns named as in ``citekit.core.columns``;
* ``v3_first`` (a2ecf57): schema 3 as first written (compressed JSON, ``created_us``,
  ``tools_json``, ``cited_inline``); ``v3_citation_keys`` (3abd8c7) and
  ``v3_citation_patches`` (d0bec33): with ``citation_keys``; ``v3`` (8b6c23f): with
  ``text_elided`` and ``reference_keys``;
* ``v4`` (a8a5203): schema 4, the ``log_text`` full-text search table
  (FTS5) and its trigger, the layout of today.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[2]

#: Runs inside the old checkout: asks, records, dumps.
WRITE = r"""
import importlib, json, os, re, sqlite3, sys
from pathlib import Path

out, home = Path(sys.argv[1]), Path(sys.argv[2])
import citekit as ck
from citekit.testing import serve

CIT = ("marker", "cited_text", "document_index", "cited_text_heading", "document_title",
       "document_author", "document_year", "document_reference", "source_url")
REF = ("content", "rank", "data_id", "data_name", "source_url", "score")


def view(a):
    refs = a.references
    refs = None if refs is None else [{f: getattr(r, f, None) for f in REF} for r in refs]
    return {"provider": a.provider, "question": a.question, "text": a.text, "partial": a.partial,
            "citations": [{f: getattr(c, f, None) for f in CIT} for c in a.citations],
            "references": refs}


answers = []
with serve() as srv:
    mg = ck.Magisterium(base_url=srv.base_url("magisterium"))
    mar = ck.Maritaca(base_url=srv.base_url("maritaca"))
    gb = ck.GPTBots(base_url=srv.base_url("gptbots"))
    for client, provider in ((mg, "magisterium"), (mar, "maritaca"), (gb, "gptbots")):
        answers.append(client.ask(srv.samples(provider)[0].question))
    answers.append(mg.ask(srv.samples("magisterium")[-1].question, stream=True, display=False))
    url = srv.base_url("magisterium", fault="status", status=500, times=100)
    try:
        ck.Magisterium(base_url=url, max_retries=0).ask("A question the server fails")
    except ck.CitekitError:
        pass
log = getattr(ck, "log", None) or importlib.import_module("citekit.store").log
if not log.count():  # its clients did not log yet: recorded as ask_many recorded them
    for a in answers:
        body = {"model": a.model, "messages": [{"role": "user", "content": a.question}]}
        log.record(a, request=body, base_url="http://127.0.0.1/x", elapsed=0.25)
    failed = {"messages": [{"role": "user", "content": "A question the server fails"}]}
    error = ck.ServerError("boom", provider="magisterium", status=500)
    log.record(None, provider="magisterium", request=failed, error=error)
log.close()
with sqlite3.connect(home / "log.sqlite3") as conn:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    # iterdump writes a virtual table (the FTS5 search table) as rows of sqlite_master and
    # inserts into it before it exists: it is written as its CREATE and its rows instead.
    virtual = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'"
    ).fetchall()
    names = tuple(name for name, _ in virtual)
    shadow = re.compile("^(INSERT INTO \"?|CREATE TABLE '?)(%s)" % "|".join(names or ["-"]))
    statements = [
        s for s in conn.iterdump()
        if not shadow.match(s) and "writable_schema" not in s
        and not (s.startswith("INSERT INTO sqlite_master") and any(f"'{n}'" in s for n in names))
    ]
    for name, sql in virtual:
        columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')]
        rows = conn.execute(f'SELECT rowid, * FROM "{name}"').fetchall()
        statements.insert(-1, f"{sql};")
        for row in rows:
            values = ", ".join(
                "NULL" if v is None else str(v) if isinstance(v, int)
                else "'" + str(v).replace("'", "''") + "'"
                for v in row
            )
            into = f'INSERT INTO "{name}" (rowid, {", ".join(columns)})'
            statements.insert(-1, f"{into} VALUES({values});")
    dump = "\n".join(statements)
out.write_text(f"PRAGMA user_version = {version};\n{dump}\n")
views = json.dumps([view(a) for a in answers], ensure_ascii=False, indent=1)
out.with_suffix(".json").write_text(views + "\n")
"""


def make(commit: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        old, home = Path(tmp) / "old", Path(tmp) / "home"
        old.mkdir()
        home.mkdir()
        archive = subprocess.run(
            ["git", "archive", commit, "citekit", "sample_data"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(old), "CITEKIT_HOME": str(home)}
        for provider in ("MAGISTERIUM", "MARITACA", "GPTBOTS"):
            env[f"{provider}_API_KEY"] = "test-key-0123456789"
        if not (old / "sample_data" / "magisterium").is_dir():
            # The first log came before the samples: those of the next commit (f2e3a5d).
            data = Path(tmp) / "data"
            data.mkdir()
            samples = subprocess.run(
                ["git", "archive", "f2e3a5d", "sample_data"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(data)], input=samples, check=True)
            env["CITEKIT_SAMPLE_DATA"] = str(data / "sample_data")
        subprocess.run(
            [sys.executable, "-W", "ignore", "-c", WRITE, str(HERE / f"{name}.sql"), str(home)],
            cwd=tmp,
            env=env,
            check=True,
        )


if __name__ == "__main__":
    make(sys.argv[1], sys.argv[2])
