// Faults in the step set of the Redis and PostgreSQL modes: kill -9 and restart of the job system's
// Redis (append-only, fsync always), SIGSTOP/SIGCONT of it, pg_ctl stop/start and kill -9 of the
// postmaster, kill -9 of one of the two server instances. A fault lasts a number of steps the step
// itself draws; the steps in between run against the damaged system. What they may answer then:
// what they answer healthy, or a 503 with Retry-After and a message (the model takes it as "not
// applied"); a request without an answer (a timeout, a reset) has an unknown outcome, so the fault
// is healed at once and the model learns the truth from what the server shows (reconcile).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { BuildView } from '../../../contract/control.ts';
import { unfixed, type KnownBug } from './known-unfixed.ts';
import type { Model } from './model.ts';
import { NotApplied, REDIS_COMMAND_TIMEOUT_MS, UnknownOutcome, type Answer, type Mode, type RealSystem } from './system.ts';
import { pick, type Cmd } from './step.ts';

export type FaultKind = 'redis-kill9' | 'redis-sigstop' | 'pg-stop' | 'pg-immediate' | 'pg-kill9' | 'instance-kill9';

/** The bug whose listing in known-unfixed.ts lets a 5xx pass as an unknown outcome during this fault. */
const BUG_OF: Partial<Record<FaultKind, KnownBug>> = {
  'redis-kill9': 'redis-503',
  'redis-sigstop': 'redis-503',
  'pg-stop': 'pg-503',
  'pg-immediate': 'pg-503',
  'pg-kill9': 'pg-503',
};

/** The bug whose listing lets this fault lose or repeat the ends of the jobs enqueued before it. */
const JOB_ENDS_BUG: Partial<Record<FaultKind, KnownBug>> = {
  'redis-kill9': 'redis-job-ends',
  'redis-sigstop': 'redis-job-ends',
  'pg-stop': 'pg-job-ends',
  'pg-immediate': 'pg-job-ends',
  'pg-kill9': 'pg-job-ends',
};

/** What an answer may be while a fault is in force (RealSystem.request calls it for every 5xx). */
export class Outage {
  constructor(
    readonly kind: FaultKind,
    readonly what: string,
  ) {}

  answered(a: Answer, what: () => string): void {
    const bug = BUG_OF[this.kind];
    if (a.status === 503) {
      let message: unknown;
      try {
        message = a.json().message;
      } catch {
        message = undefined;
      }
      const retryAfter = Number(a.headers['retry-after']);
      const wellFormed = Number.isInteger(retryAfter) && retryAfter > 0 && typeof message === 'string' && message !== '';
      // The server says a change it sent may have been made before the engine went away: unknown.
      if (wellFormed && /may or may not have been made/.test(String(message))) throw new UnknownOutcome(`during ${this.what}: ${what()}: ${message}`);
      if (wellFormed) throw new NotApplied(what());
      if (!(bug && unfixed(bug))) throw new assert.AssertionError({ message: `during ${this.what}: a 503 needs Retry-After (whole seconds) and a JSON message: ${what()}` });
    }
    if (bug && unfixed(bug)) throw new UnknownOutcome(`during ${this.what} (${bug} listed as unfixed): ${what()}`);
  }
}

export interface ActiveFault {
  kind: FaultKind;
  /** The step count at which it heals (before that step runs). */
  healAt: number;
  heal(): Promise<void>;
}

