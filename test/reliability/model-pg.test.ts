// The model-based test in the PostgreSQL mode: builds, runners and jobs in a real PostgreSQL shared
// by TWO `serve --database` instances on one data dir, each step's requests sent to the instance
// the step names; pg_ctl stop/start, kill -9 of the postmaster, and kill -9 (and restart) of one
// instance in the step set (model/outage.ts). model-inproc-a.test.ts says how to replay a failure;
// model/known-unfixed.ts lists the bugs this suite finds that are fixed elsewhere.
import { describe, expect, test } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { runModel } from './model/run.ts';
import { MODES, replaying } from './model/seeds.ts';

describe.skipIf(postgresMissing() !== null)('the PostgreSQL mode', () => {
  const pg = usePostgres({ database: 'jobscope_model' });

  test('model-checked steps on two instances of one database, with PostgreSQL and an instance killed and restarted', { timeout: 600_000 }, async ({ signal }) => {
    const totals = await runModel({ ...MODES.common, name: 'pg', kind: 'child', mode: 'pg', backing: { pg }, seed: MODES.pg.seed, steps: MODES.pg.steps, killWeight: 1, signal });
    if (!replaying) {
      expect(totals.steps).toBeGreaterThanOrEqual(MODES.pg.steps);
      expect(totals.faults).toBeGreaterThanOrEqual(5);
    }
  });
});
