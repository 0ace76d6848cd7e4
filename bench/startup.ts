// Benchmark: server start-up. How much CPU and wall time a `jobscope serve` child spends from spawn
// to its "listening" line, its RSS a moment later, and what its first requests cost: the first
// runner API answer (every test's and runner's first call) and the first OpenAPI document, which
// loads the docs packages on demand. Run as tests and the packaged app run it: the esbuild bundle of
// hosts/cli.ts (scripts/build-bundle.ts) on plain node, its V8 code cache made by a first start
// (not measured). The reference is a bare node:http server started the same way: what a node process
// costs before any of ours runs.
//   node --import tsx bench/startup.ts [--rounds N] [--bundle A.mjs [--bundle B.mjs]]
// With two --bundle paths the rounds alternate A, B, B, A, A, B…, so both see the same load and the
// same places in a round (a before and an after built from two checkouts, compared back to back).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { log, REPO, round, rssOf, send, type BenchResult } from './lib/harness.ts';

/** Server ready's bound: this many times a bare node:http server's ready, measured in the same rounds. */
export const READY_GOAL_RATIO = 2.5;
const TICK_MS = 1000 / 100; // /proc/<pid>/stat counts CPU in USER_HZ ticks, 100 per second on Linux

/**
 * User + system CPU of a process so far, in ms; with `mainThread`, of its main thread alone (what the
 * wall time to the listening line waits for; the rest is V8's and libuv's worker threads: GC,
 * WebAssembly compiles, file work). The main thread's comes from /proc/<pid>/task/<pid>/schedstat,
 * in nanoseconds: /proc's stat counts 10 ms ticks, too coarse for a change of a few ms in a start of
 * ~400 (the process total stays on stat, which also counts threads that have exited).
 */
function cpuMsOf(pid: number, mainThread = false): number {
  if (mainThread) {
    try {
      return Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
    } catch {
      /* a kernel without schedstats: the tick count below */
    }
  }
  const stat = fs.readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

export interface StartSample {
  readyMs: number;
  readyCpuMs: number;
  readyMainCpuMs: number;
  idleRss: number;
  firstApiMs: number;
  firstApiCpuMs: number;
  firstDocsMs: number;
  firstDocsCpuMs: number;
  /** The start's phases as `serve` prints them ("Started in modules 180 ms, store 75 ms, …"); none for the bare server. */
  phases: Record<string, number>;
}

/** The phases of serve's "Started in …" line (server/start-phases.ts); {} when it has none (an older bundle). */
export function phasesOf(stderr: string): Record<string, number> {
  const line = /^Started in (.*)$/m.exec(stderr)?.[1] ?? '';
  return Object.fromEntries([...line.matchAll(/([\w-]+) (\d+) ms/g)].map((m) => [m[1]!, Number(m[2])]));
}

async function startOnce(args: string[], ready: RegExp, settleMs: number, requests: boolean): Promise<StartSample> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    const { url, readyMs, readyCpuMs, readyMainCpuMs } = await new Promise<{ url: string; readyMs: number; readyCpuMs: number; readyMainCpuMs: number }>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = ready.exec(out);
        // Read at once: the CPU spent up to the line, not what the process does after it.
        if (m) resolve({ url: m[1]!, readyMs: performance.now() - t0, readyCpuMs: cpuMsOf(proc.pid!), readyMainCpuMs: cpuMsOf(proc.pid!, true) });
      });
      void exited.then(() => reject(new Error(`exited before it was ready: ${err}`)));
    });
    await new Promise((r) => setTimeout(r, settleMs));
    const idleRss = rssOf(proc.pid!);
    const timed = async (pathAndQuery: string, init: Parameters<typeof send>[1]) => {
      const cpu0 = cpuMsOf(proc.pid!);
      const w0 = performance.now();
      const a = await send(`${url}${pathAndQuery}`, init);
      return { ms: performance.now() - w0, cpuMs: cpuMsOf(proc.pid!) - cpu0, status: a.status };
    };
    let api = { ms: NaN, cpuMs: NaN }, docs = { ms: NaN, cpuMs: NaN };
    if (requests) {
      const a = await timed('/ci/api/v1/builds/register.json', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'not-a-runner' }) });
      if (a.status !== 403) throw new Error(`register with a wrong token: ${a.status}`);
      api = a;
      const d = await timed('/api/docs/json', {});
      if (d.status !== 200) throw new Error(`/api/docs/json: ${d.status}`);
      docs = d;
    }
    return { readyMs, readyCpuMs, readyMainCpuMs, idleRss, firstApiMs: api.ms, firstApiCpuMs: api.cpuMs, firstDocsMs: docs.ms, firstDocsCpuMs: docs.cpuMs, phases: phasesOf(err) };
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

type Figures = Omit<StartSample, 'phases'>;

export function summarize(samples: StartSample[]): Record<keyof Figures, number> & { phases: Record<string, number> } {
  const keys = (Object.keys(samples[0]!) as (keyof StartSample)[]).filter((k): k is keyof Figures => k !== 'phases');
  const figures = Object.fromEntries(keys.map((k) => [k, round(median(samples.map((s) => s[k])), 1)])) as Record<keyof Figures, number>;
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.phases)))];
  const phases = Object.fromEntries(names.map((n) => [n, round(median(samples.map((s) => s.phases[n] ?? NaN)), 1)]));
  return { ...figures, phases };
}

const BARE = "require('node:http').createServer((q, s) => s.end()).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port) })";

