// Small line charts of the scale curves, drawn as SVG here and rasterised to PNG by resvg (a prebuilt
// binary from npm, no browser): a few lines of SVG are less to maintain than a chart library's config,
// and resvg gives the same pixels on every machine with the same fonts.
import { Resvg } from '@resvg/resvg-js';

export interface Series {
  label: string;
  color: string;
  points: { x: number; y: number }[];
  dashed?: boolean;
}

export interface Chart {
  title: string;
  /** A second line under the title: when and under what load the points were taken. */
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Log x suits sizes that grow by ×4 to ×10 a step; log y suits costs that do too. */
  logX?: boolean;
  logY?: boolean;
}

const W = 560;
const H = 340;
const M = { left: 72, right: 16, top: 48, bottom: 74 };
/** Keeps the first and last points off the frame. */
const INSET = 14;
const FONT = 'DejaVu Sans, Liberation Sans, Arial, sans-serif';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** 1, 2, 5 × 10^k steps between lo and hi, about `n` of them. */
export function niceTicks(lo: number, hi: number, n = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

function logTicks(lo: number, hi: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) for (const k of [1, 2, 5]) ticks.push(k * 10 ** e);
  const inside = ticks.filter((t) => t >= lo * 0.999 && t <= hi * 1.001);
  return inside.length >= 2 ? inside : [lo, hi];
}

export const label = (v: number) => (Math.abs(v) >= 1e6 ? `${v / 1e6}M` : Math.abs(v) >= 1e4 ? `${v / 1e3}k` : Number(v.toPrecision(6)).toLocaleString('en'));

export function svg(c: Chart): string {
  const pts = c.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && (!c.logY || p.y > 0));
  if (pts.length === 0) throw new Error(`${c.title}: nothing to plot`);
  const xs = pts.map((p) => p.x);
  const ys = pts.map((p) => p.y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = c.logY ? [Math.min(...ys) / 1.3, Math.max(...ys) * 1.3] : [0, Math.max(...ys) * 1.1 || 1];
  const yTicks = c.logY ? logTicks(y0, y1) : niceTicks(y0, y1);
  if (!c.logY) y1 = Math.max(y1, yTicks.at(-1)!);
  if (c.logY) [y0, y1] = [Math.min(y0, yTicks[0]!), Math.max(y1, yTicks.at(-1)!)];
  const xTicks = c.logX ? [...new Set(xs)].sort((a, b) => a - b) : niceTicks(x0, x1);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const fx = (x: number) => M.left + INSET + (c.logX ? (x1 === x0 ? 0.5 : Math.log(x / x0) / Math.log(x1 / x0)) : x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (pw - 2 * INSET);
  const fy = (y: number) => M.top + ph - (c.logY ? Math.log(y / y0) / Math.log(y1 / y0) : (y - y0) / (y1 - y0)) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="${FONT}" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="13" font-weight="bold">${esc(c.title)}</text>`,
  ];
  if (c.subtitle) out.push(`<text x="${W / 2}" y="36" text-anchor="middle" fill="#555555">${esc(c.subtitle)}</text>`);
  for (const t of yTicks) {
    const y = fy(t).toFixed(1);
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}" stroke="#e3e3e3"/>`, `<text x="${M.left - 6}" y="${y}" dy="4" text-anchor="end">${label(t)}</text>`);
  }
  for (const t of xTicks) {
    const x = fx(t).toFixed(1);
    out.push(`<line x1="${x}" x2="${x}" y1="${M.top}" y2="${M.top + ph}" stroke="#eeeeee"/>`, `<text x="${x}" y="${M.top + ph + 16}" text-anchor="middle">${label(t)}</text>`);
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#888888"/>`,
    `<text x="${M.left + pw / 2}" y="${M.top + ph + 34}" text-anchor="middle">${esc(c.xLabel)}${c.logX ? ' (log scale)' : ''}</text>`,
    `<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(c.yLabel)}${c.logY ? ' (log scale)' : ''}</text>`,
  );
  c.series.forEach((s, i) => {
    const p = s.points.filter((q) => Number.isFinite(q.y) && (!c.logY || q.y > 0));
    const d = p.map((q, j) => `${j ? 'L' : 'M'}${fx(q.x).toFixed(1)},${fy(q.y).toFixed(1)}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    for (const q of p) out.push(`<circle cx="${fx(q.x).toFixed(1)}" cy="${fy(q.y).toFixed(1)}" r="3" fill="${s.color}"/>`);
    // Legend under the x label, one entry per series.
    const lx = M.left + i * 200;
    const ly = H - 12;
    out.push(`<line x1="${lx}" x2="${lx + 24}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`, `<text x="${lx + 30}" y="${ly}">${esc(s.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

export function png(c: Chart): Buffer {
  return new Resvg(svg(c), { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: '#ffffff' }).render().asPng();
}
