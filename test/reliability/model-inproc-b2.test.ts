// The second seed's run 2 (model-inproc-b.test.ts has its other runs; model-inproc-a.test.ts says why
// the seed's 5,000 steps are split, and how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { INPROC, replaying, SEED_B, SEED_B_RUN2_STEPS } from './model/seeds.ts';

test('5,000 model-checked steps of the second seed against an in-process server, with restarts: run 2', { timeout: 600_000 }, async () => {
  const totals = await runModel({ ...INPROC, name: 'inproc-b2', numRuns: 1, firstRun: 2, seed: SEED_B });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(SEED_B_RUN2_STEPS);
});
