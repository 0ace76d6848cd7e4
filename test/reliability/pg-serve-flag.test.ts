// `serve --database <url>`: the flag, JOBSCOPE_DATABASE_URL and their checks in-process
// (it is parsing); one spawned `serve --database` against a real cluster with a password that starts,
// keeps a runner in the database and never prints the password; one spawned against a closed port that
// exits with code 3 and a message saying what to do.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, SAVABLE, resolveConfig } from '../../server/config.ts';
import { addSettingFlags, configFromFlags } from '../../hosts/cli-config.ts';
import { ServerHost } from '../../hosts/server-host.ts';
import { redactUrl } from '../../server/store/database-url.ts';
import { jobscopeNodeArgs, REPO } from '../helpers/cli-process.ts';
import { freePort } from '../helpers/redis.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/server.ts';
import { http, RUNNER_UA } from '../helpers/http.ts';
import { spawnServer, type ChildServer } from './support.ts';

const PASSWORD = 'pw-Seen-Nowhere-7431';
const URL_OK = `postgres://jobscope:${PASSWORD}@db.example:5432/jobscope`;

function parseServe(argv: string[]) {
  const cmd = addSettingFlags(new Command('serve')).exitOverride();
  cmd.parse(argv, { from: 'user' });
  return cmd.opts<Record<string, unknown>>();
}

