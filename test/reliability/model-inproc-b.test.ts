// The second half of the in-process model-based test's 10,000+ steps, on a seed of its own
// (model-inproc-a.test.ts says why the steps are split and how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';

const replaying = process.env.FC_SEED !== undefined;

test('5,000+ model-checked steps against an in-process server, with restarts (second seed)', { timeout: 600_000 }, async () => {
  const totals = await runModel({ name: 'inproc-b', kind: 'inproc', numRuns: 10, maxCommands: 3000, steps: 5_000, restartWeight: 1, killWeight: 0, seed: 20260603 });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(5_000);
});
