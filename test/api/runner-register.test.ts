// gitlab-behaviour.md B "Runners": POST /runners/register, DELETE /runners/delete and the `PUT builds/-1`
// verify probe, with every body encoding GitLab's Grape accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createProject } from '../helpers/fixtures.ts';
import type { RunnerView } from '../../contract/control.ts';
import { control, INFO, multipart, raw, runnerJson, RUNNER_UA } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  let project: { id: number; runners_token: string; ci_token: string };
  const url = (p: string) => `${s.url}/ci/api/v1${p}`;

  beforeAll(async () => {
    s = await startServer();
    project = await createProject(s, 'reg');
  });
  afterAll(() => s.close());

  /** The runner's row in the control API's list, undefined once it is deleted. */
  async function runnerRow(id: number): Promise<RunnerView | undefined> {
    const list = (await control(s, '/runners')).body as RunnerView[];
    return list.find((r) => r.id === id);
  }

  /** The row of a runner that must be listed. */
  async function listedRunner(id: number): Promise<RunnerView> {
    const row = await runnerRow(id);
    if (!row) throw new Error(`runner ${id} is not listed`);
    return row;
  }

  describe('POST /runners/register', () => {
    it('answers 201 {id, token} with Content-Type exactly application/json, with and without .json', async () => {
      for (const path of ['/runners/register.json', '/runners/register']) {
        const r = await runnerJson(url(path), 'POST', { info: INFO, token: s.registrationToken, description: 'real-runner-harness', run_untagged: true });
        expect(r.status).toBe(201);
        expect(r.headers['content-type']).toBe('application/json');
        expect(Object.keys(r.json).sort()).toEqual(['id', 'token']);
        expect(Number.isInteger(r.json.id)).toBe(true);
        expect(typeof r.json.token).toBe('string');
        expect(r.json.token.length).toBeGreaterThanOrEqual(8);
      }
    });

    it('reads the token from a urlencoded body, a multipart body and the query string alike', async () => {
      const form = await raw(url('/runners/register'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${s.registrationToken}&description=form&tag_list=a%2C+b`,
      });
      expect(form.status).toBe(201);
      const mp = multipart([
        { name: 'token', value: s.registrationToken },
        { name: 'description', value: 'multi' },
      ]);
      const multi = await raw(url('/runners/register'), { method: 'POST', headers: { 'content-type': mp.contentType }, body: mp.body });
      expect(multi.status).toBe(201);
      const query = await raw(url(`/runners/register.json?token=${s.registrationToken}&description=query`), { method: 'POST' });
      expect(query.status).toBe(201);
      const rows = await Promise.all([form, multi, query].map((r) => listedRunner(r.json.id)));
      expect(rows.map((r) => r.description)).toEqual(['form', 'multi', 'query']);
      expect(rows[0].tag_list).toEqual(['a', 'b']);
    });

    it('400 "token" not given when the token is missing, in any encoding', async () => {
      for (const r of [
        await runnerJson(url('/runners/register.json'), 'POST', { description: 'x' }),
        await raw(url('/runners/register'), { method: 'POST' }),
        await raw(url('/runners/register'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'description=x' }),
        await runnerJson(url('/runners/register.json'), 'POST', { token: '' }),
        await runnerJson(url('/runners/register.json'), 'POST', { token: '   ' }),
      ]) {
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ message: '400 (Bad request) "token" not given' });
      }
    });

    it('403 for a token that is neither the registration token nor a project runners_token (a ci_token is not one)', async () => {
      for (const token of ['nope', project.ci_token, 'x'.repeat(600)]) {
        const r = await runnerJson(url('/runners/register.json'), 'POST', { token });
        expect(r.status).toBe(403);
        expect(r.json).toEqual({ message: '403 Forbidden' });
      }
    });

    it('the registration token makes a shared runner, a project runners_token a project runner', async () => {
      const shared = await runnerJson(url('/runners/register.json'), 'POST', { token: s.registrationToken, info: INFO });
      const specific = await runnerJson(url('/runners/register.json'), 'POST', { token: project.runners_token });
      expect(shared.status).toBe(201);
      expect(specific.status).toBe(201);
      const a = await listedRunner(shared.json.id);
      const b = await listedRunner(specific.json.id);
      expect([a.is_shared, a.project_id]).toEqual([true, null]);
      expect([b.is_shared, b.project_id]).toEqual([false, project.id]);
      // `info` updates the runner row
      expect([a.version, a.platform, a.architecture]).toEqual(['1.11.5', 'linux', 'amd64']);
    });

    it('folds Rack-style nested form names: info[version]=… and tag_list[]=…', async () => {
      const r = await raw(url('/runners/register'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${s.registrationToken}&info%5Bversion%5D=1.5.3&info%5Bplatform%5D=darwin&tag_list%5B%5D=ruby&tag_list%5B%5D=mysql`,
      });
      expect(r.status).toBe(201);
      const row = await listedRunner(r.json.id);
      expect([row.version, row.platform]).toEqual(['1.5.3', 'darwin']);
      expect(row.tag_list).toEqual(['ruby', 'mysql']);
      const mp = multipart([
        { name: 'token', value: s.registrationToken },
        { name: 'info[architecture]', value: 'arm64' },
        { name: '__proto__[polluted]', value: 'yes' },
      ]);
      const m = await raw(url('/runners/register'), { method: 'POST', headers: { 'content-type': mp.contentType }, body: mp.body });
      expect(m.status).toBe(201);
      expect((await listedRunner(m.json.id)).architecture).toBe('arm64');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('keeps description, tag_list ("tag1, tag2") and run_untagged', async () => {
      const r = await runnerJson(url('/runners/register.json'), 'POST', {
        token: s.registrationToken,
        description: 'tagged one',
        tag_list: 'docker, linux ,docker',
        run_untagged: false,
      });
      expect(r.status).toBe(201);
      const row = await listedRunner(r.json.id);
      expect(row.description).toBe('tagged one');
      expect(row.tag_list).toEqual(['docker', 'linux']);
      expect(row.run_untagged).toBe(false);
      expect(row.active).toBe(true);
    });

    it('run_untagged=false without tags is an invalid runner: 404, and nothing is saved', async () => {
      const before = ((await control(s, '/runners')).body as unknown[]).length;
      const json = await runnerJson(url('/runners/register.json'), 'POST', { token: s.registrationToken, run_untagged: false });
      const form = await raw(url('/runners/register'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${s.registrationToken}&run_untagged=false&tag_list=`,
      });
      for (const r of [json, form]) {
        expect(r.status).toBe(404);
        expect(r.json.message).toMatch(/^404 /);
      }
      expect(((await control(s, '/runners')).body as unknown[]).length).toBe(before);
    });
  });

  describe('DELETE /runners/delete', () => {
    const newRunner = async () => (await runnerJson(url('/runners/register.json'), 'POST', { token: s.registrationToken })).json as { id: number; token: string };

    it('takes the token from a JSON body on a DELETE (what the runner sends) and answers 200 JSON', async () => {
      const runner = await newRunner();
      const r = await runnerJson(url('/runners/delete'), 'DELETE', { token: runner.token });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(await runnerRow(runner.id)).toBeUndefined();
      // the token is gone: every runner call with it is now 403
      const poll = await runnerJson(url('/builds/register.json'), 'POST', { token: runner.token });
      expect(poll.status).toBe(403);
      const again = await runnerJson(url('/runners/delete'), 'DELETE', { token: runner.token });
      expect(again.status).toBe(403);
    });

    it('also from the query string or a urlencoded body', async () => {
      const a = await newRunner();
      const b = await newRunner();
      expect((await raw(url(`/runners/delete?token=${a.token}`), { method: 'DELETE' })).status).toBe(200);
      const form = await raw(url('/runners/delete'), {
        method: 'DELETE',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${b.token}`,
      });
      expect(form.status).toBe(200);
      expect(await runnerRow(a.id)).toBeUndefined();
      expect(await runnerRow(b.id)).toBeUndefined();
    });

    it('400 without a token, 403 with a token that is not a runner token', async () => {
      const none = await raw(url('/runners/delete'), { method: 'DELETE' });
      expect(none.status).toBe(400);
      expect(none.json).toEqual({ message: '400 (Bad request) "token" not given' });
      for (const token of ['nope', s.registrationToken, project.runners_token]) {
        const r = await runnerJson(url('/runners/delete'), 'DELETE', { token });
        expect(r.status).toBe(403);
        expect(r.json).toEqual({ message: '403 Forbidden' });
      }
    });

    it('POST is no route, as in GitLab (DELETE only): 404 and the runner stays', async () => {
      const runner = await newRunner();
      expect((await runnerJson(url('/runners/delete'), 'POST', { token: runner.token })).status).toBe(404);
      expect(await runnerRow(runner.id)).toBeDefined();
    });
  });

  describe('verify probe: PUT /builds/-1', () => {
    it('404 for a live runner token, 403 for a removed or unknown one', async () => {
      const runner = (await runnerJson(url('/runners/register.json'), 'POST', { token: s.registrationToken })).json;
      const alive = await runnerJson(url('/builds/-1'), 'PUT', { token: runner.token });
      expect(alive.status).toBe(404);
      expect(alive.json).toEqual({ message: '404 Not found' });
      await runnerJson(url('/runners/delete'), 'DELETE', { token: runner.token });
      expect((await runnerJson(url('/builds/-1'), 'PUT', { token: runner.token })).status).toBe(403);
      expect((await runnerJson(url('/builds/-1'), 'PUT', { token: 'unknown' })).status).toBe(403);
      expect((await raw(url('/builds/-1'), { method: 'PUT', headers: { 'user-agent': RUNNER_UA } })).status).toBe(403);
    });
  });
});
