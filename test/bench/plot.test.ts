// The curve plotter: the SVG holds what a reader needs (axes with units, both series), and resvg turns
// it into a PNG of the chart's size. No benchmark runs.
import { describe, expect, it } from 'vitest';
import { niceTicks, png, svg, type Chart } from '../../bench/lib/plot.ts';

const chart: Chart = {
  title: 'Trace appends',
  xLabel: 'concurrent streams',
  yLabel: 'parts/s',
  logX: true,
  series: [
    { label: 'Jobscope', color: '#1f6feb', points: [8, 32, 128, 512].map((x, i) => ({ x, y: 10_000 + i * 2000 })) },
    { label: 'bare reference', color: '#8a8a8a', dashed: true, points: [8, 32, 128, 512].map((x, i) => ({ x, y: 11_000 + i * 2500 })) },
  ],
};

describe('plot', () => {
  it('draws both series, their legend and axes labelled with units', () => {
    const s = svg(chart);
    expect(s.match(/<path /g)).toHaveLength(2);
    expect(s.match(/<circle /g)).toHaveLength(8);
    for (const text of ['Jobscope', 'bare reference', 'parts/s', 'concurrent streams (log scale)', '>512<', '>8<']) expect(s).toContain(text);
  });

  it('puts a larger y higher on the chart', () => {
    const s = svg({ ...chart, series: [{ label: 'a', color: '#000', points: [{ x: 1, y: 1 }, { x: 10, y: 100 }] }] });
    const [first, second] = [...s.matchAll(/<circle cx="[\d.]+" cy="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(second!).toBeLessThan(first!);
  });

  it('renders a PNG of the chart’s size', () => {
    const out = png(chart);
    expect(out.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([out.readUInt32BE(16), out.readUInt32BE(20)]).toEqual([560, 340]);
  });

  it('refuses a chart with nothing to plot', () => {
    expect(() => svg({ ...chart, series: [] })).toThrow(/nothing to plot/);
  });

  it('ticks at 1, 2, 5 steps', () => {
    expect(niceTicks(0, 10_000)).toEqual([0, 2000, 4000, 6000, 8000, 10_000]);
  });
});
