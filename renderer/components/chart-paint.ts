// One series canvas painted: its bitmap sized to the plot, the series drawn (chart-canvas.ts) and
// what was drawn published on the canvas and in its fallback list. Apart from React: the chart's
// SeriesCanvas paints with it on every update, and the early entry paints the dashboard's first
// chart with it before React has loaded (views/dashboard/early-chart.ts), so the canvas React then
// shows has the same size, pixels and list.
import { drawSeries, type DrawSeries, type DrawnSeries } from './chart-canvas.ts';
import type { Plot } from './chart-geometry.ts';

/** Extra CSS pixels above and below the plot, so a line at 0 or at the maximum is not cut in half. */
export const PAD = 2;

/** Where the series canvas sits in the chart box, CSS pixels: over the plot area, PAD above and below. */
export function seriesCanvasBox(plot: Plot): { left: number; top: number; width: number; height: number } {
  return { left: plot.x, top: plot.y - PAD, width: plot.width, height: plot.height + 2 * PAD };
}

export interface Painting {
  t: number[];
  series: DrawSeries[];
  hidden: ReadonlySet<number>;
  from: number;
  to: number;
  yMax: number;
}

/** Draws `p` on `canvas` (w × h: the plot area in CSS pixels) and publishes what it drew. */
export function paintSeries(canvas: HTMLCanvasElement, ul: HTMLUListElement, w: number, h: number, p: Painting): void {
  const dpr = window.devicePixelRatio || 1;
  const cw = Math.max(1, Math.round(w * dpr));
  const ch = Math.max(1, Math.round((h + 2 * PAD) * dpr));
  // Setting the size reallocates the bitmap: only when it changed; otherwise a clear is enough.
  if (canvas.width !== cw || canvas.height !== ch) {
    canvas.width = cw;
    canvas.height = ch;
  }
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, cw, ch);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const drawn = drawSeries(ctx, p.t, p.series, p.hidden, { width: w, height: h, top: PAD, from: p.from, to: p.to, yMax: p.yMax, dpr });
  publish(canvas, ul, drawn);
}

/** What the canvas drew, from the drawing loop itself: the canvas's accessible name, the list as
 *  JSON in data-drawn, and one item per drawn series in the canvas's fallback list (the e2e tests
 *  count and read these). Only what changed is written: every data update changes the vertex
 *  counts in data-drawn, but rarely what the list items say, and rebuilding 50 items was most of a
 *  redraw's DOM work (bench/ui.ts). */
function publish(canvas: HTMLCanvasElement, ul: HTMLUListElement, drawn: DrawnSeries[]): void {
  const json = JSON.stringify(drawn);
  if (canvas.dataset.drawn === json) return;
  canvas.dataset.drawn = json;
  setAttr(canvas, 'aria-label', drawn.length ? `Chart lines for ${drawn.length} series: ${drawn.map((d) => d.name).join(', ')}` : 'No data to draw');
  const items = ul.children;
  while (items.length > drawn.length) items[items.length - 1]!.remove();
  drawn.forEach((d, k) => {
    const li = (items[k] as HTMLLIElement | undefined) ?? ul.appendChild(document.createElement('li'));
    setAttr(li, 'class', `series-${d.kind === 'area' ? 'area' : 'line'}`);
    setAttr(li, 'data-series', d.name);
    setAttr(li, 'data-color', d.color);
    setAttr(li, 'data-points', String(d.points));
    setAttr(li, 'data-segments', String(d.segments));
    setAttr(li, 'data-dots', String(d.dots));
    setAttr(li, 'data-x0', String(d.x0));
    setAttr(li, 'data-x1', String(d.x1));
    const text = `${d.name}: ${d.points} point${d.points === 1 ? '' : 's'}${d.segments > 1 ? `, ${d.segments - 1} gaps` : ''}`;
    if (li.textContent !== text) li.textContent = text;
  });
}

/** Sets an attribute only when its value differs: a write of the same value still queues
 *  mutation records and style invalidation. */
function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
