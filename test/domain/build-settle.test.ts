// The one way a build leaves running (server/domain/builds.ts settle): the runner's final PUT, a
// cancel from the control API and the stuck-builds sweep each commit the status, release the trace's
// open file and emit build:finished once, with the build as stored. On both stores (test/api/
// backends.ts): each keeps the trace's file open between parts (on PostgreSQL checked before each
// write, as another instance may have written or replaced it: store/pg/traces-files.ts).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { http } from '../helpers/http.ts';
import type { Build } from '../../server/store/ports/build.ts';
import { eachBackend } from '../api/backends.ts';
import { openHandles } from '../helpers/open-files.ts';

eachBackend((startServer) => {
  let s: TestServer;
  let finished: Build[] = [];
  // One server: each test's build is finished by the end of it, so the next one's sweep finds only its own.
  beforeAll(async () => {
    s = await startServer();
    s.server.ctx.events.on('build:finished', (b) => finished.push(b));
  });
  afterAll(() => s.close());
  beforeEach(() => {
    finished = [];
  });

  describe('finishing a build releases its trace and tells everyone once', () => {
    /** A build taken by a runner that has streamed one trace part (its trace file is then held open). */
    async function streaming() {
      const project = await createProject(s);
      await createBuild(s, project.id);
      const runner = await registerRunner(s);
      const taken = await requestBuild(s, runner.token);
      expect(taken.status).toBe(201);
      const build = taken.body as { id: number; token: string };
      const part = await http(`${s.url}/ci/api/v1/builds/${build.id}/trace.txt`, {
        method: 'PATCH',
        headers: { 'content-range': '0-4', 'build-token': build.token, 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(part.status).toBe(202);
      const file = path.join(s.server.ctx.store.layout.tracesDir, `${build.id}.log`);
      expect(openHandles(file)).toBe(1);
      return { id: build.id, runnerToken: runner.token, file };
    }

    it('the runner’s final PUT', async () => {
      const b = await streaming();
      const r = await http(`${s.url}/ci/api/v1/builds/${b.id}`, { method: 'PUT', json: { token: b.runnerToken, state: 'success' } });
      expect(r.status).toBe(200);
      expect(openHandles(b.file)).toBe(0);
      expect(finished.map((f) => [f.id, f.status])).toEqual([[b.id, 'success']]);
    });

    it('a cancel from the control API', async () => {
      const b = await streaming();
      const r = await http(`${s.url}/api/v3/sim/builds/${b.id}/cancel`, { method: 'POST', token: s.adminToken });
      expect(r.status).toBe(200);
      expect(openHandles(b.file)).toBe(0);
      expect(finished.map((f) => [f.id, f.status])).toEqual([[b.id, 'canceled']]);
      // Canceling again changes nothing and tells no one.
      expect((await http(`${s.url}/api/v3/sim/builds/${b.id}/cancel`, { method: 'POST', token: s.adminToken })).status).toBe(409);
      expect(finished).toHaveLength(1);
    });

    it('the stuck-builds sweep (what its job calls), past the project’s timeout', async () => {
      const b = await streaming();
      const builds = s.server.ctx.domain.builds;
      expect(await builds.failStuck(Date.now())).toBe(0);
      expect(await builds.failStuck(Date.now() + 3601 * 1000)).toBe(1);
      expect(openHandles(b.file)).toBe(0);
      expect(finished.map((f) => [f.id, f.status])).toEqual([[b.id, 'failed']]);
      // The runner's next part still lands (the file reopens) and hears the build failed.
      const token = (await builds.byId(b.id))!.token;
      const part = await http(`${s.url}/ci/api/v1/builds/${b.id}/trace.txt`, {
        method: 'PATCH',
        headers: { 'content-range': '5-7', 'build-token': token, 'content-type': 'text/plain' },
        body: ' again',
      });
      expect(part.status).toBe(202);
      expect(part.headers.get('build-status')).toBe('failed');
      expect(fs.readFileSync(b.file, 'utf8')).toBe('hello again');
    });
  });
});
