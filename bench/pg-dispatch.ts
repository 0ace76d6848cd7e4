// Benchmark: dispatch on PostgreSQL. 200 runners poll `builds/register` (each waiting for
// its answer, then asking again) over 10,000 pending builds until none is left, against three sides
// on one machine, in alternating rounds:
//   ours   two `jobscope serve --database` children on one throwaway cluster (test/helpers/postgres.ts)
//          and one shared data dir; every poll goes to the next instance in turn (a round-robin balancer);
//   sqlite one `jobscope serve` child on its data dir's SQLite (what bench/dispatch.ts measures);
//   bare   two node:http children (bench/reference/pg-dispatch-server.ts) claiming with a plain
//          UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING on the same cluster,
//          the polls spread over both alike.
// Each round starts every side fresh (a new database, a new data dir, the bare table refilled): the
// take query counts running builds, so a side must not start a round with the last round's running.
// Figures: builds/s, the p99 of a poll, and CPU per build of each side's servers and of the
// cluster; each line is its median round, with the min–max over the rounds (bench/lib/rounds.ts).
// Every build is handed out exactly once, checked on the answers and on the tables: twice fails the
// bench. Then, in the last round, the p99 of a poll at a steady offered rate, fixed (every runner
// every PACED_EVERY_MS: 400 polls/s with 200 runners) and offered to every side alike: the latency
// without the queueing a closed loop of 200 pollers builds up by itself (200 in flight ÷ N answers/s
// each). Fixed, not half of the round's own closed-loop rate as it was: a faster closed-loop round
// then offered more polls and moved the paced test toward saturation (one full run's 1428 ms), so
// rounds and runs did not compare. 400/s is below every side's closed-loop rate here (PostgreSQL ×2
// 891–1,140 builds/s in the last full run, bare 1,878–2,322, SQLite ~3,600).
//
// Goals (only the ratios and p99s are asked for): ours ≥ 0.6× bare (GOAL_RATIO). Ours does per poll what a
// runner needs and the bare loop skips (runner looked up by token, its contact time written, GitLab's
// fair order across projects, the whole BuildDetails answer, a NOTIFY to the other instances), in the
// same kind of one-statement claim; a floor that high says the claim, not the work around it,
// bounds a poll. The ratio to one SQLite server is reported with no goal: two instances are for availability
// and for more machines, and here both share two cores with PostgreSQL. Paced p99 < 50 ms (twice
// bench/dispatch.ts's SQLite goal: a poll is at least two round trips to another process).
//   node --import tsx bench/pg-dispatch.ts [--quick]
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.ts';
import { createBuilds, latencyStats, log, project, registerRunner, round, startJobscope, RUNNER_UA, type BenchResult, type BenchServer } from './lib/harness.ts';
import { cpuMeter, loadAverage, ownRounds, roundRobin, startPgPair, startReferencePair } from './lib/pg-bench.ts';
import type { Spread } from './lib/compare.ts';

/** Of the bare SKIP LOCKED pair's builds/s, measured in the same round. */
const GOAL_RATIO = 0.6;

/** The paced test's period per runner: 200 runners × 2 polls/s = 400 polls/s offered. */
const PACED_EVERY_MS = 500;

// Quick mode polls with fewer runners (its setup, registering them one by one, is most of its time).
let RUNNERS = 200;

interface Target {
  url: string;
  agent: http.Agent;
}

const targetsOf = (urls: string[], route: string): Target[] => urls.map((u) => ({ url: `${u}${route}`, agent: new http.Agent({ keepAlive: true, maxSockets: RUNNERS }) }));

/**
 * One poll. A kept-alive socket the server closed (its 10 s keep-alive timeout) while this process,
 * starved of CPU on a loaded machine, had not yet seen the FIN, fails at once with nothing sent: the
 * request is sent again on a new socket, as the runner's Go client does (net/http retries a request
 * that failed on a reused connection before any answer) and as node's docs advise (reusedSocket).
 */
function request(t: Target, body: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(t.url, { method: 'POST', agent: t.agent, headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && err.code === 'ECONNRESET') resolve(request(t, body));
      else reject(err);
    });
    req.end(body);
  });
}

async function post(t: Target, body: string) {
  const s = performance.now();
  const r = await request(t, body);
  const ms = performance.now() - s;
  if (r.status === 201) return { ms, id: JSON.parse(r.body.toString()).id as number };
  if (r.status === 204) return { ms, id: undefined };
  throw new Error(`builds/register at ${t.url}: ${r.status} ${r.body.toString().slice(0, 200)}`);
}

