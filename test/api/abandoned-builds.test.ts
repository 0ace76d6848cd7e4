// A build whose runner died mid-build: the control API says when it was last heard of, an admin may
// cancel or fail it (and a runner that comes back hears what GitLab 8.17 answers for a build no longer
// running: 404 on its update, the new Build-Status on a trace part), deleting its runner fails it.
// Also: a new build's depends_on must name existing builds of its project. On both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import type { BuildView } from '../../contract/control.ts';
import { control, patchTrace, runnerJson, runningBuild, RUNNER_UA, raw } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s?.close());

  const view = async (id: number) => (await control(s, `/builds/${id}`)).body as unknown as BuildView;
  const at = (iso: string | null) => (iso === null ? NaN : Date.parse(iso));

  describe('when a running build was last heard of', () => {
    it('is its start at first, then the last trace part; null once finished; the detail names its project', async () => {
      const { project, build } = await runningBuild(s, {}, 'heard');
      const id = build.id as number;
      const first = await view(id);
      expect(first.status).toBe('running');
      expect(at(first.last_update_at)).toBeGreaterThanOrEqual(at(first.started_at));
      expect(first.project_name).toBe(project.name);
      // The list carries no project name (one lookup per row), the detail does.
      const listed = ((await control(s, `/builds?project_id=${project.id}`)).body as unknown as BuildView[]).find((b) => b.id === id)!;
      expect(listed.project_name).toBeUndefined();
      expect(at(listed.last_update_at)).toBe(at(first.last_update_at));

      const before = await waitFor('the clock to move past the last update', () => Date.now() > at(first.last_update_at) + 5 && Date.now());
      expect((await patchTrace(s, id, { token: build.token as string, range: '0-5', body: 'hello' })).status).toBe(202);
      expect(at((await view(id)).last_update_at)).toBeGreaterThanOrEqual(before);

      expect((await control(s, `/builds/${id}/cancel`, { method: 'POST' })).status).toBe(200);
      expect((await view(id)).last_update_at).toBeNull();
    });
  });

  describe('cancel and fail an abandoned build', () => {
    it('fail: running → failed; the runner that comes back hears 404 on its update and Build-Status: failed on its trace', async () => {
      const { runner, build } = await runningBuild(s, {}, 'fail-me');
      const id = build.id as number;
      const failed = await control(s, `/builds/${id}/fail`, { method: 'POST' });
      expect(failed.status).toBe(200);
      expect((failed.body as unknown as BuildView).status).toBe('failed');
      expect((await view(id)).finished_at).not.toBeNull();

      const put = await runnerJson(`${s.url}/ci/api/v1/builds/${id}.json`, 'PUT', { token: runner.token, state: 'success', trace: 'done' });
      expect(put.status).toBe(404);
      const part = await patchTrace(s, id, { token: build.token as string, range: '0-2', body: 'hi' });
      expect(part.status).toBe(202);
      expect(part.headers['build-status']).toBe('failed');
      expect((await view(id)).status).toBe('failed');

      const again = await control(s, `/builds/${id}/fail`, { method: 'POST' });
      expect(again.status).toBe(409);
      expect(String((again.body as { message: string }).message)).toMatch(/only a running build can be failed/);
    });

    it('fail refuses a pending build (cancel it instead) and an unknown one', async () => {
      const project = await createProject(s, 'pending-fail');
      const pending = (await createBuild(s, project.id)) as { id: number };
      const r = await control(s, `/builds/${pending.id}/fail`, { method: 'POST' });
      expect(r.status).toBe(409);
      expect(String((r.body as { message: string }).message)).toMatch(/cancel a pending one/);
      expect((await view(pending.id)).status).toBe('pending');
      expect((await control(s, '/builds/999999/fail', { method: 'POST' })).status).toBe(404);
    });

    it('cancel: the runner that comes back hears 404 on its update and Build-Status: canceled on its trace', async () => {
      const { runner, build } = await runningBuild(s, {}, 'cancel-me');
      const id = build.id as number;
      expect((await control(s, `/builds/${id}/cancel`, { method: 'POST' })).status).toBe(200);
      expect((await runnerJson(`${s.url}/ci/api/v1/builds/${id}.json`, 'PUT', { token: runner.token, state: 'success' })).status).toBe(404);
      expect((await patchTrace(s, id, { token: build.token as string, range: '0-2', body: 'hi' })).headers['build-status']).toBe('canceled');
    });
  });

  describe('deleting a runner fails the builds it was running', () => {
    it('through the control API: its running build fails, the project’s pending build stays for other runners', async () => {
      const { project, runner, build } = await runningBuild(s, {}, 'orphans');
      const waiting = (await createBuild(s, project.id)) as { id: number };
      expect((await control(s, `/runners/${runner.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await view(build.id as number)).status).toBe('failed');
      expect((await view(waiting.id)).status).toBe('pending');
    });

    it('through the runner’s own unregister (DELETE runners/delete)', async () => {
      const { runner, build } = await runningBuild(s, {}, 'unregister');
      const other = await registerRunner(s, s.registrationToken);
      const r = await raw(`${s.url}/ci/api/v1/runners/delete`, { method: 'DELETE', headers: { 'user-agent': RUNNER_UA, 'content-type': 'application/json' }, body: JSON.stringify({ token: runner.token }) });
      expect(r.status).toBe(200);
      expect((await view(build.id as number)).status).toBe('failed');
      // Another runner's builds are not touched.
      expect((await control(s, `/runners/${other.id}`, { method: 'DELETE' })).status).toBe(204);
    });
  });

  describe('depends_on', () => {
    it('naming a build that does not exist, or another project’s, is a 400 saying what to name; existing builds of the project are accepted', async () => {
      const project = await createProject(s, 'deps');
      const other = await createProject(s, 'deps-other');
      const first = (await createBuild(s, project.id, { stage: 'build' })) as { id: number };
      const foreign = (await createBuild(s, other.id)) as { id: number };

      const missing = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: { stage: 'test', depends_on: [first.id, 987654] } });
      expect(missing.status).toBe(400);
      expect((missing.body as { message: string }).message).toBe('400 (Bad request) depends_on names build 987654 that does not exist; name existing builds of this project');

      const across = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: { depends_on: [foreign.id] } });
      expect(across.status).toBe(400);
      expect((across.body as { message: string }).message).toMatch(new RegExp(`build ${foreign.id} of another project; name builds of project ${project.id}`));

      const ok = await control(s, `/projects/${project.id}/builds`, { method: 'POST', json: { stage: 'test', depends_on: [first.id] } });
      expect(ok.status).toBe(201);
      expect((ok.body as unknown as BuildView).depends_on).toEqual([first.id]);
    });
  });
});
