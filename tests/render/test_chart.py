"""citekit.render.chart: charts as offline outputs (a static image, a script that draws them live).

What a notebook receives is checked here; tests/browser/test_charts_offline.py shows it in
JupyterLab (trusted and untrusted) and in an nbconvert export with no network.
"""

from __future__ import annotations

import base64
import functools
import json
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citekit import charts
from citekit.data.frames import CITATIONS_SCHEMA
from citekit.render import chart as chart_output
from citekit.render.chart import chart_bundle, script_json, smaller_png
from tests.budget import examples


def frame(authors: list[str]) -> pl.DataFrame:
    rows = [
        {name: None for name in CITATIONS_SCHEMA.names()}
        | {"provider": "magisterium", "answer_id": f"a{i}", "document_author": a}
        for i, a in enumerate(authors)
    ]
    return pl.DataFrame(rows, schema=CITATIONS_SCHEMA)


class _Parts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def strings(value: Any) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in strings(item)]


def parts(html: str) -> _Parts:
    parser = _Parts()
    parser.feed(html)
    parser.close()
    return parser


def test_a_chart_displays_as_an_image_a_png_and_a_script_with_its_vega_spec() -> None:
    chart = charts.authors(frame(["Leo XIII", "Leo XIII", "Pius XI"]))
    bundle, metadata = chart_bundle(chart.to_dict(), runtime=False)
    assert bundle["text/plain"] == "<citekit chart: Most cited authors>"
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert metadata["image/png"]["width"] > 300 and metadata["image/png"]["height"] > 50
    found = parts(bundle["text/html"])
    images = [attrs for tag, attrs in found.tags if tag == "img"]
    assert len(images) == 1 and images[0]["alt"] == "Most cited authors"
    src = images[0]["src"] or ""
    assert src.startswith("data:image/svg+xml;base64,")
    svg = base64.b64decode(src.split(",", 1)[1]).decode()
    assert "Leo XIII" in svg and "Pius XI" in svg
    (script,) = found.scripts
    assert "citekitChartsReady = " not in script  # runtime=False: no runtime in this output
    spec_text = script.split("var spec = ", 1)[1].split(";\n", 1)[0]
    spec = json.loads(spec_text)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega/")
    assert "Leo XIII" in json.dumps(spec)


def test_the_runtime_travels_with_the_first_chart_of_a_session_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chart_output, "_sent_runtime", False)
    spec = charts.authors(frame(["Leo XIII"])).to_dict()
    first, _ = chart_bundle(spec)
    second, _ = chart_bundle(spec)
    assert "window.citekitChartsReady = " in first["text/html"]
    assert "window.citekitChartsReady = " not in second["text/html"]
    # The runtime is Vega with citekit's mount code, gzipped: no CDN address in it.
    assert len(first["text/html"]) > 200_000 > len(second["text/html"])
    assert "cdn.jsdelivr" not in first["text/html"]


@settings(max_examples=examples(200))
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda kids: (
            st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
        ),
    )
)
def test_script_json_cannot_end_or_confuse_its_script(value: Any) -> None:
    text = script_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


names = (
    st.lists(
        st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=6)
        | st.sampled_from(
            ["</script>", "<!--", "<script>", "]]>", "&amp;", '"', "'", "\u2028", "<img src=x>"]
        ),
        min_size=1,
        max_size=5,
    )
    .map("".join)
    .filter(lambda s: s.strip())
)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(names, min_size=1, max_size=3))
def test_hostile_names_stay_data_in_the_chart_output(authors: list[str]) -> None:
    chart = charts.authors(frame(authors))
    bundle, _ = chart_bundle(chart.to_dict(), runtime=False)
    found = parts(bundle["text/html"])
    assert [tag for tag, _ in found.tags] == ["div", "img", "script"]
    spec = json.loads(found.scripts[0].split("var spec = ", 1)[1].split(";\n", 1)[0])
    shown = "\n".join(strings(spec))
    for author in authors:
        assert author.strip()[:20] in shown


