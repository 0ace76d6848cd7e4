export const RANGES = [
  { key: '15m', label: '15 m', ms: 15 * 60_000 },
  { key: '1h', label: '1 h', ms: 3600_000 },
  { key: '6h', label: '6 h', ms: 6 * 3600_000 },
  { key: '24h', label: '24 h', ms: 86400_000 },
  { key: '7d', label: '7 d', ms: 7 * 86400_000 },
] as const;

export type RangeKey = (typeof RANGES)[number]['key'];

/** Whether a remembered value (renderer/app/ui-state.ts) is still one of the ranges offered. */
export const isRangeKey = (v: unknown): v is RangeKey => RANGES.some((r) => r.key === v);

/** Points per series asked of the server: enough for a sharp line, well under its ~1,000 cap. */
export const CHART_POINTS = 600;
/** The sparklines in the queues table only need a trend. */
export const SPARK_POINTS = 30;
