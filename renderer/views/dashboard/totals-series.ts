// The series of the dashboard's charts of totals ("Busy workers vs concurrency", "Processed and
// failed per second"), apart from the view: the early entry draws the workers chart and lays out
// the legends before React has loaded (early-chart.ts), and must match what the view then draws.
import type { History } from '../../api/client.ts';
import type { Series } from '../../components/chart-types.ts';
import { PALETTE } from '../../components/palette.ts';

export function workersSeries(h: Pick<History, 'totals'>): Series[] {
  return [
    { name: 'busy', values: h.totals.busy, color: PALETTE[0]!, kind: 'area' },
    { name: 'concurrency', values: h.totals.concurrency, color: PALETTE[3]!, kind: 'step' },
  ];
}

export function ratesSeries(h: Pick<History, 'totals'>): Series[] {
  return [
    { name: 'processed/s', values: h.totals.processed_rate, color: PALETTE[2]! },
    { name: 'failed/s', values: h.totals.failed_rate, color: PALETTE[3]! },
  ];
}
