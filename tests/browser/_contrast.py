"""The WCAG contrast of every visible piece of text on a page, measured in the browser.

:data:`CONTRAST_JS` takes a root element and returns, for each element with its own text, the
ratio of its colour (opacity of every ancestor applied) against what is painted under it: the
backgrounds of its ancestors, and inside an SVG the filled shape under the text (a heatmap's
cell; the text is scrolled into view to find it). SVG text is measured by its ``fill``, not by
``color``. Text with opacity 0 (hidden) is left out. Colours are read in any CSS form (marimo
paints with ``oklch()``) through a canvas pixel.
"""

from __future__ import annotations

CONTRAST_JS = """
(root) => {
  // Any CSS colour (rgb, oklch as marimo uses, names), read back through a canvas pixel.
  const ctx = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const parse = (c) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = 'rgba(0,0,0,0)';
    ctx.fillStyle = c || 'rgba(0,0,0,0)';
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const SHAPES = new Set(['rect', 'path', 'circle', 'ellipse', 'polygon']);
  const shapeUnder = (el) => {
    // The topmost filled SVG shape under the middle of an SVG text (not the text itself).
    let r = el.getBoundingClientRect();
    if (r.y < 0 || r.x < 0 || r.bottom > innerHeight || r.right > innerWidth) {
      el.scrollIntoView({block: 'center', inline: 'center'});  // elementsFromPoint sees the view
      r = el.getBoundingClientRect();
    }
    const svg = el.ownerSVGElement;
    const found = document.elementsFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    for (const e of found) {
      if (e === el || !svg.contains(e) || !SHAPES.has(e.tagName.toLowerCase())) continue;
      const style = getComputedStyle(e);
      const c = parse(style.fill);
      c[3] *= parseFloat(style.fillOpacity) * parseFloat(style.opacity);
      if (c[3] > 0) return c;
    }
    return null;
  };
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest('style')) continue;
    const inSvg = el instanceof SVGElement;
    if (inSvg ? el.getClientRects().length === 0 : el.offsetParent === null) continue;
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let bg = [255, 255, 255, 1];
    let opacity = 1;
    for (const e of chain) {
      const style = getComputedStyle(e);
      const c = parse(style.backgroundColor);
      if (c[3] > 0) bg = over(c, bg);
      opacity *= parseFloat(style.opacity);
    }
    if (opacity === 0) continue;  // not shown (a chart hides the labels that would overlap)
    let fg;
    if (inSvg) {
      const style = getComputedStyle(el);
      fg = parse(style.fill);
      fg[3] *= parseFloat(style.fillOpacity);
      const shape = shapeUnder(el);
      if (shape) bg = over(shape, bg);
    } else {
      fg = parse(getComputedStyle(el).color);
    }
    fg[3] *= opacity;
    const text = over(fg, bg);
    const [hi, lo] = [lum(text), lum(bg)].sort((a, b) => b - a);
    out.push({
      ratio: (hi + 0.05) / (lo + 0.05),
      text: el.textContent.trim().slice(0, 40),
      tag: el.tagName,
      cls: inSvg ? el.getAttribute('class') || '' : el.className,
    });
  }
  return out;
}
"""
