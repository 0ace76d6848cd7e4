// Dev hook for bench/ui.ts (not in the menu): `#/bench?series=50&points=1000` (up to 200 × 10,000) draws the dashboard's
// chart component with synthetic, seeded data and exposes `window.__jobscopeBench.redraw(n)`, which
// replaces the data n times and returns the main-thread cost of each update: new data → React
// render and commit (flushSync) → effects and any follow-up renders (two task hops) →
// style and layout (forced). Paint is left out, as it is for the bare reference bench/ui.ts draws
// in the same page. Not vsync-bound: a rAF-based timer could not tell 2 ms from 15 ms.
// The next update's data is made before its interval starts (it was ~11 % of the measured time:
// data arrives from the network in the app, it is not the chart's work); the bare references in
// bench/ui.ts make theirs outside their intervals too.
import { useEffect, useState } from 'react';
import { flushSync } from 'react-dom';
import { PALETTE, TimeSeriesChart, type Series } from '../../components/TimeSeriesChart.tsx';
import type { ViewProps } from '../view-props.ts';

declare global {
  interface Window {
    __jobscopeBench?: { ready: boolean; series: number; points: number; redraw(n: number): Promise<number[]> };
  }
}

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function synth(series: number, points: number, shift: number, t0: number, step: number) {
  const rand = rng(42 + shift);
  const t = Array.from({ length: points }, (_, i) => t0 + (i + shift) * step);
  const out: Series[] = [];
  for (let s = 0; s < series; s++) {
    let v = rand() * 100;
    const values = new Array<number | null>(points);
    for (let i = 0; i < points; i++) {
      v = Math.max(0, v + (rand() - 0.5) * 10);
      values[i] = Math.round(v);
    }
    out.push({ name: `queue_${s}`, values, color: PALETTE[s % PALETTE.length]! });
  }
  return { t, series: out };
}

const hop = () =>
  new Promise<void>((r) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => r();
    ch.port2.postMessage(0);
  });

export default function ChartBenchView({ route }: ViewProps) {
  const nSeries = Math.min(200, Number(route.query.get('series') ?? 50));
  const nPoints = Math.min(10_000, Number(route.query.get('points') ?? 1000));
  const step = 5000;
  const [openedAt] = useState(() => Date.now());
  const t0 = openedAt - nPoints * step;
  const [data, setData] = useState(() => synth(nSeries, nPoints, 0, t0, step));

  useEffect(() => {
    let n = 0;
    window.__jobscopeBench = {
      ready: true,
      // The sizes the next redraw makes (a change of the route's sizes keeps the drawn data until then).
      series: nSeries,
      points: nPoints,
      async redraw(times: number) {
        const out: number[] = [];
        for (let i = 0; i < times; i++) {
          const next = synth(nSeries, nPoints, ++n, t0, step);
          const start = performance.now();
          flushSync(() => setData(next));
          await hop();
          await hop();
          void document.body.getBoundingClientRect().height;
          out.push(performance.now() - start);
          await new Promise((r) => requestAnimationFrame(r)); // let the frame paint before the next
        }
        return out;
      },
    };
    return () => void (window.__jobscopeBench = undefined);
  }, [nSeries, nPoints, t0]);

  return (
    <section className="view" data-testid="view-bench">
      <h2>Chart bench: {nSeries} series × {nPoints} points</h2>
      <div className="card">
        <TimeSeriesChart testId="chart-bench" t={data.t} series={data.series} from={data.t[0]!} to={data.t[data.t.length - 1]!} height={420} />
      </div>
    </section>
  );
}
