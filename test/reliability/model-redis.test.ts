// The model-based test in the Redis mode: the job system on a real redis-server (append-only, fsync
// always), kill -9 and restart of it and SIGSTOP/SIGCONT in the step set (model/outage.ts), every
// step checked against the model, the job counters exactly (no job lost, none run twice).
// model-inproc-a.test.ts says how to replay a failure; model/known-unfixed.ts lists the bugs this
// suite finds that are fixed elsewhere.
import { expect, test } from 'vitest';
import { useRedis } from '../helpers/redis.ts';
import { runModel } from './model/run.ts';
import { MODES, replaying } from './model/seeds.ts';

const redis = useRedis([...MODES.redisArgs]);

test('model-checked steps with the job system on Redis, with Redis killed, stopped and restarted', { timeout: 600_000 }, async ({ signal }) => {
  const totals = await runModel({ ...MODES.common, name: 'redis', kind: 'inproc', mode: 'redis', backing: { redis: redis.server }, seed: MODES.redis.seed, steps: MODES.redis.steps, signal });
  if (!replaying) {
    expect(totals.steps).toBeGreaterThanOrEqual(MODES.redis.steps);
    expect(totals.faults).toBeGreaterThanOrEqual(5);
  }
});
