// POST /api/v3/sim/builds/:id/retry: GitLab's retry. A finished build (success,
// failed, canceled) gets a new pending build with its project, name, stage, ref, commands,
// variables, tags and options; the old one stays as it was. A pending or running build answers 409.
// On both stores (backends.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { BuildView } from '../../contract/control.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { control, runnerJson } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close());

  const BODY = {
    name: 'rspec',
    stage: 'verify',
    ref: 'feature/x',
    sha: 'abcdef0123456789',
    commands: 'bundle install\nbundle exec rspec',
    repo_url: 'file:///srv/repo.git',
    variables: [
      { key: 'RAILS_ENV', value: 'test' },
      { key: 'SECRET', value: 's3cr3t', public: false },
    ],
    tag_list: ['docker', 'linux'],
    options: { artifacts: { paths: ['coverage/'], expire_in: '1 week' }, image: 'ruby:2.3' },
    timeout: 600,
  };

  async function finished(status: 'success' | 'failed'): Promise<BuildView> {
    const project = await createProject(s, `retry-${status}`);
    const runner = await registerRunner(s, project.runners_token, { tag_list: 'docker,linux' });
    const created = (await createBuild(s, project.id, BODY)) as BuildView;
    const taken = await requestBuild(s, runner.token);
    expect(taken.status).toBe(201);
    expect(taken.body.id).toBe(created.id);
    expect((await runnerJson(`${s.url}/ci/api/v1/builds/${created.id}`, 'PUT', { token: runner.token, state: status })).status).toBe(200);
    return (await control(s, `/builds/${created.id}`)).body as BuildView;
  }

  describe('POST /builds/:id/retry', () => {
    it('a failed build: 201 with a new pending build copying what defines it; the old one unchanged', async () => {
      const old = await finished('failed');
      expect(old.status).toBe('failed');
      const r = await control(s, `/builds/${old.id}/retry`, { method: 'POST' });
      expect(r.status).toBe(201);
      expect(r.headers.get('content-type')).toBe('application/json');
      const retried = r.body as BuildView;
      expect(retried.id).toBeGreaterThan(old.id);
      expect(retried).toMatchObject({
        status: 'pending',
        runner_id: null,
        project_id: old.project_id,
        name: 'rspec',
        stage: 'verify',
        ref: 'feature/x',
        sha: old.sha,
        commands: BODY.commands,
        repo_url: BODY.repo_url,
        variables: [
          { key: 'RAILS_ENV', value: 'test', public: true },
          { key: 'SECRET', value: 's3cr3t', public: false },
        ],
        tag_list: ['docker', 'linux'],
        options: BODY.options,
        timeout: 600,
        trace_length: 0,
        artifacts: null,
        started_at: null,
        finished_at: null,
        duration: null,
      });
      // A new build has its own token: the old build's token must not reach the new one's trace.
      expect(retried.token).not.toBe(old.token);
      const after = (await control(s, `/builds/${old.id}`)).body as BuildView;
      expect(after).toEqual(old);
      const listed = (await control(s, `/builds?project_id=${old.project_id}`)).body as BuildView[];
      expect(listed.map((b) => [b.id, b.status])).toEqual([
        [retried.id, 'pending'],
        [old.id, 'failed'],
      ]);
    });

    it('success and canceled builds can be retried too, more than once; the new build is dispatched like any other', async () => {
      const ok = await finished('success');
      const first = await control(s, `/builds/${ok.id}/retry`, { method: 'POST' });
      const second = await control(s, `/builds/${ok.id}/retry`, { method: 'POST' });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.body.id).toBeGreaterThan(first.body.id);

      const project = await createProject(s, 'retry-canceled');
      const pending = (await createBuild(s, project.id, { name: 'deploy' })) as BuildView;
      expect((await control(s, `/builds/${pending.id}/cancel`, { method: 'POST' })).status).toBe(200);
      const again = await control(s, `/builds/${pending.id}/retry`, { method: 'POST' });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ status: 'pending', name: 'deploy', project_id: project.id });

      const runner = await registerRunner(s, project.runners_token);
      const taken = await requestBuild(s, runner.token);
      expect(taken.status).toBe(201);
      expect(taken.body.id).toBe(again.body.id);
    });

    it('a pending or running build: 409 with a message saying why; no build is created', async () => {
      const project = await createProject(s, 'retry-active');
      const pending = (await createBuild(s, project.id)) as BuildView;
      const before = ((await control(s, '/builds?limit=1000')).body as BuildView[]).length;
      const r1 = await control(s, `/builds/${pending.id}/retry`, { method: 'POST' });
      expect(r1.status).toBe(409);
      expect(r1.body).toEqual({ message: '409 Conflict - build is pending; only a finished build (success, failed, canceled) can be retried' });

      const runner = await registerRunner(s, project.runners_token);
      expect((await requestBuild(s, runner.token)).status).toBe(201);
      const r2 = await control(s, `/builds/${pending.id}/retry`, { method: 'POST' });
      expect(r2.status).toBe(409);
      expect(r2.body.message).toMatch(/build is running/);
      expect(((await control(s, '/builds?limit=1000')).body as BuildView[]).length).toBe(before);
    });

    it('unknown build 404, bad id 400, no token 401, all as {"message"}', async () => {
      const missing = await control(s, '/builds/999999/retry', { method: 'POST' });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: '404 Build Not Found' });
      const bad = await control(s, '/builds/abc/retry', { method: 'POST' });
      expect(bad.status).toBe(400);
      expect(typeof bad.body.message).toBe('string');
      const anon = await runnerJson(`${s.url}/api/v3/sim/builds/1/retry`, 'POST', {});
      expect(anon.status).toBe(401);
    });
  });
});
