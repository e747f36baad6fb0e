"""Charts against hostile labels and a broken machine: what a provider's text can do to a chart
output, the explorer's chart and the Vega runtime's cache folder.

The labels' way into the browser is checked in tests/browser/test_hostile_charts.py.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit import charts
from citekit.notebook.explorer_html import chart_html
from citekit.render import chart as chart_output
from citekit.render import chart_runtime
from citekit.render.chart import chart_bundle, drawable
from tests.budget import examples
from tests.render.test_chart import frame, parts

ROOT = Path(__file__).resolve().parents[2]

# One of each kind of character XML 1.0 refuses, as a PDF title or a broken feed may hold them.
NOT_XML = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\ufffe", "\uffff"]
XML_CHAR = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


@pytest.mark.slow
def test_a_control_character_in_a_label_does_not_abort_the_kernel() -> None:
    # vl-convert aborts the process (a Rust panic that cannot unwind) on text XML refuses: run
    # in a child, so a regression fails this test instead of ending the test session.
    result = _python(
        f"""
        import sys
        sys.path.insert(0, "tests/render")
        from test_chart import frame
        from citekit import charts
        from citekit.render.chart import chart_bundle
        from citekit.notebook.explorer_html import chart_html
        names = {NOT_XML!r}
        for ch in names:
            chart = charts.authors(frame([f"Leo{{ch}}XIII", "Pius XI"]))
            bundle, _ = chart_bundle(chart.to_dict(), runtime=False)
            assert "image/png" in bundle, bundle
            static, vega = chart_html(chart)
            assert vega and "<svg" in static, static
        print("drawn", len(names))
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"drawn {len(NOT_XML)}"


@pytest.mark.slow
def test_a_chart_with_such_a_label_saves_as_a_file(tmp_path: Path) -> None:
    # chart.save() goes to vl-convert without citekit's renderer: the chart's rows carry no
    # character it would abort on (every chart made of source text: authors, works, co-citation).
    result = _python(
        f"""
        import sys
        sys.path.insert(0, "tests/render")
        from test_chart import frame
        from citekit import charts, cocitation_frame
        names = {NOT_XML!r}
        rows = frame([f"Leo{{ch}}XIII" for ch in names] + ["Pius XI"])
        rows = rows.with_columns(document_title=rows["document_author"], answer_id=None)
        for make in (charts.authors, charts.works, charts.documents):
            make(rows).save({str(tmp_path)!r} + "/" + make.__name__ + ".png")
        print("saved")
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "saved"
    assert len(list(tmp_path.glob("*.png"))) == 3


def _texts(value: Any) -> list[str]:
    """Every string in a JSON value, keys too."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_texts(v)]]
    return [s for item in value for s in _texts(item)] if isinstance(value, list) else []


@given(
    st.recursive(
        st.text() | st.integers() | st.floats() | st.none(),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids),
    )
)
def test_drawable_leaves_only_characters_xml_allows(value: Any) -> None:
    cleaned = drawable(value)
    assert all(XML_CHAR.fullmatch(text) for text in _texts(cleaned))
    if all(XML_CHAR.fullmatch(text) for text in _texts(value)):
        assert json.dumps(cleaned) == json.dumps(value)  # clean text is left alone


labels = (
    st.lists(
        st.text(st.characters(blacklist_categories=["Cs"]), max_size=6)
        | st.sampled_from(
            [
                "<img src=x onerror=alert(1)>",
                "</svg><script>alert(2)</script>",
                "]]><script>alert(3)</script>",
                '"><svg onload=alert(4)>',
                "<a href='javascript:alert(5)'>x</a>",
                "&lt;b&gt;",
                "<!--",
                "\x0b",
            ]
        ),
        min_size=1,
        max_size=4,
    )
    .map("".join)
    .filter(lambda s: s.strip())
)

# What vl-convert's SVG may hold: shapes, text and grouping; never a script, a link, an object
# or an event handler.
SVG_TAGS = {
    *("svg", "g", "path", "rect", "line", "text", "tspan", "title"),
    *("defs", "clipPath", "linearGradient", "radialGradient", "stop"),
}


def _elements(svg: str) -> list[ET.Element]:
    root = ET.fromstring(svg)  # well-formed XML: a browser shows it as an image
    return list(root.iter())


