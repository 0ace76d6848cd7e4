// compound_metrics as JSON text written directly: with 1,000 queues and 500 processes, building
// the object and serialising it cost several times more than the answer's text itself. Everything
// but the live numbers (backlog, latency, busy) is quoted once and cached per queue and process.
// Its output equals JSON.stringify(compoundMetrics(ctx)); test/metrics checks that. Reads any
// metrics source's view (source.ts), not the job system's objects.
import type { MetricsView, ProcessStats, QueueStats } from '../metrics/source.ts';
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

/** One queue's entry in the queues object, and one process's in the processes array: the text and
 *  the byte writers below share them, so the two cannot drift apart. */
const queueEntry = (q: QueueStats, backlog: number, latency: number) => `${queueKey(q)}${backlog},"latency":${latency}}`;
const processEntry = (p: ProcessStats, busy: number) => `${processHead(p)}${busy}}`;

export function queuesJson(jobs: MetricsView, now: number): { text: string; enqueued: number } {
  const parts: string[] = [];
  let enqueued = 0;
  for (const q of jobs.queues()) {
    const backlog = q.backlog;
    enqueued += backlog;
    parts.push(queueEntry(q, backlog, q.latency(now)));
  }
  return { text: `{${parts.join(',')}}`, enqueued };
}

export function processesJson(jobs: MetricsView): string {
  const parts: string[] = [];
  for (const p of jobs.processes()) parts.push(processEntry(p, p.busy));
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

// compoundJson's text as bytes, joined from each entry's bytes kept with the numbers they were written
// with: between two calls of a busy system most entries are unchanged, and joining 1,500 small
// Buffers cost about a third of writing the 160 KB text and encoding it (bench/metrics.ts's size).
const queueBytes = new WeakMap<QueueStats, { backlog: number; latency: number; bytes: Buffer }>();
const processBytes = new WeakMap<ProcessStats, { version: number; busy: number; bytes: Buffer }>();
const QUEUES_OPEN = Buffer.from('{"queues":{');
const PROCESSES_OPEN = Buffer.from('},"processes":[');
const COMMA = Buffer.from(',');

export function compoundBytes(jobs: MetricsView, now: number): Buffer {
  const parts: Buffer[] = [QUEUES_OPEN];
  let enqueued = 0;
  for (const q of jobs.queues()) {
    const backlog = q.backlog;
    const latency = q.latency(now);
    enqueued += backlog;
    let e = queueBytes.get(q);
    if (e === undefined || e.backlog !== backlog || e.latency !== latency) {
      queueBytes.set(q, (e = { backlog, latency, bytes: Buffer.from(queueEntry(q, backlog, latency)) }));
    }
    if (parts.length > 1) parts.push(COMMA);
    parts.push(e.bytes);
  }
  parts.push(PROCESSES_OPEN);
  const first = parts.length;
  for (const p of jobs.processes()) {
    const busy = p.busy;
    let e = processBytes.get(p);
    if (e === undefined || e.version !== p.version || e.busy !== busy) {
      processBytes.set(p, (e = { version: p.version, busy, bytes: Buffer.from(processEntry(p, busy)) }));
    }
    if (parts.length > first) parts.push(COMMA);
    parts.push(e.bytes);
  }
  parts.push(Buffer.from(`],"jobs":${jobsJson(jobs, enqueued)}}`));
  return Buffer.concat(parts);
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
