// One time-series chart, drawn by hand in three layers: the frame (grid, axes, threshold lines,
// alert markers) in SVG (ChartFrame), re-rendered only when an axis or a line on it moved; the
// series on a canvas over it (SeriesCanvas; the drawing is chart-canvas.ts); the hover cursor and
// readout in HTML over both (HoverLayer). Why by hand: recharts' <Line> cost ~850 ms per update at
// 50 series × 1,000 points on this machine, one SVG path per series still ~55 ms, and recharts
// drawing only the frame still ran its store and selectors on every data update and was most of
// the first chart's script (bench/ui.ts). Gaps: a null value (failed or missing sample) breaks the
// line, it is never drawn as zero. No animation anywhere: live data must not lag.
// The x axis is the from..to the caller gives (the dashboard: the whole selected range), whatever
// part of it has samples, so a range looks the same from one minute to the next; stretches of time
// (a pause) are shaded over the plot.
import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { clock, dateTime, timeTicks, useUtcTimes } from './format.ts';
import { CHART_HEIGHT, axisReach, hoverIndex, plotArea, spanBox, type Plot } from './chart-geometry.ts';
import { axisFor, type AxisKind } from './ticks.ts';
import { paintSeries, seriesCanvasBox } from './chart-paint.ts';
import { ChartFrame } from './ChartFrame.tsx';
import { ChartSummary } from './ChartSummary.tsx';
import { useModalOpen } from './modal-open.ts';
import type { Marker, RefLine, Series, Span } from './chart-types.ts';
import './time-chart.css';

export type { Marker, RefLine, Series, Span };

export { PALETTE } from './palette.ts';

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
  /** What the values are, for round ticks: durations in seconds, bytes, or plain numbers. */
  axis?: AxisKind;
  spans?: Span[];
}

/** The series, on a canvas at the plot area's place over the frame, under the hover layer. Drawn
 *  in a layout effect: in the same commit as the axes, so the lines never lag a frame behind.
 *  `children` (the chart's text alternative) is the canvas's fallback content: in the accessibility
 *  tree, never laid out. As a box of its own (1 px, clipped) its 50-row table was most of a redraw's
 *  layout: 358 of 826 layout objects dirty per update, 2.5 of ~3 ms (bench/probes/redraw-trace.ts). */
function SeriesCanvas({ plot, t, series, hidden, from, to, yMax, children }: { plot: Plot; t: number[]; series: Series[]; hidden: Set<number>; from: number; to: number; yMax: number; children: ReactNode }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const behindModal = useModalOpen();
  const w = plot.width;
  const h = plot.height;
  useLayoutEffect(() => {
    if (ref.current && listRef.current) paintSeries(ref.current, listRef.current, w, h, { t, series, hidden, from, to, yMax });
  }, [w, h, t, series, hidden, from, to, yMax]);
  return (
    // A figure, not an image: an image's children are presentational, and these are what a screen
    // reader reads of the chart (the list of lines drawn, the table of values).
    <canvas
      ref={ref}
      className="series-canvas"
      role="figure"
      aria-hidden={behindModal || undefined}
      style={{ position: 'absolute', ...seriesCanvasBox(plot), pointerEvents: 'none' }}
      data-plot-width={Math.round(w)}
    >
      {/* Filled by publish() from the drawing loop; React renders it empty and never touches its items. */}
      <ul ref={listRef} aria-label="Lines drawn" />
      {children}
    </canvas>
  );
}

/** A ref for the chart box and its width in CSS pixels: read when the box attaches (in the
 *  commit, so the first paint has the plot) and kept up with by a ResizeObserver. */
function useWidth(): [(el: HTMLDivElement | null) => void, number] {
  const [box, setBox] = useState<HTMLDivElement | null>(null);
  const [width, setWidth] = useState(0);
  const ref = useCallback((el: HTMLDivElement | null) => {
    setBox(el);
    if (el) setWidth(el.clientWidth);
  }, []);
  useLayoutEffect(() => {
    if (!box) return;
    const ro = new ResizeObserver(() => setWidth(box.clientWidth));
    ro.observe(box);
    return () => ro.disconnect();
  }, [box]);
  return [ref, width];
}

