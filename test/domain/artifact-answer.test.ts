// An upload's answer is the build as that upload stored it. storeArtifacts awaits the removal of the
// archive it replaces; an archive uploaded with `expire_in: 0` has expired by then, and the expiry
// job may erase it inside that await. The answer used to be read after it, so a 201 could come back
// without artifacts_file (the model test caught it under load). Here the job's sweep runs exactly
// inside that await: on SQLite everything before it is synchronous, so the order is certain.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

it('an upload that expires at once is still the upload’s answer, then the sweep erases it', async () => {
  const project = await createProject(s);
  await createBuild(s, project.id);
  const runner = await registerRunner(s);
  const taken = await requestBuild(s, runner.token);
  expect(taken.status).toBe(201);
  const id = (taken.body as { id: number }).id;
  const builds = s.server.ctx.domain.builds;
  const stage = () => builds.stageArtifacts(Readable.from([Buffer.alloc(8192, 7)]));

  await builds.storeArtifacts(id, await stage(), { filename: 'first.zip', expire_at: null });
  const second = builds.storeArtifacts(id, await stage(), { filename: 'second.zip', expire_at: Date.now() - 1 });
  // storeArtifacts is now awaiting the first archive's removal; the sweep runs meanwhile.
  expect(builds.expireArtifacts(Date.now())).toBe(1);
  const answer = await second;
  expect(answer.artifacts_filename).toBe('second.zip');
  expect(answer.artifacts_size).toBe(8192);
  expect((await builds.byId(id))!.artifacts_key).toBeNull();
});
