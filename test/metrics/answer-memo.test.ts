// The metrics API keeps an answer's bytes while nothing it is made of changed: the same Buffer for
// an unchanged system, and a fresh answer, equal to the writer's text, after any change of a queue,
// a process, the counters or the clock's whole second. compound_metrics joins each entry's kept
// bytes (compoundBytes): after each change they must still be exactly compoundJson's text.
import { describe, expect, it } from 'vitest';
import { AnswerMemo } from '../../server/metrics-api/answer-memo.ts';
import { compoundBytes, compoundJson } from '../../server/metrics-api/json-writer.ts';
import type { MetricsView, ProcessStats, QueueStats } from '../../server/metrics/source.ts';

function queue(name: string, backlog: number, enqueuedAt: number): QueueStats & { backlog: number; enqueuedAt: number } {
  return {
    name,
    backlog,
    enqueuedAt,
    latency(now: number) {
      return this.backlog === 0 ? 0 : Math.trunc((now - this.enqueuedAt) / 1000);
    },
  };
}

function process(pid: number, queues: string[]): ProcessStats & { busy: number; version: number; queues: string[] } {
  return {
    identity: { hostname: 'box', pid, tag: 'app', labels: [] },
    startedAt: Date.UTC(2026, 0, 1),
    concurrency: 5,
    busy: 0,
    version: 1,
    queues,
    queueNames() {
      return this.queues;
    },
  };
}

describe.each([
  ['the text writer', compoundJson],
  ['the bytes writer (compound_metrics)', compoundBytes],
] as const)('AnswerMemo with %s', (_name, writer) => {
  const qs = [queue('default', 3, 0), queue('mailers', 0, 0)];
  const ps = [process(10, ['default']), process(11, ['mailers'])];
  const counters = { processed: 7, failed: 1 };
  const view: MetricsView = { queues: () => qs, processes: () => ps, counters: () => ({ ...counters }) };
  const memo = new AnswerMemo(writer);
  let now = 5_000;
  let last = memo.answer(view, now);

  /** The next answer: asserts it equals the writer's text and whether it is the kept Buffer. */
  function next(kept: boolean) {
    const b = memo.answer(view, now);
    expect(b.toString('utf8')).toBe(compoundJson(view, now));
    expect(b === last).toBe(kept);
    last = b;
  }

  it('answers the same bytes while nothing changed, within the same whole second', () => {
    next(true);
    now += 400;
    next(true);
  });

  it('answers anew after each kind of change', () => {
    qs[0]!.backlog = 4;
    next(false);
    now += 1000; // latency of the non-empty queue moves a second
    next(false);
    ps[1]!.busy = 2;
    next(false);
    ps[0]!.queues = ['default', 'mailers'];
    ps[0]!.version++;
    next(false);
    counters.processed++;
    next(false);
    counters.failed++;
    next(false);
    next(true);
  });

  it('answers anew when a queue or a process comes or goes, or one object replaces another', () => {
    qs.push(queue('reports', 1, 0));
    next(false);
    // A queue goes and a process comes: as many inputs as before, in other objects.
    const moved = qs.pop()!;
    ps.unshift(process(12, [moved.name]));
    next(false);
    ps.shift();
    next(false);
    qs[1] = queue('mailers', 0, 0);
    next(false);
    next(true);
  });
});
