// The read script (server/sidekiq/read-script.ts) against the plain pipelines and Sidekiq's own API
// (Ruby, Debian's ruby-sidekiq 6.4), on a real redis-server: the same answer in every case (edge
// payloads, namespaces, byte order, the limits, reads split in chunks), NOSCRIPT handled, and a
// Redis that refuses scripts read with the pipelines, saying so.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby, sidekiqView, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { readByPipelines, readByScript, readSidekiq, SCRIPT_RETRY_MS, type ScriptMemo, type SidekiqSnapshot } from '../../server/sidekiq/read.ts';
import { CHUNK_PROCESSES, CHUNK_QUEUES } from '../../server/sidekiq/read-script.ts';
import { SidekiqSource } from '../../server/sidekiq/source.ts';
import { DEFAULT_CLIENT_BOUNDS } from '../../server/redis/bounded-client.ts';

let redis: TestRedis;
let r: Redis;
beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
  r = new Redis(redis.url);
});
afterAll(async () => {
  r?.disconnect();
  await redis?.stop();
});
afterEach(async () => {
  await r.flushall();
  await r.config('RESETSTAT');
});

const LIMITS = { maxQueues: 10_000, maxProcesses: 5_000, days: 30 };
const clock = () => Date.now();

/** Both reads of the same data, which nothing changes meanwhile: everything but how must be equal. */
async function bothWays(namespace: string, limits = LIMITS): Promise<SidekiqSnapshot> {
  const at = Date.now();
  const fixed = () => at;
  const script = await readByScript(r, namespace, limits, fixed);
  const plain = await readByPipelines(r, namespace, limits, fixed);
  expect(script.readWith).toBe('script');
  expect(plain.readWith).toBe('pipelines');
  expect({ ...script, readWith: null }).toEqual({ ...plain, readWith: null });
  return script;
}

/** Calls per command since the last RESETSTAT (INFO commandstats). */
async function calls(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await r.info('commandstats')).matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

async function seedSizes(queues: number, processes: number): Promise<void> {
  const p = r.pipeline();
  for (let i = 0; i < queues; i++) {
    const name = `q${String(i).padStart(5, '0')}`;
    p.sadd('queues', name);
    // Every 3rd queue empty, as most of a real app's queues are.
    if (i % 3) p.lpush(`queue:${name}`, JSON.stringify({ class: 'A', args: [], jid: String(i), enqueued_at: 1_700_000_000 + i / 8 }));
  }
  for (let i = 0; i < processes; i++) {
    const id = `host-${i}:${i}:${i.toString(16)}`;
    p.sadd('processes', id);
    // Every 7th listed process has no hash (it died): skipped.
    if (i % 7) p.hset(id, 'info', JSON.stringify({ hostname: `host-${i}`, pid: i, tag: '', concurrency: 5, queues: ['default'], labels: [], started_at: 1_700_000_000.5 }), 'busy', String(i % 5), 'beat', '1700000100.25', 'quiet', 'false', 'rss', '2048');
  }
  await p.exec();
}