def _check_svg(svg: str) -> None:
    for element in _elements(svg):
        tag = element.tag.split("}", 1)[-1]
        assert tag in SVG_TAGS, tag
        for name in element.attrib:
            local = name.split("}", 1)[-1].lower()
            assert not local.startswith("on") and local != "href", name


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(labels, min_size=1, max_size=3))
def test_hostile_labels_stay_text_in_the_static_svg_and_the_explorer_chart(
    authors: list[str],
) -> None:
    chart = charts.authors(frame(authors))
    bundle, _ = chart_bundle(chart.to_dict(), runtime=False)
    found = parts(bundle["text/html"])
    assert [tag for tag, _ in found.tags] == ["div", "img", "script"]
    src = found.tags[1][1]["src"] or ""
    svg = base64.b64decode(src.split(",", 1)[1]).decode()
    _check_svg(svg)
    texts = "\n".join(e.text or "" for e in _elements(svg))
    labels_ = "\n".join(e.get("aria-label") or "" for e in _elements(svg))
    for author in authors:  # each label is there as text (its words, as the axis may cut it)
        for word in re.findall("[A-Za-z]{3,}", author)[:2]:
            assert word in texts or word in labels_
    # The explorer sets its chart's HTML with innerHTML: the same SVG inside a plain div.
    static, vega = chart_html(chart)
    assert vega
    assert static.startswith("<div style='overflow:auto'><svg") and static.endswith("</svg></div>")
    _check_svg(static.removeprefix("<div style='overflow:auto'>").removesuffix("</div>"))


@pytest.mark.slow
def test_a_huge_heatmap_keeps_its_static_image_small() -> None:
    import polars as pl

    from citekit.data.corpus.cocitation import cocitation_frame
    from citekit.data.frames import CITATIONS_SCHEMA

    pick = random.Random(13)
    rows = [
        {name: None for name in CITATIONS_SCHEMA.names()}
        | {"provider": "magisterium", "answer_id": f"a{a}", "document_title": f"Work {w} " * 4}
        for a in range(300)
        for w in pick.sample(range(90), 8)
    ]
    cits = pl.DataFrame(rows, schema=CITATIONS_SCHEMA)
    chart = charts.cocitation(cocitation_frame(cits), top=70)
    bundle, _ = chart_bundle(chart.to_dict(), runtime=False)
    (image,) = [a for t, a in parts(bundle["text/html"]).tags if t == "img"]
    src = image["src"] or ""
    # Thousands of cells make an SVG of megabytes: the output shows the PNG instead.
    assert src == "data:image/png;base64," + bundle["image/png"]
    assert len(bundle["text/html"]) < 3_000_000


# The Vega runtime's cache -------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder for the runtime, and no runtime remembered by this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    chart_runtime.runtime_js.cache_clear()
    yield tmp_path / "citekit"
    chart_runtime.runtime_js.cache_clear()


def _whole(packed: str) -> bool:
    code = gzip.decompress(base64.b64decode(packed)).decode()
    return "citekitCharts" in code and len(code) > 500_000


