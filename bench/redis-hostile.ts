// Benchmark: a hostile Redis fails only its own connection. A sidekiq connection's source samples,
// every 2 s as the monitor does, a hostile RESP server (its own process: bench/lib/
// hostile-redis-server.ts) that announces 2^31 elements, or a 600 MB string, and floods; meanwhile
// this process's event-loop delay (perf_hooks, 10 ms resolution) and RSS are watched. The
// reference is the same loop against a real, small redis-server. Goal: event-loop delay p99 within
// 2× the reference and RSS growth under 100 MiB. The flood stops at 512 MiB per connection so a run
// against unbounded code (--before) cannot take the machine down.
//   node --import tsx bench/redis-hostile.ts [--quick] [--before <dir>] [--mode huge-array|huge-bulk]
// (--before: as bench/sidekiq-huge.ts; --mode: that case alone, in a fresh process, for its RSS)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { REPO, round, log, type BenchResult } from './lib/harness.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { DEFAULT_CLIENT_BOUNDS } from '../server/redis/bounded-client.ts';
import { ReplyScanner } from '../server/redis/reply-guard.ts';
import { Decoder, RESP_TYPES } from 'ioredis/built/resp/decoder.js';
import type { SidekiqSource } from '../server/sidekiq/source.ts';

const INTERVAL_MS = 2000;
const FLOOD_BYTES = 512 * 2 ** 20;

async function hostileServer(mode: string): Promise<{ url: string; stop(): void }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'bench/lib/hostile-redis-server.ts'), mode, String(FLOOD_BYTES)], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    proc.once('exit', () => reject(new Error('the hostile server exited')));
  });
  return { url, stop: () => void proc.kill('SIGKILL') };
}

interface Watched {
  loopP99Ms: number;
  loopMaxMs: number;
  rssGrowthMiB: number;
  samples: number;
  message: string;
}

