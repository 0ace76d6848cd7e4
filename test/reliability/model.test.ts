// The stateful model-based test (issue 10, "find the next ones yourselves"): random sequences of
// runner, control and app API requests, restarts and kill -9, checked against a small model after
// every step (test/reliability/model/). Seeds are printed; replay with FC_SEED=<seed>, and
// FC_PATH=<path> from a failure report to rerun just the shrunk case. Longer: `npm run soak`.
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';

const replaying = process.env.FC_SEED !== undefined;

test('10,000+ model-checked steps against an in-process server, with restarts', { timeout: 300_000 }, async () => {
  // Runs until 10,000 steps (a run is 0 to 3,000 steps long; this seed's fifth ends at the budget).
  const totals = await runModel({ name: 'inproc', kind: 'inproc', numRuns: 10, maxCommands: 3000, steps: 10_000, restartWeight: 1, killWeight: 0, seed: 20260601 });
  if (!replaying) expect(totals.steps).toBeGreaterThanOrEqual(10_000);
});

test('model-checked steps with kill -9 and restarts of a child-process server', { timeout: 300_000 }, async () => {
  const totals = await runModel({ name: 'kill9', kind: 'child', numRuns: 1, maxCommands: 120, restartWeight: 4, killWeight: 10, seed: 20260602 });
  if (!replaying) expect(totals.kills).toBeGreaterThanOrEqual(1);
});
