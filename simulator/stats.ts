// What a fleet counts: per-runner counters, errors by kind, protocol violations, fault answers,
// and one-second buckets for the throughput chart (the last hour, older buckets dropped).
import type { FleetTotals, RunnerCounters, Throughput, Violation } from '../contract/simulator.ts';
import { FaultTally } from './faults.ts';

export const emptyCounters = (): RunnerCounters => ({
  builds: 0, success: 0, failed: 0, canceled: 0, abandoned: 0, requests: 0, polls_empty: 0,
  trace_bytes: 0, artifact_bytes: 0, status_416: 0, faults: 0, errors: 0,
});

interface Bucket {
  builds: number;
  traceBytes: number;
  requests: number;
}

const KEEP_S = 3600;
const MAX_VIOLATIONS = 200;

export class FleetStats {
  readonly errorsByKind: Record<string, number> = {};
  readonly violations: Violation[] = [];
  violationCount = 0;
  readonly faults = new FaultTally();
  tracesVerified = 0;
  artifactsVerified = 0;
  private readonly buckets = new Map<number, Bucket>();

  private bucket(now = Date.now()): Bucket {
    const sec = Math.floor(now / 1000);
    let b = this.buckets.get(sec);
    if (!b) {
      b = { builds: 0, traceBytes: 0, requests: 0 };
      this.buckets.set(sec, b);
      if (this.buckets.size > KEEP_S + 60) for (const k of this.buckets.keys()) if (k < sec - KEEP_S) this.buckets.delete(k);
    }
    return b;
  }

  error(kind: string, c?: RunnerCounters): void {
    this.errorsByKind[kind] = (this.errorsByKind[kind] ?? 0) + 1;
    if (c) c.errors++;
  }

  violation(kind: string, runner: string, buildId: number | null, message: string): void {
    this.violationCount++;
    if (this.violations.length < MAX_VIOLATIONS) this.violations.push({ kind, runner, build_id: buildId, message, at: new Date().toISOString() });
  }

  request(): void {
    this.bucket().requests++;
  }
  traceBytes(n: number): void {
    this.bucket().traceBytes += n;
  }
  buildDone(): void {
    this.bucket().builds++;
  }

  throughput(minutes: number, stepS: number, now = Date.now()): Throughput {
    const end = Math.floor(now / 1000);
    const start = end - minutes * 60 + 1;
    const out: Throughput = { step_s: stepS, t: [], builds_per_min: [], trace_bytes_per_s: [], requests_per_s: [] };
    for (let s = start - ((start % stepS) + stepS) % stepS; s <= end; s += stepS) {
      let builds = 0, bytes = 0, reqs = 0;
      for (let i = s; i < s + stepS; i++) {
        const b = this.buckets.get(i);
        if (b) {
          builds += b.builds;
          bytes += b.traceBytes;
          reqs += b.requests;
        }
      }
      out.t.push(s * 1000);
      out.builds_per_min.push((builds * 60) / stepS);
      out.trace_bytes_per_s.push(bytes / stepS);
      out.requests_per_s.push(reqs / stepS);
    }
    return out;
  }
}

export function totalsOf(counters: RunnerCounters[], stats: FleetStats): FleetTotals {
  const sum = (k: keyof RunnerCounters) => counters.reduce((a, c) => a + c[k], 0);
  return {
    builds_done: sum('builds'),
    success: sum('success'),
    failed: sum('failed'),
    canceled: sum('canceled'),
    abandoned: sum('abandoned'),
    trace_bytes: sum('trace_bytes'),
    artifact_bytes: sum('artifact_bytes'),
    requests: sum('requests'),
    status_416: sum('status_416'),
    traces_verified: stats.tracesVerified,
    artifacts_verified: stats.artifactsVerified,
    faults_injected: sum('faults'),
  };
}