/** A build handed out twice (or one lost) fails the bench: a fast dispatch that is wrong is no figure. */
function checkOnce(side: string, ids: number[], total: number, capped: boolean) {
  const unique = new Set(ids).size;
  if (unique !== ids.length || (!capped && ids.length !== total)) throw new Error(`${side}: handed out ${ids.length} builds (${unique} distinct) of ${total}`);
}

/** Polls until every runner has been told there is nothing (204), or until `capSeconds` pass. */
async function closedLoop(side: string, urls: string[], route: string, bodies: string[], total: number, capSeconds: number) {
  const targets = targetsOf(urls, route);
  const next = roundRobin(targets);
  const latencies: number[] = [];
  const ids: number[] = [];
  const t0 = performance.now();
  const deadline = t0 + capSeconds * 1000;
  let capped = false;
  const runner = async (i: number) => {
    for (;;) {
      if (performance.now() > deadline) return void (capped = true);
      const r = await post(next(), bodies[i]!);
      latencies.push(r.ms);
      if (r.id === undefined) return;
      ids.push(r.id);
    }
  };
  await Promise.all(Array.from({ length: RUNNERS }, (_, i) => runner(i)));
  const elapsed = (performance.now() - t0) / 1000;
  for (const t of targets) t.agent.destroy();
  // Stopped by the cap only matters when builds were left: the last 204 polls may outlast it.
  capped &&= ids.length < total;
  checkOnce(side, ids, total, capped);
  return { buildsPerSec: ids.length / elapsed, ids, capped, ...latencyStats(latencies) };
}

/** Every runner polls once per `everyMs` (random phase) for `seconds`, whatever the answers. */
async function paced(side: string, urls: string[], route: string, bodies: string[], everyMs: number, seconds: number) {
  const targets = targetsOf(urls, route);
  const next = roundRobin(targets);
  const latencies: number[] = [];
  const ids: number[] = [];
  const end = performance.now() + seconds * 1000;
  const runner = async (i: number) => {
    let at = performance.now() + Math.random() * everyMs;
    for (;;) {
      await new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));
      if (performance.now() > end) return;
      at += everyMs;
      const r = await post(next(), bodies[i]!);
      latencies.push(r.ms);
      if (r.id !== undefined) ids.push(r.id);
    }
  };
  await Promise.all(Array.from({ length: RUNNERS }, (_, i) => runner(i)));
  for (const t of targets) t.agent.destroy();
  checkOnce(side, ids, ids.length, true);
  return { pollsPerSec: latencies.length / seconds, handedOut: ids.length, ...latencyStats(latencies) };
}

/**
 * In requests of 1,000: on PostgreSQL a create inserts build by build, and one request of 10,000 on
 * a loaded machine outlasts the server's --idle-timeout-ms (60 s with nothing written), which cuts it.
 */
async function createInBatches(s: BenchServer, projectId: number, total: number) {
  for (let left = total; left > 0; left -= 1000) await createBuilds(s, projectId, Math.min(1000, left));
}

/** A project with `total` pending builds and 200 shared runners registered (setup, not measured). */
async function setUp(s: BenchServer, registerAt: string[], total: number): Promise<string[]> {
  const p = await project(s, 'bench-pg-dispatch');
  await createInBatches(s, p.id, total);
  const agents = registerAt.map(() => new http.Agent({ keepAlive: true, maxSockets: 4 }));
  const tokens: string[] = [];
  for (let i = 0; i < RUNNERS; i += 8) {
    const batch = Array.from({ length: Math.min(8, RUNNERS - i) }, (_, j) => {
      const k = (i + j) % registerAt.length;
      return registerRunner({ ...s, url: registerAt[k]! }, `bench-${i + j}`, agents[k]);
    });
    tokens.push(...(await Promise.all(batch)));
  }
  for (const a of agents) a.destroy();
  return tokens.map((token) => JSON.stringify({ token, info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } }));
}

/** What the database says after a round: running builds = those handed out, each to one runner. */
async function checkTable(side: string, url: string, table: 'builds' | 'bare_builds', handedOut: number[]) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ running: string; ids: string }>(`SELECT count(*) AS running, count(DISTINCT id) AS ids FROM ${table} WHERE status = 'running'`);
    const running = Number(rows[0]!.running);
    if (running !== handedOut.length) throw new Error(`${side}: ${running} builds running in the database, ${handedOut.length} handed out`);
  } finally {
    await c.end();
  }
}

interface Round {
  buildsPerSec: number;
  p50: number;
  p99: number;
  capped: boolean;
  handedOut: number;
  /** CPU of the side's server children and of the cluster, per build handed out, ms. */
  serverCpuMs: number;
  clusterCpuMs: number;
}

