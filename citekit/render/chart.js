// citekit's chart runtime: bundled with Vega by vl-convert, loaded once per page by the first
// chart output of a kernel session (see chart.py). vl-convert's bundler gives a snippet
// `vegaEmbed` (its `vega` and `vegaLite` names come out null); the spec is already Vega.
//
// mount(el, spec) draws a compiled Vega spec inside `el` as SVG, coloured from the page around
// it (the text colour and background `el` inherits from the notebook theme), with tooltips in a
// box of the same colours, and draws it again when the theme changes. Until it has drawn, and
// whenever it cannot, the static image already in `el` stays in view.

const charts = new Set();
let tooltipBox = null;

function rgb(text) {
  const m = String(text).match(/[\d.]+/g);
  return m ? m.slice(0, 4).map(Number) : [0, 0, 0];
}

function isTransparent(colour) {
  const parts = rgb(colour);
  return colour === "transparent" || (parts.length === 4 && parts[3] === 0);
}

function backgroundOf(el) {
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const colour = getComputedStyle(node).backgroundColor;
    if (colour && !isTransparent(colour)) return colour;
  }
  return "rgb(255, 255, 255)";
}

function mix(a, b, share) {
  const x = rgb(a);
  const y = rgb(b);
  const c = [0, 1, 2].map((i) => Math.round(x[i] * (1 - share) + y[i] * share));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

function palette(el) {
  const style = getComputedStyle(el);
  const ink = style.color || "rgb(0, 0, 0)";
  const paper = backgroundOf(el);
  return {
    ink,
    paper,
    muted: mix(ink, paper, 0.2),
    line: mix(ink, paper, 0.55),
    grid: mix(ink, paper, 0.85),
    font: style.fontFamily || "sans-serif",
  };
}

function merge(into, from) {
  for (const [key, value] of Object.entries(from)) {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      if (!into[key] || typeof into[key] !== "object") into[key] = {};
      merge(into[key], value);
    } else {
      into[key] = value;
    }
  }
  return into;
}

function themed(spec, p) {
  const out = structuredClone(spec);
  out.background = "transparent";
  out.config = merge(out.config || {}, {
    font: p.font,
    axis: { labelColor: p.ink, titleColor: p.ink, gridColor: p.grid,
            domainColor: p.line, tickColor: p.line },
    legend: { labelColor: p.ink, titleColor: p.ink },
    title: { color: p.ink, subtitleColor: p.muted },
    style: {
      "guide-label": { fill: p.ink, font: p.font },
      "guide-title": { fill: p.ink, font: p.font },
      "group-title": { fill: p.ink, font: p.font },
      "group-subtitle": { fill: p.muted, font: p.font },
      cell: { stroke: p.grid },
    },
  });
  return out;
}

function box() {
  if (tooltipBox && tooltipBox.isConnected) return tooltipBox;
  tooltipBox = document.createElement("div");
  tooltipBox.className = "citekit-chart-tooltip";
  tooltipBox.hidden = true;
  Object.assign(tooltipBox.style, {
    position: "fixed", zIndex: "10000", pointerEvents: "none", maxWidth: "360px",
    padding: "6px 8px", borderRadius: "4px", fontSize: "13px", lineHeight: "1.4",
    boxShadow: "0 2px 8px rgba(0, 0, 0, 0.3)", overflowWrap: "anywhere",
  });
  document.body.appendChild(tooltipBox);
  return tooltipBox;
}

// Vega calls this with the tooltip value of the mark under the pointer (null when it leaves).
// Values are written as text nodes: nothing in them becomes markup.
function tooltip(p) {
  return (_handler, event, _item, value) => {
    const tip = box();
    if (value == null || value === "") {
      tip.hidden = true;
      return;
    }
    tip.replaceChildren();
    tip.style.color = p.ink;
    tip.style.background = p.paper;
    tip.style.border = `1px solid ${p.line}`;
    if (typeof value === "object" && !Array.isArray(value)) {
      const table = document.createElement("table");
      table.style.borderCollapse = "collapse";
      for (const [key, text] of Object.entries(value)) {
        const row = table.insertRow();
        const name = document.createElement("th");
        name.textContent = key;
        // A key is a word or two: it keeps its line ("Author", never "Autho/r"); the value wraps.
        Object.assign(name.style, { textAlign: "left", paddingRight: "8px", fontWeight: "600",
                                    verticalAlign: "top", whiteSpace: "nowrap",
                                    overflowWrap: "normal", wordBreak: "normal" });
        const cell = row.insertCell();
        cell.textContent = String(text);
        row.prepend(name);
      }
      tip.appendChild(table);
    } else {
      tip.textContent = String(value);
    }
    tip.hidden = false;
    const x = Math.min(event.clientX + 12, window.innerWidth - tip.offsetWidth - 4);
    const y = Math.min(event.clientY + 12, window.innerHeight - tip.offsetHeight - 4);
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  };
}

