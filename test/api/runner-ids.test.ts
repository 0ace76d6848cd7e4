// A deleted runner's id is never given to another: builds still name it, and the runner that
// inherited the id could finish them (found by the model-based test).
import { afterEach, expect, test } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { http, RUNNER_UA } from '../helpers/http.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer | undefined;
  afterEach(async () => s?.close());

  test('a runner registered after the newest one was deleted gets a new id, and cannot touch the deleted one\'s build', async () => {
    s = await startServer();
    const project = await createProject(s);
    await createBuild(s, project.id);
    const a = await registerRunner(s);
    const taken = await requestBuild(s, a.token);
    expect(taken.status).toBe(201);
    expect((await http(`${s.url}/api/v3/sim/runners/${a.id}`, { method: 'DELETE', token: s.adminToken })).status).toBe(204);

    const c = await registerRunner(s);
    expect(c.id).not.toBe(a.id);
    const put = await http(`${s.url}/ci/api/v1/builds/${taken.body.id}.json`, {
      method: 'PUT',
      json: { token: c.token, state: 'success' },
      headers: { 'user-agent': RUNNER_UA },
    });
    expect(put.status).toBe(404);
    // Deleting a runner fails the builds it was running (they could never finish); the new runner's
    // "success" changed nothing.
    const build = await http(`${s.url}/api/v3/sim/builds/${taken.body.id}`, { token: s.adminToken });
    expect(build.body.status).toBe('failed');

    // Across a restart, too: the sequence lives in the database.
    const dataDir = s.dataDir;
    await s.close({ keepData: true });
    s = await startServer({ dataDir });
    const d = await registerRunner(s);
    expect(d.id).toBeGreaterThan(c.id);
  });
});
