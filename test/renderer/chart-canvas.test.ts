// The chart's series drawing against a recording pen (the part of the canvas 2D API it uses): what
// reaches the canvas, gaps, steps, areas, the per-pixel-column reduction, and the drawn report.
import { describe, expect, it } from 'vitest';
import { drawSeries, type DrawSeries, type Frame, type Pen } from '../../renderer/components/chart-canvas.ts';

class RecordingPen implements Pen {
  ops: string[] = [];
  strokeStyle: unknown = '';
  fillStyle: unknown = '';
  lineWidth = 0;
  globalAlpha = 1;
  lineJoin: CanvasLineJoin = 'miter';
  beginPath() {
    this.ops.push('begin');
  }
  moveTo(x: number, y: number) {
    this.ops.push(`M${+x.toFixed(2)},${+y.toFixed(2)}`);
  }
  lineTo(x: number, y: number) {
    this.ops.push(`L${+x.toFixed(2)},${+y.toFixed(2)}`);
  }
  closePath() {
    this.ops.push('Z');
  }
  arc(x: number, y: number, r: number, a0: number, a1: number) {
    this.ops.push(`A${+x.toFixed(2)},${+y.toFixed(2)} r${r} ${a0}-${+a1.toFixed(2)}`);
  }
  stroke() {
    this.ops.push(`stroke ${String(this.strokeStyle)} ${this.lineWidth}`);
  }
  fill() {
    this.ops.push(`fill ${String(this.fillStyle)} ${this.globalAlpha}`);
  }
  /** The lines' path commands (up to their stroke; the dots come after it), joined like SVG path data. */
  path() {
    const i = this.ops.findIndex((o) => o.startsWith('stroke'));
    return this.ops.slice(0, i >= 0 ? i : undefined).filter((o) => /^[MLZ]/.test(o)).join('');
  }
  /** What was drawn as dots: the ops after the lines' stroke. */
  dots() {
    const i = this.ops.findIndex((o) => o.startsWith('stroke'));
    return i >= 0 ? this.ops.slice(i + 1) : [];
  }
}

// x = t, y = 100 - v (plot 40 × 100 px, values 0..100), one sample per pixel column.
const t = [0, 10, 20, 30, 40];
const frame: Frame = { width: 40, height: 100, top: 0, from: 0, to: 40, yMax: 100, dpr: 1 };
const one = (values: (number | null)[], kind?: DrawSeries['kind']) => {
  const pen = new RecordingPen();
  const drawn = drawSeries(pen, t, [{ name: 'q', values, color: '#3b82f6', kind }], new Set(), frame);
  return { pen, drawn };
};

