// PostgreSQL going away under load (serve --database): stopped (`pg_ctl stop -m fast`), its
// postmaster killed (`kill -9`), frozen (SIGSTOP: connections held, nothing answered, where only the
// server's own bounds end a request's wait), restarted at once (`pg_ctl -m immediate`). While it is
// down every answer is 2xx (or a protocol 4xx) or 503 with Retry-After and a message, never a 500
// nor an "unhandled error" in the log; once it is back the same server serves again, without a
// restart of its own (the pool, the LISTEN session and the monitor's session reconnect).
// The requests cover the runner API (polls, trace parts), the control API (admin token, builds),
// the job system on the database's job rows and the monitor's connections.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { RUNNER_UA } from '../helpers/http.ts';
import { PG_RETRY_AFTER_S } from '../../server/store/pg/storage-errors.ts';

interface Tally {
  byStatus: Map<number, number>;
  /** Answers that are neither 2xx, a protocol 4xx, nor a 503 with Retry-After and a message. */
  wrong: string[];
}

/** One request with a ceiling: a server that hangs shows as a wrong answer, not a stuck test. */
async function call(url: string, init: RequestInit): Promise<{ status: number; retryAfter: string | null; body: string; range: string | null }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(45_000) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text(), range: res.headers.get('range') };
}