/**
 * One start of each bundle before the rounds, not measured, when no V8 code cache is beside it yet
 * (scripts/code-cache.js): the first start after a build compiles everything and saves the cache
 * 3 s after it loaded; every start after it (a user's second start on, every test's) reads it. The
 * rounds measure those. A bundle without the cache stub (an older checkout's) writes none: skipped.
 */
async function warmCodeCache(bundle: string): Promise<void> {
  const dir = path.dirname(bundle);
  const cached = () => fs.readdirSync(dir).some((f) => f.endsWith('.v8cache'));
  if (cached() || !fs.readFileSync(bundle, 'utf8').includes('runWithCodeCache')) return;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-startup-'));
  const proc = spawn(process.execPath, [bundle, 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'error'], { cwd: REPO, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    for (let waited = 0; !cached() && waited < 30_000 && proc.exitCode === null; waited += 100) await new Promise((r) => setTimeout(r, 100));
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Medians over `rounds` starts of each bundle (alternating) and of the bare reference. */
export async function measureStarts(bundles: string[], rounds: number, settleMs = 1500) {
  for (const bundle of bundles) await warmCodeCache(bundle);
  const per = bundles.map(() => [] as StartSample[]);
  const bare: StartSample[] = [];
  for (let i = 0; i < rounds; i++) {
    bare.push(await startOnce(['-e', BARE], /listening on (http:\/\/\S+)/, settleMs, false));
    // A, B in even rounds and B, A in odd ones: the position in a round moved a bundle's main-thread
    // CPU by ~20 ms at load ~22 (the same two bundles, one order then the other), more than a change
    // of a few ms being measured.
    const order = [...bundles.entries()];
    if (i % 2 === 1) order.reverse();
    for (const [j, bundle] of order) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-startup-'));
      try {
        per[j]!.push(await startOnce([bundle, 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'error'], /Jobscope listening on (http:\/\/\S+)/, settleMs, true));
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  return { bare: summarize(bare), bundles: per.map(summarize), readyCpuMs: per.map((p) => p.map((x) => x.readyCpuMs)), readyMainCpuMs: per.map((p) => p.map((x) => Math.round(x.readyMainCpuMs))), bareMainCpuMs: bare.map((x) => Math.round(x.readyMainCpuMs)) };
}

export async function run({ quick = false, bundles = [] as string[], rounds = 0 } = {}): Promise<BenchResult[]> {
  const outDir = path.join(REPO, '.tmp', `bench-startup-${process.pid}`);
  try {
    if (bundles.length === 0) {
      const out = path.join(outDir, 'cli.mjs');
      execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-bundle.ts', 'hosts/cli.ts', out], { cwd: REPO });
      bundles = [out];
    }
    const n = rounds || (quick ? 3 : 5);
    log(`startup: ${n} rounds of ${bundles.length} bundle(s) and a bare node:http server, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const { bare, bundles: got, readyCpuMs, readyMainCpuMs, bareMainCpuMs } = await measureStarts(bundles, n);
    log(`startup: bare node:http ${JSON.stringify(bare)}; main thread per round ${bareMainCpuMs.join(' ')} ms`);
    for (const [j, b] of got.entries()) log(`startup: ${bundles[j]} ${JSON.stringify(b)}; start CPU per round ${readyCpuMs[j]!.join(' ')} ms, main thread ${readyMainCpuMs[j]!.join(' ')} ms`);
    log(`startup: load now ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const s = got[got.length - 1]!;
    return [
      { name: 'server start CPU, spawn to listening (bundled)', value: s.readyCpuMs, unit: 'ms', reference: bare.readyCpuMs, ratio: round(s.readyCpuMs / bare.readyCpuMs), goal: 'lower is better', pass: true, main_thread_cpu_ms: s.readyMainCpuMs, bare_main_thread_cpu_ms: bare.readyMainCpuMs },
      // Against the bare server started the same way in the same rounds: the machine's speed moves 3× within an hour.
      { name: 'server ready, spawn to listening (bundled)', value: s.readyMs, unit: 'ms', reference: bare.readyMs, ratio: round(s.readyMs / bare.readyMs), goal: `≤ ${READY_GOAL_RATIO}× the bare node:http server's ready`, pass: s.readyMs <= READY_GOAL_RATIO * bare.readyMs, phases_ms: s.phases },
      { name: 'server RSS just after start (bundled)', value: round(s.idleRss / 2 ** 20, 1), unit: 'MiB', reference: round(bare.idleRss / 2 ** 20, 1), ratio: round(s.idleRss / bare.idleRss), goal: '< 85 MiB', pass: s.idleRss < 85 * 2 ** 20 },
      { name: 'first runner API request after start', value: s.firstApiMs, unit: 'ms', reference: NaN, ratio: NaN, goal: 'no slower', pass: true, cpu_ms: s.firstApiCpuMs },
      { name: 'first /api/docs/json after start', value: s.firstDocsMs, unit: 'ms', reference: NaN, ratio: NaN, goal: 'no slower', pass: true, cpu_ms: s.firstDocsCpuMs },
    ];
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const bundles = argv.flatMap((a, i) => (a === '--bundle' && argv[i + 1] ? [path.resolve(argv[i + 1]!)] : []));
  const r = argv.indexOf('--rounds');
  console.log(JSON.stringify(await run({ quick: argv.includes('--quick'), bundles, rounds: r >= 0 ? Number(argv[r + 1]) : 0 }), null, 2));
}
