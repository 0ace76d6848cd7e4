// A value accepted today must not break reads tomorrow. An expire_in no JS Date can
// hold is capped at write time, and rows that an older version (or a hand edit) left out of range or
// unparsable are read as null/clamped values, so every list and detail route still answers after a
// restart.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { control, makeZip, multipart, pieces, raw, runnerJson, runningBuild, uploadArtifacts, RUNNER_UA } from '../api/lib.ts';
import { Db } from '../../server/store/sqlite/db.ts';

const YEAR_MS = 365.25 * 86400_000;
const servers = useServers({}, 'all');
const start = servers.start;

/** Every control-API list and detail a UI or script reads about builds, projects and runners. */
async function readEverything(s: TestServer, ids: { build: number; project: number }) {
  const paths = ['/builds', `/builds?project_id=${ids.project}`, `/builds/${ids.build}`, `/builds/${ids.build}/trace`, '/projects', `/projects/${ids.project}`, '/runners', '/users', '/instance', '/jobs/queues', '/jobs/dead', '/jobs/retries'];
  const out: Record<string, number> = {};
  for (const p of paths) out[p] = (await control(s, p)).status;
  return out;
}

describe('expire_in is capped at write time', () => {
  for (const expireIn of ['300000 years', '9'.repeat(99)]) {
    it(`"${expireIn.slice(0, 20)}…" stores a representable expiry (at most 100 years) and every read still answers`, async () => {
      const s = await start();
      const zip = await makeZip({ 'a.txt': 'x' });
      const { project, runner, build } = await runningBuild(s, {}, 'cap');
      const up = await uploadArtifacts(s, build.id, build.token, zip, { query: `?expire_in=${encodeURIComponent(expireIn)}` });
      expect(up.status).toBe(201);
      const at = Date.parse(up.json.artifacts_expire_at);
      expect(Number.isFinite(at)).toBe(true);
      expect(at).toBeGreaterThan(Date.now() + 99 * YEAR_MS);
      expect(at).toBeLessThanOrEqual(Date.now() + 100 * YEAR_MS + 60_000);

      const statuses = await readEverything(s, { build: build.id, project: project.id });
      for (const [p, status] of Object.entries(statuses)) expect(status, p).toBe(200);
      expect((await control(s, `/builds/${build.id}`)).body.artifacts.expire_at).toBe(up.json.artifacts_expire_at);
      const put = await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state: 'success', trace: 'done\n' });
      expect(put.status).toBe(200);
      expect(put.json.status).toBe('success');
    });
  }

  it('a smaller --max-artifact-expire-days caps expire_in (form field too), and a shorter expire_in is kept', async () => {
    const s = await start({ maxArtifactExpireDays: 30 });
    const zip = await makeZip({ 'a.txt': 'x' });
    const a = await runningBuild(s, {}, 'cap-30');
    const mp = multipart([
      { name: 'expire_in', value: '2 years' },
      { name: 'file', filename: 'a.zip', contentType: 'application/octet-stream', value: zip },
    ]);
    const up = await raw(`${s.url}/ci/api/v1/builds/${a.build.id}/artifacts`, {
      method: 'POST',
      headers: { 'user-agent': RUNNER_UA, 'content-type': mp.contentType, 'build-token': a.build.token },
      chunks: pieces(mp.body, 1000),
    });
    expect(up.status).toBe(201);
    expect(Math.abs(Date.parse(up.json.artifacts_expire_at) - (Date.now() + 30 * 86400_000))).toBeLessThan(60_000);
    const b = await runningBuild(s, {}, 'cap-30-short');
    const short = await uploadArtifacts(s, b.build.id, b.build.token, zip, { query: '?expire_in=2d' });
    expect(Math.abs(Date.parse(short.json.artifacts_expire_at) - (Date.now() + 2 * 86400_000))).toBeLessThan(60_000);
  });
});

