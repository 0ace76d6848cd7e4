// A trend line for a table cell. Plain SVG rather than recharts: hundreds of rows each with a chart
// instance would cost far more than one polyline apiece, and a sparkline needs no axes or tooltips.
export function Sparkline({ values, width = 100, height = 22 }: { values: (number | null)[] | undefined; width?: number; height?: number }) {
  if (!values || values.length < 2) return <svg width={width} height={height} aria-hidden="true" />;
  let max = 0;
  for (const v of values) if (v !== null && v > max) max = v;
  const dx = width / (values.length - 1);
  const segments: string[] = [];
  let cur: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (cur.length) segments.push(cur.join(' '));
      cur = [];
      return;
    }
    cur.push(`${(i * dx).toFixed(1)},${(height - 1 - (max ? (v / max) * (height - 2) : 0)).toFixed(1)}`);
  });
  if (cur.length) segments.push(cur.join(' '));
  return (
    <svg width={width} height={height} className="sparkline" role="img" aria-label={`trend, peak ${max}`}>
      {segments.map((pts, i) => (
        <polyline key={i} points={pts} fill="none" stroke="var(--accent)" strokeWidth={1.3} />
      ))}
    </svg>
  );
}
