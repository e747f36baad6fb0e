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
import functools
import gzip
import hashlib
import json
import os
import re
import struct
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any, Final

from ._safe import esc, new_token

__all__ = [
    "RENDERER",
    "chart_bundle",
    "drawable",
    "renderer",
    "runtime_js",
    "smaller_png",
    "use_offline_renderer",
    "why_not_drawn",
    "widget_esm",
]

#: The name of the altair renderer.
RENDERER: Final = "citekit"

_SCRIPT = Path(__file__).with_name("chart.js")
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


def _cache_dir() -> Path | None:
    """citekit's folder in the user's cache (``$XDG_CACHE_HOME``, which counts only when it is
    an absolute path, as the XDG spec says; else ``~/.cache``), or ``None`` with no home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home folder to be found
            return None
    return Path(base) / "citekit"


#: The global the runtime sets, which chart outputs look for: a bundle without it is not ours.
_RUNTIME_MARK: Final = "citekitCharts"


def _unpacked(packed: str) -> str | None:
    """The runtime's code from its packed form, or ``None`` when it is not a whole runtime (a
    truncated or corrupt cache file: gzip's length and CRC-32 check catch both)."""
    try:
        code = gzip.decompress(base64.b64decode(packed, validate=True)).decode("utf-8")
    except (ValueError, EOFError, OSError, zlib.error):  # binascii.Error is a ValueError
        return None
    return code if _RUNTIME_MARK in code else None


def _read_cache(path: Path) -> str | None:
    try:
        packed = path.read_text(encoding="ascii")
    except (OSError, ValueError):
        return None
    return packed if _unpacked(packed) is not None else None


def _write_cache(path: Path, packed: str) -> None:
    """Write ``packed`` whole or not at all: a unique temporary file renamed over ``path``, so
    processes and threads writing at once, or one stopped half-way, never leave a part."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=path.name, suffix=".part", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="ascii") as out:
                out.write(packed)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


@functools.cache
def runtime_js() -> str:
    """Vega and ``chart.js`` in one script, gzipped and base64-encoded (built by vl-convert
    once per machine, then read from the cache folder; a cached copy that does not unpack to
    the whole runtime is built again)."""
    import importlib.metadata

    import vl_convert

    source = _SCRIPT.read_text(encoding="utf-8")
    version = importlib.metadata.version("vl-convert-python")
    digest = hashlib.sha256(f"{version}\n{source}".encode()).hexdigest()[:16]
    folder = _cache_dir()
    cached = folder / f"chart-runtime-{digest}.b64" if folder else None
    if cached and (packed := _read_cache(cached)):
        return packed
    bundle: str = vl_convert.javascript_bundle(source)
    packed = base64.b64encode(gzip.compress(bundle.encode("utf-8"), 9, mtime=0)).decode("ascii")
    if _unpacked(packed) is None:
        raise RuntimeError("vl-convert built a chart runtime without citekit's mount code")
    if cached:
        _write_cache(cached, packed)
    return packed


#: A widget's front end (anywidget): ``value`` (the static SVG, or a message) is shown, then a
#: compiled Vega ``spec``, when there is one and the runtime is there, is drawn live over it.
_WIDGET_RENDER: Final = """
export default {
  render({ model, el }) {
    const draw = () => {
      el.replaceChildren();
      const box = document.createElement("div");
      box.className = "citekit-chart";
      const still = document.createElement("div");
      still.className = "citekit-chart-static";
      still.innerHTML = model.get("value");
      box.appendChild(still);
      el.appendChild(box);
      const spec = model.get("spec");
      const charts = window.citekitCharts;
      if (charts && spec && Object.keys(spec).length) charts.mount(box, spec);
    };
    // value and spec change together (one Python update): draw once, after both arrived
    let queued = false;
    const soon = () => {
      if (queued) return;
      queued = true;
      queueMicrotask(() => { queued = false; draw(); });
    };
    draw();
    model.on("change:value", soon);
    model.on("change:spec", soon);
    return () => {
      el.replaceChildren();
      if (window.citekitCharts) window.citekitCharts.sweep();
    };
  },
};
"""


def widget_esm() -> str:
    """The chart runtime as an ES module whose default export draws a widget's chart (the
    explorer's): the same code the chart outputs load, unpacked. Without a runtime (vl-convert
    could not build one) the module shows the static chart only."""
    try:
        code = _unpacked(runtime_js()) or ""
    except Exception:  # no live chart, but the explorer and its static chart still work
        code = ""
    return code + "\n" + _WIDGET_RENDER


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
