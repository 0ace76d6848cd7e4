// Probe, not a benchmark: a PostgreSQL trace append in three round trips against two, the database
// side alone (no HTTP, one process, one pool of 10 as an instance has): `three` reads the build's
// credentials (the named lookup onRequest sent before every part) and then appends; `two` appends
// alone, its lock statement reading the build's status (store/pg/traces.ts appendWithStatus), as a
// part of a build the instance knows does now; `bare` is bench/reference/pg-trace-server.ts's append
// (four statements one by one, a synchronous write) on the same pool. 32 streams of 4 KiB parts, each waiting for its answer;
// alternating rounds; parts/s, p50/p99 of a part, the cluster's CPU a part.
//   node --import tsx bench/experiments/pg-append-trips.ts [--rounds N] [--seconds S]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { openPgDatabase, PgBuilds, PgTraceStore } from '../../server/store/pg/index.ts';
import { cpuMeter } from '../lib/pg-bench.ts';
import { latencyStats, round } from '../lib/harness.ts';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const ROUNDS = opt('--rounds', 4);
const SECONDS = opt('--seconds', 4);
const STREAMS = 32;
const PART = Buffer.alloc(4096, 'x');

const cluster = await startPostgres({ database: 'appendtrips' });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-append-trips-'));
try {
  const db = await openPgDatabase(await cluster.createDatabase('trips'), { max: 10 });
  try {
    await db.pool.query(`INSERT INTO projects (id, name, runners_token, runners_token_sha, ci_token, ci_token_sha, created_at) VALUES (1, 'p', 'r', 'rs', 'c', 'cs', 0)`);
    await db.pool.query(
      `INSERT INTO builds (id, project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at)
       SELECT i, 1, 'running', 'b' || i, 'test', 'main', 'a', 'b', 'true', 't' || i, 'ts' || i, 0 FROM generate_series(1, $1::int) i`,
      [STREAMS],
    );
    const builds = new PgBuilds(db.pool);
    const traces = new PgTraceStore(db.pool, dir, { fsync: false, maxBytes: 1 << 40 });
    const offsets = new Map<number, number>();
    const sides = {
      three: async (id: number, at: number) => {
        await builds.credentials(id);
        return (await traces.append(id, at, PART)).length;
      },
      two: async (id: number, at: number) => (await traces.appendWithStatus(id, at, PART)).result.length,
      // bench/reference/pg-trace-server.ts's append: four statements sent one by one, a synchronous write.
      bare: async (id: number, at: number) => {
        const client = await db.pool.connect();
        try {
          await client.query('BEGIN');
          const { rows } = await client.query<{ length: string }>('SELECT length FROM bare_traces WHERE id = $1 FOR UPDATE', [id]);
          if (Number(rows[0]!.length) !== at) throw new Error(`bare: ${id} at ${rows[0]!.length}, not ${at}`);
          let fd = bareFds.get(id);
          if (fd === undefined) bareFds.set(id, (fd = fs.openSync(path.join(dir, `bare-${id}.log`), fs.constants.O_WRONLY | fs.constants.O_CREAT)));
          fs.writeSync(fd, PART, 0, PART.length, at);
          await client.query('UPDATE bare_traces SET length = $2 WHERE id = $1', [id, at + PART.length]);
          await client.query('COMMIT');
          return at + PART.length;
        } finally {
          client.release();
        }
      },
    };
    const bareFds = new Map<number, number>();
    await db.pool.query(`CREATE TABLE bare_traces (id bigint PRIMARY KEY, length bigint NOT NULL DEFAULT 0)`);
    await db.pool.query(`INSERT INTO bare_traces (id) SELECT i FROM generate_series(1, $1::int) i`, [STREAMS]);
    const offsetsOf = { three: offsets, two: offsets, bare: new Map<number, number>() };
    const names = Object.keys(sides) as (keyof typeof sides)[];
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
        const latencies: number[] = [];
        let sent = 0;
        const meter = cpuMeter([process.pid], path.join(cluster.dir, 'data'));
        const t0 = performance.now();
        const until = t0 + SECONDS * 1000;
        await Promise.all(
          Array.from({ length: STREAMS }, async (_, i) => {
            const id = i + 1;
            while (performance.now() < until) {
              const s = performance.now();
              const at = offsetsOf[name];
              at.set(id, await sides[name](id, at.get(id) ?? 0));
              latencies.push(performance.now() - s);
              sent++;
            }
          }),
        );
        const elapsed = (performance.now() - t0) / 1000;
        const cpu = meter();
        const { p50, p99 } = latencyStats(latencies);
        const line = `${round(sent / elapsed, 0)} parts/s, p50 ${round(p50)} p99 ${round(p99)} ms, cluster ${round(cpu.cluster / sent, 3)} + this process ${round(cpu.servers / sent, 3)} ms CPU a part, load ${os.loadavg()[0]!.toFixed(1)}`;
        console.log(`round ${r + 1} ${name}: ${line}`);
      }
    }
    await traces.close();
    for (const fd of bareFds.values()) fs.closeSync(fd);
  } finally {
    await db.close();
  }
} finally {
  await cluster.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