def test_a_spec_that_cannot_be_drawn_gives_a_line_of_text_not_an_error() -> None:
    bundle, metadata = chart_output.renderer({"mark": "nonsense", "data": {"values": []}})
    assert list(bundle) == ["text/plain"] and "could not be drawn" in bundle["text/plain"]
    assert metadata == {}


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip()


@pytest.mark.slow
def test_making_a_chart_turns_the_offline_renderer_on_unless_another_was_chosen() -> None:
    setup = """
        import altair as alt, polars as pl
        import citekit as ck
        from citekit.data.frames import CITATIONS_SCHEMA
        frame = pl.DataFrame([{n: None for n in CITATIONS_SCHEMA.names()} | {
            "document_author": "Leo XIII"}], schema=CITATIONS_SCHEMA)
    """
    chosen = _run(
        setup
        + """
        alt.renderers.enable("svg")
        ck.charts.authors(frame)
        print(alt.renderers.active)
    """
    )
    assert chosen == "svg"
    default = _run(
        setup
        + """
        chart = ck.charts.authors(frame)
        bundle = chart._repr_mimebundle_()
        bundle = bundle[0] if isinstance(bundle, tuple) else bundle
        print(alt.renderers.active, "citekit-chart" in bundle["text/html"], "image/png" in bundle)
    """
    )
    assert default == "citekit True True"


def _pixels(png: bytes) -> bytes:
    """The decompressed image data of a PNG (every IDAT chunk, CRCs checked)."""
    import struct
    import zlib

    pos, data = 8, b""
    while pos < len(png):
        (size,) = struct.unpack(">I", png[pos : pos + 4])
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + size]
        (crc,) = struct.unpack(">I", png[pos + 8 + size : pos + 12 + size])
        assert crc == zlib.crc32(kind + body)
        data += body if kind == b"IDAT" else b""
        pos += 12 + size
    return zlib.decompress(data)


def test_the_png_is_recompressed_to_the_same_pixels_in_fewer_bytes() -> None:
    import vl_convert

    spec = charts.authors(frame(["Leo XIII", "Pius XI", "Pius XI"])).to_dict()
    original = vl_convert.vegalite_to_png(spec, scale=1)
    packed = smaller_png(original)
    assert _pixels(packed) == _pixels(original)
    assert len(packed) < len(original) / 2
    assert smaller_png(packed) == packed or len(smaller_png(packed)) <= len(packed)


@settings(max_examples=examples(300))
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=120))
def test_a_broken_png_comes_back_unchanged(tail: bytes, cut: int) -> None:
    good = _small_png()
    for broken in (tail, good[:cut] + tail, b"\x89PNG\r\n\x1a\n" + tail, good + tail):
        out = smaller_png(broken)
        assert out == broken or _pixels(out) == _pixels(good)


@functools.cache
def _small_png() -> bytes:
    import vl_convert

    spec = {"mark": "point", "data": {"values": [{"x": 1}]}, "encoding": {"x": {"field": "x"}}}
    return bytes(vl_convert.vegalite_to_png(spec))


def test_count_axes_tick_whole_numbers_only() -> None:
    # The live view's Vega ignores tickMinStep: small counts list their ticks (0, 1, 2), larger
    # ones are left to Vega's nice ticks, always printed as whole numbers.
    small = charts.authors(frame(["Leo XIII", "Leo XIII", "Pius XI"])).to_dict()
    (axis,) = [a for a in _axes(small) if a.get("tickMinStep") == 1]
    assert axis["values"] == [0, 1, 2] and axis["format"] == "d"
    large = charts.authors(frame(["Leo XIII"] * 40 + ["Pius XI"])).to_dict()
    (axis,) = [a for a in _axes(large) if a.get("tickMinStep") == 1]
    assert "values" not in axis and axis["format"] == "d"


def _axes(spec: Any) -> list[dict[str, Any]]:
    """Every axis object in a Vega-Lite spec."""
    if isinstance(spec, dict):
        own = [spec["axis"]] if isinstance(spec.get("axis"), dict) else []
        return own + [a for v in spec.values() for a in _axes(v)]
    return [a for v in spec for a in _axes(v)] if isinstance(spec, list) else []
