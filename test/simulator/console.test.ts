// The runner console and the fleet endpoints of the app API: each console step answers the raw
// request and response it made (a provoked 416 included); fleets start, report and stop.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';

const hdr = (list: [string, string][], name: string) => list.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];

function smallZip(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('console upload\n'), 'out/hello.txt');
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

describe('runner console', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());
  const api = (p: string, o: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app/sim${p}`, { token: s.adminToken, ...o });
  const post = (p: string, json: unknown = {}) => api(p, { json });

  it('needs the admin token', async () => {
    expect((await http(`${s.url}/api/app/sim/console`)).status).toBe(401);
    expect((await http(`${s.url}/api/app/sim/fleet`, { token: 'wrong' })).status).toBe(401);
  });

  it('walks a build by hand and shows every raw exchange, including a provoked 416', async () => {
    const early = await post('/console/request-build');
    expect(early.status).toBe(409);
    expect(early.body).toEqual({ message: '409 Conflict - no runner yet: register first (or give a runner_token)' });
    const reg = await post('/console/register', { description: 'by hand' });
    expect(reg.status).toBe(200);
    expect(reg.body.request).toMatchObject({ method: 'POST', url: `${s.url}/ci/api/v1/runners/register.json` });
    expect(JSON.parse(reg.body.request.body.text)).toMatchObject({ token: s.registrationToken, description: 'by hand', run_untagged: true });
    expect(reg.body.response.status).toBe(201);
    expect(reg.body.state.runner_token).toBe(JSON.parse(reg.body.response.body.text).token);

    const empty = await post('/console/request-build');
    expect(empty.body.response.status).toBe(204);
    expect(hdr(empty.body.response.headers, 'x-gitlab-last-update')).toBeDefined();

    const project = await createProject(s);
    await createBuild(s, project.id, { commands: 'echo hi' });
    const got = await post('/console/request-build');
    expect(got.body.response.status).toBe(201);
    const build = JSON.parse(got.body.response.body.text);
    expect(build.commands).toBe('echo hi');
    expect(got.body.state).toMatchObject({ build_id: build.id, build_token: build.token, trace_length: 0 });

    const part1 = await post('/console/trace', { body: 'hello\n' });
    expect(part1.body.request.headers).toContainEqual(['Content-Range', '0-6']);
    expect(part1.body.request.headers).toContainEqual(['Build-Token', build.token]);
    expect(part1.body.request.body.text).toBe('hello\n');
    expect(part1.body.response.status).toBe(202);
    expect(hdr(part1.body.response.headers, 'range')).toBe('0-6');
    expect(part1.body.state.trace_length).toBe(6);

    // An edited, stale Content-Range: the server refuses it and says where the trace ends.
    const stale = await post('/console/trace', { body: 'again\n', content_range: '2-8' });
    expect(stale.body.request.headers).toContainEqual(['Content-Range', '2-8']);
    expect(stale.body.response.status).toBe(416);
    expect(hdr(stale.body.response.headers, 'range')).toBe('0-6');
    expect(JSON.parse(stale.body.response.body.text).message).toMatch(/416/);

    const part2 = await post('/console/trace', { body: 'world ✓\n' });
    expect(part2.body.request.headers).toContainEqual(['Content-Range', `6-${6 + Buffer.byteLength('world ✓\n')}`]);
    expect(part2.body.response.status).toBe(202);

    const zip = await smallZip();
    const up = await post('/console/upload', { content_base64: zip.toString('base64'), filename: 'by-hand.zip', expire_in: '1 week' });
    expect(up.body.request.url).toBe(`${s.url}/ci/api/v1/builds/${build.id}/artifacts?expire_in=1+week`);
    expect(up.body.request.headers).toContainEqual(['Transfer-Encoding', 'chunked']);
    expect(hdr(up.body.request.headers, 'content-type')).toMatch(/^multipart\/form-data; boundary=/);
    expect(up.body.response.status).toBe(201);
    expect(JSON.parse(up.body.response.body.text).artifacts_file).toEqual({ filename: 'by-hand.zip', size: zip.length });

    const down = await post('/console/download');
    expect(down.body.request.headers).toContainEqual(['User-Agent', 'Go-http-client/1.1']);
    expect(down.body.response.status).toBe(200);
    expect(Buffer.from(down.body.response.body.base64, 'base64').equals(zip)).toBe(true);

    const fin = await post('/console/update', { state: 'success', trace: 'hello\nworld ✓\n' });
    expect(fin.body.request.url).toBe(`${s.url}/ci/api/v1/builds/${build.id}.json`);
    expect(JSON.parse(fin.body.request.body.text)).toMatchObject({ state: 'success', trace: 'hello\nworld ✓\n' });
    expect(fin.body.response.status).toBe(200);
    const trace = await http(`${s.url}/api/v3/sim/builds/${build.id}/trace`, { token: s.adminToken });
    expect(trace.raw.toString()).toBe('hello\nworld ✓\n');

    const del = await post('/console/delete-artifacts');
    expect(del.body.request.method).toBe('DELETE');
    expect(del.body.response.status).toBe(200);
    expect((await post('/console/download')).body.response.status).toBe(404);

    const gone = await post('/console/unregister');
    expect(gone.body.request).toMatchObject({ method: 'DELETE', url: `${s.url}/ci/api/v1/runners/delete` });
    expect(gone.body.response.status).toBe(200);
    expect(gone.body.state.runner_token).toBeNull();

    // Every console step is in the journal under the runner "console".
    const j = await api('/journal?runner=console&limit=100');
    expect(j.body.entries.map((e: { status: number }) => e.status)).toEqual([201, 204, 201, 202, 416, 202, 201, 200, 200, 200, 404, 200]);
  });

  it('uploads a file sent as multipart, and reports an unreachable target as no response', async () => {
    const reg = await post('/console/register');
    expect(reg.body.response.status).toBe(201);
    const project = await createProject(s, 'multi');
    await createBuild(s, project.id);
    expect((await post('/console/request-build')).body.response.status).toBe(201);
    const bytes = crypto.randomBytes(3000);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'blob.bin');
    const up = await api('/console/upload-file', { method: 'POST', body: form });
    expect(up.status).toBe(200);
    expect(up.body.response.status).toBe(201);
    expect(JSON.parse(up.body.response.body.text).artifacts_file).toEqual({ filename: 'blob.bin', size: 3000 });
    expect((await api('/console/upload-file', { method: 'POST', body: new FormData() })).status).toBe(400);
    expect((await post('/console/upload', { content_base64: '***' })).status).toBe(400);

    await post('/console/use-token', { runner_token: 'x', target_url: 'http://127.0.0.1:9' });
    const none = await post('/console/request-build');
    expect(none.status).toBe(200);
    expect(none.body.response).toBeNull();
    expect(none.body.error).toMatch(/ECONNREFUSED|connect/);
    expect((await post('/console/use-token', { runner_token: 'x', target_url: 'ftp://x' })).status).toBe(400);
  });
});

describe('fleet endpoints', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());
  const api = (p: string, o: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app/sim${p}`, { token: s.adminToken, ...o });

  it('starts a fleet, shows each runner’s state and the throughput, and stops it', async () => {
    expect((await api('/fleet')).body).toMatchObject({ state: 'idle', runners: [] });
    // Slow traces: the fleet is surely still busy when it is stopped.
    const start = await api('/fleet', { json: { runners: 3, builds: 30, seed: 5, behaviour: { trace_kb: 4, part_kb: 0.5, update_ms: 100, poll_ms: 50, artifact_kb: 1 } } });
    expect(start.status).toBe(201);
    expect(start.body.state).toBe('running');
    let st = start.body;
    for (let i = 0; i < 50 && !st.runners.some((r: { state: string }) => r.state === 'running'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      st = (await api('/fleet')).body;
    }
    const busy = st.runners.find((r: { state: string }) => r.state === 'running');
    expect(busy.build_id).toBeGreaterThan(0);
    expect(busy.detail).toMatch(/^running build \d+/);
    const tp = await api('/fleet/throughput?minutes=1&step_s=10');
    expect(tp.status).toBe(200);
    expect(tp.body.t).toHaveLength(tp.body.builds_per_min.length);
    expect(tp.body.requests_per_s.reduce((a: number, b: number) => a + b, 0)).toBeGreaterThan(0);
    expect((await api('/fleet/throughput?minutes=0')).status).toBe(400);

    const stopped = await api('/fleet/stop', { method: 'POST' });
    expect(stopped.status).toBe(200);
    expect(stopped.body.state).toBe('finished');
    expect(stopped.body.message).toBe('stopped');
    expect(stopped.body.totals.builds_done).toBeLessThan(30);
    expect(stopped.body.runners.every((r: { state: string }) => r.state === 'stopped')).toBe(true);
    expect(stopped.body.protocol_broken).toBe(false);
    // Builds interrupted by the stop were reported failed, not left running.
    const running = await http(`${s.url}/api/v3/sim/builds?status=running`, { token: s.adminToken });
    expect(running.body).toEqual([]);
  });

  it('refuses bad forms with 400 and a field name', async () => {
    const r = await api('/fleet', { json: { runners: 0 } });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/\/runners/);
    expect((await api('/fleet', { json: { target_url: 'not a url', registration_token: 'x' } })).status).toBe(400);
    const noToken = await api('/fleet', { json: { target_url: 'http://127.0.0.1:9' } });
    expect(noToken.status).toBe(400);
    expect(noToken.body.message).toMatch(/registration_token/);
  });
});
