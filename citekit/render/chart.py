"""Charts as notebook outputs that work offline: live where scripts run, an image everywhere else.

``chart_bundle(spec)`` turns a Vega-Lite spec (what altair hands its renderers) into a display
bundle:

- ``text/html``: the chart as a static SVG image, then a script that draws it again as a live
  Vega view (tooltips, colours read from the notebook theme, drawn again when the theme
  changes) where scripts run: a trusted JupyterLab or Notebook 7 output, VS Code, an nbconvert
  HTML export. Untrusted outputs lose the script and keep the image (JupyterLab's sanitizer keeps
  ``data:`` images), so a reopened notebook shows every chart.
- ``image/png``: for PDF export and viewers that show no HTML.
- ``text/plain``: the chart's title.

No CDN: the Vega runtime (Vega itself and ``chart.js`` beside this file, bundled by vl-convert,
about 300 KB gzipped) travels in the page. The first chart of a kernel session carries it and
later charts use it, as Bokeh's and Plotly's offline notebook modes do; a chart shown where no
earlier output carried it stays a static image. In Colab, where each output is a page of its own,
every chart carries it. The bundle is built once per machine (a few seconds) and kept in the
user's cache folder.

``renderer`` is altair's ``"citekit"`` renderer (an entry point of the package, so
``alt.renderers.enable("citekit")`` works in a fresh kernel); ``use_offline_renderer()`` turns
it on unless the user chose another renderer, and ``citekit.data.charts`` calls it as it makes a
chart.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import struct
import sys
import zlib
from typing import Any, Final

from ..text.escape import esc, new_token
from .chart_runtime import runtime_js

__all__ = [
    "RENDERER",
    "chart_bundle",
    "drawable",
    "renderer",
    "smaller_png",
    "use_offline_renderer",
    "why_not_drawn",
]

#: The name of the altair renderer.
RENDERER: Final = "citekit"

_sent_runtime = False
_turned_on = False

# The first chart output of a page defines the loader; charts whose script runs before the
# runtime is there queue themselves and are drawn when it arrives.
_LOADER: Final = """(function () {
  if (window.citekitChartsReady) return;
  var data = "%s";
  var ready = window.citekitChartsReady = (async function () {
    if (!window.citekitCharts) {
      var bytes = Uint8Array.from(atob(data), function (c) { return c.charCodeAt(0); });
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      var code = await new Response(stream).text();
      var script = document.createElement("script");
      script.textContent = "(function () {\\n" + code + "\\n})();";
      document.head.appendChild(script);
    }
    var charts = window.citekitCharts;
    if (!charts) throw new Error("the runtime did not define citekitCharts");
    (window.citekitChartsQueue || []).splice(0).forEach(function (q) { charts.mount(q[0], q[1]); });
    return charts;
  })();
  ready.catch(function (error) {
    // The charts keep their static images; a later output carrying the runtime may try again.
    if (window.citekitChartsReady === ready) window.citekitChartsReady = null;
    console.warn("citekit charts: the chart runtime did not load, charts stay static:", error);
  });
})();
"""

_MOUNT: Final = """(function () {
  var el = document.getElementById("%s");
  var spec = %s;
  if (!el) return;
  if (window.citekitCharts) { window.citekitCharts.mount(el, spec); return; }
  (window.citekitChartsQueue = window.citekitChartsQueue || []).push([el, spec]);
  if (window.citekitChartsReady) window.citekitChartsReady.catch(function () {});
})();
"""


#: Characters XML 1.0 does not allow (C0 controls but tab, newline and carriage return; U+FFFE,
#: U+FFFF; lone surrogates). vl-convert writes text into SVG and parses it back: one of these in
#: a label (a vertical tab from a PDF title) aborts the whole Python process, kernel and all.
_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def drawable(spec: Any) -> Any:
    """``spec`` with every string (keys too, so fields still match their data) made safe for
    vl-convert: each character XML does not allow becomes U+FFFD."""
    if isinstance(spec, str):
        return _NOT_XML.sub("\ufffd", spec)
    if isinstance(spec, dict):
        return {drawable(k): drawable(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [drawable(v) for v in spec]
    return spec


def script_json(value: Any) -> str:
    """``value`` as JSON that can sit inside a ``<script>`` element: no ``<``, ``>`` or ``&``
    (so no ``</script>`` or ``<!--`` can end or confuse it), non-ASCII escaped."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"