describe('drawSeries', () => {
  it('draws a line through every value and reports it', () => {
    const { pen, drawn } = one([1, 2, 3, 4, 5]);
    expect(pen.path()).toBe('M0,99L10,98L20,97L30,96L40,95');
    expect(pen.ops.at(-1)).toBe('stroke #3b82f6 1');
    expect(drawn).toEqual([{ name: 'q', kind: 'line', color: '#3b82f6', points: 5, segments: 1, vertices: 5, dots: 0, x0: 0, x1: 40 }]);
    expect(pen.dots()).toEqual([]);
  });

  it('breaks the line at a null (a failed sample), never drawing it as zero', () => {
    const { pen, drawn } = one([1, 2, null, 4, 5]);
    expect(pen.path()).toBe('M0,99L10,98M30,96L40,95');
    expect(pen.path()).not.toContain(',100');
    expect(drawn[0]).toMatchObject({ points: 4, segments: 2 });
  });

  it('draws nothing and reports nothing for a series without values', () => {
    const { pen, drawn } = one([null, null, null, null, null]);
    expect(pen.path()).toBe('');
    expect(pen.ops.some((o) => o.startsWith('stroke'))).toBe(false);
    expect(drawn).toEqual([]);
  });

  it('draws a lone sample as a dot: alone in the series, and between gaps', () => {
    const alone = one([null, null, 3, null, null]);
    expect(alone.pen.dots()).toEqual(['begin', 'M22.5,97', 'A20,97 r2.5 0-6.28', 'fill #3b82f6 1']);
    expect(alone.drawn).toEqual([{ name: 'q', kind: 'line', color: '#3b82f6', points: 1, segments: 1, vertices: 1, dots: 1, x0: 20, x1: 20 }]);
    // Two lone samples and a line: two dots, the line stays a line.
    const mixed = one([1, null, 3, 4, null]);
    expect(mixed.drawn[0]).toMatchObject({ points: 3, segments: 2, dots: 1 });
    const both = one([1, null, 3, null, 5]);
    expect(both.drawn[0]).toMatchObject({ points: 3, segments: 3, dots: 3, x0: 0, x1: 40 });
    expect(both.pen.dots().filter((o) => o.startsWith('A'))).toEqual(['A0,99 r2.5 0-6.28', 'A20,97 r2.5 0-6.28', 'A40,95 r2.5 0-6.28']);
  });

  it('a run of samples narrower than a pixel is a dot too (a young history in a long range)', () => {
    const tt = [1000, 1001, 1002];
    const pen = new RecordingPen();
    const [d] = drawSeries(pen, tt, [{ name: 'q', values: [5, 6, 7], color: '#000' }], new Set(), { width: 100, height: 100, top: 0, from: 0, to: 100_000, yMax: 100, dpr: 1 });
    expect(d).toMatchObject({ points: 3, segments: 1, dots: 1, x0: 1, x1: 1 });
    expect(pen.dots().filter((o) => o.startsWith('A'))).toHaveLength(1);
  });

  it('steps: across at the old value, then up or down', () => {
    expect(one([1, 3, null, null, null], 'step').pen.path()).toBe('M0,99L10,99L10,97');
  });

  it('areas: each run closed down to the baseline and filled translucent, then stroked', () => {
    const { pen, drawn } = one([1, 3, null, 4, null], 'area');
    expect(pen.path()).toBe('M0,100L0,99L10,97L10,100L0,100ZM30,100L30,96L30,100L30,100Z');
    // The lone 4 is a one-pixel-wide area: a dot marks it, opaque, after the stroke.
    expect(pen.ops.filter((o) => /^(fill|stroke)/.test(o))).toEqual(['fill #3b82f6 0.2', 'stroke #3b82f6 1', 'fill #3b82f6 1']);
    expect(drawn[0]).toMatchObject({ kind: 'area', points: 3, segments: 2, dots: 1 });
  });

  it('leaves hidden series out, in the drawing and in the report', () => {
    const pen = new RecordingPen();
    const series = ['a', 'b', 'c'].map((name, i) => ({ name, values: [i, i, i, i, i], color: `#00000${i}` }));
    const drawn = drawSeries(pen, t, series, new Set([1]), frame);
    expect(drawn.map((d) => d.name)).toEqual(['a', 'c']);
    expect(pen.ops.filter((o) => o.startsWith('stroke'))).toEqual(['stroke #000000 1', 'stroke #000002 1']);
  });

  it('draws nothing into a plot of no size or an empty range', () => {
    for (const f of [{ ...frame, width: 0 }, { ...frame, to: frame.from }]) {
      const pen = new RecordingPen();
      expect(drawSeries(pen, t, [{ name: 'q', values: [1, 2, 3, 4, 5], color: '#000' }], new Set(), f)).toEqual([]);
      expect(pen.ops.filter((o) => /^[ML]/.test(o))).toEqual([]);
    }
  });

  it('reduces many samples per pixel column to first, min, max, last: the peaks stay', () => {
    // 2,000 seeded samples into 50 px: 40 a column.
    let seed = 7;
    const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    const n = 2000;
    const tt = Array.from({ length: n }, (_, i) => i);
    const values = tt.map(() => Math.round(rand() * 80));
    values[777] = 100; // a one-sample spike
    values[1234] = 0; // and a one-sample dip
    const pen = new RecordingPen();
    const f: Frame = { width: 50, height: 100, top: 0, from: 0, to: n, yMax: 100, dpr: 1 };
    const [d] = drawSeries(pen, tt, [{ name: 'q', values, color: '#000' }], new Set(), f);
    const pts = pen.ops.filter((o) => /^[ML]/.test(o)).map((o) => o.slice(1).split(',').map(Number) as [number, number]);
    expect(d).toMatchObject({ points: n, segments: 1, vertices: pts.length });
    expect(pts.length).toBeLessThanOrEqual(4 * 50);
    expect(pts.length).toBeGreaterThanOrEqual(2 * 50);
    // x never goes back; each column's extremes are kept.
    for (let i = 1; i < pts.length; i++) expect(pts[i]![0]).toBeGreaterThanOrEqual(pts[i - 1]![0]);
    for (let c = 0; c < 50; c++) {
      const col = values.slice(c * 40, c * 40 + 40);
      const ys = pts.filter(([x]) => Math.floor(x) === c).map(([, y]) => y);
      expect(Math.min(...ys)).toBeCloseTo(100 - Math.max(...col), 6);
      expect(Math.max(...ys)).toBeCloseTo(100 - Math.min(...col), 6);
    }
    expect(pts[0]).toEqual([0, 100 - values[0]!]);
    expect(pts.at(-1)![1]).toBeCloseTo(100 - values[n - 1]!, 6);
    expect(pts.some(([, y]) => y === 0)).toBe(true); // the spike
    expect(pts.some(([, y]) => y === 100)).toBe(true); // the dip
  });

  it('keeps every sample when each has its own device-pixel column (the dashboard at 1,000 points)', () => {
    const tt = Array.from({ length: 1000 }, (_, i) => i);
    const pen = new RecordingPen();
    const [d] = drawSeries(pen, tt, [{ name: 'q', values: tt.map((i) => i % 17), color: '#000' }], new Set(), { width: 600, height: 100, top: 0, from: 0, to: 999, yMax: 20, dpr: 2 });
    expect(d).toMatchObject({ points: 1000, vertices: 1000 });
  });
});
