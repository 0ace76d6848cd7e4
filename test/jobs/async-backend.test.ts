// The job system over an asynchronous backend (every step answers a promise that settles on a later
// turn, as a Redis adapter's do): jobs run, fail into the retry set, end in the dead set, counters
// are written and found again after a restart, and a periodic job is not enqueued twice while its
// push is in flight. The backend underneath is the real SQLite one, so what is kept is checked too.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../server/config.ts';
import { openStore, type Store } from '../../server/store/index.ts';
import { JobSystem } from '../../server/jobs/job-system.ts';
import type { JobBackend, SyncJobBackend } from '../../server/jobs/backend.ts';
import { SYNTHETIC, syntheticJob } from '../../server/jobs/builtin/synthetic.ts';
import { tempDir } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/** Every method of `sync` answered on a later macrotask, as a promise; counts the calls in flight. */
function asyncOf(sync: SyncJobBackend): JobBackend & { calls: string[] } {
  const calls: string[] = [];
  const wrapped = {} as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(sync)) as (keyof SyncJobBackend)[]) {
    if ((name as string) === 'constructor') continue;
    wrapped[name] = (...args: unknown[]) =>
      new Promise((resolve, reject) =>
        setImmediate(() => {
          calls.push(name);
          try {
            resolve((sync[name] as (...a: unknown[]) => unknown).apply(sync, args));
          } catch (err) {
            reject(err as Error);
          }
        }),
      );
  }
  return Object.assign(wrapped as unknown as JobBackend, { calls });
}

const open: { jobs: JobSystem; store: Store; dir: string }[] = [];
function start(dir = tempDir()) {
  const config = resolveConfig({ dataDir: dir, logLevel: 'silent', jobBackoffUnitMs: 1, jobPollMs: 10, queueForgetIdleMinutes: 0 }, {});
  const store = openStore(config);
  const backend = asyncOf(store.jobBackend);
  const jobs = new JobSystem(config, backend);
  jobs.register(SYNTHETIC, syntheticJob);
  jobs.register('tick', { class: 'TickJob', queue: 'ticks', retry: 0, perform: () => new Promise((r) => setTimeout(r, 50)) });
  const entry = { jobs, store, dir };
  open.push(entry);
  return { ...entry, backend };
}
afterEach(async () => {
  for (const { jobs, store, dir } of open.splice(0)) {
    await jobs.stop();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('the job system over an asynchronous backend', () => {
  it('runs, retries and buries jobs; counters and the dead set are kept across a restart', async () => {
    const { jobs, backend, store, dir } = start();
    const started = jobs.start();
    expect(started).toBeInstanceOf(Promise);
    await started;
    const ok = jobs.enqueue(SYNTHETIC, {}, { queue: 'fine', count: 3 });
    expect(ok).toBeInstanceOf(Promise);
    expect(await ok).toHaveLength(3);
    await jobs.enqueue(SYNTHETIC, { fail: true }, { queue: 'flaky', retry: 2, class: 'FlakyJob' });
    await waitFor('the failing job in the dead set', async () => (await jobs.deadSize()) === 1);
    const [dead] = await jobs.dead(10);
    expect(dead).toMatchObject({ queue: 'flaky', class: 'FlakyJob', retry_count: 2 });
    expect(dead!.error).toContain('failed on purpose');
    // 3 fine runs + 3 runs of the failing one (first try and 2 retries), 3 of them failed.
    expect(jobs.counters()).toEqual({ processed: 6, failed: 3 });
    expect(backend.calls.filter((c) => c === 'retryLater')).toHaveLength(2);
    expect(backend.calls.filter((c) => c === 'kill')).toHaveLength(1);
    expect(backend.calls.filter((c) => c === 'ack')).toHaveLength(3);

    open.splice(0);
    await jobs.stop();
    store.close();
    const again = start(dir);
    await again.jobs.start();
    expect(again.jobs.counters()).toEqual({ processed: 6, failed: 3 });
    expect(await again.jobs.deadSize()).toBe(1);
    expect(await again.jobs.retryDead()).toBe(1);
    await waitFor('the retried dead job dead again', async () => (await again.jobs.deadSize()) === 1 && again.jobs.counters().processed === 7);
  });

  it('enqueueOnce does not enqueue twice while the first push is in flight', async () => {
    const { jobs, backend } = start();
    await jobs.start();
    const first = jobs.enqueueOnce('tick');
    const second = jobs.enqueueOnce('tick');
    expect(await first).toBe(true);
    expect(await second).toBe(false);
    expect(backend.calls.filter((c) => c === 'push')).toHaveLength(1);
  });
});
