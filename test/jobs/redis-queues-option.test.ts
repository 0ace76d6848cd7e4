// --queues: Sidekiq's `-q name[,weight]`. The parse and the order are checked against Sidekiq 6.4
// itself (Sidekiq::CLI#parse_queue, BasicFetch#queues_cmd through the oracle); the served set
// through a real server on a real Redis: only the named queues are taken from.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers/redis.ts';
import { sidekiqRuby, sidekiqView, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { useServers } from '../helpers/server-set.ts';
import { onRedis } from './lib.ts';
import { orderQueues, parseQueueOrder, type QueueOrder } from '../../server/jobs/queue-order.ts';
import { Command } from 'commander';
import { resolveConfig } from '../../server/config.ts';
import { addSettingFlags, configFromFlags } from '../../hosts/cli-config.ts';
import { seededRandom } from '../../common/prng.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

const redis = useRedis();
beforeAll(() => warmOracle());
const servers = useServers();
afterEach(async () => {
  await servers.closeAll();
  await redis.client.flushdb();
});

/** Sidekiq's options for `-q` given each of `flags` (as its CLI splits them: name, weight). */
async function sidekiqParse(flags: string[]): Promise<QueueOrder> {
  const code = `require "sidekiq/cli"
opts = {}
${JSON.stringify(flags)}.each { |a| q, w = a.split(","); Sidekiq::CLI.instance.send(:parse_queue, opts, q, w) }
print JSON.generate({ weighted: opts[:queues], strict: !!opts[:strict] })`;
  return JSON.parse(await sidekiqRuby(redis.url, code)) as QueueOrder;
}

describe('--queues as Sidekiq’s -q', () => {
  it('parses as Sidekiq::CLI: weights repeat a name, no weight above 0 is strict order', async () => {
    for (const flags of [['critical', 'default', 'low'], ['critical,3', 'default,1'], ['a,1', 'b,1'], ['a,0', 'b'], ['a,2', 'b']]) {
      expect(parseQueueOrder(flags.join(' ')), flags.join(' ')).toEqual(await sidekiqParse(flags));
      // The flag repeated reaches the config joined by commas; the env var takes spaces: the same order.
      expect(parseQueueOrder(flags.join(',')), flags.join(',')).toEqual(await sidekiqParse(flags));
    }
    expect(parseQueueOrder('a,2 a')).toEqual({ error: expect.stringMatching(/named twice/) });
    expect(parseQueueOrder('3 a')).toEqual({ error: expect.stringMatching(/follows no queue name/) });
    // The flag repeated, as `jobscope serve` parses it.
    const cmd = addSettingFlags(new Command()).exitOverride();
    cmd.parse(['--queues', 'critical,3', '--queues', 'default', 'low,1'], { from: 'user' });
    const config = configFromFlags(cmd.opts());
    expect(parseQueueOrder(config.jobQueues!)).toEqual(await sidekiqParse(['critical,3', 'default', 'low,1']));
    expect(() => resolveConfig({ jobQueues: 'a a' }, {})).toThrow(/--queues \(JOBSCOPE_QUEUES\): queue a is named twice/);
  });

  it('orders as BasicFetch#queues_cmd: strict keeps the order; weighted shuffles, each name at its first place', async () => {
    const strict = parseQueueOrder('critical default low') as QueueOrder;
    const rubyStrict = await sidekiqRuby(
      redis.url,
      `require "sidekiq/fetch"; print JSON.generate(Sidekiq::BasicFetch.new({ queues: %w[critical default low], strict: true }).queues_cmd.grep(String))`,
    );
    expect(orderQueues(strict, seededRandom(1)).map((q) => `queue:${q}`)).toEqual(JSON.parse(rubyStrict));

    // Weighted: how often each queue comes first, over many fetches, against Sidekiq's own fetcher
    // and against the exact share (weight / total weight).
    const weighted = parseQueueOrder('critical,3 default,2 low,1') as QueueOrder;
    const N = 6000;
    const random = seededRandom(42);
    const ours: Record<string, number> = {};
    for (let i = 0; i < N; i++) {
      const first = orderQueues(weighted, random)[0]!;
      ours[first] = (ours[first] ?? 0) + 1;
    }
    const theirs = JSON.parse(
      await sidekiqRuby(
        redis.url,
        `require "sidekiq/fetch"; srand(42); f = Sidekiq::BasicFetch.new({ queues: %w[critical critical critical default default low], strict: false })
counts = Hash.new(0); ${N}.times { counts[f.queues_cmd.first] += 1 }; print JSON.generate(counts)`,
      ),
    ) as Record<string, number>;
    for (const [q, w] of [['critical', 3], ['default', 2], ['low', 1]] as const) {
      expect(Math.abs(ours[q]! / N - w / 6), q).toBeLessThan(0.03);
      expect(Math.abs(theirs[`queue:${q}`]! / N - w / 6), q).toBeLessThan(0.03);
    }
    // Every order has each queue once.
    expect(orderQueues(weighted, random).sort()).toEqual(['critical', 'default', 'low']);
  });

  it('a server given --queues takes jobs only from those queues and lists only them in its heartbeat', async () => {
    await servers.start({ ...onRedis(redis.url), jobQueues: 'mine,2 also', jobPollMs: 20 });
    // Pushed by Sidekiq's client, as a Sidekiq app would.
    await sidekiqRuby(redis.url, `%w[mine also other].each { |q| 3.times { Sidekiq::Client.push("class" => "SyntheticJob", "queue" => q, "args" => [{}]) } }`);
    await waitFor('the named queues drained', async () => {
      const v = await sidekiqView(redis.url);
      const size = (name: string) => v.queues.find((q) => q.name === name)?.size ?? 0;
      return size('mine') === 0 && size('also') === 0 && v.stats.processed === 6;
    });
    await sleep(500);
    const v = await sidekiqView(redis.url);
    expect(v.queues.find((q) => q.name === 'other')?.size).toBe(3);
    expect(v.stats.processed).toBe(6);
    expect(v.processes.map((p) => p.queues)).toEqual([['mine', 'also']]);
  });
});
