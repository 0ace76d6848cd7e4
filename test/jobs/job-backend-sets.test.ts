// The job backend's port for Sidekiq Web's pages, on the SQLite adapter with a real data dir: a page
// of the dead set (ZREVRANGE), its size (ZCARD), deleting from the retry or the dead set by id
// (ZREM: only ids in that set), emptying the retry set; all kept across a reopen.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../server/store/index.ts';
import { resolveConfig } from '../../server/config.ts';
import type { NewJob, SyncJobBackend } from '../../server/jobs/backend.ts';
import type { FailedJob, Job } from '../../server/jobs/types.ts';
import { tempDir } from '../helpers/server.ts';

const open: { store: Store; dir: string }[] = [];
function openBackend(dir = tempDir()): { backend: SyncJobBackend; dir: string } {
  const store = openStore(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}));
  open.push({ store, dir });
  const backend = store.jobBackend;
  backend.recover();
  return { backend, dir };
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

const job = (queue: string): NewJob => ({ queue, class: 'SyntheticJob', kind: 'synthetic', args: {}, retry: 2, retry_count: 0, created_at: 1_000, enqueued_at: 1_000 });
const failed = (j: Job, over: Partial<FailedJob>): FailedJob => ({ ...j, run_at: null, failed_at: 2_000, error: 'Error: boom', ...over });
const none = { processed: 0, failed: 0 };

describe('job backend: pages and deletes of the retry and dead sets', () => {
  it('pages the dead set newest first and counts it', () => {
    const { backend } = openBackend();
    const jobs = backend.push([job('q'), job('q'), job('q'), job('q'), job('q')]);
    jobs.forEach((j, i) => backend.kill(failed(j, { failed_at: 10 + i }), none, 100));
    expect(backend.deadSize()).toBe(5);
    expect(backend.dead(2).map((j) => j.failed_at)).toEqual([14, 13]);
    expect(backend.dead(2, 2).map((j) => j.failed_at)).toEqual([12, 11]);
    expect(backend.dead(2, 4).map((j) => j.failed_at)).toEqual([10]);
    expect(backend.dead(2, 9)).toEqual([]);
  });

  it('deletes by id only from the set named, and the deletion survives a reopen', () => {
    const { backend, dir } = openBackend();
    const [r1, r2, d1, d2, waiting] = backend.push([job('q'), job('q'), job('q'), job('q'), job('q')]);
    backend.retryLater(failed(r1!, { retry_count: 1, run_at: 5_000 }), none);
    backend.retryLater(failed(r2!, { retry_count: 1, run_at: 6_000 }), none);
    backend.kill(failed(d1!, {}), none, 100);
    backend.kill(failed(d2!, {}), none, 100);

    // A dead id is not in the retry set, a waiting job in neither, an unknown id nowhere.
    expect(backend.deleteFailed([r1!.id, d1!.id, waiting!.id, 999_999], 'retry')).toEqual([r1!.id]);
    expect(backend.deleteFailed([d1!.id, r2!.id, waiting!.id], 'dead')).toEqual([d1!.id]);
    expect(backend.deadSize()).toBe(1);

    const again = reopen(dir);
    const kept = again.backend.recover();
    expect(kept.retries.map((j) => j.id)).toEqual([r2!.id]);
    expect(kept.waiting.map((j) => j.id)).toEqual([waiting!.id]);
    expect(again.backend.dead(10).map((j) => j.id)).toEqual([d2!.id]);
    expect(again.backend.deadSize()).toBe(1);

    expect(again.backend.clearRetries()).toBe(1);
    expect(reopen(dir).backend.recover().retries).toEqual([]);
  });
});
