// What the PostgreSQL benches (bench/pg-dispatch.ts, bench/pg-traces.ts) share: two
// `jobscope serve --database` children on one database and one data dir (as a deployment behind a
// load balancer runs them), two bare reference children on the same cluster, a round-robin spread
// of requests over either pair, each line's median round, and CPU time per operation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Spread } from './compare.ts';
import { REPO, log, round, startChild, startReference, type BenchResult, type BenchServer, type Child } from './harness.ts';
import { mergeRounds } from './rounds.ts';

export interface Pair {
  /** Both instances' base URLs; requests go to them in turn. */
  urls: string[];
  /** The first instance, for setup through the control API (project(), createBuilds(), registerRunner()). */
  first: BenchServer;
  pids: number[];
  stop(): Promise<void>;
}

/** Two `jobscope serve --database <url>` children sharing one fresh data dir (each takes its slot in it). */
export async function startPgPair(tag: string, databaseUrl: string): Promise<Pair> {
  const root = process.env.JOBSCOPE_BENCH_SERVER_ROOT || REPO;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `jobscope-bench-${tag}-`));
  const adminToken = `bench-admin-${tag}-0123456789`;
  const registrationToken = `bench-registration-${tag}`;
  const args = [path.join(root, 'bin/jobscope.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--database', databaseUrl, '--admin-token', adminToken, '--registration-token', registrationToken, '--log-level', 'error'];
  const children: Child[] = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    // The second first: the folder stays until both are down.
    for (const c of [...children].reverse()) await c.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // One after the other: each claims the lowest free slot of the folder.
    for (const n of [1, 2]) {
      const c = await startChild(args, /Jobscope listening on (http:\/\/\S+)/, `jobscope-${tag}-${n}`);
      // An instance that dies mid-run shows up as "socket hang up" in the load generator: say why here.
      let tail = '';
      c.proc.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-2000)));
      c.proc.once('exit', (code, signal) => {
        if (!stopping) log(`${tag}: instance ${n} exited (${code ?? signal}) mid-run: ${tail}`);
      });
      children.push(c);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const a = children[0]!;
  return { urls: children.map((c) => c.url), pids: children.map((c) => c.pid), first: { ...a, dataDir, adminToken, registrationToken }, stop };
}

/** Two bare reference children (bench/reference/<script>) given the same arguments. */
export async function startReferencePair(script: string, args: string[]): Promise<{ urls: string[]; pids: number[]; stop(): Promise<void> }> {
  const children: Child[] = [];
  const stop = async () => {
    for (const c of children) await c.stop();
  };
  try {
    for (let i = 0; i < 2; i++) children.push(await startReference(script, args));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls: children.map((c) => c.url), pids: children.map((c) => c.pid), stop };
}

/** Hands out the targets in turn, one request each, as a round-robin balancer does. */
export function roundRobin<T>(targets: T[]): () => T {
  let next = 0;
  return () => targets[next++ % targets.length]!;
}

/**
 * Each line's median round with its spread (bench/lib/rounds.ts); a single round gets a one-round
 * spread too, so bench/run.ts sees the file measures its own rounds and runs it once.
 */
export function ownRounds(perRound: BenchResult[][]): BenchResult[] {
  if (perRound.length !== 1) return mergeRounds(perRound);
  return perRound[0]!.map((r) => ({ ...r, spread: { rounds: 1, ratio: [r.ratio, r.ratio], value: [r.value, r.value], reference: [r.reference, r.reference] } satisfies Spread }));
}

export const loadAverage = () => os.loadavg().map((x) => round(x, 1));

// CPU time, not wall time, is what these figures can be compared by on a machine others load too:
// a side's servers (and the cluster's processes) used so much CPU per build, whatever the waiting.
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime+stime (own) and cutime+cstime (reaped children) of a process, ms; 0 once it is gone. */
function procCpuMs(pid: number, withChildren: boolean): number {
  return statCpuMs(`/proc/${pid}/stat`, withChildren);
}

/** The same from any /proc stat file: a process's, or a thread's (/proc/<pid>/task/<tid>/stat). */
export function statCpuMs(statFile: string, withChildren = false): number {
  try {
    const f = fs.readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
    // After "pid (comm) ": state is f[0], so utime/stime/cutime/cstime (fields 14–17) are f[11..14].
    const own = Number(f[11]) + Number(f[12]);
    return (own + (withChildren ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
  } catch {
    return 0;
  }
}

/** CPU of a PostgreSQL cluster: the postmaster, its live children and the ones it reaped, ms. */
export function clusterCpuMs(dataDir: string): number {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ms = procCpuMs(postmaster, true);
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === postmaster) ms += procCpuMs(Number(d), false);
    } catch {
      /* gone meanwhile */
    }
  }
  return ms;
}

/** CPU used by processes between two calls of the returned function, ms. */
export function cpuMeter(pids: number[], clusterDataDir?: string): () => { servers: number; cluster: number } {
  const read = () => ({ servers: pids.reduce((s, p) => s + procCpuMs(p, false), 0), cluster: clusterDataDir ? clusterCpuMs(clusterDataDir) : 0 });
  const at = read();
  return () => {
    const now = read();
    return { servers: now.servers - at.servers, cluster: now.cluster - at.cluster };
  };
}
