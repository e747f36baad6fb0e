"""Pairwise precision, recall and F1 of citekit's work and author identity on the labelled
fixture (``tests/data/identity/identity_fixture.json``: 348 sources of 65 answers in 7
languages, from the three providers, each labelled by hand with its work and person).

A pair of sources counts when both have a gold label; precision is the share of pairs citekit
puts together that belong together, recall the share of pairs that belong together that it
finds. Printed for the whole fixture, for each provider, and without the Catechism (almost
half of the gold work pairs are Catechism pairs).

Run: ``.venv/bin/python bench/identity_quality.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.data.identity.scoring import load_fixture, quality  # noqa: E402


def main() -> int:
    fixture = load_fixture()
    print(
        f"fixture: {fixture.height} sources, {fixture['answer_id'].n_unique()} answers, "
        f"{fixture['language'].n_unique()} languages, {fixture['work'].n_unique()} works, "
        f"{fixture['person'].drop_nulls().n_unique()} persons"
    )
    print(f"{'part':<24}{'works P / R / F1':>26}{'authors P / R / F1':>28}")
    for name, (works, authors) in quality(fixture).items():
        w = f"{works.precision:.3f} / {works.recall:.3f} / {works.f1:.3f}"
        a = f"{authors.precision:.3f} / {authors.recall:.3f} / {authors.f1:.3f}"
        print(f"{name:<24}{w:>26}{a:>28}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
