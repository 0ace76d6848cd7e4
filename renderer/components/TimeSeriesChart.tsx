// One time-series chart: recharts lines (or areas) over epoch-ms time, gaps where a value is null
// (a failed sample is a gap, never a zero), threshold reference lines, alert markers, legend
// toggles, tooltips, and no animation (live data must not lag behind a tween).
import { memo, useMemo, useState } from 'react';
import { CartesianGrid, ComposedChart, Legend, Line, Area, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { clock } from './format.ts';

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
}

type Row = { t: number } & Record<string, number | null>;

export const TimeSeriesChart = memo(function TimeSeriesChart({ testId, t, series, from, to, height = 220, yFormat, refLines = [], markers = [] }: ChartProps) {
  const [hidden, setHidden] = useState<Set<string>>(() => new Set());
  const rows = useMemo(() => {
    const out: Row[] = new Array(t.length);
    for (let i = 0; i < t.length; i++) {
      const r: Row = { t: t[i]! } as Row;
      for (let s = 0; s < series.length; s++) r[`s${s}`] = series[s]!.values[i] ?? null;
      out[i] = r;
    }
    return out;
  }, [t, series]);
  const span = to - from;
  const drawn = series.filter((s) => s.values.some((v) => v !== null)).length;
  const firstT = useMemo(() => {
    for (let i = 0; i < t.length; i++) if (series.some((s) => s.values[i] !== null && s.values[i] !== undefined)) return t[i];
    return undefined;
  }, [t, series]);

  return (
    <div className="chart" data-testid={testId} data-series={series.length} data-series-drawn={drawn} data-points={t.length} data-first-t={firstT}>
      <ResponsiveContainer width="100%" height={height} initialDimension={{ width: 600, height }}>
        <ComposedChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="var(--grid)" strokeDasharray="3 3" />
          <XAxis dataKey="t" type="number" domain={[from, to]} scale="time" tickFormatter={(v: number) => clock(v, span)} stroke="var(--muted)" fontSize={11} allowDataOverflow />
          <YAxis stroke="var(--muted)" fontSize={11} width={56} tickFormatter={yFormat} allowDecimals={false} />
          <Tooltip
            isAnimationActive={false}
            labelFormatter={(v) => new Date(Number(v)).toLocaleString()}
            formatter={(v) => (typeof v === 'number' && yFormat ? yFormat(v) : String(v))}
            contentStyle={{ background: 'var(--panel)', border: '1px solid var(--border)', color: 'var(--fg)' }}
          />
          <Legend
            onClick={(e) => {
              const key = String(e.dataKey);
              setHidden((h) => {
                const n = new Set(h);
                if (n.has(key)) n.delete(key);
                else n.add(key);
                return n;
              });
            }}
            wrapperStyle={{ fontSize: 12, cursor: 'pointer' }}
          />
          {series.map((s, i) =>
            s.kind === 'area' ? (
              <Area key={i} dataKey={`s${i}`} name={s.name} stroke={s.color} fill={s.color} fillOpacity={0.2} hide={hidden.has(`s${i}`)} isAnimationActive={false} dot={false} connectNulls={false} type="linear" />
            ) : (
              <Line key={i} dataKey={`s${i}`} name={s.name} stroke={s.color} strokeWidth={1.6} hide={hidden.has(`s${i}`)} isAnimationActive={false} dot={false} connectNulls={false} type={s.kind === 'step' ? 'stepAfter' : 'linear'} />
            ),
          )}
          {refLines.map((r, i) => (
            <ReferenceLine key={`r${i}`} y={r.y} stroke="var(--danger)" strokeDasharray="6 3" ifOverflow="extendDomain" label={{ value: r.label, position: 'insideTopRight', fill: 'var(--danger)', fontSize: 11 }} className="threshold-line" />
          ))}
          {markers.map((m, i) => (
            <ReferenceLine key={`m${i}`} x={m.t} stroke="var(--danger)" strokeOpacity={0.6} className="alert-marker" label={{ value: '!', position: 'top', fill: 'var(--danger)' }} />
          ))}
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
});