describe('the --database flag, parsed in-process', () => {
  const dataDir = tempDir();
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('is read from the flag, else from JOBSCOPE_DATABASE_URL; unset means SQLite', () => {
    expect(configFromFlags(parseServe(['--database', URL_OK, '--data-dir', dataDir])).database).toBe(URL_OK);
    const env = { JOBSCOPE_DATABASE_URL: 'postgresql://other@h:1/db' };
    expect(resolveConfig({ dataDir }, env).database).toBe('postgresql://other@h:1/db');
    expect(resolveConfig({ dataDir, database: URL_OK }, env).database).toBe(URL_OK);
    expect(resolveConfig({ dataDir }, {}).database).toBeUndefined();
    expect(resolveConfig({ dataDir }, { JOBSCOPE_DATABASE_URL: '' }).database).toBeUndefined();
  });

  it('redactUrl never shows a password, whatever shape the URL has', () => {
    for (const url of [`u:${PASSWORD}@h/db`, `postgres:u:${PASSWORD}@h/db`, `mysql://u:${PASSWORD}@h/db`, `postgres://u:${PASSWORD}@h:5432/db`, `postgres://u:${PASSWORD}@[h/db`]) {
      expect(redactUrl(url), url).not.toContain(PASSWORD);
    }
    expect(redactUrl(`postgres://u:${PASSWORD}@h:5432/db`)).toBe('postgres://u:***@h:5432/db');
  });

  it('refuses what is not a postgres:// URL naming a database, without showing the password', () => {
    const bad: [string, RegExp][] = [
      [`mysql://u:${PASSWORD}@h/db`, /not a postgres:\/\/ URL/],
      [`postgres://u:${PASSWORD}@h:5432`, /names no database/],
      // Both parse as URLs in which the password is not a password: redactUrl would print it whole.
      [`u:${PASSWORD}@h/db`, /not a postgres:\/\/ URL/],
      [`postgres:u:${PASSWORD}@h/db`, /no host after postgres:\/\//],
      [`postgres://u:${PASSWORD}@[h/db`, /not a URL/],
    ];
    for (const [url, why] of bad) {
      let err: unknown;
      try {
        resolveConfig({ dataDir, database: url }, {});
      } catch (e) {
        err = e;
      }
      expect(err, url).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toMatch(why);
      expect(message).toMatch(/^--database \(JOBSCOPE_DATABASE_URL\): /);
      expect(message).not.toContain(PASSWORD);
    }
  });

  it('is not a saved setting: a database in settings.json is not used', () => {
    expect(SAVABLE.some((s) => s.key === 'database')).toBe(false);
    fs.writeFileSync(path.join(dataDir, 'settings.json'), JSON.stringify({ database: URL_OK, 'history-days': 3 }));
    const config = resolveConfig({ dataDir }, {});
    expect(config.historyDays).toBe(3);
    expect(config.database).toBeUndefined();
  });

  it('is listed in serve --help with its variable', () => {
    let help = '';
    const cmd = addSettingFlags(new Command('serve')).configureOutput({ writeOut: (s) => (help += s) });
    cmd.outputHelp();
    expect(help).toMatch(/--database <url>[\s\S]*JOBSCOPE_DATABASE_URL/);
  });
});

/** Runs `jobscope serve …` to its exit (it must not start); its code and stderr. */
async function serveUntilExit(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const proc = spawn(process.execPath, [...(await jobscopeNodeArgs()), 'serve', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr, stdout };
}

describe('an unreachable database', () => {
  it('exits with code 3 and says what was tried and what to do, without the password', async () => {
    const port = await freePort();
    const dataDir = tempDir();
    try {
      const url = `postgres://jobscope:${PASSWORD}@127.0.0.1:${port}/jobscope`;
      const r = await serveUntilExit(['--port', '0', '--data-dir', dataDir, '--database', url, '--log-level', 'error']);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(`jobscope: --database: PostgreSQL at postgres://jobscope:***@127.0.0.1:${port}/jobscope: connection refused (ECONNREFUSED)`);
      expect(r.stderr).toContain(`listening on 127.0.0.1:${port}? Start it`);
      // The message, not a stack trace.
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr + r.stdout).not.toContain(PASSWORD);
      expect(r.stdout).not.toContain('listening');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(postgresMissing() !== null)('serve --database against a real cluster', () => {
  const cluster = usePostgres({ password: PASSWORD, database: 'jobscope_serve' });
  let child: ChildServer | undefined;
  const dataDir = tempDir();
  afterAll(async () => {
    await child?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, answers, keeps its runners in the database and never prints the password', async () => {
    expect(cluster.url).toContain(PASSWORD);
    const reg = 'registration-token-of-the-database';
    child = await spawnServer(['--port', '0', '--data-dir', dataDir, '--registration-token', reg, '--log-level', 'info'], {
      env: { JOBSCOPE_DATABASE_URL: cluster.url },
    });
    const r = await http(`${child.url}/ci/api/v1/runners/register.json`, { json: { token: reg, description: 'in-the-database' }, headers: { 'user-agent': RUNNER_UA } });
    expect(r.status).toBe(201);
    const sql = new pg.Client({ connectionString: cluster.url });
    await sql.connect();
    try {
      const rows = await sql.query('SELECT description FROM runners');
      expect(rows.rows).toEqual([{ description: 'in-the-database' }]);
    } finally {
      await sql.end();
    }
    expect(await child.stop()).toBe(0);
    // Every log file, wherever the instance keeps its own (in database mode, under its slot).
    const logText = (fs.readdirSync(dataDir, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.log'))
      .map((f) => fs.readFileSync(path.join(dataDir, f), 'utf8'))
      .join('');
    expect(logText.length).toBeGreaterThan(0);
    expect(child.log() + logText).not.toContain(PASSWORD);
  });

  it('refuses to start on a database whose schema is newer, saying what to do', async () => {
    const url = await cluster.createDatabase('jobscope_newer');
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    try {
      // What a later version leaves behind: a migration this one does not know.
      await sql.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL, applied_by text NOT NULL DEFAULT \'\')');
      await sql.query('INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)');
    } finally {
      await sql.end();
    }
    const dir = tempDir();
    const host = new ServerHost(resolveConfig({ port: 0, dataDir: dir, logLevel: 'silent', database: url }, {}));
    try {
      const err = await host.start().then(
        () => null,
        (e: unknown) => e as Error & { code?: string },
      );
      // cli.ts turns this error into its message on stderr and exit code 3, as the unreachable case above.
      expect(err?.name).toBe('PgStoreError');
      expect(err?.code).toBe('schema-newer');
      expect(err?.message).toMatch(/schema is at version 999, newer than this server knows .*Upgrade this instance/);
      expect(err?.message).not.toContain(PASSWORD);
    } finally {
      await host.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a reset on a shared database (409 from the API: nothing to hand it to)', async () => {
    const dir = tempDir();
    const host = new ServerHost(resolveConfig({ port: 0, dataDir: dir, logLevel: 'silent', database: cluster.url }, {}));
    try {
      const url = await host.start();
      const r = await http<{ message: string }>(`${url}/api/app/reset`, { json: { confirm: 'reset' }, token: host.server.ctx.store.adminToken });
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(/cannot restart/);
    } finally {
      await host.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