describe('the read script answers what Sidekiq answers', () => {
  it('queues in byte order, sizes, latencies, live processes and counters as Sidekiq::Queue.all, ProcessSet and Stats, the same as the pipelines', async () => {
    await sidekiqRuby(
      redis.url,
      `now = Time.now.to_f
       2.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "default", "args" => [i]) }
       %w[Zeta alpha ünïcode 日本 a-b a_b].each { |q| Sidekiq::Client.push("class" => "NoopJob", "queue" => q, "args" => []) }
       Sidekiq.redis do |c|
         # The oldest entry has no enqueued_at: Sidekiq's latency is 0 (its "|| now").
         c.sadd("queues", "no_stamp"); c.rpush("queue:no_stamp", Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "a" * 24))
         c.lpush("queue:no_stamp", Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "b" * 24, "enqueued_at" => now))
         # An older job at a tail, and a listed queue with no list.
         c.rpush("queue:default", Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "c" * 24, "enqueued_at" => now - 42.125))
         c.sadd("queues", "empty")
         c.set("stat:processed", 77); c.set("stat:failed", 5); c.set("stat:processed:#{Time.now.utc.strftime("%Y-%m-%d")}", 7)
         c.zadd("retry", now + 30, Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "d" * 24))
         id = "host-a:1:abc"
         info = { "hostname" => "host-a", "started_at" => now - 60, "pid" => 1, "tag" => "t", "concurrency" => 3, "queues" => ["default", "日本"], "labels" => ["x"], "identity" => id }
         c.sadd("processes", id); c.hset(id, "info", Sidekiq.dump_json(info), "busy", 2, "beat", now, "quiet", "true", "rss", 999)
         c.sadd("processes", "host-b:2:gone")
       end`,
    );
    const oracle = await sidekiqView(redis.url, 30);
    const ours = await bothWays('');
    expect(ours.queues.map((q) => q.name)).toEqual(oracle.queues.map((q) => q.name));
    expect(ours.queues.map((q) => q.name).slice(0, 3)).toEqual(['Zeta', 'a-b', 'a_b']);
    for (const [i, q] of oracle.queues.entries()) {
      expect(ours.queues[i]!.size, q.name).toBe(q.size);
      // Sidekiq's latency is its own Time.now, read between latency_from and latency_to, minus enqueued_at.
      if (q.latency === 0) expect(ours.queues[i]!.oldestEnqueuedAt, q.name).toBeNull();
      else expect(ours.queues[i]!.oldestEnqueuedAt!, q.name).toSatisfy((t: number) => t > q.latency_from - q.latency - 1e-6 && t < q.latency_to - q.latency + 1e-6);
    }
    expect(ours.queues.find((q) => q.name === 'no_stamp')).toEqual({ name: 'no_stamp', size: 2, oldestEnqueuedAt: null });
    expect(ours.queues.find((q) => q.name === 'empty')).toEqual({ name: 'empty', size: 0, oldestEnqueuedAt: null });
    expect(oracle.queues.find((q) => q.name === 'default')!.latency).toBeGreaterThan(42);
    expect(ours.processes.map((p) => ({ identity: p.identity, ...p.info, busy: p.busy, beat: p.beat, quiet: p.quiet }))).toEqual(
      oracle.processes.map((p) => ({ identity: p.identity, hostname: p.hostname, pid: p.pid, tag: p.tag, labels: p.labels, queues: p.queues, concurrency: p.concurrency, started_at: p.started_at, busy: p.busy, beat: p.beat, quiet: p.quiet })),
    );
    expect(ours).toMatchObject({ processed: oracle.stats.processed, failed: oracle.stats.failed, retrySize: oracle.retry_size, scheduledSize: oracle.scheduled_size, deadSize: oracle.dead_size, processesTotal: 2 });
    expect(ours.days).toEqual(oracle.history);
    expect(ours.processed).toBe(77);
  });

  it('entries Sidekiq cannot read give what the pipelines give: no latency for a tail that is not a JSON object, a process with unreadable info skipped', async () => {
    const p = r.pipeline();
    const tails = ['not json', '[1,2]', '"text"', '42', 'null', '{"enqueued_at":"yesterday"}', '{"enqueued_at":1e999}', '{"enqueued_at":null}', '{"enqueued_at":1700000000.123456789}', '{"a":{"enqueued_at":5}}'];
    tails.forEach((t, i) => p.sadd('ns:queues', `odd${i}`).rpush(`ns:queue:odd${i}`, t));
    p.sadd('ns:processes', 'bad-info', 'no-info', 'ok').hset('ns:bad-info', 'info', '{nope', 'busy', '1').hset('ns:no-info', 'busy', '1');
    p.hset('ns:ok', 'info', '{"hostname":"h","pid":"12","queues":"q"}', 'busy', '3x', 'beat', 'soon', 'quiet', 'yes', 'rss', '-4');
    await p.exec();
    const s = await bothWays('ns');
    expect(s.queues.map((q) => q.oldestEnqueuedAt)).toEqual([null, null, null, null, null, null, null, null, 1700000000.123456789, null]);
    expect(s.processes).toEqual([
      { identity: 'ok', info: { hostname: 'h', pid: 0, tag: '', labels: [], queues: [], concurrency: 0, started_at: 0 }, busy: 3, beat: 0, quiet: false, stopping: false, rssKb: -4 },
    ]);
    // The un-namespaced keys are someone else's: nothing of ns is read without the prefix.
    expect((await bothWays('')).queuesTotal).toBe(0);
  });
});

describe('the read script: bounded', () => {
  it(`reads up to ${CHUNK_QUEUES} queues and ${CHUNK_PROCESSES} processes in one call, and nothing else`, async () => {
    await seedSizes(CHUNK_QUEUES, CHUNK_PROCESSES);
    await r.config('RESETSTAT');
    const s = await readByScript(r, '', LIMITS, clock);
    expect(s.queues).toHaveLength(CHUNK_QUEUES);
    expect(s.processes).toHaveLength(CHUNK_PROCESSES - Math.ceil(CHUNK_PROCESSES / 7));
    const c = await calls();
    // One EVALSHA (or EVAL when the script was not cached yet); the commands inside count too.
    expect((c.evalsha ?? 0) + (c.eval ?? 0)).toBe(1);
    expect(c.llen).toBe(CHUNK_QUEUES);
    // No LINDEX for an empty queue.
    expect(c.lindex).toBe(CHUNK_QUEUES - Math.ceil(CHUNK_QUEUES / 3));
    await bothWays('');
  });

  it('past the chunk sizes reads the rest in chunks, and past the limits reads the first names in byte order, as the pipelines', async () => {
    const queues = 2 * CHUNK_QUEUES + 345;
    const processes = 2 * CHUNK_PROCESSES + 34;
    await seedSizes(queues, processes);
    await r.config('RESETSTAT');
    const all = await readByScript(r, '', LIMITS, clock);
    expect(all.queues).toHaveLength(queues);
    expect(all.queuesTotal).toBe(queues);
    expect(all.processesTotal).toBe(processes);
    expect(all.queues.map((q) => q.name)).toEqual([...all.queues.map((q) => q.name)].sort());
    // The names come by SSCAN, then one call per chunk: none reads more than a chunk's worth.
    expect((await calls()).evalsha).toBe(Math.max(Math.ceil(queues / CHUNK_QUEUES), Math.ceil(processes / CHUNK_PROCESSES)));
    await bothWays('');

    for (const limits of [
      { maxQueues: CHUNK_QUEUES + 1, maxProcesses: CHUNK_PROCESSES - 1, days: 1 },
      { maxQueues: 10, maxProcesses: 3, days: 0 },
    ]) {
      const s = await bothWays('', limits);
      expect(s.queues.map((q) => q.name)).toEqual(all.queues.slice(0, limits.maxQueues).map((q) => q.name));
      expect(s.queuesTotal).toBe(queues);
      expect(s.processesTotal).toBe(processes);
      expect(Object.keys(s.days.processed)).toHaveLength(limits.days);
    }
  });
});

