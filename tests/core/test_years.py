"""citekit.core.years: one year rule, as a Python function and as a polars expression."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit.core.years import YEAR_PATTERN, parse_year, parse_year_span, year_expr
from tests.budget import examples

# (text, year): every row is checked against parse_year and year_expr alike.
YEARS: list[tuple[str | None, int | None]] = [
    # plain years and ranges
    ("1993", 1993),
    (" 1993 ", 1993),
    ("397", 397),
    ("0397", 397),
    ("1891-1893", 1891),
    ("1891–1893", 1891),  # en dash
    ("1962-65", 1962),
    ("1931/32", 1931),
    ("593-594", 593),
    ("2015-05-24", 2015),
    ("24.05.2015", 2015),
    ("May 24, 2015", 2015),
    ("Rome, 1891.", 1891),
    ("Session 7, 1545", 1545),
    ("1990年", 1990),
    # approximations and decades
    ("c. 1270", 1270),
    ("ca.1270", 1270),
    ("circa 1270", 1270),
    ("um 1270", 1270),
    ("vers 1270", 1270),
    ("hacia 1270", 1270),
    ("1960s", 1960),
    ("1960's", 1960),
    ("1960er", 1960),
    # eras, in the samples' languages
    ("33 AD", 33),
    ("AD 33", 33),
    ("A.D. 1054", 1054),
    ("33 d.C.", 33),
    ("33 d. C.", 33),
    ("70 n. Chr.", 70),
    ("70 ap. J.-C.", 70),
    ("33", 33),
    ("500 BC", -500),
    ("500 B.C.", -500),
    ("500 BCE", -500),
    ("5BC", -5),
    ("BC 500", -500),
    ("500 a.C.", -500),
    ("500 a. C.", -500),
    ("44 a. de C.", -44),
    ("500 av. J.-C.", -500),
    ("500 avant Jésus-Christ", -500),
    ("500 v. Chr.", -500),
    ("44 vor Christus", -44),
    ("500\u00a0a.C.", -500),  # no-break space
    ("c. 500 BC", -500),
    ("500–400 BC", -500),
    ("44 BC – AD 14", -44),
    ("1990 CEO", 1990),  # "CE" inside a word is no era
    # no year
    ("19th century", None),
    ("2nd century BC", None),
    ("XIII secolo", None),
    ("s.f.", None),
    ("s. f.", None),
    ("n.d.", None),
    ("unknown", None),
    ("vol. 2", None),
    ("0", None),
    ("0 AD", None),
    ("0000", None),
    ("99999", None),
    ("12345678", None),
    ("١٩٩٠", None),  # Arabic-Indic digits are not read
    ("１９９０", None),  # nor full-width ones
    ("", None),
    ("   ", None),
    ("\n", None),
    (None, None),
]


@pytest.mark.parametrize(("text", "year"), YEARS)
def test_parse_year(text: str | None, year: int | None) -> None:
    assert parse_year(text) == year


def test_year_expr_reads_the_same_table() -> None:
    frame = pl.DataFrame({"y": [t for t, _ in YEARS]}, schema={"y": pl.String})
    got = frame.select(year=year_expr("y")).get_column("year")
    assert got.dtype == pl.Int32
    assert got.to_list() == [y for _, y in YEARS]
    assert frame.select(year=year_expr(pl.col("y")))["year"].to_list() == got.to_list()


def test_year_table_is_large_and_hostile() -> None:
    assert len(YEARS) >= 40
    texts = {t for t, _ in YEARS}
    assert {"", "   ", "0", "99999", "١٩٩٠", "1891–1893", "33 AD", "c. 1270", None} <= texts
    assert {"1960s", "s.f.", "n.d.", "19th century", "500 BC", "500 a.C."} <= texts


def test_the_frames_table_still_holds() -> None:
    # Every year the frames read before the one rule, read the same by it.
    old = [
        ("1993", 1993), ("1891-1893", 1891), ("1545–1563", 1545), ("c. 1270", 1270),
        ("ca.1270", 1270), ("1960s", 1960), ("397", 397), ("593-594", 593), ("33 AD", 33),
        ("AD 1054", 1054), ("400 BC", -400), ("May 24, 2015", 2015), ("2015-05-24", 2015),
        ("19th century", None), ("unknown", None), ("", None), (None, None),
    ]  # fmt: skip
    assert [parse_year(t) for t, _ in old] == [y for _, y in old]


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("1891", (1891, 1891)),
        ("1931-1932", (1931, 1932)),
        ("1962-65", (1962, 1965)),
        ("1891-3", (1891, 1893)),
        ("1545–1563", (1545, 1563)),
        ("2015-05-24", (2015, 2015)),  # a date, not a range
        ("1893-1891", (1893, 1893)),
        ("500–400 BC", (-500, -400)),
        ("150-45 BC", (-150, -45)),
        ("c. 1270", (1270, 1270)),
        ("33 AD", (33, 33)),
        ("n.d.", None),
        (None, None),
    ],
)
def test_parse_year_span(text: str | None, span: tuple[int, int] | None) -> None:
    assert parse_year_span(text) == span
    assert parse_year(text) == (None if span is None else span[0])


def test_importing_the_rule_does_not_import_polars() -> None:
    import os
    import subprocess
    import sys

    import citekit

    root = str(Path(citekit.__file__).resolve().parent.parent)  # this checkout's citekit
    env = {**os.environ, "PYTHONPATH": root}
    code = "import sys, citekit.core.years; print('polars' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "False"


def test_the_pattern_has_no_lookaround() -> None:
    # polars' Rust engine has no look-around; the rule must not need it.
    assert "(?=" not in YEAR_PATTERN and "(?!" not in YEAR_PATTERN
    assert "(?<=" not in YEAR_PATTERN and "(?<!" not in YEAR_PATTERN


_PIECES = [
    "1", "12", "123", "1891", "0", "99999", " ", "\u00a0", "-", "–", "/", "s", "'s", "er",
    "BC", "B.C.", "AD", "A.D.", "a.C.", "d.C.", "a. C.", "av. J.-C.", "v. Chr.", "n. Chr.",
    "CE", "BCE", "c.", "\n", "\r", "x", "é", "年", "ſ", "\u212a", "th", ".", ",", "١",
    "vor Christus", "avant Jésus-Christ", "\x00",
]  # fmt: skip
_year_texts = st.one_of(
    st.text(max_size=30),
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=10).map("".join),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.none(), _year_texts), min_size=1, max_size=30))
def test_scalar_and_polars_agree_on_any_text(texts: list[str | None]) -> None:
    frame = pl.DataFrame({"y": texts}, schema={"y": pl.String})
    assert frame.select(year=year_expr("y"))["year"].to_list() == [parse_year(t) for t in texts]


@pytest.mark.parametrize(
    ("text", "year", "key_year"),
    [
        ("33 AD", 33, "33"),
        ("500 a.C.", -500, "500bc"),
        ("c. 1270", 1270, "1270"),
        ("1962-1965", 1962, "1962"),
        ("19th century", None, "nd"),
        ("", None, "nd"),
    ],
)
def test_frames_bibtex_and_csl_read_one_year(
    text: str, year: int | None, key_year: str, tmp_path: Path
) -> None:
    import citekit as ck

    citation = ck.Citation(
        cited_text="x", document_index=0, document_title="Acta", document_author="Leo",
        document_year=text,
    )  # fmt: skip
    answer = ck.Answer(provider="magisterium", text="Said [1].", citations=(citation,))
    assert ck.citations_frame([answer])["year"].to_list() == [year]
    bib = ck.export_citations([answer], tmp_path / "refs.bib", include_samples=True).read_text(
        encoding="utf-8"
    )
    assert bib.startswith(f"@misc{{leo{key_year}acta,")
    csl = json.loads(
        ck.export_citations([answer], tmp_path / "refs.json", include_samples=True).read_text(
            "utf-8"
        )
    )
    issued = csl[0].get("issued", {}).get("date-parts")
    assert (issued[0][0] if issued else None) == year
