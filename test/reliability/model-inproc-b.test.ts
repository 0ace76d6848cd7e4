// The second seed's runs 0 and 1 (1,304 and 897 steps) of its 5,000; runs 2 and 3 are in
// model-inproc-b2.test.ts (model-inproc-a.test.ts says why the steps are split and how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { SEED_B, SEED_B_RUNS01_STEPS } from './model/seeds.ts';

const replaying = process.env.FC_SEED !== undefined;

test('5,000 model-checked steps of the second seed against an in-process server, with restarts: runs 0 and 1', { timeout: 600_000 }, async () => {
  const totals = await runModel({ name: 'inproc-b', kind: 'inproc', numRuns: 2, maxCommands: 3000, restartWeight: 1, killWeight: 0, seed: SEED_B });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(SEED_B_RUNS01_STEPS);
});