const perBuild = (cpu: { servers: number; cluster: number }, n: number) => ({ serverCpuMs: cpu.servers / Math.max(1, n), clusterCpuMs: cpu.cluster / Math.max(1, n) });

export async function run({ quick = false }: { quick?: boolean } = {}): Promise<BenchResult[]> {
  RUNNERS = quick ? 50 : 200;
  const total = quick ? 400 : 10_000;
  const rounds = quick ? 1 : 3;
  const cap = quick ? 10 : 90;
  const pacedSeconds = quick ? 1.5 : 6;
  const load = loadAverage();
  log(`pg-dispatch: ${RUNNERS} runners over ${total} builds, ${rounds} rounds of PostgreSQL ×2 instances / SQLite / bare SKIP LOCKED ×2; load ${load.join(' ')}`);
  let cluster: TestPostgres | undefined;
  let bare: Awaited<ReturnType<typeof startReferencePair>> | undefined;
  const sides: Record<'ours' | 'sqlite' | 'bare', Round[]> = { ours: [], sqlite: [], bare: [] };
  const pacedOf: Partial<Record<'ours' | 'sqlite' | 'bare', Awaited<ReturnType<typeof paced>>>> = {};
  try {
    cluster = await startPostgres({ database: 'bench_bare' });
    cluster.psql(`CREATE TABLE bare_builds (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, status text NOT NULL, token text NOT NULL, runner text, started_at bigint);
      CREATE INDEX bare_builds_pending ON bare_builds (id) WHERE status = 'pending'`);
    bare = await startReferencePair('pg-dispatch-server.ts', [cluster.url]);
    const bareBodies = Array.from({ length: RUNNERS }, (_, i) => JSON.stringify({ token: `bare-runner-${i}`, info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } }));
    const refill = (n: number) => cluster!.psql(`TRUNCATE bare_builds RESTART IDENTITY; INSERT INTO bare_builds (status, token) SELECT 'pending', md5(i::text) FROM generate_series(1, ${n}) i; VACUUM ANALYZE bare_builds`);
    const everyMs = PACED_EVERY_MS;
    const pacedBuilds = Math.ceil((RUNNERS * pacedSeconds * 1000) / everyMs);

    for (let r = 0; r < rounds; r++) {
      const last = r === rounds - 1;
      // Ours: a fresh database and data dir each round.
      const dbUrl = await cluster.createDatabase(`bench_ours_${r}`);
      const pair = await startPgPair('pg-dispatch', dbUrl);
      try {
        const bodies = await setUp(pair.first, pair.urls, total);
        const cpu = cpuMeter(pair.pids, path.join(cluster.dir, 'data'));
        const o = await closedLoop('PostgreSQL ×2', pair.urls, '/ci/api/v1/builds/register.json', bodies, total, cap);
        const used = cpu();
        await checkTable('PostgreSQL ×2', dbUrl, 'builds', o.ids);
        sides.ours.push({ ...o, handedOut: o.ids.length, ...perBuild(used, o.ids.length) });
        if (last) {
          await createInBatches(pair.first, (await project(pair.first, 'bench-pg-dispatch-paced')).id, pacedBuilds);
          pacedOf.ours = await paced('PostgreSQL ×2', pair.urls, '/ci/api/v1/builds/register.json', bodies, everyMs, pacedSeconds);
        }
      } finally {
        await pair.stop();
      }

      const s = await startJobscope('pg-dispatch-sqlite');
      try {
        const bodies = await setUp(s, [s.url], total);
        const cpu = cpuMeter([s.pid]);
        const o = await closedLoop('SQLite', [s.url], '/ci/api/v1/builds/register.json', bodies, total, cap);
        sides.sqlite.push({ ...o, handedOut: o.ids.length, ...perBuild(cpu(), o.ids.length) });
        if (last) {
          await createInBatches(s, (await project(s, 'bench-pg-dispatch-paced')).id, pacedBuilds);
          pacedOf.sqlite = await paced('SQLite', [s.url], '/ci/api/v1/builds/register.json', bodies, everyMs, pacedSeconds);
        }
      } finally {
        await s.stop();
      }

      refill(total);
      const cpu = cpuMeter(bare.pids, path.join(cluster.dir, 'data'));
      const b = await closedLoop('bare', bare.urls, '/builds/register.json', bareBodies, total, cap);
      const used = cpu();
      await checkTable('bare', cluster.url, 'bare_builds', b.ids);
      sides.bare.push({ ...b, handedOut: b.ids.length, ...perBuild(used, b.ids.length) });
      if (last) {
        refill(pacedBuilds);
        pacedOf.bare = await paced('bare', bare.urls, '/builds/register.json', bareBodies, everyMs, pacedSeconds);
      }
      const [o, q, x] = [sides.ours.at(-1)!, sides.sqlite.at(-1)!, sides.bare.at(-1)!];
      log(
        `pg-dispatch: round ${r + 1}: PostgreSQL ×2 ${round(o.buildsPerSec, 0)} builds/s (p99 ${round(o.p99)} ms, CPU/build ${round(o.serverCpuMs)} ms servers + ${round(o.clusterCpuMs)} ms cluster), ` +
          `SQLite ${round(q.buildsPerSec, 0)} (p99 ${round(q.p99)} ms, CPU/build ${round(q.serverCpuMs)} ms), bare ${round(x.buildsPerSec, 0)} (p99 ${round(x.p99)} ms, CPU/build ${round(x.serverCpuMs)} + ${round(x.clusterCpuMs)} ms); load ${loadAverage().join(' ')}`,
      );
    }
  } finally {
    await bare?.stop();
    await cluster?.stop();
  }

  const po = pacedOf.ours!;
  const ps = pacedOf.sqlite!;
  const pb = pacedOf.bare!;
  log(`pg-dispatch: paced ${round(po.pollsPerSec, 0)} polls/s: PostgreSQL ×2 p99 ${round(po.p99)} ms, SQLite p99 ${round(ps.p99)} ms, bare p99 ${round(pb.p99)} ms`);
  const name = `dispatch on PostgreSQL, 2 instances (${RUNNERS} runners, ${total} builds, each once)`;
  // CPU per build (servers + cluster): comparable when others load the machine, which wall rates are not.
  const cpu = (x: Round) => round(x.serverCpuMs + x.clusterCpuMs);
  // One set of lines per round; bench/lib/rounds.ts keeps each line's median round, whole, with the spread.
  const perRound = sides.ours.map((o, i) => {
    const [q, x] = [sides.sqlite[i]!, sides.bare[i]!];
    const capped = o.capped ? { capped_after_s: cap, handed_out: o.handedOut } : {};
    return [
      {
        name: `${name} vs bare SKIP LOCKED ×2`,
        value: round(o.buildsPerSec, 0),
        unit: 'builds/s',
        reference: round(x.buildsPerSec, 0),
        ratio: round(o.buildsPerSec / x.buildsPerSec),
        goal: `≥ ${GOAL_RATIO}× bare SKIP LOCKED`,
        pass: o.buildsPerSec >= GOAL_RATIO * x.buildsPerSec,
        p50_ms: round(o.p50),
        p99_ms: round(o.p99),
        reference_p99_ms: round(x.p99),
        cpu_ms_per_build: cpu(o),
        reference_cpu_ms_per_build: cpu(x),
        load_average: load,
        ...capped,
      },
      {
        name: `${name} vs one SQLite server`,
        value: round(o.buildsPerSec, 0),
        unit: 'builds/s',
        reference: round(q.buildsPerSec, 0),
        ratio: round(o.buildsPerSec / q.buildsPerSec),
        goal: 'reported (issue 13 sets none)',
        pass: true,
        p99_ms: round(o.p99),
        reference_p99_ms: round(q.p99),
        cpu_ms_per_build: cpu(o),
        reference_cpu_ms_per_build: cpu(q),
        ...capped,
      },
    ] satisfies BenchResult[];
  });
  const latency: BenchResult = {
    name: `dispatch on PostgreSQL, 2 instances: poll latency p99 at ${round((RUNNERS * 1000) / PACED_EVERY_MS, 0)} polls/s offered (fixed)`,
    value: round(po.p99),
    unit: 'ms',
    reference: round(pb.p99),
    ratio: round(po.p99 / pb.p99),
    goal: `p99 < 50 ms at ${round((RUNNERS * 1000) / PACED_EVERY_MS, 0)} polls/s offered (fixed, every side alike)`,
    pass: po.p99 < 50,
    p50_ms: round(po.p50),
    handed_out: po.handedOut,
    polls_per_s_answered: round(po.pollsPerSec, 0),
    sqlite_p99_ms: round(ps.p99),
    sqlite_p50_ms: round(ps.p50),
    reference_p50_ms: round(pb.p50),
  };
  return [...ownRounds(perRound), { ...latency, spread: { rounds: 1, ratio: [latency.ratio, latency.ratio], value: [latency.value, latency.value], reference: [latency.reference, latency.reference] } satisfies Spread }];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await run({ quick: process.argv.includes('--quick') }), null, 2));
}