/** Hover cursor and readout over the plot area, with its own state so moving the mouse re-renders
 *  only this, never the chart. Ours, not recharts' <Tooltip>: that one shows only the values of
 *  recharts' own series items, and the series are drawn on the canvas instead. */
function HoverLayer({ left, top, width, height, t, series, hidden, from, to, yFormat }: { left: number; top: number; width: number; height: number; t: number[]; series: Series[]; hidden: Set<number>; from: number; to: number; yFormat?: (v: number) => string }) {
  const [at, setAt] = useState<{ x: number } | null>(null);
  const span = to - from;
  const time = at && span > 0 && width > 0 ? from + (at.x / width) * span : null;
  // A sample near the cursor (HOVER_REACH_PX, or along the samples); over an empty stretch of the
  // range the readout says so, with the time under the cursor.
  const i = time !== null ? hoverIndex(t, time, (HOVER_REACH_PX / width) * span) : -1;
  const cx = i >= 0 ? ((t[i]! - from) / span) * width : (at?.x ?? 0);
  return (
    <div
      className="chart-hover"
      style={{ position: 'absolute', left, top, width, height, pointerEvents: 'auto' }}
      onMouseMove={(e) => {
        const r = e.currentTarget.getBoundingClientRect();
        setAt({ x: e.clientX - r.left });
      }}
      onMouseLeave={() => setAt(null)}
    >
      {at && time !== null && (
        <>
          <div className="chart-cursor" style={{ position: 'absolute', left: cx, top: 0, height, borderLeft: '1px dashed var(--muted)' }} />
          {/* Beside the cursor, on the side with room. */}
          <div style={{ position: 'absolute', top: 4, ...(cx > width / 2 ? { right: width - cx + 10 } : { left: cx + 10 }), pointerEvents: 'none', zIndex: 3 }}>
            {i >= 0 ? (
              <Readout i={i} t={t} series={series} hidden={hidden} yFormat={yFormat} />
            ) : (
              <div className="chart-tooltip" data-testid="chart-tooltip">
                <div className="muted small">{dateTime(time)}</div>
                <div className="tt-row" data-testid="chart-tooltip-empty">no sample here</div>
              </div>
            )}
          </div>
        </>
      )}
    </div>
  );
}

/** How far from the cursor, in CSS pixels, the hover readout still picks up a lone sample. */
const HOVER_REACH_PX = 12;

/** The spans, shaded over the plot area under the hover layer, each labelled (on the side with
 *  room). Its element carries the span's times for tests: data-from, data-to. */
function SpanLayer({ left, top, width, height, spans, from, to }: { left: number; top: number; width: number; height: number; spans: Span[]; from: number; to: number }) {
  return (
    <>
      {spans.map((s, k) => {
        const box = spanBox(s.from, s.to, from, to, width);
        if (!box) return null;
        return (
          <div key={k} className={`chart-span${box.left > width / 2 ? ' label-left' : ''}`} data-testid="chart-span" data-from={s.from} data-to={s.to ?? ''}
            style={{ position: 'absolute', left: left + box.left, top, width: box.width, height }}>
            <span className="chart-span-label">{s.label}</span>
          </div>
        );
      })}
    </>
  );
}

