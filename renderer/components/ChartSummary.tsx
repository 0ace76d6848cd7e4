// The chart's text alternative: a table with each series' latest, lowest and highest value over the
// range shown, so what the canvas draws can be read, not only its series' names. TimeSeriesChart
// puts it inside the canvas as fallback content: screen readers read it, nothing lays it out.
// Rebuilt with the data; a table, not a live region: it is read on request.
import { memo } from 'react';
import { dateTime, useUtcTimes } from './format.ts';
// Only what it reads of a series (importing TimeSeriesChart's type would make an import cycle).
type Series = { name: string; values: (number | null)[] };

function stats(values: (number | null)[]): { latest: number | null; min: number | null; max: number | null } {
  let latest: number | null = null;
  let min: number | null = null;
  let max: number | null = null;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    latest = v;
    if (min === null || v < min) min = v;
    if (max === null || v > max) max = v;
  }
  return { latest, min, max };
}

export const ChartSummary = memo(function ChartSummary({ series, from, to, yFormat }: { series: Series[]; from: number; to: number; yFormat?: (v: number) => string }) {
  const fmt = (v: number | null) => (v === null ? 'no data' : yFormat ? yFormat(v) : String(Math.round(v * 100) / 100));
  useUtcTimes(); // memoized: a change of zone must still re-render its times
  const time = (ms: number) => dateTime(ms);
  return (
    <table data-testid="chart-summary">
      <caption>Chart values from {time(from)} to {time(to)}</caption>
      <thead>
        <tr>
          <th scope="col">Series</th>
          <th scope="col">Latest</th>
          <th scope="col">Lowest</th>
          <th scope="col">Highest</th>
        </tr>
      </thead>
      <tbody>
        {series.map((s) => {
          const st = stats(s.values);
          return (
            <tr key={s.name} data-series={s.name}>
              <th scope="row">{s.name}</th>
              <td>{fmt(st.latest)}</td>
              <td>{fmt(st.min)}</td>
              <td>{fmt(st.max)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
});
