// What the Runners view reads and does through the control API, as GitLab's admin
// Runners page: every runner with what it sent about itself at register or poll (version, revision,
// platform, architecture), how many builds it was handed, and pause/resume/delete with GitLab's
// consequences for the runner (a paused runner's poll is 404, a deleted one's is 403). On both stores
// (backends.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import type { RunnerView } from '../../contract/control.ts';
import { INFO } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s?.close());

  const control = <T>(path: string, init: Parameters<typeof http>[1] = {}) => http<T>(`${s.url}/api/v3/sim${path}`, { token: s.adminToken, ...init });
  const listed = async (id: number) => (await control<RunnerView[]>('/runners')).body.find((r) => r.id === id);

  describe('runners in the control API', () => {
    it('lists what the runner sent about itself and how many builds it ran', async () => {
      const project = await createProject(s, 'runners-admin');
      const shared = await registerRunner(s, s.registrationToken, { description: 'shared-one', tag_list: 'docker, linux', info: { ...INFO, revision: 'cbfcb5c8' } });
      const mine = await registerRunner(s, project.runners_token, { description: 'project-one' });
      const before = await listed(shared.id);
      expect(before).toMatchObject({ description: 'shared-one', is_shared: true, project_id: null, tag_list: ['docker', 'linux'], version: INFO.version, revision: 'cbfcb5c8', platform: INFO.platform, architecture: INFO.architecture, builds_count: 0 });
      expect(await listed(mine.id)).toMatchObject({ is_shared: false, project_id: project.id, version: null, revision: null, builds_count: 0 });

      for (let i = 0; i < 2; i++) await createBuild(s, project.id, { tag_list: ['docker'] });
      for (let i = 0; i < 2; i++) expect((await requestBuild(s, shared.token)).status).toBe(201);
      await createBuild(s, project.id);
      expect((await requestBuild(s, mine.token)).status).toBe(201);
      expect((await listed(shared.id))?.builds_count).toBe(2);
      expect((await listed(mine.id))?.builds_count).toBe(1);
    });

    it('pause: the runner polls 404 and gets no build; resume: it gets the build; the PATCH answers the runner with its count', async () => {
      const project = await createProject(s, 'pause');
      const r = await registerRunner(s, project.runners_token, { description: 'pausable' });
      const paused = await control<RunnerView>(`/runners/${r.id}`, { method: 'PATCH', json: { active: false } });
      expect(paused.status).toBe(200);
      expect(paused.body).toMatchObject({ id: r.id, active: false, builds_count: 0 });
      const build = await createBuild(s, project.id);
      expect((await requestBuild(s, r.token)).status).toBe(404);
      expect((await control<{ status: string }>(`/builds/${build.id}`)).body.status).toBe('pending');
      const resumed = await control<RunnerView>(`/runners/${r.id}`, { method: 'PATCH', json: { active: true } });
      expect(resumed.body.active).toBe(true);
      const got = await requestBuild(s, r.token);
      expect(got.status).toBe(201);
      expect(got.body.id).toBe(build.id);
      expect((await control<RunnerView>(`/runners/${r.id}`, { method: 'PATCH', json: { active: true } })).body.builds_count).toBe(1);
    });

    it('delete: gone from the list, its polls are 403; a second delete and a bad body are clear 4xx', async () => {
      const r = await registerRunner(s, s.registrationToken, { description: 'doomed' });
      expect((await control(`/runners/${r.id}`, { method: 'DELETE' })).status).toBe(204);
      expect(await listed(r.id)).toBeUndefined();
      expect((await requestBuild(s, r.token)).status).toBe(403);
      const again = await control<{ message: string }>(`/runners/${r.id}`, { method: 'DELETE' });
      expect(again.status).toBe(404);
      expect(again.body.message).toMatch(/Runner/);
      const bad = await control<{ message: string }>(`/runners/${r.id}`, { method: 'PATCH', json: { active: 'yes' } });
      expect(bad.status).toBe(400);
      expect(typeof bad.body.message).toBe('string');
    });
  });
});
