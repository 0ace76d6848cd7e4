// The control API (/api/v3/sim): who may call it, users, instance, projects, builds
// (create, list, filters, trace with Range, cancel) and runners with their last contact. On both
// stores (backends.ts): the same answers whichever store is behind the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { BuildView, ProjectView, RunnerView } from '../../contract/control.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { control, INFO, patchTrace, raw, runnerJson, runningBuild } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  const api = (p: string) => `${s.url}/api/v3/sim${p}`;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close());

  describe('auth: PRIVATE-TOKEN header or private_token query', () => {
    it('401 without or with an unknown token, runner and project tokens included; 403 for a non-admin user; 200 for admins', async () => {
      const project = await createProject(s, 'auth');
      const runner = await registerRunner(s);
      const admin = (await control(s, '/users', { method: 'POST', json: { username: 'root', admin: true } })).body;
      const plain = (await control(s, '/users', { method: 'POST', json: { username: 'dev' } })).body;
      for (const token of [undefined, 'nope', runner.token, project.runners_token, project.ci_token, s.registrationToken]) {
        const r = await http(api('/projects'), { token });
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ message: '401 Unauthorized' });
      }
      const forbidden = await http(api('/projects'), { token: plain.private_token });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual({ message: '403 Forbidden' });
      expect((await http(api(`/projects?private_token=${plain.private_token}`))).status).toBe(403);
      for (const r of [
        await http(api('/projects'), { token: s.adminToken }),
        await http(api('/projects'), { token: admin.private_token }),
        await http(api(`/projects?private_token=${s.adminToken}`)),
        await http(api(`/instance?private_token=${admin.private_token}`)),
      ]) {
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('application/json');
      }
      // auth comes before body validation: an invalid body without a token is still 401
      expect((await http(api('/projects'), { json: { bad: true } })).status).toBe(401);
    });
  });

  describe('users and instance', () => {
    it('POST /users → 201 {id, username, admin, private_token}; duplicate 409; bad input 400', async () => {
      const r = await control(s, '/users', { method: 'POST', json: { username: 'alice' } });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({ id: expect.any(Number), username: 'alice', admin: false, private_token: expect.any(String) });
      const dup = await control(s, '/users', { method: 'POST', json: { username: 'alice', admin: true } });
      expect(dup.status).toBe(409);
      for (const json of [{}, { username: '' }, { username: 'a b/../c' }, { username: 'x', admin: 'maybe' }]) {
        const bad = await control(s, '/users', { method: 'POST', json });
        expect(bad.status, JSON.stringify(json)).toBe(400);
        expect(typeof bad.body.message).toBe('string');
      }
      const bad = await raw(api('/users'), { method: 'POST', headers: { 'private-token': s.adminToken, 'content-type': 'application/json' }, body: '{oops' });
      expect(bad.status).toBe(400);
    });

    it('GET /instance → {version, runners_registration_token}', async () => {
      const r = await control(s, '/instance');
      expect(r.status).toBe(200);
      expect(r.body.version).toBe('8.17.0');
      expect(r.body.runners_registration_token).toBe(s.registrationToken);
    });
  });

  describe('projects', () => {
    it('POST /projects → 201 {id, name, runners_token, ci_token}; GET /projects lists it', async () => {
      const r = await control(s, '/projects', { method: 'POST', json: { name: 'listed' } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ id: expect.any(Number), name: 'listed', runners_token: expect.any(String), ci_token: expect.any(String) });
      expect(r.body.runners_token).not.toBe(r.body.ci_token);
      const list = (await control(s, '/projects')).body as ProjectView[];
      expect(list.find((p) => p.id === r.body.id)).toMatchObject({ name: 'listed', runners_token: r.body.runners_token });
      expect((await control(s, '/projects', { method: 'POST', json: {} })).status).toBe(400);
    });
  });

  describe('builds', () => {
    it('creates a build with sensible defaults, pending', async () => {
      const project = await createProject(s, 'defaults');
      const r = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: {} });
      expect(r.status).toBe(201);
      const b = r.body;
      expect(b).toMatchObject({ status: 'pending', project_id: project.id, runner_id: null, trace_length: 0, artifacts: null, tag: false });
      expect(b.sha).toMatch(/^[0-9a-f]{8,}$/);
      expect(b.before_sha).toMatch(/^[0-9a-f]{8,}$/);
      for (const k of ['name', 'stage', 'ref', 'commands']) expect(b[k].length, k).toBeGreaterThan(0);
      expect(typeof b.token).toBe('string');
    });

    it('creates a build with the given fields, and `count` of them as an array', async () => {
      const project = await createProject(s, 'fields');
      const body = {
        name: 'rspec',
        stage: 'test',
        ref: 'feature',
        sha: 'abcdef0123456789',
        before_sha: '0123456789abcdef',
        tag: true,
        commands: 'echo 1\necho 2',
        repo_url: 'file:///tmp/repo.git',
        variables: { FOO: 'bar' },
        options: { artifacts: { paths: ['out/'] } },
        timeout: 600,
        tag_list: 'docker, linux',
      };
      const r = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: body });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ ...body, variables: [{ key: 'FOO', value: 'bar', public: true }], tag_list: ['docker', 'linux'], status: 'pending' });
      const many = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: { count: 3 } });
      expect(many.status).toBe(201);
      expect(many.body.count).toBe(3);
      const tokens = await Promise.all(many.body.ids.map(async (id: number) => (await control(s, `/builds/${id}`)).body.token));
      expect(new Set(tokens).size).toBe(3);
      for (const json of [{ sha: 'short' }, { timeout: 'x' }, { count: 0 }]) {
        expect((await control(s, `/projects/${project.id}/builds`, { method: 'POST', json })).status, JSON.stringify(json)).toBe(400);
      }
      expect((await control(s, '/projects/999999/builds', { method: 'POST', json: {} })).status).toBe(404);
    });

    it('lists builds newest first with status and project_id filters; GET /builds/:id; unknown 404', async () => {
      const { project, build } = await runningBuild(s, {}, 'filters');
      const pending = await createBuild(s, project.id, { tag_list: ['never'] });
      const other = await createProject(s, 'filters-other');
      const otherBuild = await createBuild(s, other.id, { tag_list: ['never'] });
      const mine = (await control(s, `/builds?project_id=${project.id}`)).body as BuildView[];
      expect(mine.map((b) => b.id)).toEqual([pending.id, build.id]);
      const running = (await control(s, `/builds?project_id=${project.id}&status=running`)).body as BuildView[];
      expect(running.map((b) => b.id)).toEqual([build.id]);
      const allPending = (await control(s, '/builds?status=pending')).body as BuildView[];
      expect(allPending.map((b) => b.id)).toEqual(expect.arrayContaining([pending.id, otherBuild.id]));
      expect(allPending.every((b) => b.status === 'pending')).toBe(true);
      const one = await control(s, `/builds/${build.id}`);
      expect(one.body).toMatchObject({ id: build.id, status: 'running', project_id: project.id, trace_length: 0, artifacts: null });
      expect(Number.isInteger(one.body.runner_id)).toBe(true);
      expect((await control(s, '/builds/999999')).status).toBe(404);
      expect((await control(s, '/builds?status=bogus')).status).toBe(400);
    });

    it('GET /builds/:id/trace: the raw bytes as text/plain; Range: bytes=N- gives 206 from byte N', async () => {
      const { build } = await runningBuild(s, {}, 'trace-tail');
      const text = 'line one\nline two ü\n';
      await patchTrace(s, build.id, { token: build.token, range: `0-${Buffer.byteLength(text)}`, body: text });
      const full = await control(s, `/builds/${build.id}/trace`);
      expect(full.status).toBe(200);
      expect(full.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(full.raw.toString('utf8')).toBe(text);
      const tail = await control(s, `/builds/${build.id}/trace`, { headers: { range: 'bytes=9-' } });
      expect(tail.status).toBe(206);
      expect(tail.raw.toString('utf8')).toBe('line two ü\n');
      expect(tail.headers.get('content-range')).toBe(`bytes 9-${Buffer.byteLength(text) - 1}/${Buffer.byteLength(text)}`);
      expect((await control(s, `/builds/${build.id}/trace`, { headers: { range: 'bytes=9999-' } })).status).toBe(416);
      expect((await control(s, `/builds/${build.id}/trace`, { headers: { range: 'lines=1-' } })).status).toBe(416);
    });

    it('GET /builds/:id/trace: byte-exact on either side of 64 KiB (up to it read at once, past it streamed), whole and from a Range', async () => {
      const { build } = await runningBuild(s, {}, 'trace-sizes');
      const bytes = Buffer.alloc(200 * 1024);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 10)) & 0xff;
      expect((await patchTrace(s, build.id, { token: build.token, range: `0-${bytes.length}`, body: bytes })).status).toBe(202);
      const KiB64 = 64 * 1024;
      for (const start of [undefined, 0, 1, bytes.length - KiB64 - 1, bytes.length - KiB64, bytes.length - KiB64 + 1, bytes.length - 1, bytes.length]) {
        const r = await control(s, `/builds/${build.id}/trace`, start === undefined ? {} : { headers: { range: `bytes=${start}-` } });
        const from = start ?? 0;
        expect(r.status, `from ${start}`).toBe(start === undefined ? 200 : 206);
        expect(r.headers.get('content-length'), `from ${start}`).toBe(String(bytes.length - from));
        expect(r.raw.equals(bytes.subarray(from)), `from ${start}: ${r.raw.length} bytes`).toBe(true);
        if (start !== undefined) expect(r.headers.get('content-range')).toBe(`bytes ${from}-${Math.max(from, bytes.length - 1)}/${bytes.length}`);
      }
    });

    it('POST /builds/:id/cancel → 200 canceled; the runner then sees Build-Status: canceled; canceling again is 409', async () => {
      const { build } = await runningBuild(s, {}, 'cancel');
      const r = await control(s, `/builds/${build.id}/cancel`, { method: 'POST' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: build.id, status: 'canceled' });
      expect(r.body.finished_at).toEqual(expect.any(String));
      const p = await patchTrace(s, build.id, { token: build.token, range: '0-1', body: 'x' });
      expect(p.headers['build-status']).toBe('canceled');
      expect((await control(s, `/builds/${build.id}/cancel`, { method: 'POST' })).status).toBe(409);
      // a pending build can be canceled too, and is then never handed out
      const project = await createProject(s, 'cancel-pending');
      const runner = await registerRunner(s, project.runners_token);
      const pending = await createBuild(s, project.id);
      expect((await control(s, `/builds/${pending.id}/cancel`, { method: 'POST' })).body.status).toBe('canceled');
      expect((await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token })).status).toBe(204);
    });
  });

  describe('runners', () => {
    it('GET /runners → id, description, active, is_shared, project_id and last_contact_at updated by polls', async () => {
      const project = await createProject(s, 'runners');
      const reg = await runnerJson(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: project.runners_token, description: 'mine', info: INFO });
      const find = async () => {
        const row = ((await control(s, '/runners')).body as RunnerView[]).find((r) => r.id === reg.json.id);
        if (!row) throw new Error(`runner ${reg.json.id} is not listed`);
        return row;
      };
      const first = await find();
      expect(first).toMatchObject({ id: reg.json.id, description: 'mine', active: true, is_shared: false, project_id: project.id });
      expect(Number.isNaN(Date.parse(first.last_contact_at ?? ''))).toBe(false);
      await new Promise((r) => setTimeout(r, 15));
      await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: reg.json.token, info: { ...INFO, version: '1.11.6' } });
      const second = await find();
      expect(Date.parse(second.last_contact_at ?? '')).toBeGreaterThan(Date.parse(first.last_contact_at ?? ''));
      expect(second.version).toBe('1.11.6');
      expect(JSON.stringify(await control(s, '/runners'))).not.toContain(reg.json.token);
    });
  });
});
