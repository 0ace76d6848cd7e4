// The model-based test against a child-process server killed with SIGKILL between steps
// (model-inproc-a.test.ts says how to replay a failure).
import { expect, test } from 'vitest';
import { runModel } from './model/run.ts';

const replaying = process.env.FC_SEED !== undefined;

test('model-checked steps with kill -9 and restarts of a child-process server', { timeout: 300_000 }, async ({ signal }) => {
  const totals = await runModel({ name: 'kill9', kind: 'child', numRuns: 1, maxCommands: 120, restartWeight: 4, killWeight: 10, seed: 20260602, signal });
  if (!replaying) expect(totals.kills).toBeGreaterThanOrEqual(1);
});
