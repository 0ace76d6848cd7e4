// The second seed's run 2 and as much of run 3 as makes its 5,000 steps; runs 0 and 1 are in
// model-inproc-b.test.ts (model-inproc-a.test.ts says why the steps are split and how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { SEED_B, SEED_B_RUNS01_STEPS, STEPS_PER_SEED } from './model/seeds.ts';

const replaying = process.env.FC_SEED !== undefined;

test('5,000 model-checked steps of the second seed against an in-process server, with restarts: runs 2 and 3', { timeout: 600_000 }, async () => {
  const budget = STEPS_PER_SEED - SEED_B_RUNS01_STEPS;
  const totals = await runModel({ name: 'inproc-b2', kind: 'inproc', numRuns: 8, firstRun: 2, maxCommands: 3000, steps: budget, restartWeight: 1, killWeight: 0, seed: SEED_B });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(budget);
});
