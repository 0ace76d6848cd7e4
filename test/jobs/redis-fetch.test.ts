// The Redis adapter's hot path on a real redis-server: a fetch takes up to `max` jobs in one step, in
// the order single fetches would (first non-empty queue, oldest first), into the working list; the
// ends of jobs acknowledged in one turn go out together yet each removes its own payload and counts.
import { describe, expect, it } from 'vitest';
import { redisBackends, useRedis } from '../helpers/redis.ts';
import type { NewJob } from '../../server/jobs/backend.ts';

const redis = useRedis();

const backend = redisBackends(redis);

const job = (queue: string, n: number): NewJob => ({ queue, class: 'SyntheticJob', kind: 'synthetic', args: { n }, retry: 25, retry_count: 0, created_at: Date.now(), enqueued_at: Date.now() });

describe('RedisJobBackend fetch and ack', () => {
  it('takes up to max jobs in one fetch, oldest first, from the first queues not empty', async () => {
    const b = await backend();
    await b.push([job('a', 1), job('a', 2), job('a', 3), job('b', 4), job('b', 5)]);
    const first = await b.fetch(['empty', 'a', 'b'], 4);
    expect(first.map((j) => [j.queue, j.args.n])).toEqual([
      ['a', 1],
      ['a', 2],
      ['a', 3],
      ['b', 4],
    ]);
    expect(await redis.client.llen(`working:${b.identity}`)).toBe(4);
    expect(await redis.client.llen('queue:a')).toBe(0);
    expect((await b.fetch(['a', 'b'], 4)).map((j) => j.args.n)).toEqual([5]);
    expect(await b.fetch(['a', 'b'], 4)).toEqual([]);
    expect(await b.fetch(['a', 'b'], 0)).toEqual([]);
    expect(await redis.client.llen(`working:${b.identity}`)).toBe(5);
  });

  it('moves what is not a job payload to the dead set (as Sidekiq does invalid JSON) and hands out the jobs around it', async () => {
    const b = await backend();
    await b.push([job('a', 1)]);
    await redis.client.lpush('queue:a', 'not a job', '{"args":[]}');
    await b.push([job('a', 2)]);
    expect((await b.fetch(['a'], 10)).map((j) => j.args.n)).toEqual([1, 2]);
    expect(await redis.client.lrange(`working:${b.identity}`, 0, -1)).not.toContain('not a job');
    expect(await redis.client.llen(`working:${b.identity}`)).toBe(2);
    expect((await redis.client.zrange('dead', '0', '-1')).sort()).toEqual(['not a job', '{"args":[]}'].sort());
    expect((await b.dead(10)).map((e) => [e.unreadable, e.raw])).toEqual(expect.arrayContaining([[true, 'not a job'], [true, '{"args":[]}']]));
  });

  it('acks made in one turn each remove their job from the working list and add their counters', async () => {
    const b = await backend();
    await b.push([1, 2, 3, 4].map((n) => job('a', n)));
    const jobs = await b.fetch(['a'], 4);
    await Promise.all(jobs.slice(0, 3).map((j, i) => b.ack(j, { processed: 1, failed: i === 0 ? 1 : 0 })));
    const left = await redis.client.lrange(`working:${b.identity}`, 0, -1);
    expect(left).toEqual([jobs[3]!.raw]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await redis.client.mget('stat:processed', 'stat:failed', `stat:processed:${today}`, `stat:failed:${today}`)).toEqual(['3', '1', '3', '1']);
    await b.ack(jobs[3]!, { processed: 1, failed: 0 });
    expect(await redis.client.llen(`working:${b.identity}`)).toBe(0);
    expect(await redis.client.get('stat:processed')).toBe('4');
  });
});
