// The first seed's run 1 (model-inproc-a.test.ts says why the seed's 5,000 steps are split, and how
// to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { INPROC, replaying, SEED_A, SEED_A_RUN1_STEPS } from './model/seeds.ts';

test('5,000 model-checked steps of the first seed against an in-process server, with restarts: run 1', { timeout: 600_000 }, async () => {
  const totals = await runModel({ ...INPROC, name: 'inproc-a2', numRuns: 1, firstRun: 1, seed: SEED_A });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(SEED_A_RUN1_STEPS);
});
