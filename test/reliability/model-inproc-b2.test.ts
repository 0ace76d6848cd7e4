// The second seed's run 2 (model-inproc-b.test.ts has its other runs; model-inproc-a.test.ts says why
// the seed's 5,000 steps are split, and how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { SEED_B, SEED_B_RUN2_STEPS } from './model/seeds.ts';

const replaying = process.env.FC_SEED !== undefined;

test('5,000 model-checked steps of the second seed against an in-process server, with restarts: run 2', { timeout: 600_000 }, async () => {
  const totals = await runModel({ name: 'inproc-b2', kind: 'inproc', numRuns: 1, firstRun: 2, maxCommands: 3000, restartWeight: 1, killWeight: 0, seed: SEED_B });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(SEED_B_RUN2_STEPS);
});
