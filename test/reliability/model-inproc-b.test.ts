// The second seed's runs 0 and 1 (1,304 and 897 steps) and the first 1,169 of run 3, of its 5,000;
// run 2 (1,630, with three restarts and their full sweeps: the costliest) is in model-inproc-b2.test.ts
// (model-inproc-a.test.ts says why the steps are split and how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';
import { INPROC, replaying, SEED_B, SEED_B_RUN2_STEPS, STEPS_PER_SEED } from './model/seeds.ts';

const opts = { ...INPROC, seed: SEED_B };

test('5,000 model-checked steps of the second seed against an in-process server, with restarts: runs 0, 1 and 3', { timeout: 600_000 }, async () => {
  const first = await runModel({ ...opts, name: 'inproc-b runs 0-1', numRuns: 2 });
  const budget = STEPS_PER_SEED - SEED_B_RUN2_STEPS - first.steps;
  const rest = await runModel({ ...opts, name: 'inproc-b run 3', numRuns: 7, firstRun: 3, steps: budget });
  if (!replaying) expect(rest.steps).toBeGreaterThanOrEqual(budget);
});
