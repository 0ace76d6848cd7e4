// Benchmark: footprint. The RSS of an idle `jobscope serve` child started as `npm run serve` and the
// `jobscope` bin start it (bin/jobscope.js: the server bundled by scripts/launcher.js, on plain node),
// settled a few seconds after it prints its listening line; then its peak RSS while 200 runners
// stream: each registered, holding a running build, sending 4 KiB trace parts in a loop (with a
// pause, as runners do), and polling builds/register now and then. Goal: < 85 MiB idle, < 250 MiB
// loaded. The reference column is the RSS of a bare node:http process (bench/reference/trace-server.ts,
// started through the same launcher): what Node itself costs here. Idle is also measured for the
// server bundled as the packaged app is (scripts/build-bundle.ts) and run by plain node, no launcher.
//   node --import tsx bench/footprint.ts [--quick]
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { measureStarts, READY_GOAL_RATIO } from './startup.ts';
import { createBuilds, log, MiB, project, REPO, registerRunner, round, rssOf, rssSampler, send, sendJson, startChild, startJobscope, RUNNER_UA, type BenchResult } from './lib/harness.ts';

const RUNNERS = 200;
const PART = 4096;

/**
 * RSS split as the kernel counts it (/proc/<pid>/smaps_rollup): anonymous (V8's heap, malloc arenas,
 * WebAssembly memory) and file-backed (mostly the node binary's code pages, the same in every node
 * process). A run at load ~20 showed the anonymous part swinging by ~17 MiB between starts of the
 * same bundle: the scratch of SQLite's TurboFan tier-up in a V8 worker's glibc arena, kept or trimmed
 * depending on what was allocated above it; the split says which part a change moved.
 */
function rssSplit(pid: number): { anon_mib: number; file_mib: number } {
  try {
    const t = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? NaN);
    return { anon_mib: round(kb('Anonymous') / 1024, 1), file_mib: round((kb('Rss') - kb('Anonymous')) / 1024, 1) };
  } catch {
    return { anon_mib: NaN, file_mib: NaN }; // no /proc (macOS): RSS alone
  }
}

