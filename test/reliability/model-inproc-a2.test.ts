// The first seed's run 1 (model-inproc-a.test.ts says why the seed's 5,000 steps are split, and how
// to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { SEED_A, SEED_A_RUN1_STEPS } from './model/seeds.ts';

const replaying = process.env.FC_SEED !== undefined;

test('5,000 model-checked steps of the first seed against an in-process server, with restarts: run 1', { timeout: 600_000 }, async () => {
  const totals = await runModel({ name: 'inproc-a2', kind: 'inproc', numRuns: 1, firstRun: 1, maxCommands: 3000, restartWeight: 1, killWeight: 0, seed: SEED_A });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(SEED_A_RUN1_STEPS);
});
