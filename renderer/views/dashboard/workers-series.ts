// The dashboard's "Busy workers vs concurrency" chart's series, apart from the view: the early
// entry draws this chart before React has loaded (early-chart.ts), and must draw what the view
// then draws.
import type { History } from '../../api/client.ts';
import type { Series } from '../../components/chart-types.ts';
import { PALETTE } from '../../components/palette.ts';

export function workersSeries(h: Pick<History, 'totals'>): Series[] {
  return [
    { name: 'busy', values: h.totals.busy, color: PALETTE[0]!, kind: 'area' },
    { name: 'concurrency', values: h.totals.concurrency, color: PALETTE[3]!, kind: 'step' },
  ];
}