export async function run({ quick = false }: { quick?: boolean } = {}): Promise<BenchResult[]> {
  const seconds = quick ? 4 : 15;
  const settle = quick ? 2000 : 5000;
  log(`footprint: idle RSS after ${settle / 1000} s, then ${RUNNERS} runners streaming for ${seconds} s`);

  const refDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-fp-ref-'));
  const ref = await startChild(['scripts/launcher.js', 'bench/reference/trace-server.ts', refDir], /listening on (http:\/\/\S+)/, 'reference-trace-server');
  await new Promise((r) => setTimeout(r, settle));
  const bareRss = rssOf(ref.pid);
  const bareSplit = rssSplit(ref.pid);
  await ref.stop();
  fs.rmSync(refDir, { recursive: true, force: true });

  // startJobscope runs `jobscope serve` as the bin and `npm run serve` do: through scripts/launcher.js.
  const s = await startJobscope('footprint');
  let idle: number, loaded: number, parts = 0;
  let idleSplit: ReturnType<typeof rssSplit>;
  try {
    await new Promise((r) => setTimeout(r, settle));
    idle = rssOf(s.pid);
    idleSplit = rssSplit(s.pid);
    const p = await project(s, 'bench-footprint');
    await createBuilds(s, p.id, RUNNERS + 50);
    const agent = new http.Agent({ keepAlive: true, maxSockets: RUNNERS + 10 });
    const runners: { token: string; build: { id: number; token: string }; offset: number }[] = [];
    // Set up 8 at a time (not measured): register, then take a build.
    for (let i = 0; i < RUNNERS; i += 8) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(8, RUNNERS - i) }, async (_, j) => {
          const token = await registerRunner(s, `fp-${i + j}`, agent);
          return { token, build: (await sendJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token }, {}, agent)).body as { id: number; token: string }, offset: 0 };
        }),
      );
      runners.push(...batch);
    }
    const sampler = rssSampler(s.pid, 50);
    const until = performance.now() + seconds * 1000;
    const part = Buffer.alloc(PART, 'l');
    await Promise.all(
      runners.map(async (r, i) => {
        let n = 0;
        while (performance.now() < until) {
          const a = await send(`${s.url}/ci/api/v1/builds/${r.build.id}/trace.txt`, {
            method: 'PATCH',
            agent,
            body: part,
            headers: { 'content-type': 'text/plain', 'content-range': `${r.offset}-${r.offset + PART}`, 'build-token': r.build.token, 'user-agent': RUNNER_UA },
          });
          if (a.status !== 202) throw new Error(`PATCH: ${a.status} ${a.body.toString()}`);
          r.offset += PART;
          parts++;
          if (++n % 10 === i % 10) await sendJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: r.token, last_update: 'stale' }, {}, agent);
          await new Promise((res) => setTimeout(res, 20));
        }
      }),
    );
    loaded = sampler.stop();
    agent.destroy();
  } finally {
    await s.stop();
  }
  // The same server bundled as the packaged app ships it (scripts/build-bundle.ts: one file, the V8
  // tuning beside it and imported first) and run by plain node, no tsx loader thread and no on-the-fly
  // TypeScript: what the product itself costs at rest, and what starting it costs (bench/startup.ts).
  let bundled = NaN;
  let bundledSplit = { anon_mib: NaN, file_mib: NaN };
  let start = { readyCpuMs: NaN, readyMainCpuMs: NaN, readyMs: NaN, firstDocsCpuMs: NaN };
  let bareStart = { readyCpuMs: NaN, readyMainCpuMs: NaN, readyMs: NaN };
  // Inside the repo so the external packages resolve from its node_modules.
  const outDir = path.join(REPO, '.tmp', `bench-bundle-${process.pid}`);
  try {
    const out = path.join(outDir, 'cli.mjs');
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-bundle.ts', 'hosts/cli.ts', out], { cwd: REPO });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-fp-bundled-'));
    const child = await startChild([out, 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'error'], /Jobscope listening on (http:\/\/\S+)/, 'jobscope-bundled');
    await new Promise((r) => setTimeout(r, settle));
    bundled = rssOf(child.pid);
    bundledSplit = rssSplit(child.pid);
    await child.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    // Start-up of the same bundle (bench/startup.ts): medians of a few starts, against a bare node:http start.
    const starts = await measureStarts([out], quick ? 3 : 5);
    start = starts.bundles[0]!;
    bareStart = starts.bare;
  } catch (err) {
    log(`footprint: could not measure the bundled server (${(err as Error).message.split('\n')[0]})`);
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  log(`footprint: bundled server idle ${round(bundled / MiB, 1)} MiB; start ${start.readyCpuMs} ms CPU, ready in ${start.readyMs} ms (bare node:http ${bareStart.readyCpuMs} ms CPU, ${bareStart.readyMs} ms)`);
  log(`footprint: idle anonymous ${idleSplit.anon_mib} + file-backed ${idleSplit.file_mib} MiB (bundled ${bundledSplit.anon_mib} + ${bundledSplit.file_mib}, bare node:http ${bareSplit.anon_mib} + ${bareSplit.file_mib})`);
  log(`footprint: idle ${round(idle / MiB, 1)} MiB, loaded peak ${round(loaded / MiB, 1)} MiB (${round(parts / seconds, 0)} parts/s); bare node:http ${round(bareRss / MiB, 1)} MiB`);
  return [
    { name: 'footprint idle RSS (npm run serve / jobscope bin)', value: round(idle / MiB, 1), unit: 'MiB', reference: round(bareRss / MiB, 1), ratio: round(idle / bareRss), goal: '< 85 MiB', pass: idle < 85 * MiB, ...idleSplit, bare_anon_mib: bareSplit.anon_mib, bare_file_mib: bareSplit.file_mib },
    {
      name: 'footprint idle RSS (bundled, plain node, no launcher: as packaged)',
      value: round(bundled / MiB, 1),
      unit: 'MiB',
      reference: round(bareRss / MiB, 1),
      ratio: round(bundled / bareRss),
      goal: '< 85 MiB',
      pass: bundled < 85 * MiB,
      ...bundledSplit,
    },
    {
      name: 'server start CPU, spawn to listening (bundled, plain node)',
      value: start.readyCpuMs,
      unit: 'ms',
      reference: bareStart.readyCpuMs,
      ratio: round(start.readyCpuMs / bareStart.readyCpuMs),
      goal: 'lower is better',
      pass: true,
      ready_ms: start.readyMs,
      bare_ready_ms: bareStart.readyMs,
      main_thread_cpu_ms: start.readyMainCpuMs,
      bare_main_thread_cpu_ms: bareStart.readyMainCpuMs,
      first_docs_cpu_ms: start.firstDocsCpuMs,
    },
    {
      name: 'server ready, spawn to listening (bundled, plain node)',
      value: start.readyMs,
      unit: 'ms',
      reference: bareStart.readyMs,
      ratio: round(start.readyMs / bareStart.readyMs),
      goal: `≤ ${READY_GOAL_RATIO}× the bare node:http server's ready`,
      pass: start.readyMs <= READY_GOAL_RATIO * bareStart.readyMs,
    },
    {
      name: `footprint RSS, ${RUNNERS} runners streaming`,
      value: round(loaded / MiB, 1),
      unit: 'MiB',
      reference: round(bareRss / MiB, 1),
      ratio: round(loaded / bareRss),
      goal: '< 250 MiB',
      pass: loaded < 250 * MiB,
      parts_per_s: round(parts / seconds, 0),
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await run({ quick: process.argv.includes('--quick') }), null, 2));
}
