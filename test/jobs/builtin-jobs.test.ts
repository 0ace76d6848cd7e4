// Jobscope's own background jobs each do their work, observed from outside through the runner API
// and the control API: stuck builds fail, expired artifacts go, silent runners go offline, and an
// uploaded zip's file list appears on the build.
import fs from 'node:fs';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http, RUNNER_UA } from '../helpers/http.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { metrics } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Build } from '../../server/store/ports/build.ts';

let s: TestServer;
let projectId: number;
const finished: Build[] = [];

beforeAll(async () => {
  s = await startServer({ stuckBuildsEveryMs: 100, artifactExpiryEveryMs: 100, runnerContactEveryMs: 100, runnerOfflineAfterMs: 1500 });
  s.server.ctx.events.on('build:finished', (b) => finished.push(b));
  projectId = (await createProject(s, 'jobs')).id;
});
afterAll(async () => {
  await s.close();
});

/** A new build taken by a new runner: it is `running`, as the runner API needs for uploads. */
async function runningBuild(extra: Record<string, unknown> = {}) {
  const created = await createBuild(s, projectId, extra);
  const runner = await registerRunner(s);
  const taken = await requestBuild(s, runner.token);
  expect(taken.status).toBe(201);
  expect(taken.body.id).toBe(created.id);
  return { id: created.id as number, token: taken.body.token as string, runnerToken: runner.token };
}

function zip(entries: Record<string, Buffer>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) z.addBuffer(data, name);
  z.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
  });
}

async function upload(buildId: number, token: string, bytes: Buffer, query = '') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), 'artifacts.zip');
  const res = await fetch(`${s.url}/ci/api/v1/builds/${buildId}/artifacts${query}`, { method: 'POST', body: form, headers: { 'BUILD-TOKEN': token, 'user-agent': RUNNER_UA } });
  expect(res.status).toBe(201);
}

const build = async (id: number) => (await http(`${s.url}/api/v3/sim/builds/${id}`, { token: s.adminToken })).body;

describe("Jobscope's own jobs", () => {
  it('lists its queues, served by its own pool', async () => {
    const m = await metrics(s.url, s.adminToken, 'compound_metrics');
    for (const q of ['stuck_builds', 'artifact_expiry', 'runner_contact', 'archive_listing']) expect(m.queues[q]).toBeDefined();
    expect(m.processes[0].queues).toEqual(expect.arrayContaining(['stuck_builds', 'artifact_expiry', 'runner_contact', 'archive_listing']));
  });

  it('a build running past its timeout is failed; its runner sees Build-Status: failed', async () => {
    const b = await runningBuild({ timeout: 1 });
    const patch = (start: number, body: string) =>
      http(`${s.url}/ci/api/v1/builds/${b.id}/trace.txt`, { method: 'PATCH', body, headers: { 'BUILD-TOKEN': b.token, 'Content-Range': `${start}-${start + body.length}`, 'content-type': 'text/plain' } });
    const first = await patch(0, 'working\n');
    expect(first.status).toBe(202);
    expect(first.headers.get('build-status')).toBe('running');
    await waitFor('build failed by the stuck-build job', async () => (await build(b.id)).status === 'failed', 6000, 50);
    const later = await patch(8, 'still here\n');
    expect(later.status).toBe(202);
    expect(later.headers.get('build-status')).toBe('failed');
    expect(finished.map((f) => [f.id, f.status])).toContainEqual([b.id, 'failed']);
    // A build within its timeout is left alone.
    const fresh = await runningBuild();
    expect((await build(fresh.id)).status).toBe('running');
    expect((await metrics(s.url, s.adminToken, 'job_stats')).jobs.processed).toBeGreaterThan(0);
  });

  it('artifacts past expire_in are removed: download 404, file gone', async () => {
    const b = await runningBuild();
    await upload(b.id, b.token, await zip({ 'a.txt': Buffer.from('hello') }), '?expire_in=1s');
    const key = s.server.ctx.store.builds.byId(b.id)!.artifacts_key!;
    const file = s.server.ctx.store.artifacts.pathOf(key);
    expect(fs.existsSync(file)).toBe(true);
    const dl = await http(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'BUILD-TOKEN': b.token } });
    expect(dl.status).toBe(200);
    await waitFor('artifacts expired', async () => (await build(b.id)).artifacts === null, 6000, 50);
    expect((await http(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'BUILD-TOKEN': b.token } })).status).toBe(404);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a runner without contact is marked offline; contact brings it back', async () => {
    const r = await registerRunner(s);
    const view = async () => ((await http(`${s.url}/api/v3/sim/runners`, { token: s.adminToken })).body as { id: number; online: boolean }[]).find((x) => x.id === r.id)!;
    expect((await view()).online).toBe(true);
    await waitFor('runner offline', async () => (await view()).online === false, 6000, 50);
    await requestBuild(s, r.token); // a poll is contact
    expect((await view()).online).toBe(true);
  });

  it("an uploaded zip's file list appears on the build; a non-zip gets an empty list", async () => {
    const b = await runningBuild();
    await upload(b.id, b.token, await zip({ 'report.txt': Buffer.from('12345'), 'out/bin/app': Buffer.alloc(1000, 7), 'out/readme.md': Buffer.from('') }));
    const files = await waitFor('artifacts listing', async () => (await build(b.id)).artifacts?.files ?? undefined, 6000, 50);
    expect(files).toEqual([
      { name: 'report.txt', size: 5 },
      { name: 'out/bin/app', size: 1000 },
      { name: 'out/readme.md', size: 0 },
    ]);
    const other = await runningBuild();
    await upload(other.id, other.token, Buffer.from('this is not a zip archive at all'));
    expect(await waitFor('empty listing', async () => (await build(other.id)).artifacts?.files ?? undefined, 6000, 50)).toEqual([]);
  });
});
