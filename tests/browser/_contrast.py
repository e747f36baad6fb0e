"""The contrast check the browser tests share: WCAG ratio of each text against what is under it."""

from __future__ import annotations

#: The WCAG contrast of each element's own text against what is painted under it.
CONTRAST_JS = """
(root) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.offsetParent === null || el.closest('style')) continue;
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
    const fg = parse(getComputedStyle(el).color);
    fg[3] *= opacity;
    const text = over(fg, bg);
    const [hi, lo] = [lum(text), lum(bg)].sort((a, b) => b - a);
    out.push({
      ratio: (hi + 0.05) / (lo + 0.05),
      text: el.textContent.trim().slice(0, 40),
      tag: el.tagName,
      cls: el.className,
    });
  }
  return out;
}
"""

#: The contrast of each text of the live charts (SVG ``fill``) against the page under the chart.
SVG_CONTRAST_JS = """
(root) => {
  const parse = (c) => (c.match(/[\\d.]+/g) || [0, 0, 0]).map(Number);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const page = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      const p = parse(c);
      if (c !== 'transparent' && !(p.length === 4 && p[3] === 0)) return p;
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const chart of root.querySelectorAll('.citekit-chart-live')) {
    const under = page(chart);
    for (const t of chart.querySelectorAll('svg text')) {
      if (!t.textContent.trim()) continue;
      // Counts on the heatmap cells sit on the cell colour, not on the page: not checked here.
      if (t.closest('.mark-text.role-mark')) continue;
      const [hi, lo] = [lum(parse(getComputedStyle(t).fill)), lum(under)].sort((a, b) => b - a);
      out.push({ratio: (hi + 0.05) / (lo + 0.05), text: t.textContent.slice(0, 30)});
    }
  }
  return out;
}
"""
