// One time-series chart. recharts draws the frame (axes, grid, threshold lines, alert markers,
// hover cursor and tooltip); the series themselves are drawn by SeriesLayer below, one SVG path per
// series built in a single pass. Why by hand: recharts' <Line> costs ~850 ms per update at 50 series
// × 1,000 points on this machine (bench/ui.ts), far from a 16 ms frame; a path per series costs
// about what bare DOM code does. Gaps: a null value (failed or missing sample) breaks the line,
// it is never drawn as zero. No animation anywhere: live data must not lag behind a tween.
import { memo, useId, useMemo, useState } from 'react';
import { CartesianGrid, ComposedChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis, usePlotArea } from 'recharts';
import { clock, timeTicks } from './format.ts';
import { niceCeil, seriesPath, yTicks } from './chart-geometry.ts';

export interface Series {
  name: string;
  values: (number | null)[];
  color: string;
  kind?: 'line' | 'area' | 'step';
}

export interface RefLine {
  y: number;
  label: string;
}

export interface Marker {
  t: number;
  label: string;
}

export const PALETTE = ['#3b82f6', '#f97316', '#10b981', '#e11d48', '#8b5cf6', '#eab308', '#06b6d4', '#db2777', '#84cc16', '#64748b', '#a16207', '#0ea5e9'];

export interface ChartProps {
  testId: string;
  t: number[];
  series: Series[];
  from: number;
  to: number;
  height?: number;
  yFormat?: (v: number) => string;
  refLines?: RefLine[];
  markers?: Marker[];
  /** Whole-number series (counts): the y axis spans at least 0–5, so it never ticks at 0.2 jobs. */
  integers?: boolean;
}

function SeriesLayer({ t, series, hidden, from, to, yMax }: { t: number[]; series: Series[]; hidden: Set<number>; from: number; to: number; yMax: number }) {
  const plot = usePlotArea();
  const clip = useId();
  const paths = useMemo(() => {
    if (!plot || plot.width <= 0 || plot.height <= 0) return [];
    const kx = plot.width / Math.max(1, to - from);
    const ky = plot.height / yMax;
    const y0 = plot.y + plot.height;
    return series.map((s, i) => (hidden.has(i) ? '' : seriesPath(t, s.values, s.kind, plot.x, kx, from, y0, ky)));
  }, [plot, t, series, hidden, from, to, yMax]);
  if (!plot) return null;
  return (
    <g className="series-layer">
      <clipPath id={clip}>
        <rect x={plot.x} y={plot.y - 2} width={plot.width} height={plot.height + 4} />
      </clipPath>
      <g clipPath={`url(#${clip})`}>
        {series.map((s, i) =>
          paths[i] ? (
            s.kind === 'area' ? (
              <path key={i} className="series-area" data-series={s.name} d={paths[i]} fill={s.color} fillOpacity={0.2} stroke={s.color} strokeWidth={1.4} />
            ) : (
              <path key={i} className="series-line" data-series={s.name} d={paths[i]} fill="none" stroke={s.color} strokeWidth={1.6} strokeLinejoin="round" />
            )
          ) : null,
        )}
      </g>
    </g>
  );
}

function indexAt(t: number[], x: number): number {
  let lo = 0;
  let hi = t.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(t[lo - 1]! - x) < Math.abs(t[lo]! - x)) lo--;
  return lo;
}

function Readout({ active, label, t, series, hidden, yFormat }: { active: boolean; label: unknown; t: number[]; series: Series[]; hidden: Set<number>; yFormat?: (v: number) => string }) {
  if (!active || typeof label !== 'number' || !t.length) return null;
  const i = indexAt(t, label);
  const rows = series
    .map((s, k) => ({ s, k, v: s.values[i] ?? null }))
    .filter((r) => !hidden.has(r.k))
    .sort((a, b) => (b.v ?? -1) - (a.v ?? -1));
  const shown = rows.slice(0, 12);
  return (
    <div className="chart-tooltip" data-testid="chart-tooltip">
      <div className="muted small">{new Date(t[i]!).toLocaleString()}</div>
      {shown.map(({ s, v }) => (
        <div key={s.name} className="tt-row">
          <span className="swatch" style={{ background: s.color }} />
          <span className="tt-name">{s.name}</span>
          <span className="tt-val">{v === null ? 'gap' : yFormat ? yFormat(v) : v}</span>
        </div>
      ))}
      {rows.length > shown.length && <div className="muted small">+{rows.length - shown.length} more</div>}
    </div>
  );
}