describe('stored rows never break a read', () => {
  it('out-of-range dates, BigInt-sized numbers and broken JSON written straight into the database: every route still answers 200 after a restart', async () => {
    const dataDir = tempDir();
    let s = await startServer({ dataDir });
    const zip = await makeZip({ 'a.txt': 'x' });
    const { project, runner, build } = await runningBuild(s, {}, 'poison');
    expect((await uploadArtifacts(s, build.id, build.token, zip, { query: '?expire_in=1d' })).status).toBe(201);
    const pending = await createBuild(s, project.id, { tag_list: [] });
    const other = await createProject(s, 'poison-other');
    const otherRunner = await registerRunner(s, other.runners_token);
    await createBuild(s, other.id);
    await s.close({ keepData: true });

    // What an older version could have stored, or a hand edit: numbers past Date's range (a REAL and
    // an INTEGER that reads back as a BigInt), text in number columns, JSON that does not parse or
    // has the wrong shape.
    const db = new Db(path.join(dataDir, 'jobscope.db'), { fsync: false });
    db.run(
      `UPDATE builds SET artifacts_expire_at = ?, started_at = ?, created_at = ?, timeout = ?, artifacts_size = ?, options = ?, variables = ?, depends_on = ? WHERE id = ?`,
      [1e102, 9_469_075_446_563_220n, 'yesterday', 1e300, 9_007_199_254_740_993n, '{"a":', '{"not":"a list"}', '[1e400, "x", -5]', build.id],
    );
    db.run(`UPDATE builds SET created_at = ?, finished_at = ?, tag_list = ? WHERE id = ?`, [-1e20, 'never', 'not json', pending.id]);
    // Options nested past what any serializer can walk (an older version accepted them).
    db.run(`UPDATE builds SET tag_list = ?, options = ? WHERE project_id = ?`, ['{"x":1}', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000), other.id]);
    db.run(`UPDATE runners SET contacted_at = ?, created_at = ?, info = ?, tag_list = ? WHERE id = ?`, [1e300, 9_469_075_446_563_220n, 'x', '"a"', runner.id]);
    db.run(`UPDATE projects SET created_at = ?, build_timeout = ? WHERE id = ?`, [1e300, 9_469_075_446_563_220n, project.id]);
    db.run(
      `INSERT INTO jobs (queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at, run_at, failed_at, error) VALUES
       ('poison', 'SyntheticJob', 'synthetic', '{"a":', 'dead', 25, 25, ?, ?, NULL, ?, 'boom'),
       ('poison', 'SyntheticJob', 'synthetic', '[1]', 'retry', 25, 1, ?, ?, ?, ?, 'boom')`,
      [1e300, 9_469_075_446_563_220n, 'x', -1e300, 1e300, 9_469_075_446_563_220n, 1e20],
    );
    db.close();

    s = await start({ dataDir });
    const statuses = await readEverything(s, { build: build.id, project: project.id });
    for (const [p, status] of Object.entries(statuses)) expect(status, p).toBe(200);
    for (const id of [build.id, pending.id]) {
      const v = (await control(s, `/builds/${id}`)).body;
      for (const key of ['created_at', 'started_at', 'finished_at'] as const) {
        if (v[key] !== null) expect(Number.isNaN(Date.parse(v[key])), `${id} ${key} ${v[key]}`).toBe(false);
      }
    }
    const dead = (await control(s, '/jobs/dead')).body;
    expect(dead.find((j: { queue: string }) => j.queue === 'poison')).toMatchObject({ args: {}, failed_at: null });
    const view = (await control(s, `/builds/${build.id}`)).body;
    expect(view.options).toEqual({});
    expect(view.variables).toEqual([]);
    expect(view.depends_on).toEqual([]);
    expect(view.artifacts.expire_at === null || !Number.isNaN(Date.parse(view.artifacts.expire_at))).toBe(true);
    expect(Number.isSafeInteger(view.timeout) || view.timeout === null).toBe(true);

    // The runner side: the poisoned running build's final PUT, a poll past a pending build whose tag
    // list does not parse, the artifacts download and delete.
    const get = await raw(`${s.url}/ci/api/v1/builds/${build.id}/artifacts`, { headers: { 'build-token': build.token } });
    expect(get.status).toBe(200);
    const put = await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state: 'success' });
    expect(put.status).toBe(200);
    expect(Number.isSafeInteger(put.json.timeout)).toBe(true);
    const poll = await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token });
    expect([201, 204]).toContain(poll.status);
    const poll2 = await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: otherRunner.token });
    expect([201, 204]).toContain(poll2.status);
    const del = await raw(`${s.url}/ci/api/v1/builds/${build.id}/artifacts`, { method: 'DELETE', headers: { 'build-token': build.token } });
    expect(del.status).toBe(200);
    for (const [p, status] of Object.entries(await readEverything(s, { build: build.id, project: project.id }))) expect(status, p).toBe(200);
  });
});