// A widget draws its chart before the notebook puts it on the page (ipywidgets renders a view,
// then attaches it): the colours of a detached element are nobody's (black on white), so a
// chart waits until its element is on the page, then reads the theme around it.
function attached(chart) {
  if (chart.el.isConnected) return Promise.resolve(true);
  chart.waiting = true;
  return new Promise((resolve) => {
    const started = Date.now();
    const check = () => {
      if (chart.gone) { chart.waiting = false; resolve(false); return; }
      if (chart.el.isConnected) { chart.waiting = false; resolve(true); return; }
      // Not attached within a minute: the static image stays, drawn live on a later theme
      // change or when the pointer reaches it.
      if (Date.now() - started > 60000) { chart.waiting = false; resolve(false); return; }
      setTimeout(check, 50);
    };
    setTimeout(check, 0);
  });
}

async function draw(chart) {
  if (!(await attached(chart))) return;
  const p = palette(chart.el);
  const key = JSON.stringify(p);
  if (chart.key === key) return;
  chart.key = key;
  const holder = document.createElement("div");
  holder.className = "citekit-chart-live";
  const result = await vegaEmbed(holder, themed(chart.spec, p), {
    mode: "vega",
    renderer: "svg",
    actions: false,
    hover: true,
    tooltip: tooltip(p),
  });
  const view = result.view;
  if (chart.gone || chart.key !== key) {
    // swept while drawing, or a newer theme's drawing started: this one is not shown
    view.finalize();
    return;
  }
  if (chart.view) chart.view.finalize();
  chart.view = view;
  for (const old of chart.el.querySelectorAll(".citekit-chart-live")) old.remove();
  chart.el.appendChild(holder);
  for (const still of chart.el.querySelectorAll(".citekit-chart-static")) {
    still.style.display = "none";
  }
  chart.el.dataset.citekitLive = "1";
}

// A chart whose element left the page (its output cleared, its cell run again, the explorer
// drawing the next chart) lets its Vega view go, so a long session does not keep them all. An
// element that comes back (a notebook that detaches cells scrolled out of view) is drawn again
// when the pointer reaches it.
function sweep() {
  for (const chart of [...charts]) {
    if (chart.el.isConnected || chart.waiting) continue;
    if (chart.view) chart.view.finalize();
    chart.view = null;
    chart.gone = true;
    charts.delete(chart);
    const again = () => { if (chart.el.isConnected) mount(chart.el, chart.spec); };
    chart.el.addEventListener("pointerenter", again, { once: true });
  }
}

function redrawAll() {
  sweep();
  for (const chart of charts) {
    draw(chart).catch((error) => console.warn("citekit chart:", error));
  }
}

let pending = null;
function later() {
  // A theme change swaps style sheets: read the colours once they apply.
  clearTimeout(pending);
  pending = setTimeout(redrawAll, 150);
}

const watcher = new MutationObserver(later);
for (const node of [document.documentElement, document.body]) {
  if (node) watcher.observe(node, { attributes: true, attributeFilter: ["class", "theme", "data-jp-theme-light", "data-jp-theme-name", "style"] });
}
if (window.matchMedia) {
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", later);
}

function mount(el, spec) {
  sweep();
  const chart = { el, spec, key: null, view: null, gone: false, waiting: false };
  charts.add(chart);
  return draw(chart).catch((error) => {
    console.warn("citekit chart: kept the static image:", error);
  });
}

window.citekitCharts = { mount, sweep, count: () => charts.size, version: 1 };
