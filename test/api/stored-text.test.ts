// The rules the PostgreSQL store forces on input, applied at the API so both stores answer alike:
// - no stored text may hold U+0000 (PostgreSQL's text and jsonb cannot): a runner's description,
//   tags and `info` on register, poll and PUT, and a project's or build's text on the control API
//   are refused with 400 {"message"} before anything is written; what is not stored (an `info` key
//   GitLab does not copy, a trace, which is a file) is not refused;
// - numbers PostgreSQL's integer columns cannot hold (a build or project timeout past 32 bits, or
//   with a fraction) are refused by the control API's schema rather than stored on SQLite only.
// Run on both stores (backends.ts): the same answers whichever store is behind the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import type { RunnerView } from '../../contract/control.ts';
import { control, INFO, multipart, raw, runnerJson, runningBuild } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  const url = (p: string) => `${s.url}/ci/api/v1${p}`;
  const NUL = '\u0000';

  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close());

  const runners = async () => (await control(s, '/runners')).body as RunnerView[];

  /** A 400 whose JSON message names the field. */
  function expectRefused(r: { status: number; json?: unknown; body?: unknown }, field: string) {
    expect(r.status).toBe(400);
    const body = (r.json ?? r.body) as { message?: unknown };
    expect(body.message).toBe(`400 (Bad request) "${field}" must not contain the NUL character (\\u0000)`);
  }

  describe('U+0000 in what the runner API stores', () => {
    it('register: a NUL in the description, a tag or a copied info key is a 400, in JSON, form and multipart bodies, and no runner is made', async () => {
      const before = (await runners()).length;
      const token = s.registrationToken;
      expectRefused(await runnerJson(url('/runners/register.json'), 'POST', { token, description: `a${NUL}b`, info: INFO }), 'description');
      expectRefused(await runnerJson(url('/runners/register.json'), 'POST', { token, tag_list: ['ok', `t${NUL}`] }), 'tag_list.1');
      expectRefused(await runnerJson(url('/runners/register.json'), 'POST', { token, info: { ...INFO, version: `1.0${NUL}` } }), 'info.version');
      const form = await raw(url('/runners/register'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}&tag_list=a%2C+b%00c`,
      });
      expectRefused(form, 'tag_list.1');
      const mp = multipart([{ name: 'token', value: token }, { name: 'info[platform]', value: `li${NUL}nux` }]);
      expectRefused(await raw(url('/runners/register'), { method: 'POST', headers: { 'content-type': mp.contentType }, body: mp.body }), 'info.platform');
      // The same 400 for a token that is not one: the answer says nothing about the token.
      expectRefused(await runnerJson(url('/runners/register.json'), 'POST', { token: 'not-a-registration-token', description: NUL }), 'description');
      expect((await runners()).length).toBe(before);
      // What GitLab does not copy from `info` is not stored, and not refused.
      const ok = await runnerJson(url('/runners/register.json'), 'POST', { token, description: 'fine', info: { ...INFO, features: { [`x${NUL}`]: true }, other: NUL } });
      expect(ok.status).toBe(201);
      expect((await runners()).length).toBe(before + 1);
    });

    it('poll: a NUL in a copied info key is a 400 after authentication, and the stored info is kept', async () => {
      const runner = await registerRunner(s, s.registrationToken, { info: INFO });
      const r = await runnerJson(url('/builds/register.json'), 'POST', { token: runner.token, info: { ...INFO, revision: `ab${NUL}` } });
      expectRefused(r, 'info.revision');
      const row = (await runners()).find((x) => x.id === runner.id)!;
      expect(row.revision).toBe(INFO.revision);
      // A wrong token is still a 403 first (GitLab's order: authenticate, then anything else).
      const wrong = await runnerJson(url('/builds/register.json'), 'POST', { token: 'nope', info: { version: NUL } });
      expect(wrong.status).toBe(403);
      // And the same poll without the NUL goes on as ever (no build: 204 for a real runner's User-Agent).
      expect((await runnerJson(url('/builds/register.json'), 'POST', { token: runner.token, info: INFO })).status).toBe(204);
    });

    it('PUT builds/:id: a NUL in a copied info key is a 400 and the build stays running; a NUL in the trace (a file) is kept', async () => {
      const { runner, build } = await runningBuild(s, {}, 'put-nul');
      const put = (body: Record<string, unknown>) => runnerJson(url(`/builds/${build.id}.json`), 'PUT', { token: runner.token, ...body });
      expectRefused(await put({ state: 'success', info: { ...INFO, executor: `sh${NUL}` } }), 'info.executor');
      expect((await control(s, `/builds/${build.id}`)).body.status).toBe('running');
      expect((await put({ state: 'success', trace: `line 1${NUL}line 2\n`, info: INFO })).status).toBe(200);
      const trace = await raw(`${s.url}/api/v3/sim/builds/${build.id}/trace`, { headers: { 'private-token': s.adminToken } });
      expect(trace.raw.toString('utf8')).toContain(`line 1${NUL}line 2`);
      expect((await control(s, `/builds/${build.id}`)).body.status).toBe('success');
    });
  });

  describe('U+0000 in what the control API stores', () => {
    it('a project name with a NUL is a 400, and no project is made', async () => {
      const before = ((await control(s, '/projects')).body as unknown[]).length;
      expectRefused(await control(s, '/projects', { method: 'POST', json: { name: `p${NUL}` } }), 'name');
      expect(((await control(s, '/projects')).body as unknown[]).length).toBe(before);
    });

    it('a build with a NUL in any text it stores (name, commands, a variable, a tag, an options key or value at any depth) is a 400, and none is made', async () => {
      const project = await createProject(s, 'nul-builds');
      const cases: [Record<string, unknown>, string][] = [
        [{ name: `n${NUL}` }, 'name'],
        [{ ref: NUL }, 'ref'],
        [{ commands: `echo 1\n${NUL}` }, 'commands'],
        [{ repo_url: `https://x.invalid/${NUL}` }, 'repo_url'],
        [{ variables: [{ key: 'A', value: `v${NUL}` }] }, 'variables.0.value'],
        [{ variables: { [`K${NUL}`]: 'v' } }, 'variables.0.key'],
        [{ tag_list: ['docker', `gpu${NUL}`] }, 'tag_list.1'],
        [{ options: { image: 'ruby', cache: { paths: ['a', `b${NUL}`] } } }, 'options.cache.paths.1'],
        [{ options: { [`k${NUL}`]: 1 } }, `options.k${NUL}`],
        [{ count: 3, stage: `s${NUL}` }, 'stage'],
      ];
      for (const [body, field] of cases) {
        const r = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: body });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect((r.body as { message: string }).message).toBe(`400 (Bad request) "${field}" must not contain the NUL character (\\u0000)`);
      }
      expect(((await control(s, `/builds?project_id=${project.id}`)).body as unknown[]).length).toBe(0);
      // The same build without the NUL is made.
      await createBuild(s, project.id, { options: { image: 'ruby', cache: { paths: ['a', 'b'] } } });
      expect(((await control(s, `/builds?project_id=${project.id}`)).body as unknown[]).length).toBe(1);
    });
  });

  describe('numbers PostgreSQL cannot store', () => {
    it('a build timeout or project build_timeout past 32 bits, with a fraction, or out of range is a 400, as are fractional or unsafe list bounds and ids; the bounds themselves are kept', async () => {
      const project = await createProject(s, 'timeouts');
      for (const timeout of [2 ** 31, 2 ** 31 - 1, 1.5, 0, 7 * 86400 + 1, -1]) {
        const r = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: { timeout } });
        expect(r.status, `timeout ${timeout}`).toBe(400);
        const p = await control(s, '/projects', { method: 'POST', json: { name: 'p', build_timeout: timeout } });
        expect(p.status, `build_timeout ${timeout}`).toBe(400);
      }
      // Query numbers that reach an integer parameter: a fraction or past 2^53 is a 400, not a driver's error.
      for (const q of ['limit=2.5', 'before_id=1.5', 'project_id=9007199254740993', 'runner_id=-1', 'limit=1e400']) {
        expect((await control(s, `/builds?${q}`)).status, q).toBe(400);
      }
      expect((await control(s, `/projects/${'9'.repeat(16)}`)).status).toBe(400);
      for (const timeout of [1, 7 * 86400]) {
        const b = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: { timeout } });
        expect(b.status).toBe(201);
        expect(b.body.timeout).toBe(timeout);
        const p = await control(s, '/projects', { method: 'POST', json: { name: 'p', build_timeout: timeout } });
        expect(p.status).toBe(201);
        expect(p.body.build_timeout).toBe(timeout);
      }
    });
  });
});
