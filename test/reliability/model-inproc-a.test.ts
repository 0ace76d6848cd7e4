// The stateful model-based test (issue 10, "find the next ones yourselves"): random sequences of
// runner, control and app API requests, restarts and kill -9, checked against a small model after
// every step (test/reliability/model/). Seeds are printed; replay with FC_SEED=<seed>, and
// FC_PATH=<path> from a failure report to rerun just the shrunk case. Longer: `npm run soak`.
//
// 10,000+ in-process steps in all, as two files of 5,000 with their own seeds (this one and
// model-inproc-b.test.ts), and the kill -9 runs in model-kill9.test.ts: vitest runs files on two
// workers, and one file of 10,000 steps was the suite's longest path (67 s alone, 283 s beside the
// browser tests) while the other worker had run out of files.
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';

const replaying = process.env.FC_SEED !== undefined;

test('5,000+ model-checked steps against an in-process server, with restarts (first seed)', { timeout: 600_000 }, async () => {
  const totals = await runModel({ name: 'inproc-a', kind: 'inproc', numRuns: 10, maxCommands: 3000, steps: 5_000, restartWeight: 1, killWeight: 0, seed: 20260601 });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(5_000);
});