@pytest.mark.slow
def test_a_truncated_or_corrupt_cached_runtime_is_built_again(cache: Path) -> None:
    good = chart_runtime.runtime_js()
    (cached,) = cache.glob("chart-runtime-*.b64")
    assert cached.read_text() == good and _whole(good)
    raw = base64.b64decode(good)
    broken = {
        "truncated": good[: len(good) // 2],
        "cut at a gzip boundary": base64.b64encode(raw[:-8]).decode(),
        "a flipped byte": base64.b64encode(
            raw[:5000] + bytes([raw[5000] ^ 1]) + raw[5001:]
        ).decode(),
        "empty": "",
        "not base64": "<html>proxy error</html>",
        "someone else's gzip": base64.b64encode(gzip.compress(b"console.log(1)")).decode(),
    }
    for what, text in broken.items():
        cached.write_text(text)
        chart_runtime.runtime_js.cache_clear()
        assert chart_runtime.runtime_js() == good, what
        assert cached.read_text() == good, what  # the cache holds the whole runtime again
    assert list(cache.glob("*.part")) == []


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_a_damaged_runtime_never_unpacks_to_anything_but_itself(data: st.DataObject) -> None:
    packed = _packed_runtime()
    raw = bytearray(base64.b64decode(packed))
    cut = data.draw(st.integers(0, len(raw)))
    flips = data.draw(st.lists(st.integers(0, len(raw) - 1), max_size=3))
    for i in flips:
        raw[i] ^= data.draw(st.integers(1, 255))
    damaged = base64.b64encode(bytes(raw[:cut])).decode()
    code = chart_runtime._unpacked(damaged)
    assert code is None or code == chart_runtime._unpacked(packed)


def _packed_runtime() -> str:
    return chart_runtime.runtime_js()


def test_a_cache_folder_that_cannot_be_used_still_gives_the_runtime(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = cache.parent / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache home is a file
    assert _whole(chart_runtime.runtime_js())
    chart_runtime.runtime_js.cache_clear()
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: the XDG spec ignores it
    assert chart_runtime._cache_dir() == Path.home() / ".cache" / "citekit"


@pytest.mark.slow
def test_processes_writing_the_cache_at_once_leave_one_whole_file(cache: Path) -> None:
    code = "from citekit.render.chart_runtime import runtime_js; print(len(runtime_js()))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache.parent)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    sizes = {child.communicate(timeout=300)[0].strip() for child in children}
    assert all(child.returncode == 0 for child in children)
    (cached,) = cache.glob("chart-runtime-*.b64")
    assert sizes == {str(len(cached.read_text()))} and _whole(cached.read_text())
    assert list(cache.glob("*.part")) == []


def test_without_a_runtime_the_explorer_chart_module_shows_the_static_chart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken() -> str:
        raise RuntimeError("vl-convert could not bundle")

    monkeypatch.setattr(chart_runtime, "runtime_js", broken)
    module = chart_runtime.widget_esm()
    assert "export default" in module and len(module) < 5_000
    assert "if (charts && spec" in module  # no runtime: the static SVG stays, nothing throws


@pytest.mark.parametrize(
    "spec",
    [
        {"mark": "nonsense", "data": {"values": []}},
        {"mark": "bar", "data": {"values": [{"a": 1}]}, "transform": [{"calculate": "datum.a +"}]},
    ],
)
def test_a_spec_vl_convert_refuses_says_why_in_one_line_without_its_stack(
    spec: dict[str, Any],
) -> None:
    bundle, _ = chart_output.renderer(spec)
    (text,) = bundle.values()
    assert text.startswith("<chart could not be drawn: ValueError: Vega-Lite to Vega")
    # The stack's https://cdn... frames are vl-convert's own copy, not a request: not shown.
    assert "\n" not in text and "https://" not in text and len(text) < 500
    assert "chart.to_dict()" in text


def test_empty_frames_and_nan_or_infinite_values_still_draw_a_chart() -> None:
    import altair as alt
    import polars as pl

    from citekit.data.frames import REFERENCES_SCHEMA

    empty = frame(["x"]).clear()
    made = [getattr(charts, name)(empty) for name in ("authors", "works", "years")]
    made.append(charts.citations_per_answer(empty))
    scores = [0.2, float("nan"), float("inf"), float("-inf"), 0.9, None]
    refs = pl.DataFrame(
        [
            {name: None for name in REFERENCES_SCHEMA.names()}
            | {"provider": "gptbots", "answer_id": f"a{i}", "document_title": "Doc", "score": s}
            for i, s in enumerate(scores)
        ],
        schema=REFERENCES_SCHEMA,
    )
    made += [charts.scores(refs, threshold=t) for t in (0.5, float("nan"), float("inf"))]
    values = [{"x": float("nan"), "y": 1}, {"x": float("inf"), "y": 2}, {"x": 3, "y": 3}]
    made.append(alt.Chart(alt.Data(values=values)).mark_point().encode(x="x:Q", y="y:Q"))
    for chart in made:
        bundle, metadata = chart_output.renderer(chart.to_dict())
        assert set(bundle) == {"text/html", "image/png", "text/plain"}, bundle.get("text/plain")
        assert metadata["image/png"]["width"] > 50 and metadata["image/png"]["height"] > 20
        (script,) = parts(bundle["text/html"]).scripts
        json.loads(script.split("var spec = ", 1)[1].split(";\n", 1)[0])
