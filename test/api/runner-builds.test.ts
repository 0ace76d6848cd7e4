// gitlab-behaviour.md B "POST /builds/register" and "PUT /builds/:id", and the BuildDetails entity typed
// as the Go runner decodes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import type { BuildView } from '../../contract/control.ts';
import { control, INFO, multipart, patchTrace, raw, runnerJson, runningBuild, RUNNER_UA } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  const url = (p: string) => `${s.url}/ci/api/v1${p}`;
  const poll = (token: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    runnerJson(url('/builds/register.json'), 'POST', { info: INFO, token, ...extra }, headers);

  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close());

  /** A fresh project with its own project runner, so tests do not see each other's builds. */
  async function isolated(name: string, runnerExtra: Record<string, unknown> = {}) {
    const project = await createProject(s, name);
    const runner = await registerRunner(s, project.runners_token, runnerExtra);
    return { project, runner };
  }

  describe('POST /builds/register: auth and "no build" answers', () => {
    it('403 (not 400) for a missing or unknown runner token, in any encoding', async () => {
      for (const r of [
        await poll(undefined as unknown as string),
        await runnerJson(url('/builds/register.json'), 'POST', { token: 'unknown' }),
        await raw(url('/builds/register.json'), { method: 'POST', headers: { 'user-agent': RUNNER_UA } }),
        await raw(url('/builds/register'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=nope' }),
      ]) {
        expect(r.status).toBe(403);
        expect(r.json).toEqual({ message: '403 Forbidden' });
      }
    });

    it('204 with an empty body for a runner User-Agent, 404 JSON otherwise; both carry X-GitLab-Last-Update', async () => {
      const { runner } = await isolated('empty');
      const a = await poll(runner.token);
      expect(a.status).toBe(204);
      expect(a.raw.length).toBe(0);
      expect(a.headers['x-gitlab-last-update']).toMatch(/\S/);
      const beta = await poll(runner.token, {}, { 'user-agent': 'gitlab-ci-multi-runner 1.6.0~beta.123.g0a1b2c3 (master; go1.6; linux/amd64)' });
      expect(beta.status).toBe(204);
      for (const ua of ['curl/8.0', 'Go-http-client/1.1', 'gitlab-runner 9.0.0 (9-0-stable; go1.8; linux/amd64)', 'gitlab-ci-multi-runner 1.11']) {
        const r = await poll(runner.token, {}, { 'user-agent': ua });
        expect(r.status, ua).toBe(404);
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.json).toEqual({ message: '404 Not Found' });
        expect(r.headers['x-gitlab-last-update']).toBe(a.headers['x-gitlab-last-update']);
      }
    });

    it('last_update equal to the current value short-circuits with the same header; a new build ticks it so a stale value never hides it', async () => {
      const { project, runner } = await isolated('longpoll');
      const first = await poll(runner.token);
      const v1 = first.headers['x-gitlab-last-update'] as string;
      const cached = await poll(runner.token, { last_update: v1 });
      expect(cached.status).toBe(204);
      expect(cached.headers['x-gitlab-last-update']).toBe(v1);
      // also from the query string and a urlencoded body
      const q = await raw(url(`/builds/register.json?token=${runner.token}&last_update=${encodeURIComponent(v1)}`), { method: 'POST', headers: { 'user-agent': RUNNER_UA } });
      expect([q.status, q.headers['x-gitlab-last-update']]).toEqual([204, v1]);

      const build = await createBuild(s, project.id);
      const got = await poll(runner.token, { last_update: v1 });
      expect(got.status).toBe(201);
      expect(got.json.id).toBe(build.id);
      expect(got.headers['x-gitlab-last-update']).toBeUndefined();
      const after = await poll(runner.token, { last_update: v1 });
      expect(after.status).toBe(204);
      expect(after.headers['x-gitlab-last-update']).not.toBe(v1);
    });

    it('a paused runner gets 404 even with pending builds and a runner User-Agent; resumed, it takes the build', async () => {
      const { project, runner } = await isolated('paused');
      const build = await createBuild(s, project.id);
      expect((await control(s, `/runners/${runner.id}`, { method: 'PATCH', json: { active: false } })).status).toBe(200);
      const r = await poll(runner.token);
      expect(r.status).toBe(404);
      expect(r.json.message).toMatch(/^404 /);
      await control(s, `/runners/${runner.id}`, { method: 'PATCH', json: { active: true } });
      const t = await poll(runner.token);
      expect([t.status, t.json.id]).toEqual([201, build.id]);
    });

    it('reads the runner token from JSON, urlencoded, multipart and the query string alike', async () => {
      const { project, runner } = await isolated('encodings');
      await createBuild(s, project.id, { count: 4 });
      const mp = multipart([{ name: 'token', value: runner.token }]);
      const answers = [
        await poll(runner.token),
        await raw(url('/builds/register'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${runner.token}` }),
        await raw(url('/builds/register'), { method: 'POST', headers: { 'content-type': mp.contentType }, body: mp.body }),
        await raw(url(`/builds/register.json?token=${runner.token}`), { method: 'POST' }),
      ];
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
      expect(new Set(answers.map((a) => a.json.id)).size).toBe(4);
    });
  });

  describe('POST /builds/register: which build a runner gets', () => {
    it('oldest pending first, each exactly once', async () => {
      const { project, runner } = await isolated('fifo');
      const { ids } = (await createBuild(s, project.id, { count: 3 })) as { ids: number[] };
      const got: number[] = [];
      for (let i = 0; i < 3; i++) got.push((await poll(runner.token)).json.id);
      expect(got).toEqual([...ids].sort((a, b) => a - b));
      expect((await poll(runner.token)).status).toBe(204);
      const listed = (await control(s, `/builds?project_id=${project.id}`)).body as BuildView[];
      expect(listed.every((b) => b.status === 'running' && b.runner_id === runner.id && b.started_at)).toBe(true);
    });

    it('a project runner never takes another project’s build; a shared runner takes any project’s with shared runners enabled', async () => {
      const a = await isolated('proj-a');
      const b = await createProject(s, 'proj-b');
      const closed = (await control(s, '/projects', { method: 'POST', json: { name: 'no-shared', shared_runners_enabled: false } })).body;
      const closedRunner = await registerRunner(s, closed.runners_token);
      const bBuild = await createBuild(s, b.id);
      const closedBuild = await createBuild(s, closed.id);
      expect((await poll(a.runner.token)).status).toBe(204);
      const shared = await registerRunner(s);
      // the shared runner drains every shared-enabled project, oldest first, but never `no-shared`
      const taken: number[] = [];
      for (;;) {
        const r = await poll(shared.token);
        if (r.status !== 201) break;
        taken.push(r.json.id);
        expect(r.json.project_id).not.toBe(closed.id);
      }
      expect(taken).toContain(bBuild.id);
      expect(taken).not.toContain(closedBuild.id);
      const own = await poll(closedRunner.token);
      expect([own.status, own.json.id]).toEqual([201, closedBuild.id]);
    });

    it('a shared runner schedules fairly: the project with the fewest builds running on shared runners first, then oldest', async () => {
      const own = await startServer(); // its own instance: no other test's pending builds
      try {
        const busy = await createProject(own, 'busy');
        const quiet = await createProject(own, 'quiet');
        const b = ((await createBuild(own, busy.id, { count: 3 })) as { ids: number[] }).ids;
        const q = ((await createBuild(own, quiet.id, { count: 2 })) as { ids: number[] }).ids;
        const shared = await registerRunner(own);
        const order: number[] = [];
        for (let i = 0; i < 5; i++) {
          const r = await runnerJson(`${own.url}/ci/api/v1/builds/register.json`, 'POST', { token: shared.token });
          order.push(r.json.id);
        }
        // busy#1 (both 0 running, older) → quiet#1 (0 vs 1) → busy#2 (1 vs 1, older) → quiet#2 → busy#3
        expect(order).toEqual([b[0], q[0], b[1], q[1], b[2]]);
      } finally {
        await own.close();
      }
    });

    it('tags: a build is taken only by a runner holding all its tags; untagged builds need run_untagged', async () => {
      const project = await createProject(s, 'tags');
      const plain = await registerRunner(s, project.runners_token);
      const onlyTagged = await registerRunner(s, project.runners_token, { tag_list: 'docker, linux', run_untagged: false });
      const oneTag = await registerRunner(s, project.runners_token, { tag_list: 'docker', run_untagged: true });
      const untagged = await createBuild(s, project.id);
      const tagged = await createBuild(s, project.id, { tag_list: ['docker', 'linux'] });
      // the plain runner cannot take the tagged build
      expect((await poll(onlyTagged.token)).json.id).toBe(tagged.id);
      expect((await poll(onlyTagged.token)).status).toBe(204); // never the untagged one
      const tagged2 = await createBuild(s, project.id, { tag_list: 'docker, linux' });
      expect((await poll(oneTag.token)).json.id).toBe(untagged.id); // docker only: not tagged2
      expect((await poll(oneTag.token)).status).toBe(204);
      expect((await poll(plain.token)).status).toBe(204);
      expect((await poll(onlyTagged.token)).json.id).toBe(tagged2.id);
    });
  });

  describe('BuildDetails', () => {
    it('has every field with the types the Go runner decodes, status running, and no artifacts fields without artifacts', async () => {
      const project = (await control(s, '/projects', { method: 'POST', json: { name: 'Details Project', build_timeout: 1800 } })).body;
      const runner = await registerRunner(s, project.runners_token);
      await createBuild(s, project.id, {
        name: 'rspec',
        stage: 'test',
        ref: 'v1.0',
        tag: true,
        commands: 'echo one\necho two',
        variables: [{ key: 'SECRET', value: 's3', public: false }, { key: 'PLAIN', value: 'p' }],
        options: { artifacts: { paths: ['out/'] } },
      });
      const r = await poll(runner.token);
      expect(r.status).toBe(201);
      expect(r.headers['content-type']).toBe('application/json');
      const b = r.json;
      for (const k of ['id', 'project_id', 'timeout']) expect(Number.isInteger(b[k]), k).toBe(true);
      for (const k of ['tag', 'allow_git_fetch']) expect(typeof b[k], k).toBe('boolean');
      for (const k of ['ref', 'sha', 'status', 'name', 'token', 'stage', 'project_name', 'commands', 'repo_url', 'before_sha']) expect(typeof b[k], k).toBe('string');
      expect(b).toMatchObject({ status: 'running', name: 'rspec', stage: 'test', ref: 'v1.0', tag: true, project_name: 'Details Project', timeout: 1800 });
      expect(b.commands).toBe('echo one\necho two');
      expect(b.sha.length).toBeGreaterThanOrEqual(8);
      expect(b.repo_url).toContain(`gitlab-ci-token:${b.token}@`);
      expect(b.options).toEqual({ artifacts: { paths: ['out/'] } });
      expect(Array.isArray(b.depends_on_builds) && b.depends_on_builds.length === 0).toBe(true);
      expect(Array.isArray(b.credentials)).toBe(true);
      expect('artifacts_file' in b).toBe(false);
      expect('artifacts_expire_at' in b).toBe(false);
      for (const v of b.variables) {
        expect(typeof v.key).toBe('string');
        expect(typeof v.value).toBe('string');
        expect(typeof v.public).toBe('boolean');
      }
      const vars = Object.fromEntries((b.variables as { key: string; value: string; public: boolean }[]).map((v) => [v.key, v]));
      expect(vars.CI_BUILD_ID.value).toBe(String(b.id));
      expect(vars.CI_BUILD_TOKEN).toEqual({ key: 'CI_BUILD_TOKEN', value: b.token, public: false });
      expect(vars.CI_BUILD_REF.value).toBe(b.sha);
      expect(vars.CI_BUILD_REF_NAME.value).toBe('v1.0');
      expect(vars.CI_BUILD_TAG.value).toBe('v1.0');
      expect(vars.CI_BUILD_NAME.value).toBe('rspec');
      expect(vars.CI_BUILD_STAGE.value).toBe('test');
      expect(vars.GITLAB_CI.value).toBe('true');
      expect(vars.SECRET).toEqual({ key: 'SECRET', value: 's3', public: false });
      expect(vars.PLAIN).toEqual({ key: 'PLAIN', value: 'p', public: true });
    });

    it('timeout is the build’s own when set, the project’s build_timeout (default 3600) otherwise', async () => {
      const { project, runner } = await isolated('timeouts');
      await createBuild(s, project.id);
      await createBuild(s, project.id, { timeout: 42 });
      expect((await poll(runner.token)).json.timeout).toBe(3600);
      expect((await poll(runner.token)).json.timeout).toBe(42);
    });
  });

  describe('PUT /builds/:id', () => {
    const put = (id: number | string, body: Record<string, unknown>, suffix = '.json') => runnerJson(url(`/builds/${id}${suffix}`), 'PUT', { info: INFO, ...body });

    it('200 JSON with and without .json; state=running or absent or unknown changes nothing', async () => {
      const { runner, build } = await runningBuild(s, {}, 'put-basic');
      for (const [body, suffix] of [
        [{ state: 'running' }, '.json'],
        [{}, ''],
        [{ state: 'weird' }, '.json'],
        [{ state: 'pending' }, ''],
      ] as const) {
        const r = await put(build.id, { token: runner.token, ...body }, suffix);
        expect(r.status).toBe(200);
        expect(r.headers['content-type']).toBe('application/json');
        expect(r.json.id).toBe(build.id);
      }
      expect((await control(s, `/builds/${build.id}`)).body.status).toBe('running');
    });

    it('403 for a missing or unknown runner token (before the build lookup)', async () => {
      const { build } = await runningBuild(s, {}, 'put-auth');
      expect((await put(build.id, {})).status).toBe(403);
      expect((await put(build.id, { token: 'nope' })).status).toBe(403);
      expect((await put('abc', { token: 'nope' })).status).toBe(403);
      expect((await put(build.id, { token: build.token })).status).toBe(403); // a build token is not a runner token
    });

    it('404 "Not found" for another runner’s build, a build not running, unknown and non-numeric ids', async () => {
      const { project, runner, build } = await runningBuild(s, {}, 'put-404');
      const other = await registerRunner(s, project.runners_token);
      const pending = await createBuild(s, project.id, { tag_list: ['never'] });
      for (const [id, token] of [
        [build.id, other.token],
        [pending.id, runner.token],
        [999999, runner.token],
        ['abc', runner.token],
        ['1e3', runner.token],
        ['-1', runner.token],
      ] as const) {
        const r = await put(id, { token });
        expect(r.status, String(id)).toBe(404);
        expect(r.json).toEqual({ message: '404 Not found' });
      }
    });

    it('trace replaces the whole trace; absent leaves it untouched', async () => {
      const { runner, build } = await runningBuild(s, {}, 'put-trace');
      expect((await patchTrace(s, build.id, { token: build.token, range: '0-11', body: 'from patch\n' })).status).toBe(202);
      await put(build.id, { token: runner.token, state: 'running' });
      expect((await control(s, `/builds/${build.id}/trace`)).raw.toString()).toBe('from patch\n');
      const full = 'the full trace \u001b[32;1mgreen\u001b[0;m ünïcödé\n';
      expect((await put(build.id, { token: runner.token, state: 'running', trace: full })).status).toBe(200);
      expect((await control(s, `/builds/${build.id}/trace`)).raw.toString('utf8')).toBe(full);
      const next = await patchTrace(s, build.id, { token: build.token, range: '0-1', body: 'x' });
      expect(next.status).toBe(416);
      expect(next.headers.range).toBe(`0-${Buffer.byteLength(full)}`);
    });

    it('state=success and state=failed finish the build; later PUTs are 404', async () => {
      for (const state of ['success', 'failed'] as const) {
        const { runner, build } = await runningBuild(s, {}, `put-${state}`);
        const r = await put(build.id, { token: runner.token, state, trace: `done ${state}\n` });
        expect(r.status).toBe(200);
        expect(r.json.status).toBe(state);
        const view = (await control(s, `/builds/${build.id}`)).body;
        expect(view.status).toBe(state);
        expect(view.finished_at).toEqual(expect.any(String));
        expect((await control(s, `/builds/${build.id}/trace`)).raw.toString()).toBe(`done ${state}\n`);
        expect((await put(build.id, { token: runner.token, state: 'running' })).status).toBe(404);
      }
    });

    it('takes state, trace and token from urlencoded, multipart and the query string too', async () => {
      const a = await runningBuild(s, {}, 'put-form');
      const form = await raw(url(`/builds/${a.build.id}`), {
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${a.runner.token}&state=success&trace=${encodeURIComponent('form trace')}`,
      });
      expect([form.status, form.json.status]).toEqual([200, 'success']);
      const b = await runningBuild(s, {}, 'put-multipart');
      const mp = multipart([
        { name: 'token', value: b.runner.token },
        { name: 'state', value: 'failed' },
        { name: 'trace', value: 'multipart trace' },
      ]);
      const multi = await raw(url(`/builds/${b.build.id}.json`), { method: 'PUT', headers: { 'content-type': mp.contentType }, body: mp.body });
      expect([multi.status, multi.json.status]).toEqual([200, 'failed']);
      const c = await runningBuild(s, {}, 'put-query');
      const q = await raw(url(`/builds/${c.build.id}.json?token=${c.runner.token}&state=success`), { method: 'PUT' });
      expect([q.status, q.json.status]).toEqual([200, 'success']);
      expect((await control(s, `/builds/${a.build.id}/trace`)).raw.toString()).toBe('form trace');
      expect((await control(s, `/builds/${b.build.id}/trace`)).raw.toString()).toBe('multipart trace');
    });

    it('a full trace over --max-trace-mb is 413 in every encoding and never stored cut short', async () => {
      const small = await startServer({ maxTraceBytes: 1 / 1024 }); // 1 KiB
      try {
        const { runner, build } = await runningBuild(small, {}, 'put-limit');
        const putUrl = `${small.url}/ci/api/v1/builds/${build.id}.json`;
        const fits = 'f'.repeat(1000);
        const fit = multipart([{ name: 'token', value: runner.token }, { name: 'trace', value: fits }]);
        expect((await raw(putUrl, { method: 'PUT', headers: { 'content-type': fit.contentType }, body: fit.body })).status).toBe(200);
        const big = 'b'.repeat(2000);
        const mp = multipart([{ name: 'token', value: runner.token }, { name: 'trace', value: big }]);
        for (const r of [
          await raw(putUrl, { method: 'PUT', headers: { 'content-type': mp.contentType }, body: mp.body }),
          await raw(putUrl, { method: 'PUT', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${runner.token}&trace=${big}` }),
          await runnerJson(putUrl, 'PUT', { token: runner.token, trace: big }),
        ]) {
          expect(r.status).toBe(413);
          expect(r.json).toEqual({ message: '413 Request Entity Too Large' });
        }
        const trace = await fetch(`${small.url}/api/v3/sim/builds/${build.id}/trace`, { headers: { 'private-token': small.adminToken } });
        expect(await trace.text()).toBe(fits);
      } finally {
        await small.close();
      }
    });

    it('a multipart field over the 1 MiB field limit is 413, never a trace stored cut short with 200', async () => {
      const { runner, build } = await runningBuild(s, {}, 'put-field-limit');
      const mp = multipart([{ name: 'token', value: runner.token }, { name: 'trace', value: 't'.repeat(1024 * 1024 + 1) }]);
      const r = await raw(url(`/builds/${build.id}.json`), { method: 'PUT', headers: { 'content-type': mp.contentType }, body: mp.body });
      expect(r.status).toBe(413);
      expect((await control(s, `/builds/${build.id}`)).body.trace_length).toBe(0);
    });

    it('a canceled build answers 404, which tells the runner to stop', async () => {
      const { runner, build } = await runningBuild(s, {}, 'put-cancel');
      expect((await control(s, `/builds/${build.id}/cancel`, { method: 'POST' })).status).toBe(200);
      expect((await put(build.id, { token: runner.token, state: 'success' })).status).toBe(404);
      expect((await control(s, `/builds/${build.id}`)).body.status).toBe('canceled');
    });
  });
});