async function watch(Source: typeof SidekiqSource, url: string, ms: number): Promise<Watched> {
  const limits = { maxQueues: 10_000, maxProcesses: 5_000, days: 30, maxNameBytes: 256 };
  const source = new Source({ url, password: '', namespace: '' }, { timeoutMs: 5000, limits, reply: DEFAULT_CLIENT_BOUNDS });
  (globalThis as { gc?: () => void }).gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const rssTimer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const end = performance.now() + ms;
  let samples = 0;
  let message = '';
  try {
    while (performance.now() < end) {
      const t = performance.now();
      const s = await source.sample();
      samples++;
      message = s.message;
      const wait = INTERVAL_MS - (performance.now() - t);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  } finally {
    loop.disable();
    clearInterval(rssTimer);
    source.close();
  }
  return { loopP99Ms: round(loop.percentile(99) / 1e6, 1), loopMaxMs: round(loop.max / 1e6, 1), rssGrowthMiB: round((peak - rss0) / 2 ** 20, 1), samples, message: message.slice(0, 160) };
}

/** The replies of one 1,000-queue × 500-process sample as they come off the socket, in 64 KiB chunks. */
function sampleReplies(): Buffer[] {
  const parts: string[] = [];
  const bulk = (v: string) => `$${Buffer.byteLength(v)}\r\n${v}\r\n`;
  for (let page = 0; page < 4; page++) parts.push(`*2\r\n${bulk('0')}*250\r\n`, ...Array.from({ length: 250 }, (_, i) => bulk(`queue_${page}_${i}`)));
  const job = JSON.stringify({ class: 'HardJob', args: [1, 'x'.repeat(40)], retry: true, queue: 'q', jid: '0'.repeat(24), created_at: 1.7e9, enqueued_at: 1.7e9 });
  for (let i = 0; i < 1000; i++) parts.push(`:3\r\n`, bulk(job));
  const info = JSON.stringify({ hostname: 'worker-1', started_at: 1.7e9, pid: 1000, tag: 'app', concurrency: 10, queues: ['default'], labels: [], identity: 'worker-1:1000:abc' });
  for (let i = 0; i < 500; i++) parts.push('*5\r\n', bulk(info), bulk('3'), bulk('1700000000.5'), bulk('false'), bulk('123456'));
  const all = Buffer.from(parts.join(''));
  const chunks: Buffer[] = [];
  for (let o = 0; o < all.length; o += 65536) chunks.push(all.subarray(o, o + 65536));
  return chunks;
}

/** Time per pass of `fn` over the chunks, ms (median of `n`). */
function perPass(n: number, fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

/** What the reply guard costs on normal reads: scanning a sample's replies against ioredis's decoder decoding them. */
export function guardCost(quick: boolean): BenchResult {
  const chunks = sampleReplies();
  const n = quick ? 50 : 300;
  let replies = 0;
  const decode = () => {
    const d = new Decoder({ getTypeMapping: () => ({ [RESP_TYPES.BLOB_STRING]: Buffer }), onReply: () => replies++, onErrorReply: () => {}, onPush: () => {} });
    for (const c of chunks) d.write(c);
  };
  const scan = () => {
    const s = new ReplyScanner(DEFAULT_CLIENT_BOUNDS);
    for (const c of chunks) if (s.feed(c)) throw new Error('a normal reply was refused');
  };
  for (let i = 0; i < 20; i++) {
    decode();
    scan();
  }
  const decoded = perPass(n, decode);
  const scanned = perPass(n, scan);
  return {
    name: "sidekiq connection: the reply guard's cost on one normal sample's replies (1,000 queues × 500 processes)",
    value: round(scanned, 3),
    unit: 'ms',
    reference: round(decoded, 3),
    ratio: round(scanned / decoded, 2),
    goal: '≤ 0.25× what decoding the same bytes costs',
    pass: scanned / decoded <= 0.25,
    ratio_note: "ratio = the RESP header scanner over the sample's reply bytes / ioredis's own decoder over the same bytes (which every read pays anyway), same process, median pass",
    bytes: chunks.reduce((t, c) => t + c.length, 0),
  };
}

export async function run(opts: { quick: boolean; before?: string; modes?: string[] }): Promise<BenchResult[]> {
  const ms = opts.quick ? 6_000 : 20_000;
  const dir = opts.before ? path.resolve(opts.before) : REPO;
  const { SidekiqSource: Source } = (await import(pathToFileURL(path.join(dir, 'server/sidekiq/source.ts')).href)) as typeof import('../server/sidekiq/source.ts');
  const code = opts.before ? `before (${opts.before})` : 'this checkout';
  const redis = await startRedis();
  let reference: Watched;
  try {
    log('sampling a real, small redis-server (the reference)…');
    reference = await watch(Source, redis.url, ms);
  } finally {
    await redis.stop();
  }
  const out: BenchResult[] = [guardCost(opts.quick)];
  // One mode per process when comparing RSS: memory a case leaves behind hides the next one's growth.
  for (const mode of opts.modes ?? ['huge-array', 'huge-bulk']) {
    const hostile = await hostileServer(mode);
    try {
      log(`sampling a hostile Redis (${mode}) every 2 s for ${ms / 1000} s…`);
      const w = await watch(Source, hostile.url, ms);
      const ratio = w.loopP99Ms / Math.max(reference.loopP99Ms, 1e-3);
      out.push({
        name: `sidekiq connection: a hostile Redis (${mode === 'huge-array' ? '2^31 elements announced' : 'a 600 MB string announced'}) sampled every 2 s: this process's event-loop delay p99`,
        value: w.loopP99Ms,
        unit: 'ms',
        reference: reference.loopP99Ms,
        ratio: round(ratio, 2),
        goal: '≤ 2× the delay sampling a normal Redis, RSS growth < 100 MiB',
        pass: ratio <= 2 && w.rssGrowthMiB < 100,
        ratio_note: 'ratio = event-loop delay p99 while sampling the hostile server / while sampling a real small redis-server, same process, same run',
        loop_max_ms: w.loopMaxMs,
        rss_growth_mib: w.rssGrowthMiB,
        reference_rss_growth_mib: reference.rssGrowthMiB,
        samples: w.samples,
        sample_message: w.message,
        code,
      });
    } finally {
      hostile.stop();
    }
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--before');
  const m = process.argv.indexOf('--mode');
  const r = await run({ quick: process.argv.includes('--quick'), before: i > 0 ? process.argv[i + 1] : undefined, modes: m > 0 ? [process.argv[m + 1]!] : undefined });
  process.stdout.write(JSON.stringify(r, null, 1) + '\n');
}
