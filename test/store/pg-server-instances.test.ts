// Two Jobscope servers on one PostgreSQL database (buildServer's internal `database` option, issue
// 13): the records live in the database, not the data dir's SQLite; a build is handed out once
// whichever instance the polls reach; a change made on one instance (a new build, a cancel) is seen
// on the other through LISTEN/NOTIFY; the trace length in the database is what both check a part
// against. Both share one data dir, as a real deployment does (each holds a slot in it:
// store/data-dir-shared.ts, tested in pg-server-shared-dir.test.ts).
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { control, makeZip, patchTrace, runnerJson, runningBuild, uploadArtifacts } from '../api/lib.ts';
import { databaseOf } from '../../server/store/index.ts';
import { doublePut, putAgainstCancel } from '../api/finish-races.ts';
import { openHandles } from '../helpers/open-files.ts';
import type { Build } from '../../server/store/ports/build.ts';
import { waitUntil } from '../helpers/wait.ts';

const cluster = usePostgres();

interface SentStatement {
  name?: string;
  text: string;
  values: unknown[];
}

/** Counts the statements every pg client in this process sends that `which` names (a name, or a test; a spy: each still runs). */
function countStatements(which: string | ((q: SentStatement) => boolean)): { count(): number; restore(): void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  const counts = typeof which === 'string' ? (q: SentStatement) => q.name === which : which;
  let n = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as { name?: string; text?: string; values?: unknown[] } | string | null;
    const sent = typeof config === 'string' ? { text: config, values: (args[1] as unknown[] | undefined) ?? [] } : { name: config?.name, text: config?.text ?? '', values: config?.values ?? [] };
    if (config && counts(sent)) n++;
    return query.apply(this, args);
  };
  return { count: () => n, restore: () => void (proto.query = query) };
}