/** Until the server answers its job stats and projects again on every live instance (503s meanwhile allowed). */
async function waitReady(r: RealSystem, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  const target = r.target;
  const probe = new Outage('redis-kill9', `recovery from ${what}`);
  try {
    for (const i of r.live()) {
      r.target = i;
      for (const route of ['/api/v3/sidekiq/job_stats', '/api/v3/sim/projects', '/api/v3/sim/jobs/queues']) {
        for (;;) {
          r.outage = probe;
          try {
            const res = await r.admin('GET', route);
            if (res.status === 200) break;
          } catch (err) {
            if (!(err instanceof NotApplied || err instanceof UnknownOutcome)) throw err;
          }
          assert.ok(Date.now() < deadline, `instance ${i}: ${route} not answering 200 within 60 s of the end of ${what}\n${r.recent.join('\n')}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  } finally {
    r.outage = undefined;
    r.target = target;
  }
}

/** Ends the fault in force (if any) and waits until the system answers again. */
export async function heal(m: Model, r: RealSystem): Promise<void> {
  const f = m.fault;
  if (!f) return;
  m.fault = undefined;
  r.outage = undefined;
  await f.heal();
  if (f.kind === 'instance-kill9') m.restarted(r.mode === 'pg');
  // An instance that lost its database may have missed builds made through the other: a new queue
  // value after the reconnect is its right, so the values runners hold are forgotten.
  if (f.kind.startsWith('pg-')) for (const x of m.runners) x.lastUpdate = undefined;
  const endsBug = JOB_ENDS_BUG[f.kind];
  if (endsBug && unfixed(endsBug)) Object.assign(m.jobs, { acked: 0, failing: 0, deadMin: 0, loose: true });
  await waitReady(r, f.kind);
}

export class Fault implements Cmd {
  constructor(
    readonly kind: FaultKind,
    readonly duration: number,
    readonly instance: number,
  ) {}
  check = (m: Readonly<Model>) => m.fault === undefined && m.steps < m.stepLimit;
  async run(m: Model, r: RealSystem) {
    m.steps++;
    m.faults++;
    const healAt = m.steps + this.duration;
    const redis = () => r.backing('redis');
    const pg = () => r.backing('pg');
    let healFn: () => Promise<void>;
    let outage = true;
    if (this.kind === 'redis-kill9') {
      await redis().kill9();
      healFn = () => redis().restart();
    } else if (this.kind === 'redis-sigstop') {
      redis().pause();
      // A hung request heals it at once (its outcome is unknown); this caps a stop that nothing asks
      // about, after twice the server's command timeout, so that a request sent at the stop gets its 503.
      const timer = setTimeout(() => redis().resume(), 2 * REDIS_COMMAND_TIMEOUT_MS);
      healFn = async () => (clearTimeout(timer), redis().resume());
    } else if (this.kind === 'instance-kill9') {
      const i = pick(r.live(), this.instance);
      await r.killInstance(i);
      healFn = () => r.startInstance(i);
      outage = false;
    } else {
      const how = this.kind === 'pg-stop' ? 'fast' : this.kind === 'pg-immediate' ? 'immediate' : 'kill';
      await pg().halt(how);
      healFn = () => pg().resume();
    }
    m.fault = { kind: this.kind, healAt, heal: healFn };
    if (outage) r.outage = new Outage(this.kind, `${this} (since step ${m.steps})`);
  }
  toString = () => `Fault(${this.kind}, ${this.duration} steps${this.kind === 'instance-kill9' ? `, instance#${this.instance}` : ''})`;
}

/**
 * The entities the server shows against the model after a step of unknown outcome: at most that
 * step's change may differ, and the model takes it over. New projects and builds are adopted; a
 * runner registered unseen (its token never read) is deleted through the control API and kept as
 * deleted; one existing build may have moved one legal transition, its trace grown or replaced.
 */
export async function reconcile(m: Model, r: RealSystem, step: Cmd): Promise<void> {
  const what = `after ${step} of unknown outcome`;
  const projects = (await r.admin('GET', '/api/v3/sim/projects')).json() as { id: number; runners_token: string; shared_runners_enabled: boolean }[];
  const newProjects = projects.filter((p) => !m.projects.some((x) => x.id === p.id));
  assert.ok(newProjects.length <= 1, `${what}: ${newProjects.length} projects appeared`);
  for (const p of newProjects) m.projects.push({ id: p.id, runnersToken: p.runners_token, shared: p.shared_runners_enabled });

  const runners = (await r.admin('GET', '/api/v3/sim/runners')).json() as { id: number; active: boolean }[];
  for (const x of runners) {
    const known = m.runner(x.id);
    if (!known) {
      const del = await r.admin('DELETE', `/api/v3/sim/runners/${x.id}`);
      assert.equal(del.status, 204, `${what}: delete the runner registered unseen`);
      m.runners.push({ id: x.id, token: `unseen-${x.id}`, shared: true, projectId: null, active: false, deleted: true });
    } else {
      assert.ok(!known.deleted, `${what}: deleted runner ${x.id} is listed again`);
      known.active = x.active;
    }
  }
  for (const x of m.live()) if (!runners.some((y) => y.id === x.id)) x.deleted = true;

  const list = (await r.admin('GET', '/api/v3/sim/builds?limit=1000')).json() as BuildView[];
  let changed = 0;
  for (const v of list.sort((a, b) => a.id - b.id)) {
    const b = m.build(v.id);
    if (!b) {
      assert.equal(v.status, 'pending', `${what}: build ${v.id} appeared ${v.status}`);
      assert.ok(m.projects.some((p) => p.id === v.project_id), `${what}: build ${v.id} of an unknown project`);
      m.builds.push({ id: v.id, projectId: v.project_id, token: null, status: 'pending', runnerId: null, trace: Buffer.alloc(0), artifact: null });
      m.epoch++;
      continue;
    }
    if (v.status === b.status && v.runner_id === b.runnerId && v.trace_length === b.trace.length) continue;
    // A runner's deletion fails every build it was running, in the one step.
    const orphaned = b.status === 'running' && v.status === 'failed' && !m.live().some((x) => x.id === b.runnerId);
    if (!orphaned) changed++;
    const moved = `${what}: build ${b.id} ${b.status} (runner ${b.runnerId}) -> ${v.status} (runner ${v.runner_id})`;
    const legal =
      (b.status === v.status && b.status === 'running') ||
      (b.status === 'pending' && (v.status === 'running' || v.status === 'canceled')) ||
      (b.status === 'running' && ['success', 'failed', 'canceled'].includes(v.status));
    assert.ok(legal, moved);
    if (b.status === 'pending' && v.status === 'running') assert.ok(m.live().some((x) => x.id === v.runner_id), `${moved}: not a live runner`);
    else assert.equal(v.runner_id, b.runnerId, moved);
    const trace = await r.admin('GET', `/api/v3/sim/builds/${b.id}/trace`);
    assert.equal(trace.status, 200, `${what}: trace of build ${b.id}`);
    b.status = v.status as typeof b.status;
    b.runnerId = v.runner_id;
    b.trace = trace.body;
  }
  assert.ok(changed <= 1, `${what}: ${changed} builds changed`);
  step.unknownOutcome?.(m);
}

/**
 * Every step of a mode suite: heals a fault whose time has come, sends the step's requests to the
 * instance it names (of those up), and turns an outage's answers into the model's terms.
 */
export class Guarded implements Cmd {
  constructor(
    readonly inner: Cmd,
    readonly instance: number,
  ) {}
  check = (m: Readonly<Model>) => m.steps < m.stepLimit && this.inner.check(m) && (m.fault === undefined || this.inner.duringFault !== false);
  async run(m: Model, r: RealSystem) {
    if (m.fault && m.steps >= m.fault.healAt) await heal(m, r);
    // A heal may have made the step one it would not run: fast-check checked it before.
    if (!this.check(m)) return;
    const live = r.live();
    r.target = pick(live, this.instance);
    try {
      await this.inner.run(m, r);
    } catch (err) {
      if (err instanceof NotApplied) {
        m.steps++;
        m.notApplied++;
        return;
      }
      if (err instanceof UnknownOutcome) {
        m.steps++;
        m.unknown.push(`${this.inner}: ${err.message.split('\n')[0]}`);
        await heal(m, r);
        await reconcile(m, r, this.inner);
        return;
      }
      throw err;
    }
  }
  unknownOutcome = undefined;
  toString = () => (this.instance === 0 ? this.inner.toString() : `${this.inner}@${this.instance}`);
}

/** The faults of a mode, by weight per ~800 of other steps. */
export function faultArbitraries(mode: Mode, weight: number): fc.WeightedArbitrary<Cmd>[] {
  if (weight <= 0 || mode === 'sqlite') return [];
  const all: FaultKind[] = mode === 'redis' ? ['redis-kill9', 'redis-sigstop'] : ['pg-stop', 'pg-immediate', 'pg-kill9', 'instance-kill9', 'instance-kill9'];
  // MODEL_FAULTS=pg-kill9,instance-kill9 draws only these (to tell which fault a failure needs).
  const only = process.env.MODEL_FAULTS?.split(',');
  const kinds = only ? all.filter((k) => only.includes(k)) : all;
  if (kinds.length === 0) return [];
  return [
    {
      weight,
      arbitrary: fc.tuple(fc.constantFrom(...kinds), fc.integer({ min: 0, max: 12 }), fc.nat({ max: 1 })).map(([k, d, i]) => new Fault(k, d, i)),
    },
  ];
}