def smaller_png(png: bytes) -> bytes:
    """``png`` with its image data compressed again at zlib's best level: the same pixels,
    about a quarter of the bytes of vl-convert's fast compression. Anything that is not a
    well-formed PNG comes back unchanged."""
    try:
        if not png.startswith(_PNG_SIGNATURE):
            return png
        pos, chunks, data = len(_PNG_SIGNATURE), [], []
        while pos < len(png):
            (size,) = struct.unpack(">I", png[pos : pos + 4])
            kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + size]
            if len(body) != size or (kind == b"IEND" and pos + 12 + size != len(png)):
                return png
            pos += 12 + size
            if kind == b"IDAT":
                data.append(body)
            else:
                chunks.append((kind, body))
        if not data or chunks[-1][0] != b"IEND":
            return png
        packed = zlib.compress(zlib.decompress(b"".join(data)), 9)
        out = [_PNG_SIGNATURE]
        for kind, body in [*chunks[:-1], (b"IDAT", packed), chunks[-1]]:
            crc = zlib.crc32(kind + body)
            out.append(struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc))
        return b"".join(out)
    except (struct.error, zlib.error, IndexError):
        return png


def _title(spec: dict[str, Any]) -> str:
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(t) for t in title)
    return str(title) if title else "Chart"


#: A static SVG longer than this (a heatmap of thousands of cells with their labels for screen
#: readers) is shown as the PNG instead, a fraction of its size in the saved notebook.
_SVG_LIMIT: Final = 500_000

_SIZE = re.compile(r'<svg[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')


def _in_colab() -> bool:
    return "google.colab" in sys.modules


def _in_marimo() -> bool:
    """Whether a marimo notebook or app runs this code (marimo draws altair charts itself)."""
    marimo = sys.modules.get("marimo")
    try:
        return bool(marimo is not None and marimo.running_in_notebook())
    except Exception:
        return False


def chart_bundle(
    spec: dict[str, Any], *, runtime: bool | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The display bundle and its metadata for the Vega-Lite ``spec``.

    ``runtime`` says whether this output carries the Vega runtime; ``None`` (the default) sends
    it with the first chart of the process (and with every chart in Colab).
    """
    global _sent_runtime
    import vl_convert

    spec = drawable(spec)
    title = _title(spec)
    vega_spec = vl_convert.vegalite_to_vega(spec)
    svg: str = vl_convert.vega_to_svg(vega_spec)
    png = smaller_png(vl_convert.vega_to_png(vega_spec, scale=1))
    size = _SIZE.search(svg)
    width, height = (round(float(size[1])), round(float(size[2]))) if size else (None, None)
    if runtime is None:
        runtime = not _sent_runtime or _in_colab()
    loader = ""
    if runtime:
        with contextlib.suppress(Exception):  # no runtime: every chart stays a static image
            loader = _LOADER % runtime_js()
            _sent_runtime = True
    token = new_token() + "-chart"
    if len(svg) > _SVG_LIMIT:
        image = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    else:
        image = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
    dims = f' width="{width}" height="{height}"' if width and height else ""
    html = (
        f'<div class="citekit-chart" id="{token}" style="max-width:100%;overflow-x:auto">'
        f'<img class="citekit-chart-static" src="{image}"{dims} '
        f'alt="{esc(title)}" title="{esc(title)}" '
        'style="max-width:100%;height:auto;background:#fff;border-radius:4px"></div>\n'
        f"<script>{loader}{_MOUNT % (token, script_json(vega_spec))}</script>"
    )
    bundle = {
        "text/html": html,
        "image/png": base64.b64encode(png).decode("ascii"),
        "text/plain": f"<citekit chart: {title}>",
    }
    metadata = {"image/png": {"width": width, "height": height}} if width and height else {}
    return bundle, metadata


def why_not_drawn(exc: BaseException) -> str:
    """A chart failure in a line or two: vl-convert's message without its JavaScript stack
    (whose ``https://cdn...`` frames are where vl-convert's own copy of Vega-Lite came from,
    not a request), and what to do."""
    lines = [line.strip() for line in str(exc).splitlines()]
    message = " ".join(line for line in lines if line and not line.startswith("at "))
    if len(message) > 300:
        message = message[:299] + "\u2026"
    return (
        f"{type(exc).__name__}: {message} (check the chart's encodings and transforms: "
        "chart.to_dict() shows its spec)"
    )


def renderer(spec: dict[str, Any], **_metadata: Any) -> Any:
    """The ``"citekit"`` altair renderer (also registered as an altair entry point, so
    ``alt.renderers.enable("citekit")`` works before citekit is imported).

    In marimo it gives nothing, so marimo draws the chart with its own Vega (offline, with
    tooltips): marimo runs no inline script, and it reads a base64 ``image/png`` as an address
    (a broken image).
    """
    if _in_marimo():
        return {}
    try:
        return chart_bundle(spec)
    except Exception as exc:  # a display must not raise into the cell
        return {"text/plain": f"<chart could not be drawn: {why_not_drawn(exc)}>"}, {}


def use_offline_renderer() -> None:
    """Turn the ``"citekit"`` altair renderer on, once per process, unless the user turned on
    another renderer than altair's default one (``alt.renderers.enable("default")`` after this
    goes back to altair's, which loads Vega from a CDN)."""
    global _turned_on
    if _turned_on:
        return
    import altair as alt

    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, renderer)
    if alt.renderers.active == "default":
        alt.renderers.enable(RENDERER)
    _turned_on = True
