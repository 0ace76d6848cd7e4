// A time chart's frame in SVG: dashed grid, both axes with their ticks and labels, threshold lines
// and alert markers. Ours, not recharts': with recharts drawing only this frame, a data update
// still ran its store, selectors and effects (a few ms at 50 series, plus ~290 kB of script for
// the first chart to load and parse); this is a few dozen elements rendered only when an axis,
// a threshold or a marker moved. The look (sizes, dashes, label places) is recharts' defaults as
// the chart used them. The e2e specs read the x axis labels through their classes
// (chart-x-ticks, chart-tick: test/e2e/chart-time.spec.ts).
import { memo } from 'react';
import type { Marker, RefLine } from './chart-types.ts';
import type { Plot } from './chart-geometry.ts';

const TICK = 6;
const TICK_GAP = 2;
const FONT = 11;

interface FrameProps {
  width: number;
  height: number;
  plot: Plot;
  from: number;
  to: number;
  yMax: number;
  xTicks: number[];
  yTicks: number[];
  xFormat: (v: number) => string;
  yFormat?: (v: number) => string;
  refLines: RefLine[];
  markers: Marker[];
}

export const ChartFrame = memo(function ChartFrame({ width, height, plot, from, to, yMax, xTicks, yTicks, xFormat, yFormat, refLines, markers }: FrameProps) {
  const xAt = (t: number) => plot.x + ((t - from) / (to - from)) * plot.width;
  const yAt = (v: number) => plot.y + plot.height - (v / yMax) * plot.height;
  const bottom = plot.y + plot.height;
  const right = plot.x + plot.width;
  const xs = to > from ? xTicks.filter((t) => t >= from && t <= to) : [];
  const ys = yMax > 0 ? yTicks.filter((v) => v >= 0 && v <= yMax) : [];
  const shownMarkers = to > from ? markers.filter((m) => m.t >= from && m.t <= to) : [];
  return (
    // Decoration for sighted readers: the values are in the chart's table (ChartSummary).
    <svg className="chart-frame" width={width} height={height} aria-hidden="true" style={{ display: 'block', overflow: 'visible' }}>
      <g className="chart-grid" stroke="var(--grid)" strokeDasharray="3 3" fill="none">
        {ys.map((v) => <line key={`h${v}`} x1={plot.x} x2={right} y1={yAt(v)} y2={yAt(v)} />)}
        {xs.map((t) => <line key={`v${t}`} x1={xAt(t)} x2={xAt(t)} y1={plot.y} y2={bottom} />)}
      </g>
      <g className="chart-x-axis" fontSize={FONT}>
        <line x1={plot.x} x2={right} y1={bottom} y2={bottom} stroke="var(--muted)" />
        <g className="chart-x-ticks" fill="var(--muted)" textAnchor="middle">
          {xs.map((t) => (
            <g key={t}>
              <line x1={xAt(t)} x2={xAt(t)} y1={bottom} y2={bottom + TICK} stroke="var(--muted)" />
              <text className="chart-tick" x={xAt(t)} y={bottom + TICK + TICK_GAP} dy="0.71em">{xFormat(t)}</text>
            </g>
          ))}
        </g>
      </g>
      <g className="chart-y-axis" fontSize={FONT}>
        <line x1={plot.x} x2={plot.x} y1={plot.y} y2={bottom} stroke="var(--muted)" />
        <g className="chart-y-ticks" fill="var(--muted)" textAnchor="end">
          {ys.map((v) => (
            <g key={v}>
              <line x1={plot.x - TICK} x2={plot.x} y1={yAt(v)} y2={yAt(v)} stroke="var(--muted)" />
              <text className="chart-tick" x={plot.x - TICK - TICK_GAP} y={yAt(v)} dy="0.355em">{yFormat ? yFormat(v) : String(v)}</text>
            </g>
          ))}
        </g>
      </g>
      {refLines.map((r, i) =>
        r.y >= 0 && r.y <= yMax ? (
          <g key={`r${i}`} className="threshold-line">
            <line x1={plot.x} x2={right} y1={yAt(r.y)} y2={yAt(r.y)} stroke="var(--danger)" strokeDasharray="6 3" />
            <text x={right - 5} y={yAt(r.y) - 5} textAnchor="end" fill="var(--danger)" fontSize={FONT}>{r.label}</text>
          </g>
        ) : null,
      )}
      {shownMarkers.map((m, i) => (
        <g key={`m${i}`} className="alert-marker">
          <line x1={xAt(m.t)} x2={xAt(m.t)} y1={plot.y} y2={bottom} stroke="var(--danger)" strokeOpacity={0.6} />
          <text x={xAt(m.t)} y={plot.y - 5} textAnchor="middle" fill="var(--danger)">!</text>
        </g>
      ))}
    </svg>
  );
});