export const TimeSeriesChart = memo(function TimeSeriesChart({ testId, t, series, from, to, height = 220, yFormat, refLines = [], markers = [], integers = false }: ChartProps) {
  const [hidden, setHidden] = useState<Set<number>>(() => new Set());
  // recharts only needs the x positions (for the hover cursor); the values stay in `series`.
  const rows = useMemo(() => t.map((x) => ({ t: x })), [t]);
  const yMax = useMemo(() => {
    let m = 0;
    series.forEach((s, i) => {
      if (hidden.has(i)) return;
      for (const v of s.values) if (v !== null && v > m) m = v;
    });
    for (const r of refLines) if (r.y > m) m = r.y;
    return niceCeil(Math.max(m * 1.05, integers ? 5 : 0));
  }, [series, hidden, refLines, integers]);
  const span = to - from;
  // Explicit ticks: left to itself recharts measured a label for every data point (1,000 here).
  const xTicks = useMemo(() => timeTicks(from, to), [from, to]);
  const drawn = series.filter((s, i) => !hidden.has(i) && s.values.some((v) => v !== null)).length;
  const firstT = useMemo(() => {
    for (let i = 0; i < t.length; i++) if (series.some((s) => s.values[i] !== null && s.values[i] !== undefined)) return t[i];
    return undefined;
  }, [t, series]);
  const toggle = (i: number) =>
    setHidden((h) => {
      const n = new Set(h);
      if (n.has(i)) n.delete(i);
      else n.add(i);
      return n;
    });

  return (
    <div className="chart" data-testid={testId} data-series={series.length} data-series-drawn={drawn} data-points={t.length} data-first-t={firstT}>
      <ResponsiveContainer width="100%" height={height} initialDimension={{ width: 600, height }}>
        <ComposedChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="var(--grid)" strokeDasharray="3 3" />
          <XAxis dataKey="t" type="number" domain={[from, to]} ticks={xTicks} interval={0} tickFormatter={(v: number) => clock(v, span)} stroke="var(--muted)" fontSize={11} allowDataOverflow />
          <YAxis type="number" domain={[0, yMax]} ticks={yTicks(yMax)} interval={0} allowDataOverflow stroke="var(--muted)" fontSize={11} width={56} tickFormatter={yFormat} />
          <Tooltip
            isAnimationActive={false}
            cursor={{ stroke: 'var(--muted)', strokeDasharray: '3 3' }}
            content={(p) => <Readout active={p.active} label={p.label} t={t} series={series} hidden={hidden} yFormat={yFormat} />}
          />
          <SeriesLayer t={t} series={series} hidden={hidden} from={from} to={to} yMax={yMax} />
          {refLines.map((r, i) => (
            <ReferenceLine key={`r${i}`} y={r.y} stroke="var(--danger)" strokeDasharray="6 3" label={{ value: r.label, position: 'insideTopRight', fill: 'var(--danger)', fontSize: 11 }} className="threshold-line" />
          ))}
          {markers.map((m, i) => (
            <ReferenceLine key={`m${i}`} x={m.t} stroke="var(--danger)" strokeOpacity={0.6} className="alert-marker" label={{ value: '!', position: 'top', fill: 'var(--danger)' }} />
          ))}
        </ComposedChart>
      </ResponsiveContainer>
      <div className="legend" role="group" aria-label="Series: click to hide or show">
        {series.map((s, i) => (
          <button key={i} className={`legend-item${hidden.has(i) ? ' off' : ''}`} aria-pressed={!hidden.has(i)} onClick={() => toggle(i)} data-series={s.name}>
            <span className="swatch" style={{ background: s.color }} />
            {s.name}
          </button>
        ))}
      </div>
    </div>
  );
});
