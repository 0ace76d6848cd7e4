// A throwaway PostgreSQL cluster for a test: `initdb` into a temp dir, `pg_ctl` on a free port bound
// to 127.0.0.1 (its socket in the same dir), one database made, and stop() that always removes it.
// Debian's `postgresql` package (.ci/run installs it) puts initdb and pg_ctl in
// /usr/lib/postgresql/<major>/bin, off PATH. PostgreSQL refuses to run as root: as root the dir is
// handed to the `postgres` user and every tool runs as that user through runuser.
//
// usePostgres() shares one cluster per vitest worker (per password) instead of one per test file:
// initdb and a start cost ~1 s of CPU and 1-3 s of wall each, 20-odd times a run. A worker runs one
// file at a time, so a file still has the cluster to itself: its databases are made fresh under the
// names it asks for and all dropped (WITH FORCE: open sessions are cut, as pg_ctl stop cut them) when
// the file's hooks end, so the next file starts on a cluster as empty as a new one. Vitest stops its
// workers with SIGTERM and SIGKILL 0.5 s later, too soon for pg_ctl: test/helpers/pg-global.ts (a
// globalSetup) gives each worker a folder for its clusters and stops whatever is left in it at the end.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { freePort } from './redis.ts';

export interface TestPostgres {
  port: number;
  /** The database made at start: postgres://jobscope@127.0.0.1:<port>/<database> (with the password when one was asked for). */
  url: string;
  database: string;
  user: string;
  password: string | undefined;
  dir: string;
  /** The URL of another database of the same cluster (which may not exist). */
  urlFor(database: string, opts?: { user?: string; password?: string }): string;
  /** Makes another empty database; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** What a CREATE DATABASE here appends to copy its template file by file (see copyStrategy), or ''. */
  copyStrategy: string;
  /** Runs SQL through psql as the cluster's superuser, in the start database unless told. */
  psql(sql: string, database?: string): string;
  /** Stops the server (fast: open sessions are cut) and removes the dir; safe to call twice. */
  stop(): Promise<void>;
  /**
   * An outage for a test: `pg_ctl stop -m fast|immediate`, SIGKILL to the postmaster, or 'freeze':
   * SIGSTOP to it and every process it started (a server that holds its connections and answers
   * nothing). The data stays; resume() starts it again on the same port, or sends SIGCONT.
   */
  halt(how: 'fast' | 'immediate' | 'kill' | 'freeze'): Promise<void>;
  resume(): Promise<void>;
}

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The folder holding initdb and pg_ctl: the newest Debian major first, then PATH; null when absent. */
export function postgresBinDir(): string | null {
  try {
    const majors = fs
      .readdirSync(DEBIAN_ROOT)
      .filter((d) => /^\d+$/.test(d))
      .sort((a, b) => Number(b) - Number(a));
    for (const m of majors) {
      const bin = path.join(DEBIAN_ROOT, m, 'bin');
      if (fs.existsSync(path.join(bin, 'initdb')) && fs.existsSync(path.join(bin, 'pg_ctl'))) return bin;
    }
  } catch {
    /* not Debian's layout: look on PATH */
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

/**
 * Why the PostgreSQL tests cannot run here, or null when they can. In CI (.ci/run installs
 * postgresql) a missing server is a broken install, not a reason to skip: the tests run and fail.
 */
export function postgresMissing(): string | null {
  if (process.env.CI) return null;
  if (postgresBinDir()) return null;
  return `PostgreSQL is not installed (no initdb/pg_ctl in ${DEBIAN_ROOT}/*/bin or on PATH): apt-get install postgresql`;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** The command line of a PostgreSQL tool, as the postgres user when we are root. */
function toolCommand(bin: string, tool: string, args: string[]): [string, string[]] {
  const exe = path.join(bin, tool);
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
}

function toolFailed(tool: string, args: string[], err: unknown): Error {
  const e = err as { stderr?: string; stdout?: string; message: string };
  return new Error(`${tool} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
}

/** Runs a PostgreSQL tool, as the postgres user when we are root. */
function run(bin: string, tool: string, args: string[], opts: { input?: string } = {}): string {
  const [cmd, argv] = toolCommand(bin, tool, args);
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', input: opts.input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
  } catch (err) {
    throw toolFailed(tool, args, err);
  }
}

/** run(), without blocking this process: a server under test in it keeps answering while the tool runs. */
async function runAsync(bin: string, tool: string, args: string[]): Promise<void> {
  const [cmd, argv] = toolCommand(bin, tool, args);
  try {
    await promisify(execFile)(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  } catch (err) {
    throw toolFailed(tool, args, err);
  }
}

// A test process that ends without its afterAll (an uncaught error, a timeout of the whole run) must
// not leave a postmaster running on the machine: every live cluster is stopped on exit, synchronously.
const live = new Map<string, () => void>();
process.on('exit', () => {
  for (const stop of live.values()) stop();
});

export interface StartOptions {
  /** Host connections need this password (scram-sha-256); the socket stays trusted for the helper's own tools. */
  password?: string;
  database?: string;
}

export function startPostgres(opts: StartOptions = {}): Promise<TestPostgres> {
  return startCluster(opts, os.tmpdir(), true);
}

/** A cluster in a new folder under `parent`; its start database made only when `makeDatabase`. */
async function startCluster(opts: StartOptions, parent: string, makeDatabase: boolean): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresMissing() ?? 'PostgreSQL is not installed: apt-get install postgresql');
  const user = 'jobscope';
  const database = opts.database ?? 'jobscope_test';
  const dir = fs.mkdtempSync(path.join(parent, 'jobscope-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  let started = false;
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  const stopSync = () => {
    if (started) {
      started = false;
      spawnSync(isRoot() ? 'runuser' : path.join(bin, 'pg_ctl'), [...(isRoot() ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl')] : []), '-D', data, '-m', 'immediate', '-w', 'stop'], {
        stdio: 'ignore',
        timeout: 30_000,
      });
    }
    removeDir();
  };
  live.set(dir, stopSync);
  try {
    if (isRoot()) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      fs.chownSync(dir, uid, gid);
    }
    const initArgs = ['-D', data, '-U', user, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'];
    if (opts.password) {
      const pwfile = path.join(dir, 'pwfile');
      fs.writeFileSync(pwfile, `${opts.password}\n`, { mode: 0o600 });
      if (isRoot()) fs.chownSync(pwfile, fs.statSync(dir).uid, fs.statSync(dir).gid);
      initArgs.push('--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${pwfile}`);
    } else {
      initArgs.push('-A', 'trust');
    }
    run(bin, 'initdb', initArgs);
    // A port found free may be taken before the postmaster binds it (other tests start servers too): try a few.
    let port = 0;
    // fsync off and small buffers: a throwaway cluster on a machine shared by many test runs.
    const serverOpts = () => `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c shared_buffers=16MB -c max_connections=60`;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        run(bin, 'pg_ctl', ['-D', data, '-o', serverOpts(), '-l', log, '-w', '-t', '60', 'start']);
        started = true;
        break;
      } catch (err) {
        const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
        if (attempt >= 3 || !/could not bind|Address already in use/i.test(text)) throw new Error(`${(err as Error).message}\n${text}`);
      }
    }
    const auth = (u: string, p: string | undefined) => (p === undefined ? encodeURIComponent(u) : `${encodeURIComponent(u)}:${encodeURIComponent(p)}`);
    const urlFor = (db: string, o: { user?: string; password?: string } = {}) =>
      `postgres://${auth(o.user ?? user, o.password ?? opts.password)}@127.0.0.1:${port}/${encodeURIComponent(db)}`;
    // Over the socket in `dir` (trusted even when host connections need a password).
    const psql = (sql: string, db = database) => run(bin, 'psql', ['-h', dir, '-p', String(port), '-U', user, '-d', db, '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1'], { input: sql });
    const strategy = copyStrategy(data);
    const createDatabase = async (name: string) => {
      run(bin, 'createdb', ['-h', dir, '-p', String(port), '-U', user, ...(strategy ? ['--strategy=FILE_COPY'] : []), name]);
      return urlFor(name);
    };
    if (makeDatabase) await createDatabase(database);
    let frozen: number[] = [];
    return {
      port,
      url: urlFor(database),
      database,
      user,
      password: opts.password,
      dir,
      urlFor,
      createDatabase,
      copyStrategy: strategy,
      psql,
      async halt(how) {
        if (how === 'freeze') {
          frozen = clusterPids(data);
          for (const pid of frozen) process.kill(pid, 'SIGSTOP');
        } else if (how === 'kill') {
          const pid = postmasterPid(data);
          if (pid) process.kill(pid, 'SIGKILL');
        } else await runAsync(bin, 'pg_ctl', ['-D', data, '-m', how, '-w', '-t', '60', 'stop']);
      },
      async resume() {
        if (frozen.length) {
          for (const pid of frozen) process.kill(pid, 'SIGCONT');
          frozen = [];
          return;
        }
        // After a SIGKILL the postmaster's children end on their own once they notice; until then the
        // old shared memory is in use and a start is refused: try again for a while.
        for (let attempt = 1; ; attempt++) {
          try {
            await runAsync(bin, 'pg_ctl', ['-D', data, '-o', serverOpts(), '-l', log, '-w', '-t', '60', 'start']);
            return;
          } catch (err) {
            if (attempt >= 30) throw err;
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      },
      async stop() {
        if (!live.has(dir)) return;
        live.delete(dir);
        try {
          if (started) run(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
          started = false;
        } finally {
          stopSync();
        }
      },
    };
  } catch (err) {
    live.delete(dir);
    stopSync();
    throw err;
  }
}

/**
 * ' STRATEGY FILE_COPY' from PostgreSQL 15 on (before 15 it is the only way, and the word a syntax
 * error). 15 made WAL_LOG the default: it reads the template page by page into the WAL, ~33 ms of the
 * cluster's CPU per database against ~18 ms for a file copy and its checkpoint (20 copies of a small
 * template, 15.18, fsync off). Durability is no concern: fsync is off and no test crashes PostgreSQL.
 */
function copyStrategy(data: string): string {
  const major = Number(fs.readFileSync(path.join(data, 'PG_VERSION'), 'utf8').trim());
  return major >= 15 ? ' STRATEGY FILE_COPY' : '';
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder under which this run's workers keep their shared clusters (test/helpers/pg-global.ts). */
    jobscopePgRoot?: string;
  }
}

/** Whether a process of that pid exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The postmaster's pid from its data dir, or null when it is not running there. */
export function postmasterPid(data: string): number | null {
  try {
    const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The postmaster of `data` and the processes it started (backends, checkpointer, WAL writer…). */
function clusterPids(data: string): number[] {
  const pid = postmasterPid(data);
  if (!pid) return [];
  const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  return [pid, ...children];
}

interface Shared {
  cluster: Promise<TestPostgres>;
  /** Its folder once started: what the exit handler, which cannot wait, needs. */
  dir?: string;
  inUse: boolean;
}
/** This worker's clusters, by password ('' for trust): pg_hba's rules are the cluster's, not a database's. */
const shared = new Map<string, Shared>();

/**
 * Immediate shutdown by signal: synchronous and instant, as an exit handler must be and vitest's
 * 0.5 s before SIGKILL allows; pg-global.ts waits for the postmasters to end and removes the folders.
 */
function quitShared(): void {
  for (const e of shared.values()) {
    const pid = e.dir ? postmasterPid(path.join(e.dir, 'data')) : null;
    try {
      if (pid) process.kill(pid, 'SIGQUIT');
    } catch {
      /* already gone */
    }
  }
}

/** The shared clusters' folder, or undefined when the run has no pg-global.ts (each file then starts its own). */
function sharedRoot(): string | undefined {
  try {
    return inject('jobscopePgRoot');
  } catch {
    return undefined;
  }
}

/** The worker's cluster for these options, started on first use; undefined when another handle holds it. */
function borrowShared(root: string, opts: StartOptions): Shared | undefined {
  const key = opts.password ?? '';
  let entry = shared.get(key);
  if (entry?.inUse) return undefined;
  if (!entry) {
    if (shared.size === 0) {
      process.on('exit', quitShared);
      // Without a listener SIGTERM ends the process without 'exit' handlers.
      process.once('SIGTERM', () => process.exit(143));
    }
    const made: Shared = { cluster: startCluster({ password: opts.password }, root, false), inUse: false };
    made.cluster.then(
      (c) => (made.dir = c.dir),
      () => shared.delete(key),
    );
    shared.set(key, made);
    entry = made;
  }
  entry.inUse = true;
  return entry;
}

/** Drops every database but PostgreSQL's own: the cluster is then as a new one's for the next file. */
function dropDatabases(c: TestPostgres): void {
  const rows = c.psql(`SELECT datname, datistemplate FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1')`, 'postgres');
  const sql: string[] = [];
  for (const line of rows.split('\n').filter(Boolean)) {
    const [name, template] = line.split('|');
    const quoted = `"${name!.replaceAll('"', '""')}"`;
    if (template === 't') sql.push(`ALTER DATABASE ${quoted} IS_TEMPLATE false;`);
    sql.push(`DROP DATABASE ${quoted} WITH (FORCE);`);
  }
  if (sql.length > 0) c.psql(sql.join('\n'), 'postgres');
}

/** A handle on a shared cluster that looks like a cluster of its own: its start database made, all dropped at stop(). */
async function sharedHandle(entry: Shared, opts: StartOptions): Promise<TestPostgres> {
  let base: TestPostgres;
  try {
    base = await entry.cluster;
  } catch (err) {
    entry.inUse = false;
    throw err;
  }
  const database = opts.database ?? 'jobscope_test';
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      dropDatabases(base);
      entry.inUse = false;
    } catch (err) {
      // A cluster that cannot be cleaned is not handed to the next file.
      for (const [k, e] of shared) if (e === entry) shared.delete(k);
      await base.stop();
      throw err;
    }
  };
  try {
    await base.createDatabase(database);
  } catch (err) {
    await release();
    throw err;
  }
  return {
    port: base.port,
    url: base.urlFor(database),
    database,
    user: base.user,
    password: base.password,
    dir: base.dir,
    urlFor: base.urlFor,
    createDatabase: base.createDatabase,
    copyStrategy: base.copyStrategy,
    psql: (sql, db = database) => base.psql(sql, db),
    // A worker's files run one after another: a test may take the shared cluster down while it
    // runs, as long as it brings it back (the model suites heal every fault before they end).
    halt: base.halt,
    resume: base.resume,
    stop: release,
  };
}

/**
 * The cluster of a test file, as if started before its tests and stopped after them (the worker's
 * shared one, emptied: see the top of this file); not started when
 * PostgreSQL is missing (postgresMissing() says why, and the file's describe.skipIf skips). Its
 * fields are read inside tests: before the start, reading one throws.
 */
export function usePostgres(opts: StartOptions = {}): TestPostgres {
  let started: TestPostgres | undefined;
  beforeAll(async () => {
    if (postgresMissing()) return;
    const root = sharedRoot();
    const entry = root === undefined ? undefined : borrowShared(root, opts);
    // Without pg-global.ts, or while another handle of this worker holds the cluster: one of its own.
    started = entry ? await sharedHandle(entry, opts) : await startPostgres(opts);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return new Proxy({} as TestPostgres, {
    get(_target, key) {
      if (!started) throw new Error('the test cluster is not started yet: use it inside a test or a hook');
      return started[key as keyof TestPostgres];
    },
  });
}