describe('the read script: when Redis does not run it', () => {
  it('is sent again after SCRIPT FLUSH (NOSCRIPT)', async () => {
    await seedSizes(5, 2);
    const memo: ScriptMemo = { refused: null };
    expect((await readSidekiq(r, '', LIMITS, clock, memo)).readWith).toBe('script');
    await r.script('FLUSH');
    await r.config('RESETSTAT');
    const s = await readSidekiq(r, '', LIMITS, clock, memo);
    expect(s).toMatchObject({ readWith: 'script', scriptRefused: null, queuesTotal: 5 });
    expect(await calls()).toMatchObject({ evalsha: 1, eval: 1 });
    expect(memo.refused).toBeNull();
  });

  it('a user the ACL denies scripts is read with the pipelines, the same answer, the Test message saying why; the script is tried again later', async () => {
    await seedSizes(20, 4);
    await r.acl('SETUSER', 'reader', 'on', '>reader-pw', '~*', '+@read', '+@connection');
    const reader = new Redis(redis.url.replace('redis://', 'redis://reader:reader-pw@'), { enableReadyCheck: false });
    try {
      let t = Date.now();
      const now = () => t;
      const memo: ScriptMemo = { refused: null };
      const s = await readSidekiq(reader, '', LIMITS, now, memo);
      expect(s.readWith).toBe('pipelines');
      expect(s.scriptRefused).toMatch(/^NOPERM .*evalsha/);
      expect({ ...s, readWith: null, scriptRefused: null }).toEqual({ ...(await readByScript(r, '', LIMITS, now)), readWith: null });
      // Not asked again every sample…
      await r.config('RESETSTAT');
      expect((await readSidekiq(reader, '', LIMITS, now, memo)).scriptRefused).toMatch(/^NOPERM/);
      expect((await calls()).evalsha).toBeUndefined();
      // …but once the wait is over, and by then the admin allowed it.
      await r.acl('SETUSER', 'reader', '+evalsha', '+eval');
      t += SCRIPT_RETRY_MS;
      expect(await readSidekiq(reader, '', LIMITS, now, memo)).toMatchObject({ readWith: 'script', scriptRefused: null });
      expect(memo.refused).toBeNull();
    } finally {
      reader.disconnect();
      await r.acl('DELUSER', 'reader');
    }

    // Through a sidekiq connection's source, as the Test button reads it.
    await r.acl('SETUSER', 'reader', 'on', '>reader-pw', '~*', '+@read', '+@connection');
    const source = new SidekiqSource({ url: redis.url.replace('redis://', 'redis://reader@'), password: 'reader-pw', namespace: '' }, { timeoutMs: 5000, limits: LIMITS, reply: DEFAULT_CLIENT_BOUNDS });
    try {
      const out = await source.sample();
      expect(out.ok).toBe(true);
      expect(out.message).toMatch(/^OK: 20 queues, \d+ processes, .* \(read with plain commands: the read script was refused: NOPERM /);
    } finally {
      source.close();
      await r.acl('DELUSER', 'reader');
    }
  });

  it('a Redis with EVALSHA renamed away is read with the pipelines', async () => {
    const renamed = await startRedis(['--rename-command', 'EVALSHA', '']);
    const c = new Redis(renamed.url);
    try {
      await c.sadd('queues', 'default');
      await c.lpush('queue:default', '{"enqueued_at":1700000000}');
      const s = await readSidekiq(c, '', LIMITS, clock);
      expect(s).toMatchObject({ readWith: 'pipelines', queues: [{ name: 'default', size: 1, oldestEnqueuedAt: 1700000000 }] });
      expect(s.scriptRefused).toMatch(/unknown command/i);
    } finally {
      c.disconnect();
      await renamed.stop();
    }
  });

  it('data of the wrong type fails the read with the plain reads\' error, and is not taken for a refusal', async () => {
    await r.set('queues', 'not a set');
    const memo: ScriptMemo = { refused: null };
    await expect(readSidekiq(r, '', LIMITS, clock, memo)).rejects.toThrow(/^WRONGTYPE/);
    expect(memo.refused).toBeNull();
    await r.del('queues');
    expect((await readSidekiq(r, '', LIMITS, clock, memo)).readWith).toBe('script');
  });
});
