// Benchmark: the database's write-ahead log under a stream of writes. 8 clients enqueue synthetic
// jobs one per request (`POST /api/v3/sim/jobs`, each one committed transaction; the server's worker
// pool then runs and deletes every job: more writes) until N are in (25,000; 5,000 with --quick),
// on a fresh server per round, while the -wal file's size is sampled. Before statements were reset
// after use the WAL grew by every write for as long as the server ran (916 MB after 50,000 writes);
// now SQLite's automatic checkpoint and the --wal-checkpoint-every-ms timer keep it near one
// checkpoint's worth (~4 MiB).
// Figures: the largest -wal seen against the database file it belongs to; and the write rate with
// a 1 s checkpoint timer against the same server with the timer off (what the timer costs), each
// the better of two rounds run ABBA.
// Goal: -wal < 8 MiB after N writes; the timer costs at most 10 % of the write rate.
//   node --import tsx bench/wal.ts [--quick]
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { log, MiB, round, send, startJobscope, type BenchResult } from './lib/harness.ts';

const CLIENTS = 8;

const sizeOf = (file: string) => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};

async function soak(tag: string, writes: number, checkpointEveryMs: number) {
  const s = await startJobscope(tag, ['--wal-checkpoint-every-ms', String(checkpointEveryMs)]);
  const wal = path.join(s.dataDir, 'jobscope.db-wal');
  const db = path.join(s.dataDir, 'jobscope.db');
  let peak = 0;
  const sample = () => (peak = Math.max(peak, sizeOf(wal)));
  const sampler = setInterval(sample, 50);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
    const body = JSON.stringify({ queue: 'bench-wal', count: 1, duration_ms: 0 });
    const headers = { 'content-type': 'application/json', 'private-token': s.adminToken };
    let sent = 0;
    const t0 = performance.now();
    const client = async () => {
      while (sent < writes) {
        sent++;
        const r = await send(`${s.url}/api/v3/sim/jobs`, { method: 'POST', agent, headers, body });
        if (r.status !== 202) throw new Error(`POST /jobs: ${r.status} ${r.body.toString().slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    const seconds = (performance.now() - t0) / 1000;
    agent.destroy();
    sample();
    return { writesPerSec: writes / seconds, seconds, peakWal: peak, walAtEnd: sizeOf(wal), dbSize: sizeOf(db) };
  } finally {
    clearInterval(sampler);
    await s.stop();
  }
}

export async function run({ quick = false }: { quick?: boolean } = {}): Promise<BenchResult[]> {
  const writes = quick ? 5_000 : 25_000;
  log(`wal: ${writes} job enqueues by ${CLIENTS} clients per round; rounds with a 1 s checkpoint timer and with none, alternated (ABBA)`);
  // ABBA on a fresh server each: a machine whose load drifts during the run favours neither side.
  const timer = [await soak('wal-timer', writes, 1000)];
  const none = [await soak('wal-no-timer', writes, 0), await soak('wal-no-timer', writes, 0)];
  timer.push(await soak('wal-timer', writes, 1000));
  const best = (xs: typeof timer) => Math.max(...xs.map((x) => x.writesPerSec));
  const peak = Math.max(...timer.map((x) => x.peakWal));
  const dbSize = Math.max(...timer.map((x) => x.dbSize));
  log(`wal: timer ${timer.map((x) => round(x.writesPerSec, 0)).join(', ')} writes/s, -wal peak ${round(peak / MiB)} MiB (db ${round(dbSize / MiB)} MiB); no timer ${none.map((x) => round(x.writesPerSec, 0)).join(', ')} writes/s, -wal peak ${round(Math.max(...none.map((x) => x.peakWal)) / MiB)} MiB`);
  return [
    {
      name: `-wal size during ${writes} writes (job enqueues, each run and deleted), vs the database file`,
      value: round(peak / MiB),
      unit: 'MiB',
      reference: round(dbSize / MiB),
      ratio: round(peak / Math.max(1, dbSize)),
      goal: '< 8 MiB',
      pass: peak < 8 * MiB,
      wal_at_end_mib: round(Math.max(...timer.map((x) => x.walAtEnd)) / MiB),
      peak_without_timer_mib: round(Math.max(...none.map((x) => x.peakWal)) / MiB),
    },
    {
      name: `write rate with a 1 s WAL checkpoint timer vs none (${writes} job enqueues, ${CLIENTS} clients, best of 2 each)`,
      value: round(best(timer), 0),
      unit: 'writes/s',
      reference: round(best(none), 0),
      ratio: round(best(timer) / best(none)),
      goal: '≥ 0.9× the rate without the timer',
      pass: best(timer) >= 0.9 * best(none),
      rounds_timer: timer.map((x) => round(x.writesPerSec, 0)),
      rounds_none: none.map((x) => round(x.writesPerSec, 0)),
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await run({ quick: process.argv.includes('--quick') }), null, 2));
}
