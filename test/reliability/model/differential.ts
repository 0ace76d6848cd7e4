// The differential check of the modes: one seeded script of job steps (enqueue jobs that pass, fail
// once, go to the retry set or to the dead set; drain; empty the retry and dead sets; an outage of
// the job store) run on SQLite, Redis and PostgreSQL, each answer reduced to what the modes must
// agree on (statuses, counts, the failed count, the retry and dead counts, an outage's 503 with
// Retry-After and a message), ids and times left out.
import assert from 'node:assert/strict';
import { prng } from '../support.ts';
import { Model, QUEUES } from './model.ts';
import { Fault, heal } from './outage.ts';
import { FiveHundred, RealSystem, type Answer, type Backing, type Mode } from './system.ts';

export type Op =
  | { kind: 'enqueue'; queue: string; count: number; fail: boolean; retry: false | 0 | 2 }
  | { kind: 'drain' }
  | { kind: 'clear'; set: 'retries' | 'dead' }
  | { kind: 'outage' };

/** The script: `length` steps from `seed`, a drain after each few, one outage after a drain in the middle, a drain last. */
export function script(seed: number, length: number): Op[] {
  const rng = prng(seed);
  const ops: Op[] = [];
  for (let i = 0; i < length; i++) {
    const r = rng.next();
    if (r < 0.6) ops.push({ kind: 'enqueue', queue: rng.pick(QUEUES), count: rng.int(1, 8), fail: rng.next() < 0.5, retry: rng.pick([false, 0, 2] as const) });
    else if (r < 0.85) ops.push({ kind: 'drain' });
    else ops.push({ kind: 'clear', set: rng.pick(['retries', 'dead'] as const) });
    if (i === length >> 1) ops.push({ kind: 'drain' }, { kind: 'outage' });
  }
  ops.push({ kind: 'drain' });
  return ops;
}

/** An outage's answer as the modes must agree on it: the status, and whether it says when and why. */
const outageShape = (a: Answer | 'no answer') => {
  if (a === 'no answer') return { status: 'no answer' };
  let message: unknown;
  try {
    message = a.json().message;
  } catch {
    message = undefined;
  }
  return { status: a.status, retryAfter: Number.isInteger(Number(a.headers['retry-after'])) && Number(a.headers['retry-after']) > 0, message: typeof message === 'string' && message !== '' };
};

const OUTAGE_PROBES: [string, string, unknown][] = [
  ['POST', '/api/v3/sim/jobs', { queue: QUEUES[0], count: 1 }],
  ['GET', '/api/v3/sim/jobs/retries?limit=10', undefined],
  ['GET', '/api/v3/sim/jobs/dead?limit=10', undefined],
  ['GET', '/api/v4/sidekiq/job_stats', undefined],
];

/** Runs the script on a fresh system of this mode; each step's reduced answer, in order. */
export async function runScript(mode: Mode, backing: Backing, ops: Op[]): Promise<unknown[]> {
  const r = await RealSystem.start({ kind: 'inproc', mode, backing, exact: true });
  const m = new Model();
  const out: unknown[] = [];
  try {
    const stats = async () => (await r.admin('GET', '/api/v3/sidekiq/job_stats')).json().jobs as { processed: number; failed: number };
    const base = await stats();
    let pushed = 0;
    for (const op of ops) {
      if (op.kind === 'enqueue') {
        const res = await r.admin('POST', '/api/v3/sim/jobs', { queue: op.queue, count: op.count, ...(op.fail ? { fail: true, retry: op.retry } : {}) });
        out.push({ op, status: res.status, enqueued: res.json().enqueued });
        if (res.status === 202) pushed += op.count;
      } else if (op.kind === 'drain') {
        // Every job pushed runs once (a retry's backoff is hours: system.ts's `exact`).
        const deadline = Date.now() + 30_000;
        let s = await stats();
        while (s.processed - base.processed < pushed) {
          assert.ok(Date.now() < deadline, `${mode}: ${s.processed - base.processed} of ${pushed} jobs ran in 30 s`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          s = await stats();
        }
        const retries = (await r.admin('GET', '/api/v3/sim/jobs/retries?limit=1000')).json() as unknown[];
        const dead = (await r.admin('GET', '/api/v3/sim/jobs/dead?limit=1000')).json() as unknown[];
        const queues = ((await r.admin('GET', '/api/v3/sim/jobs/queues')).json() as { name: string; backlog: number }[])
          .filter((q) => QUEUES.includes(q.name) && q.backlog > 0)
          .map((q) => [q.name, q.backlog]);
        out.push({ op, processed: s.processed - base.processed, failed: s.failed - base.failed, retries: retries.length, dead: dead.length, queues });
      } else if (op.kind === 'clear') {
        const res = await r.admin('DELETE', `/api/v3/sim/jobs/${op.set}`);
        out.push({ op, status: res.status, count: res.json().count });
      } else if (mode !== 'sqlite') {
        // SQLite's job store is the data dir's own file: it has no outage of its own to compare.
        await new Fault(mode === 'redis' ? 'redis-kill9' : 'pg-stop', 0, 0).run(m, r);
        // The answers as they are (the model's reading of them is outage.ts's): compared, not judged here.
        r.outage = undefined;
        const answers = [];
        for (const [method, url, json] of OUTAGE_PROBES) {
          let a: Answer | 'no answer';
          try {
            a = await r.admin(method, url, json);
          } catch (err) {
            if (!(err instanceof FiveHundred) || !err.answer) a = 'no answer';
            else a = err.answer;
          }
          answers.push({ method, url, ...outageShape(a) });
        }
        await heal(m, r);
        out.push({ op, answers });
      }
    }
  } finally {
    await heal(m, r).catch(() => undefined);
    await r.close();
  }
  return out;
}