function Readout({ i, t, series, hidden, yFormat }: { i: number; t: number[]; series: Series[]; hidden: Set<number>; yFormat?: (v: number) => string }) {
  const rows = series
    .map((s, k) => ({ s, k, v: s.values[i] ?? null }))
    .filter((r) => !hidden.has(r.k))
    .sort((a, b) => (b.v ?? -1) - (a.v ?? -1));
  const shown = rows.slice(0, 12);
  return (
    <div className="chart-tooltip" data-testid="chart-tooltip">
      <div className="muted small">{dateTime(t[i]!)}</div>
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

const SEP_FIELD = '\u0000';
const SEP_SERIES = '\u0001';

function legendEntries(key: string): { name: string; color: string }[] {
  if (!key) return [];
  return key.split(SEP_SERIES).map((e) => {
    const [name = '', color = ''] = e.split(SEP_FIELD);
    return { name, color };
  });
}

// Shared empty defaults: a fresh [] per render would change the memos that read them every time.
const NO_REF_LINES: RefLine[] = [];
const NO_MARKERS: Marker[] = [];
const NO_SPANS: Span[] = [];

export const TimeSeriesChart = memo(function TimeSeriesChart({ testId, t, series, from, to, height = CHART_HEIGHT, yFormat, refLines = NO_REF_LINES, markers = NO_MARKERS, integers = false, axis: axisKind = 'number', spans = NO_SPANS }: ChartProps) {
  const [hidden, setHidden] = useState<Set<number>>(() => new Set());
  const [boxRef, width] = useWidth();
  // One object per size: the frame's memo holds across data updates.
  const plot = useMemo(() => plotArea(width, height), [width, height]);
  const axis = useMemo(() => axisFor(axisKind, axisReach(series, hidden, refLines), integers), [series, hidden, refLines, integers, axisKind]);
  const yMax = axis.max;
  const span = to - from;
  // Stable props for the frame: a new array or function (same content or not) re-renders it.
  // The zone the times are shown in moves hour ticks and relabels every tick.
  const utc = useUtcTimes();
  const xTicks = useMemo(() => timeTicks(from, to), [from, to, utc]); // eslint-disable-line react-hooks/exhaustive-deps
  const xFormat = useCallback((v: number) => clock(v, span), [span, utc]); // eslint-disable-line react-hooks/exhaustive-deps
  const drawn = series.filter((s, i) => !hidden.has(i) && s.values.some((v) => v !== null)).length;
  const firstT = useMemo(() => {
    for (let i = 0; i < t.length; i++) if (series.some((s) => s.values[i] !== null && s.values[i] !== undefined)) return t[i];
    return undefined;
  }, [t, series]);
  const toggle = useCallback(
    (i: number) =>
      setHidden((h) => {
        const n = new Set(h);
        if (n.has(i)) n.delete(i);
        else n.add(i);
        return n;
      }),
    [],
  );

  // The legend depends on names and colours only: a data update with the same series re-renders
  // none of it. It is drawn from the key itself, so the memo reads nothing its key does not hold.
  const legendKey = series.map((s) => `${s.name}${SEP_FIELD}${s.color}`).join(SEP_SERIES);
  const legend = useMemo(
    () => (
      <div className="legend" role="group" aria-label="Series: click to hide or show">
        {legendEntries(legendKey).map((s, i) => (
          <button key={i} className={`legend-item${hidden.has(i) ? ' off' : ''}`} aria-pressed={!hidden.has(i)} onClick={() => toggle(i)} data-series={s.name}>
            <span className="swatch" style={{ background: s.color }} />
            {s.name}
          </button>
        ))}
      </div>
    ),
    [legendKey, hidden, toggle],
  );

  return (
    <div className="chart" data-testid={testId} data-series={series.length} data-series-drawn={drawn} data-points={t.length} data-first-t={firstT} data-from={from} data-to={to}>
      <div className="chart-box" ref={boxRef} style={{ position: 'relative', width: '100%', height }}>
        {plot && (
          <>
            <ChartFrame width={width} height={height} plot={plot} from={from} to={to} yMax={yMax} xTicks={xTicks} yTicks={axis.ticks} xFormat={xFormat} yFormat={axis.label} refLines={refLines} markers={markers} />
            {/* Positioned boxes paint in DOM order: over the frame the lines (not under the grid,
                whose dashes would cut a line lying on a tick), then the spans and hover layer. */}
            <SeriesCanvas plot={plot} t={t} series={series} hidden={hidden} from={from} to={to} yMax={yMax}>
              <ChartSummary series={series} from={from} to={to} yFormat={yFormat} />
            </SeriesCanvas>
            {spans.length > 0 && <SpanLayer left={plot.x} top={plot.y} width={plot.width} height={plot.height} spans={spans} from={from} to={to} />}
            <HoverLayer left={plot.x} top={plot.y} width={plot.width} height={plot.height} t={t} series={series} hidden={hidden} from={from} to={to} yFormat={yFormat} />
          </>
        )}
      </div>
      {legend}
    </div>
  );
});