describe.skipIf(postgresMissing() !== null)('two instances on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let sql: pg.Client;
  const poll = (s: TestServer, token: string, lastUpdate?: string) =>
    runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token, ...(lastUpdate === undefined ? {} : { last_update: lastUpdate }) });

  /** `s` answers the runner's `value` back (204), once it has heard what moved it. */
  const echoedBy = async (s: TestServer, token: string, value: string) => {
    const r = await waitUntil(
      "the runner's value echoed",
      () => poll(s, token, value),
      (x) => x.headers['x-gitlab-last-update'] === value,
      5000,
    );
    expect([r.status, r.headers['x-gitlab-last-update']]).toEqual([204, value]);
  };

  /** A project's runner registered on a, which has polled a once (nothing pending): its X-GitLab-Last-Update. */
  const polledRunner = async (name: string) => {
    const project = await createProject(a, name);
    const runner = await registerRunner(a, project.runners_token);
    const first = await poll(a, runner.token);
    expect(first.status).toBe(204);
    return { project, runner, seen: String(first.headers['x-gitlab-last-update']) };
  };

  beforeAll(async () => {
    a = await startServer({}, { database: cluster.url });
    b = await startServer({ dataDir: a.dataDir }, { database: cluster.url });
    sql = new pg.Client({ connectionString: cluster.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    // b first, keeping the folder: it is a's too.
    await b?.close({ keepData: true });
    await a?.close();
  });

  it('share the tokens and keep builds, runners and projects in the database, not in the data dir', async () => {
    expect(b.adminToken).toBe(a.adminToken);
    expect(b.registrationToken).toBe(a.registrationToken);
    const project = await createProject(a, 'where');
    const build = await createBuild(a, project.id);
    const runner = await registerRunner(b);
    const rows = await sql.query('SELECT (SELECT count(*) FROM builds WHERE id = $1) AS builds, (SELECT count(*) FROM runners WHERE id = $2) AS runners', [build.id, runner.id]);
    expect(rows.rows[0]).toEqual({ builds: '1', runners: '1' });
    for (const s of [a, b]) {
      const db = databaseOf(s.server.ctx.store);
      expect(db.get('SELECT count(*) AS n FROM builds')).toEqual({ n: 0 });
      expect(db.get('SELECT count(*) AS n FROM runners')).toEqual({ n: 0 });
    }
    // The other instance reads it back through its own domain.
    expect((await control(b, `/builds/${build.id}`)).body.name).toBe(build.name);
  });

  it('hand each build out once, whichever instance each poll reaches', async () => {
    const project = await createProject(a, 'once');
    const ids = (await control(a, `/projects/${project.id}/builds`, { method: 'POST', json: { count: 30 } })).body.ids as number[];
    const runners = await Promise.all(Array.from({ length: 6 }, () => registerRunner(a, project.runners_token)));
    const taken: number[] = [];
    // Every runner polls both instances at once until a round hands out nothing.
    for (;;) {
      const answers = await Promise.all(runners.flatMap((r) => [poll(a, r.token), poll(b, r.token)]));
      const got = answers.filter((x) => x.status === 201).map((x) => x.json.id as number);
      for (const x of answers) expect([201, 204]).toContain(x.status);
      if (!got.length) break;
      taken.push(...got);
    }
    expect(new Set(taken).size).toBe(taken.length);
    expect([...taken].sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
  });

  it('a runner that polls one instance is read from its cache, checked by the poll: paused, edited, resumed or deleted on the other, its next poll answers from the row', async () => {
    const project = await createProject(a, 'cached');
    const runner = await registerRunner(a, project.runners_token, { tag_list: 'docker' });
    // The runner's token lookup is a named statement: counted as the servers' clients send it (both
    // instances run in this process, on this module's pg). The cluster's own counters (index scans
    // in pg_stat_user_indexes) were tried first: a backend that flushed its statistics less than a
    // second before holds the next ones until its next statement or 10 s idle (PostgreSQL 15's
    // PGSTAT_IDLE_INTERVAL), so a lookup from before the window could land in it on a busy machine.
    const lookups = countStatements('jobscope-runner-by-token');
    try {
      expect((await poll(a, runner.token)).status).toBe(204);
      // The first poll on this instance read the runner (registered on a, which does not cache a registration).
      expect(lookups.count()).toBe(1);
      for (let i = 0; i < 8; i++) expect((await poll(a, runner.token)).status).toBe(204);
      // Read from the cache: one statement a poll, no lookup (8 without the cache).
      expect(lookups.count()).toBe(1);
      // The other instance has not read it yet: its first poll does.
      expect((await poll(b, runner.token)).status).toBe(204);
      expect(lookups.count()).toBe(2);
    } finally {
      lookups.restore();
    }

    expect((await control(b, `/runners/${runner.id}`, { method: 'PATCH', json: { active: false } })).status).toBe(200);
    const docker = await createBuild(b, project.id, { tag_list: ['docker'] });
    expect((await poll(a, runner.token)).status).toBe(404);
    expect((await control(b, `/runners/${runner.id}`, { method: 'PATCH', json: { active: true } })).status).toBe(200);
    await sql.query(`UPDATE runners SET tag_list = '["ruby"]' WHERE id = $1`, [runner.id]);
    // Its cached tags said docker: the row says ruby, so the docker build stays pending.
    expect((await poll(a, runner.token)).status).toBe(204);
    await sql.query(`UPDATE runners SET tag_list = '["docker"]' WHERE id = $1`, [runner.id]);
    const taken = await poll(a, runner.token);
    expect([taken.status, taken.json.id]).toEqual([201, docker.id]);
    expect((await control(b, `/runners/${runner.id}`, { method: 'DELETE' })).status).toBeLessThan(300);
    await createBuild(b, project.id, { tag_list: ['docker'] });
    expect((await poll(a, runner.token)).status).toBe(403);
  });

  it('X-GitLab-Last-Update is one value on both instances: a runner polling them in turn has it echoed (204) while nothing changed; a build created on one ticks it, and the poll through the other takes the build', async () => {
    const polled = await polledRunner('alternate');
    const { project, runner } = polled;
    let { seen } = polled;
    for (let round = 0; round < 3; round++) {
      // Each instance answers the value the runner holds, the one the other gave it.
      for (const s of [b, a, b, a]) {
        const r = await poll(s, runner.token, seen);
        expect({ round, status: r.status, value: r.headers['x-gitlab-last-update'] }).toEqual({ round, status: 204, value: seen });
      }
      // A build made on one instance: the runner's next poll on either gets it, then a new value both echo.
      const build = await createBuild(round % 2 ? a : b, project.id);
      const taker = round % 2 ? b : a;
      const got = await waitUntil(
        "the build for the other instance's runner",
        () => poll(taker, runner.token, seen),
        (r) => r.status === 201,
        5000,
      );
      expect([got.status, got.json.id]).toEqual([201, build.id]);
      await runnerJson(`${taker.url}/ci/api/v1/builds/${build.id}`, 'PUT', { token: runner.token, state: 'success' });
      const next = await poll(taker, runner.token, seen);
      expect(next.status).toBe(204);
      expect(next.headers['x-gitlab-last-update']).not.toBe(seen);
      seen = String(next.headers['x-gitlab-last-update']);
      // The other instance has heard of the build by now or soon: it answers the same new value.
      await echoedBy(taker === a ? b : a, runner.token, seen);
    }
  });

  it('X-GitLab-Last-Update: a change committed without a notification is seen at the next poll (each poll reads the counter), so nothing heard late can hide a build', async () => {
    const project = await createProject(a, 'resync');
    const runner = await registerRunner(a, project.runners_token);
    const seen = String((await poll(b, runner.token)).headers['x-gitlab-last-update']);
    // A change committed without a notification, as one made while the LISTEN session was down, or
    // one whose notification has not arrived yet.
    await sql.query(`UPDATE settings SET value = (value::bigint + 1)::text WHERE key = 'runner_queue_counter'`);
    const moved = await poll(b, runner.token, seen);
    expect(moved.headers['x-gitlab-last-update']).not.toBe(seen);
    // Both instances agree on the new value.
    await echoedBy(a, runner.token, String(moved.headers['x-gitlab-last-update']));
  });

  it('a poll of a cached runner is one statement, the shared X-GitLab-Last-Update counter read in it: when it takes a build, when none is left, and when it echoes the runner\'s value', async () => {
    const { project, runner, seen } = await polledRunner('one-trip');
    const heard: Build[] = [];
    const hear = (x: Build) => void (x.project_id === project.id && heard.push(x));
    a.server.ctx.events.on('build:pending', hear);
    await createBuild(b, project.id);
    await createBuild(b, project.id);
    // Heard by a (which reads the counter with the rows it hears of): nothing else reads it below.
    await waitUntil('both builds heard by a', () => heard.length, (n) => n === 2, 5000);
    a.server.ctx.events.off('build:pending', hear);
    // Whatever reaches the cluster for a poll: the poll statement, or any statement reading the counter.
    const trips = countStatements((q) => q.name?.startsWith('jobscope-poll') === true || /runner_queue_counter/.test(q.text) || q.values.includes('runner_queue_counter'));
    try {
      const taken = await poll(a, runner.token, seen);
      expect(taken.status).toBe(201);
      const second = await poll(a, runner.token);
      expect(second.status).toBe(201);
      const none = await poll(a, runner.token);
      expect(none.status).toBe(204);
      const value = String(none.headers['x-gitlab-last-update']);
      expect(value).not.toBe(seen);
      for (let i = 0; i < 4; i++) {
        const echoed = await poll(a, runner.token, value);
        expect([echoed.status, echoed.headers['x-gitlab-last-update']]).toEqual([204, value]);
      }
      // Seven polls, one statement each (two a poll when the counter was read before the take).
      expect(trips.count()).toBe(7);
    } finally {
      trips.restore();
    }
  });

  it('a cancel on one instance: the other’s events hear it, and its trace PATCH answers Build-Status: canceled', async () => {
    const project = await createProject(a, 'cancel');
    const runner = await registerRunner(a, project.runners_token);
    await createBuild(a, project.id);
    const taken = await poll(a, runner.token);
    expect(taken.status).toBe(201);
    const id = taken.json.id as number;
    const heard: Build[] = [];
    b.server.ctx.events.on('build:finished', (x) => heard.push(x));
    const part = await patchTrace(b, id, { token: taken.json.token as string, range: '0-4', body: 'hello' });
    expect(part.status).toBe(202);
    expect(part.headers['build-status']).toBe('running');
    // b keeps the trace's file open for the next part; the cancel on a closes it there once b hears of it.
    const file = path.join(b.server.ctx.store.layout.tracesDir, `${id}.log`);
    expect(openHandles(file)).toBe(1);
    expect((await control(a, `/builds/${id}/cancel`, { method: 'POST' })).status).toBe(200);
    await waitUntil(
      'the cancel heard',
      async () => heard.length,
      (n) => n > 0,
      5000,
    );
    expect(heard.map((x) => [x.id, x.status])).toEqual([[id, 'canceled']]);
    // Closed when the notification arrives, on the thread pool: not ordered with the event above.
    expect(await waitUntil('the trace file closed', async () => openHandles(file), (n) => n === 0, 5000)).toBe(0);
    // A part after the finish still lands, and keeps nothing open.
    const after = await patchTrace(b, id, { token: taken.json.token as string, range: '5-10', body: ' world' });
    expect(after.status).toBe(202);
    expect(after.headers['build-status']).toBe('canceled');
    expect(openHandles(file)).toBe(0);
    // The runner's PUT to either instance: the build is no longer running, 404 as GitLab answers.
    const put = await runnerJson(`${a.url}/ci/api/v1/builds/${id}.json`, 'PUT', { token: runner.token, state: 'success' });
    expect(put.status).toBe(404);
  });

  it('a part is checked against the length in the database, whichever instance took the one before', async () => {
    const { build } = await runningBuild(a, {}, 'trace');
    const id = build.id as number;
    const token = build.token as string;
    expect((await patchTrace(a, id, { token, range: '0-5', body: 'first ' })).status).toBe(202);
    // The same part again, at the other instance: its offset is no longer the length.
    const again = await patchTrace(b, id, { token, range: '0-5', body: 'first ' });
    expect(again.status).toBe(416);
    expect(again.headers.range).toBe('0-6');
    const next = await patchTrace(b, id, { token, range: '6-11', body: 'second' });
    expect(next.status).toBe(202);
    expect(next.headers.range).toBe('0-12');
    const { rows } = await sql.query('SELECT length FROM build_traces WHERE build_id = $1', [id]);
    expect(rows[0].length).toBe('12');
    // Both instances read the whole trace, byte for byte.
    for (const s of [a, b]) expect((await control(s, `/builds/${id}/trace`)).raw.toString()).toBe('first second');
  });

  it('a trace part of a build the instance knows is two round trips: the lock (which reads the status) and the length with the COMMIT', async () => {
    const { build } = await runningBuild(a, {}, 'trace-trips');
    const id = build.id as number;
    const token = build.token as string;
    const trips = countStatements((q) => q.name === 'jobscope-build-credentials' || /build_traces|COMMIT/.test(q.text));
    try {
      // The first part an instance sees reads the build's credentials; a build's first part also makes its trace row.
      expect((await patchTrace(a, id, { token, range: '0-5', body: 'first ' })).status).toBe(202);
      const first = trips.count();
      expect((await patchTrace(b, id, { token, range: '6-11', body: 'second' })).status).toBe(202);
      expect(trips.count() - first).toBe(3);
      for (const [s, range, body] of [[a, '12-17', ' third'], [b, '18-23', ' forth']] as const) {
        const before = trips.count();
        const part = await patchTrace(s, id, { token, range, body });
        expect([part.status, part.headers['build-status']]).toEqual([202, 'running']);
        expect(trips.count() - before).toBe(2);
      }
    } finally {
      trips.restore();
    }
    // A wrong token is still refused before the body, whether the build is known here or not.
    expect((await patchTrace(a, id, { token: 'wrong-token', range: '24-25', body: '!' })).status).toBe(403);
    expect((await patchTrace(a, id + 1000, { token, range: '0-1', body: '!' })).status).toBe(404);
    for (const s of [a, b]) expect((await control(s, `/builds/${id}/trace`)).raw.toString()).toBe('first second third forth');
  });

  it('a trace part for a build deleted after its token was checked gets no such build (404), not a database error', async () => {
    // The route checks the token in onRequest and hands the build it checked to the append, which does
    // not look it up again; a build deleted in between (by the other instance) must still end as a 404.
    const project = await createProject(a, 'deleted');
    const build = await createBuild(a, project.id);
    const builds = a.server.ctx.domain.builds;
    const checked = await builds.credentials(build.id);
    expect(checked?.id).toBe(build.id);
    await sql.query('DELETE FROM builds WHERE id = $1', [build.id]);
    expect(await builds.appendTrace(build.id, 0, Buffer.from('late part'), checked)).toBeUndefined();
    const { rows } = await sql.query('SELECT count(*) AS n FROM build_traces WHERE build_id = $1', [build.id]);
    expect(rows[0].n).toBe('0');
  });

  it('an archive uploaded through one instance is listed and downloaded through the other', async () => {
    const { build } = await runningBuild(a, {}, 'archive');
    const id = build.id as number;
    const zip = await makeZip({ 'out/report.txt': 'report' });
    const up = await uploadArtifacts(a, id, build.token as string, zip);
    expect(up.status).toBe(201);
    const listed = await waitUntil(
      'the artifact listing',
      () => control(b, `/builds/${id}`),
      (r) => Array.isArray(r.body.artifacts?.files),
      5000,
    );
    expect(listed.body.artifacts.files).toEqual([{ name: 'out/report.txt', size: 6 }]);
    const down = await control(b, `/builds/${id}/artifacts`);
    expect(down.status).toBe(200);
    expect(Buffer.compare(down.raw, zip)).toBe(0);
  });

  it('a PUT state=success on one instance against a cancel on the other, 25 rounds: exactly one wins, the PUT that lost hears 404', async () => {
    const wins = await putAgainstCancel([a, b], 25);
    expect(wins.put + wins.cancel).toBe(25);
  });

  it('two PUTs of one runner on the two instances at once, 25 rounds: exactly one 200, the other 404', async () => {
    await doublePut([a, b], 25);
  });
});