describe.skipIf(postgresMissing() !== null)('PostgreSQL stopped, killed and restarted under load', () => {
  let cluster: TestPostgres;
  let s: TestServer;
  let runnerToken = '';
  let projectId = 0;

  beforeAll(async () => {
    cluster = await startPostgres();
    s = await startServer({ logLevel: 'info', databaseConnectTimeoutMs: 2000, databaseStatementTimeoutMs: 3000 }, { database: cluster.url });
    const project = await createProject(s, 'outage');
    projectId = project.id;
    runnerToken = (await registerRunner(s, project.runners_token)).token;
  });
  afterAll(async () => {
    await s?.close();
    await cluster?.stop();
  });

  const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA, ...headers },
    body: JSON.stringify(body),
  });
  const admin = { 'private-token': '' };

  /** Clients sending a mix of requests until `until` resolves; every answer counted. */
  async function underLoad(tally: Tally, until: Promise<unknown>): Promise<void> {
    let done = false;
    void until.finally(() => (done = true));
    admin['private-token'] = s.adminToken;
    let traceBuild: { id: number; token: string; at: number } | undefined;
    const requests: (() => Promise<{ status: number; retryAfter: string | null; body: string; range: string | null; what: string }>)[] = [
      async () => ({ what: 'poll', ...(await call(`${s.url}/ci/api/v1/builds/register.json`, json({ token: runnerToken }))) }),
      async () => ({ what: 'builds', ...(await call(`${s.url}/api/v3/sim/builds?limit=5`, { headers: admin })) }),
      async () => ({ what: 'new build', ...(await call(`${s.url}/api/v3/sim/projects/${projectId}/builds`, json({ name: 'under load' }, admin))) }),
      async () => ({ what: 'jobs', ...(await call(`${s.url}/api/v3/sim/jobs`, json({ queue: 'outage' }, admin))) }),
      async () => ({ what: 'retries', ...(await call(`${s.url}/api/v3/sim/jobs/retries`, { headers: admin })) }),
      async () => ({ what: 'connections', ...(await call(`${s.url}/api/app/connections`, { headers: admin })) }),
      async () => {
        if (!traceBuild) return { what: 'trace (none running)', status: 204, retryAfter: null, body: '', range: null };
        const b = traceBuild;
        const r = await call(`${s.url}/ci/api/v1/builds/${b.id}/trace.txt`, {
          method: 'PATCH',
          headers: { 'content-type': 'text/plain', 'user-agent': RUNNER_UA, 'build-token': b.token, 'content-range': `${b.at}-${b.at + 5}` },
          body: 'line\n',
        });
        const end = Number(r.range?.split('-')[1]);
        if (Number.isFinite(end)) b.at = end;
        return { what: 'trace', ...r };
      },
      // The trace read back from a little before its end, as a live tail does: the row, then the file.
      async () => {
        if (!traceBuild) return { what: 'trace tail (none running)', status: 204, retryAfter: null, body: '', range: null };
        const from = Math.max(0, traceBuild.at - 16);
        return { what: 'trace tail', ...(await call(`${s.url}/api/v3/sim/builds/${traceBuild.id}/trace`, { headers: { ...admin, range: `bytes=${from}-` } })) };
      },
    ];
    const client = async (n: number) => {
      for (let i = n; !done; i++) {
        const r = await requests[i % requests.length]!().catch((err: Error) => ({ what: 'request', status: 0, retryAfter: null, body: err.message, range: null }));
        tally.byStatus.set(r.status, (tally.byStatus.get(r.status) ?? 0) + 1);
        if (r.what === 'poll' && r.status === 201) traceBuild = { ...(JSON.parse(r.body) as { id: number; token: string }), at: 0 };
        // 416: a trace part whose start is not the length (a part's answer lost to the outage).
        const fine = (r.status >= 200 && r.status < 300) || (r.what === 'trace' && r.status === 416);
        const unavailable = r.status === 503 && r.retryAfter !== null && /^503 Service Unavailable - ./.test((JSON.parse(r.body) as { message: string }).message);
        if (!fine && !unavailable) tally.wrong.push(`${r.what}: ${r.status} ${r.retryAfter ?? ''} ${r.body.slice(0, 200)}`);
        // Paced a little: the point is answers across the outage, not throughput.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await Promise.all([0, 1, 2, 3].map(client));
  }

  /** Polls until the server answers a database read again; how many tries it took (bounded). */
  async function servesAgain(): Promise<void> {
    for (let i = 0; i < 300; i++) {
      const r = await call(`${s.url}/api/v3/sim/builds?limit=1`, { headers: { 'private-token': s.adminToken } }).catch(() => undefined);
      if (r?.status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('the server did not serve again within 60 s of the database coming back');
  }

  /** The sessions of its own the server keeps besides the pool: LISTEN (notify.ts) and the monitor's (monitor-session.ts). */
  async function sessionsBack(): Promise<void> {
    let names: string[] = [];
    for (let i = 0; i < 150; i++) {
      names = cluster.psql(`SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'jobscope/%'`).split('\n').filter(Boolean);
      if (names.some((n) => n.endsWith('/listen')) && names.some((n) => n.endsWith('/monitor'))) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the LISTEN and monitor sessions did not reconnect within 30 s: ${JSON.stringify(names)}`);
  }

  /** After the outage the whole path works again: a new build is handed to the runner that polls. */
  async function handsOutAgain(): Promise<void> {
    await servesAgain();
    await sessionsBack();
    await createBuild(s, projectId, { name: 'after the outage' });
    for (let i = 0; i < 100; i++) {
      const r = await call(`${s.url}/ci/api/v1/builds/register.json`, json({ token: runnerToken }));
      if (r.status === 201) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('no build was handed out after the outage');
  }

  const logText = () => {
    const dir = s.server.ctx.store.layout.logsDir;
    return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n') : '';
  };

  /** Down the given way for `ms`, then back. */
  const downFor = (how: Parameters<TestPostgres['halt']>[0], ms: number) => async () => {
    await cluster.halt(how);
    await new Promise((r) => setTimeout(r, ms));
    await cluster.resume();
  };
  const outages: [string, () => Promise<void>][] = [
    ['stopped (pg_ctl stop -m fast), then started', downFor('fast', 2000)],
    ['killed (kill -9 the postmaster), then started', downFor('kill', 2000)],
    // Past the bounds the server was given: connect 2 s, statement 3 s (+ the client's grace).
    ['frozen (SIGSTOP to every process of the cluster), then SIGCONT', downFor('freeze', 7000)],
    ['restarted at once (pg_ctl -m immediate)', downFor('immediate', 0)],
  ];

  for (const [name, outage] of outages) {
    it(`${name}: every answer 2xx or 503 with Retry-After, none 500, no "unhandled error"; it serves again without a restart`, async () => {
      const tally: Tally = { byStatus: new Map(), wrong: [] };
      await underLoad(tally, (async () => {
        await new Promise((r) => setTimeout(r, 500));
        await outage();
        await handsOutAgain();
        // Some load after the recovery too: what broke during the outage must not linger.
        await new Promise((r) => setTimeout(r, 1000));
      })());
      const counts = Object.fromEntries(tally.byStatus);
      console.log(`${name}: answers by status ${JSON.stringify(counts)}`);
      // What the server logged as a bug, by its error's message: what a failure here has to fix.
      const bugs = [...new Set(logText().split('\n').filter((l) => l.includes('unhandled error')).map((l) => (JSON.parse(l) as { err?: { message?: string } }).err?.message))];
      expect({ wrong: tally.wrong.slice(0, 10), bugs }).toEqual({ wrong: [], bugs: [] });
      expect(tally.byStatus.get(503) ?? 0, 'the outage was seen by the clients').toBeGreaterThan(0);
    });
  }

  it('a statement the database does not finish within --database-statement-timeout-ms: 503 with Retry-After, then served again', async () => {
    // A session holding the builds table locked: every read of it waits behind the lock.
    const holder = new pg.Client({ connectionString: cluster.url });
    await holder.connect();
    try {
      await holder.query('BEGIN; LOCK TABLE builds IN ACCESS EXCLUSIVE MODE');
      const r = await call(`${s.url}/api/v3/sim/builds?limit=1`, { headers: { 'private-token': s.adminToken } });
      expect({ status: r.status, retryAfter: r.retryAfter, message: (JSON.parse(r.body) as { message: string }).message }).toEqual({
        status: 503,
        retryAfter: String(PG_RETRY_AFTER_S),
        message: expect.stringMatching(/^503 Service Unavailable - the database did not finish this request within the statement timeout/) as unknown,
      });
      await holder.query('ROLLBACK');
      expect((await call(`${s.url}/api/v3/sim/builds?limit=1`, { headers: { 'private-token': s.adminToken } })).status).toBe(200);
    } finally {
      await holder.end();
    }
  });
});
