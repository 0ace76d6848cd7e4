// A job running when the server is killed with SIGKILL runs again after the restart: its row stays
// queued until it finishes. The server runs as a child process, as `jobscope serve` does.
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/server.ts';
import { metrics, postJobs, spawnServe, type Child } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'crash-test-admin-token';
const dataDir = tempDir('jobscope-jobs-crash-');
const children: Child[] = [];

afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9', () => {
  it('a job in flight runs again after restart; finished jobs do not', async () => {
    const first = await spawnServe(dataDir, TOKEN, ['--job-concurrency', '2']);
    children.push(first);
    await postJobs(first.url, TOKEN, { queue: 'quick', count: 3 });
    await waitFor('3 quick jobs done', async () => (await metrics(first.url, TOKEN, 'job_stats')).jobs.processed === 3);
    await postJobs(first.url, TOKEN, { queue: 'inflight', duration_ms: 1500 });
    const running = await metrics(first.url, TOKEN, 'compound_metrics');
    expect(running.processes[0].busy).toBe(1);
    expect(running.queues.inflight.backlog).toBe(0);

    first.proc.kill('SIGKILL');
    await first.exited;

    const second = await spawnServe(dataDir, TOKEN, ['--job-concurrency', '2']);
    children.push(second);
    const after = await metrics(second.url, TOKEN, 'compound_metrics');
    // Acknowledged counts survived, and the cut-off job is back: running again or, on a slow start,
    // still waiting for its slot. On a loaded machine the second server can take longer from its
    // first fetch to this first read than the job's 1.5 s, so the rerun may already be counted.
    if (after.jobs.processed === 3) expect(after.processes[0].busy + after.queues.inflight.backlog).toBe(1);
    else expect(after.jobs).toEqual({ processed: 4, failed: 0, enqueued: 0 });
    const done = await waitFor('the job finished after the restart', async () => {
      const m = await metrics(second.url, TOKEN, 'compound_metrics');
      return m.jobs.processed === 4 ? m : undefined;
    });
    expect(done.jobs).toEqual({ processed: 4, failed: 0, enqueued: 0 }); // the three quick ones did not run twice
    expect(done.queues.inflight).toEqual({ backlog: 0, latency: 0 });
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
