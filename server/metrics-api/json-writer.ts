// compound_metrics as JSON text written directly: with 1,000 queues and 500 processes, building
// the object and serialising it cost several times more than the answer's text itself. Everything
// but the live numbers (backlog, latency, busy) is quoted once and cached per queue and process.
// Its output equals JSON.stringify(compoundMetrics(ctx)); test/metrics checks that. Reads any
// metrics source's view (source.ts), not the job system's objects.
import type { MetricsView, ProcessStats, QueueStats } from './source.ts';
import { isoWithOffset } from './started-at.ts';

const queueKeys = new WeakMap<QueueStats, string>();
const processHeads = new WeakMap<ProcessStats, { version: number; text: string }>();

function queueKey(q: QueueStats): string {
  let k = queueKeys.get(q);
  if (k === undefined) queueKeys.set(q, (k = `${JSON.stringify(q.name)}:{"backlog":`));
  return k;
}

function processHead(p: ProcessStats): string {
  const cached = processHeads.get(p);
  if (cached && cached.version === p.version) return cached.text;
  const { hostname, pid, tag, labels } = p.identity;
  const text =
    `{"hostname":${JSON.stringify(hostname)},"pid":${pid},"tag":${JSON.stringify(tag)},"started_at":${JSON.stringify(isoWithOffset(p.startedAt))},` +
    `"queues":${JSON.stringify(p.queueNames())},"labels":${JSON.stringify(labels)},"concurrency":${p.concurrency},"busy":`;
  processHeads.set(p, { version: p.version, text });
  return text;
}

export function queuesJson(jobs: MetricsView, now: number): { text: string; enqueued: number } {
  const parts: string[] = [];
  let enqueued = 0;
  for (const q of jobs.queues()) {
    const backlog = q.backlog;
    enqueued += backlog;
    parts.push(`${queueKey(q)}${backlog},"latency":${q.latency(now)}}`);
  }
  return { text: `{${parts.join(',')}}`, enqueued };
}

export function processesJson(jobs: MetricsView): string {
  const parts: string[] = [];
  for (const p of jobs.processes()) parts.push(`${processHead(p)}${p.busy}}`);
  return `[${parts.join(',')}]`;
}

function jobsJson(jobs: MetricsView, enqueued: number): string {
  const { processed, failed } = jobs.counters();
  return `{"processed":${processed},"failed":${failed},"enqueued":${enqueued}}`;
}

export function compoundJson(jobs: MetricsView, now: number): string {
  const q = queuesJson(jobs, now);
  return `{"queues":${q.text},"processes":${processesJson(jobs)},"jobs":${jobsJson(jobs, q.enqueued)}}`;
}

export function queueMetricsJson(jobs: MetricsView, now: number): string {
  return `{"queues":${queuesJson(jobs, now).text}}`;
}

export function processMetricsJson(jobs: MetricsView): string {
  return `{"processes":${processesJson(jobs)}}`;
}

export function jobStatsJson(jobs: MetricsView): string {
  let enqueued = 0;
  for (const q of jobs.queues()) enqueued += q.backlog;
  return `{"jobs":${jobsJson(jobs, enqueued)}}`;
}
