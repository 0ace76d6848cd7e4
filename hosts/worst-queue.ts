// The worst queue across the watched connections, worded for the desktop tray (tooltip, menu-bar
// title, menu line). Worst = the longest latency (how long the oldest job has waited), then the
// largest backlog: latency is what a user feels; a big backlog that drains fast is less urgent.
import type { QueueMetrics } from '../contract/metrics.ts';

export interface ConnectionQueues {
  connection: string; // the connection's name, as the UI shows it
  queues: QueueMetrics['queues'];
}

export interface WorstQueue {
  connection: string;
  queue: string;
  backlog: number;
  latency: number;
}

export function worstQueue(samples: ConnectionQueues[]): WorstQueue | null {
  let worst: WorstQueue | null = null;
  for (const s of samples) {
    for (const [queue, q] of Object.entries(s.queues)) {
      if (q.backlog <= 0 && q.latency <= 0) continue;
      if (!worst || q.latency > worst.latency || (q.latency === worst.latency && q.backlog > worst.backlog)) {
        worst = { connection: s.connection, queue, backlog: q.backlog, latency: q.latency };
      }
    }
  }
  return worst;
}

export interface TrayText {
  /** Hover text (every platform). */
  tooltip: string;
  /** Beside the icon in the macOS menu bar: short, empty when all is quiet. */
  title: string;
  /** The first, disabled line of the tray menu (Linux shows no tooltip for app indicators). */
  menuLine: string;
}

export function describeWorst(worst: WorstQueue | null, problem?: string): TrayText {
  if (problem) return { tooltip: `Jobscope: ${problem}`, title: '', menuLine: problem };
  if (!worst) return { tooltip: 'Jobscope: every queue is empty', title: '', menuLine: 'Every queue is empty' };
  const line = `${worst.queue} (${worst.connection}): ${worst.backlog} waiting, latency ${formatSeconds(worst.latency)}`;
  return { tooltip: `Jobscope: worst queue ${line}`, title: `${worst.queue} ${formatSeconds(worst.latency)}`, menuLine: `Worst queue: ${line}` };
}

export function formatSeconds(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
