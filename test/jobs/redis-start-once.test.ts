// Start work once across instances on Redis (RedisJobBackend.pushUnlessPending, the script in
// server/store/redis/push-once.ts) on a real redis-server: a job is pushed unless one of its queue,
// kind and equal args is waiting, running (in a Jobscope process's working list) or in the retry
// set. Then two servers with --database and --redis starting together on one PostgreSQL database
// and one Redis push one listing job per archive stored without a listing, not one each.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { redisBackends, useRedis } from '../helpers/redis.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { startServer } from '../helpers/server.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import type { NewJob } from '../../server/jobs/backend.ts';

const redis = useRedis();

/** Every payload of the kind anywhere in Redis: queues, working lists, retry and dead sets. */
async function payloadsOf(kind: string): Promise<{ args: Record<string, unknown>; jid: string }[]> {
  const raws: string[] = [];
  for (const key of await redis.client.keys('queue:*')) raws.push(...(await redis.client.lrange(key, 0, -1)));
  for (const key of await redis.client.keys('working:*')) raws.push(...(await redis.client.lrange(key, 0, -1)));
  for (const key of ['retry', 'dead']) raws.push(...(await redis.client.zrange(key, '0', '-1')));
  return raws
    .map((r) => JSON.parse(r) as { args: Record<string, unknown>[]; jid: string; jobscope_kind?: string })
    .filter((p) => p.jobscope_kind === kind)
    .map((p) => ({ args: p.args[0]!, jid: p.jid }));
}

describe('RedisJobBackend.pushUnlessPending', () => {
  // In jobscope:working, as a serving process is from its first beat.
  const backend = redisBackends(redis, {
    ready: (b) => b.beat({ hostname: 'h', pid: 1, tag: 'jobscope', labels: [], concurrency: 1, startedAt: Date.now(), queues: ['lists'], work: [] }),
  });
  const job = (args: Record<string, unknown>, kind = 'listing'): NewJob => ({
    queue: 'lists',
    class: 'ListWorker',
    kind,
    args,
    retry: 3,
    retry_count: 0,
    created_at: Date.now(),
    enqueued_at: Date.now(),
  });

  it('pushes once per args across backends; a waiting, running or retrying job holds it back, a dead one does not', async () => {
    const a = await backend();
    const b = await backend();
    const racing = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).pushUnlessPending(job(i % 4 < 2 ? { id: 1, key: 'k' } : { key: 'k', id: 1 }))));
    expect(racing.filter((j) => j !== null)).toHaveLength(1);
    expect(await redis.client.smembers('jobscope:queues')).toEqual(['lists']);
    // Other args, or another kind with these args: other jobs.
    expect(await b.pushUnlessPending(job({ id: 2, key: 'k' }))).not.toBeNull();
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }, 'other'))).not.toBeNull();
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k', more: null }))).not.toBeNull();
    // Running: in a's working list, no longer in the queue.
    const taken = (await a.fetch(['lists'], 10)).find((j) => j.kind === 'listing' && j.args.id === 1 && !('more' in j.args));
    expect(taken).toBeDefined();
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }))).toBeNull();
    // Failed with retries left: in the retry set until it ends.
    await a.retryLater({ ...taken!, retry_count: 1, run_at: Date.now() + 60_000, failed_at: Date.now(), error: 'E: no' }, { processed: 1, failed: 1 });
    expect(await redis.client.zcard('retry')).toBe(1);
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }))).toBeNull();
    // Dead: it gave up; a new push may try again.
    await redis.client.del('retry');
    // Its last run, taken again (an end is recorded once per take: the retry's end already removed this take).
    await redis.client.rpush('queue:lists', taken!.raw!);
    const last = (await a.fetch(['lists'], 10)).find((j) => j.jid === taken!.jid);
    await a.kill({ ...last!, run_at: null, failed_at: Date.now(), error: 'E: no' }, { processed: 0, failed: 0 }, 100);
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }))).not.toBeNull();
    expect((await payloadsOf('listing')).filter((p) => p.args.id === 1 && !('more' in p.args))).toHaveLength(2); // the dead one and the new one
  });
});

describe.skipIf(postgresMissing() !== null)('two servers on one database and one Redis starting together', () => {
  const cluster = usePostgres();

  it('push one listing job per archive stored without a listing', async () => {
    const url = await cluster.createDatabase('start_once_redis');
    const noRedis = { stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, jobPollMs: 20 };
    const quiet = { ...noRedis, redisUrl: redis.url };
    // The builds made with the job system on the database: Redis stays empty until the two start.
    const first = await startServer(noRedis, { database: url });
    const project = await createProject(first, 'archives');
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createBuild(first, project.id)).id as number);
    await first.close();
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    await sql.query(`UPDATE builds SET artifacts_key = 'lost-' || id, artifacts_filename = 'artifacts.zip', artifacts_size = 1 WHERE id = ANY($1::bigint[])`, [ids]);
    await sql.end();
    const servers = await Promise.all([startServer(quiet, { database: url }), startServer(quiet, { database: url })]);
    // Their stops wait for the start's scan (tracked work): every push is in Redis by now. The
    // jobs fail (no file behind the key) and wait in the retry set; leave() puts running ones back.
    for (const s of servers) await s.close();
    const pushed = await payloadsOf('archive_listing');
    expect(pushed.map((p) => p.args.build_id).sort()).toEqual(ids.sort());
    expect(new Set(pushed.map((p) => p.jid)).size).toBe(3);
  }, 60_000);
});
