// The dashboard's first chart, drawn by the early entry (renderer/early.ts) from the early history
// (early-history.ts) into the page index.html holds while the main script loads. Why: the chart
// otherwise waited for the 330 kB main script to load and run and for React to render the shell
// (bench/ui.ts first_chart_ms, 1.87× the bare page's); the early answer is usually here long before.
// Which chart: "Busy workers vs concurrency", the one whose drawing depends on nothing but the
// history (fixed colours, no thresholds or alert markers, a count axis): the other charts' colours,
// thresholds and markers come from queries React makes, so drawn early they could differ from what
// React then draws. Drawn with the chart's own code (chart-geometry.ts, chart-paint.ts), so the
// canvas is what React draws from the same answer (the dashboard's first render adopts it,
// arrivedEarlyHistory). React's first commit replaces the whole page in #root, this chart with it,
// with the dashboard and its own chart drawn in the same commit: there is no frame without a chart.
import type { History } from '../../api/client.ts';
import { CHART_HEIGHT, axisReach, numberAxisMax, plotArea } from '../../components/chart-geometry.ts';
import { paintSeries, seriesCanvasBox } from '../../components/chart-paint.ts';
import { RANGES } from './ranges.ts';
import type { EarlyHistory } from './early-history.ts';
import { ratesSeries, workersSeries } from './totals-series.ts';

const NONE: ReadonlySet<number> = new Set();

const isValues = (v: unknown): v is (number | null)[] => Array.isArray(v) && v.every((x) => x === null || typeof x === 'number');

/** Enough of a history to draw the workers chart from: anything else is left to React. */
function drawable(h: unknown): h is Pick<History, 'to' | 't' | 'totals' | 'queues'> {
  const o = h as Partial<History> | null;
  return typeof o?.to === 'number' && Array.isArray(o.t) && o.t.every((x) => typeof x === 'number') && isValues(o.totals?.busy) && isValues(o.totals?.concurrency) && typeof o.queues === 'object' && o.queues !== null;
}

/** The legends' entries, invisible: a legend's rows make its card as tall as React's, so the rows
 *  of charts, and the workers chart in them, sit where React's first render puts them. */
function layOutLegends(page: HTMLElement, h: Pick<History, 'totals' | 'queues'>): void {
  const names: Record<string, string[]> = { queues: Object.keys(h.queues), workers: workersSeries(h).map((s) => s.name), rates: ratesSeries(h).map((s) => s.name) };
  for (const legend of page.querySelectorAll<HTMLElement>('[data-early-legend]')) {
    legend.style.visibility = 'hidden';
    legend.setAttribute('aria-hidden', 'true');
    for (const name of names[legend.dataset.earlyLegend ?? ''] ?? []) {
      const item = legend.appendChild(document.createElement('span'));
      item.className = 'legend-item';
      item.appendChild(document.createElement('span')).className = 'swatch';
      item.append(name);
    }
  }
}

/** Draws the chart once the early answer is here, if React has not taken the page over by then;
 *  on any doubt (no answer, an error, no room) it leaves the page as it was. */
export async function drawEarlyChart(early: EarlyHistory): Promise<void> {
  let h: unknown;
  try {
    h = await early.answer;
  } catch {
    return;
  }
  // Parsed is enough (the frame is in the DOM): DOMContentLoaded would also wait for the main
  // module script to load and run, the very wait this chart is drawn early to avoid.
  if (document.readyState === 'loading') await new Promise((r) => document.addEventListener('readystatechange', r, { once: true }));
  // The frame's sizes (the chart's width) are styles.css's, which index.html holds inline
  // (vite.config.ts, inlineEntryStyles): applied once parsed, no style sheet to wait for.
  const page = document.querySelector<HTMLElement>('[data-early-dashboard]');
  const box = page?.querySelector<HTMLElement>('[data-early-chart]');
  const starting = document.querySelector<HTMLElement>('[data-starting]');
  if (!page || !box || !drawable(h)) return;
  page.hidden = false;
  for (const b of page.querySelectorAll<HTMLElement>('.chart-box')) b.style.height = `${CHART_HEIGHT}px`;
  layOutLegends(page, h);
  const plot = plotArea(box.clientWidth, CHART_HEIGHT);
  if (!plot) {
    page.hidden = true;
    return;
  }
  if (starting) starting.hidden = true;
  const canvas = document.createElement('canvas');
  canvas.className = 'series-canvas';
  canvas.setAttribute('role', 'figure');
  canvas.dataset.plotWidth = String(Math.round(plot.width));
  const at = seriesCanvasBox(plot);
  Object.assign(canvas.style, { position: 'absolute', left: `${at.left}px`, top: `${at.top}px`, width: `${at.width}px`, height: `${at.height}px`, pointerEvents: 'none' });
  const ul = canvas.appendChild(document.createElement('ul'));
  ul.setAttribute('aria-label', 'Lines drawn');
  box.appendChild(canvas);
  const series = workersSeries(h);
  const to = h.to;
  const from = to - RANGES.find((r) => r.key === early.range)!.ms;
  paintSeries(canvas, ul, plot.width, plot.height, { t: h.t, series, hidden: NONE, from, to, yMax: numberAxisMax(axisReach(series, NONE, []), true) });
}
