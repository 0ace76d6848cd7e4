// The chart's input types, apart so the chart's parts (ChartFrame, TimeSeriesChart) share them
// without importing each other.
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

/** A stretch of time shaded on the plot, e.g. while the dashboard was paused; to null: still open
 *  (up to the chart's end: a line there when the chart ends where it began). */
export interface Span {
  from: number;
  to: number | null;
  label: string;
}
