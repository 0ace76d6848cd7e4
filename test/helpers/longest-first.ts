// The order vitest starts test files in. With two workers the run ends when the slower worker does,
// so the longest files must start first, not last while the other worker idles. Vitest's own order
// uses the durations of earlier runs cached in node_modules/.vite, but a fresh checkout has no cache
// (it then runs larger files first, and the model test is a 20-line file that runs for a minute), and
// the cache records whichever subset ran last. So the files known to be long go first, in this order;
// the rest keep vitest's order. A file missing from the list is only started later, never skipped.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Longest first, from per-file durations of full runs on the 2-core machine (see vitest.config.ts;
 *  the figures are in docs/benchmark-bounds.md, "npm test"), files of 5 s or more. The two mode
 *  model files go first (the longest of all: Redis and PostgreSQL faults, restarts, child servers;
 *  off this list, a fresh checkout started them among the last, as small files), then crash.test.ts (11 child starts,
 *  CPU and waits), then the four in-process model files, costliest first. */
export const LONG_FILES = [
  'test/reliability/model-pg.test.ts',
  'test/reliability/model-redis.test.ts',
  'test/reliability/crash.test.ts',
  'test/reliability/model-inproc-a2.test.ts',
  'test/reliability/model-inproc-b.test.ts',
  'test/reliability/model-inproc-b2.test.ts',
  'test/reliability/model-inproc-a.test.ts',
  'test/reliability/model-kill9.test.ts',
  'test/simulator/fleet.test.ts',
  'test/reliability/hostile.test.ts',
  'test/simulator/pg-round-robin.test.ts',
  'test/jobs/redis-jobs.test.ts',
  'test/packaging/asar.test.ts',
  'test/simulator/cli.test.ts',
  'test/reliability/slow-clients.test.ts',
  'test/reliability/wal.test.ts',
  'test/store/pg-take.test.ts',
  'test/store/pg-notify.test.ts',
  'test/store/pg-monitor.test.ts',
  'test/reliability/pg-serve-flag.test.ts',
  'test/store/pg-adapters.test.ts',
  'test/sidekiq/huge-redis.test.ts',
  'test/reliability/pg-outage.test.ts',
  'test/jobs/redis-start-degraded.test.ts',
  'test/jobs/redis-outage.test.ts',
  'test/http/connection-caps.test.ts',
];

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FILES.indexOf(path.relative(f.project.config.root, f.moduleId).split(path.sep).join('/'));
      return i < 0 ? LONG_FILES.length : i;
    };
    // Array.prototype.sort is stable: files off the list keep vitest's order among themselves.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
