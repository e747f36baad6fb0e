"""The Vega runtime every live chart draws with: Vega and ``chart.js`` (beside this file) in
one script, bundled by vl-convert once per machine and kept in the user's cache folder, and the
same runtime as the ES module of the explorer's chart widget.

No CDN: the runtime (about 300 KB gzipped) travels in the page (see ``citekit.render.chart``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import hashlib
import os
import zlib
from pathlib import Path
from typing import Final

from ..core.files import write_text

__all__ = ["runtime_js", "widget_esm"]

_SCRIPT = Path(__file__).with_name("chart.js")


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
    """Write ``packed`` whole or not at all (``core.files``: a unique temporary file renamed
    over ``path``), so processes and threads writing at once, or one stopped half-way, never
    leave a part; a cache that cannot be written is only not kept."""
    with contextlib.suppress(OSError):  # a DiskFullError too
        write_text(path, packed)


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
