// The SQLite job backend on a real data dir: what it gives back at start (also jobs cut off in
// flight), each job step, the dead set's bound, and what deleting a queue drops.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../server/store/index.ts';
import { resolveConfig } from '../../server/config.ts';
import type { NewJob, SyncJobBackend } from '../../server/jobs/backend.ts';
import type { FailedJob, Job } from '../../server/jobs/types.ts';
import { tempDir } from '../helpers/server.ts';

const open: { store: Store; dir: string }[] = [];
function openBackend(dir = tempDir()) {
  const store = openStore(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}));
  open.push({ store, dir });
  // Through the port, as the job system sees it.
  const backend: SyncJobBackend = store.jobBackend;
  return { backend, store, dir };
}
function reopen(dir: string) {
  const i = open.findIndex((o) => o.dir === dir);
  open[i]!.store.close();
  open.splice(i, 1);
  return openBackend(dir);
}
afterEach(() => {
  for (const { store, dir } of open.splice(0)) {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const job = (queue: string, over: Partial<NewJob> = {}): NewJob => ({
  queue, class: 'SyntheticJob', kind: 'synthetic', args: { n: 1 }, retry: 2, retry_count: 0, created_at: 1_000, enqueued_at: 1_000, ...over,
});
const failed = (j: Job, over: Partial<FailedJob>): FailedJob => ({ ...j, run_at: null, failed_at: 2_000, error: 'Error: boom', ...over });
const none = { processed: 0, failed: 0 };

describe('SqliteJobBackend', () => {
  it('gives back queues, waiting jobs (claimed ones too: they run again), retries and counters after a reopen', () => {
    const { backend, dir } = openBackend();
    backend.addQueue('a', 1);
    backend.addQueue('b', 2);
    backend.addQueue('a', 3); // known already: stays where it was
    const [j1, j2, j3] = backend.push([job('a'), job('a', { enqueued_at: 1_001 }), job('b', { retry: false })]);
    expect(j2!.id).toBeGreaterThan(j1!.id);
    backend.claim(j1!); // taken by a worker, then the process dies
    backend.ack(j2!, { processed: 1, failed: 0 });
    backend.retryLater(failed(j3!, { retry_count: 1, run_at: 50_000 }), { processed: 1, failed: 1 });
    const kept = reopen(dir).backend.recover();
    expect(kept.queues).toEqual(['a', 'b']);
    expect(kept.waiting.map((j) => j.id)).toEqual([j1!.id]);
    expect(kept.waiting[0]).toMatchObject(j1!);
    expect(kept.retries).toMatchObject([{ id: j3!.id, retry: false, retry_count: 1, run_at: 50_000, failed_at: 2_000, error: 'Error: boom' }]);
    expect(kept.counters).toEqual({ processed: 2, failed: 1 });
  });

  it('keeps at most `keep` dead jobs, dropping the oldest deaths, and counts across retries of the dead', () => {
    const { backend, dir } = openBackend();
    const jobs = backend.push([job('q'), job('q'), job('q'), job('q')]);
    jobs.forEach((j, i) => backend.kill(failed(j, { failed_at: 10 + i }), { processed: 1, failed: 1 }, 2));
    expect(backend.dead(10).map((j) => j.id)).toEqual([jobs[3]!.id, jobs[2]!.id]);
    // Revive one: the bound counts the one left, so the next death trims nothing.
    backend.requeue([jobs[3]!.id], 99);
    expect(backend.deadByIds(undefined).map((j) => j.id)).toEqual([jobs[2]!.id]);
    const [next] = backend.push([job('q')]);
    backend.kill(failed(next!, { failed_at: 20 }), none, 2);
    expect(backend.dead(10).map((j) => j.id)).toEqual([next!.id, jobs[2]!.id]);
    // The count survives a reopen (read at recover()).
    const again = reopen(dir).backend;
    again.recover();
    const [last] = again.push([job('q')]);
    again.kill(failed(last!, { failed_at: 30 }), none, 2);
    expect(again.dead(10).map((j) => j.id)).toEqual([last!.id, next!.id]);
    expect(again.recover().counters).toEqual({ processed: 4, failed: 4 });
  });

  it('requeues from the retry and the dead set as of `now`; deadByIds skips ids that are not dead', () => {
    const { backend } = openBackend();
    const [r, d] = backend.push([job('q'), job('q')]);
    backend.retryLater(failed(r!, { retry_count: 1, run_at: 5_000 }), none);
    backend.kill(failed(d!, {}), none, 10);
    expect(backend.deadByIds([r!.id, d!.id, 12345]).map((j) => j.id)).toEqual([d!.id]);
    backend.requeue([r!.id, d!.id], 7_000);
    const kept = backend.recover();
    expect(kept.retries).toEqual([]);
    expect(kept.waiting.map((j) => [j.id, j.enqueued_at])).toEqual([[r!.id, 7_000], [d!.id, 7_000]]);
    expect(backend.dead(10)).toEqual([]);
  });

  it('deleting queues drops their waiting and retrying jobs but keeps their dead ones; clearDead empties the set', () => {
    const { backend } = openBackend();
    backend.addQueue('gone', 1);
    backend.addQueue('kept', 2);
    const [w, r, d, other] = backend.push([job('gone'), job('gone'), job('gone'), job('kept')]);
    backend.retryLater(failed(r!, { retry_count: 1, run_at: 9 }), none);
    backend.kill(failed(d!, {}), none, 10);
    expect(backend.deleteQueues(['gone'])).toBe(2);
    const kept = backend.recover();
    expect(kept.queues).toEqual(['kept']);
    expect(kept.waiting.map((j) => j.id)).toEqual([other!.id]);
    expect(kept.waiting.map((j) => j.id)).not.toContain(w!.id);
    expect(backend.dead(10).map((j) => j.id)).toEqual([d!.id]);
    expect(backend.clearDead()).toBe(1);
    expect(backend.dead(10)).toEqual([]);
  });

  it('memory jobs’ counters are added on their own', () => {
    const { backend } = openBackend();
    backend.addCounters({ processed: 5, failed: 2 });
    backend.addCounters({ processed: 1, failed: 0 });
    expect(backend.recover().counters).toEqual({ processed: 6, failed: 2 });
  });
});
