// Traces and artifacts over their configured limits: 413, and nothing of the refused request stored.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import os from 'node:os';
import { json, patchTrace, request, spawnServer, uploadArtifact } from './support.ts';

// Fractional MiB: 64 KiB of trace, 256 KiB of artifacts.
const TRACE_LIMIT = 64 * 1024;
const ARTIFACT_LIMIT = 256 * 1024;
let s: TestServer;
let runnerToken: string;
let projectId: number;

beforeAll(async () => {
  s = await startServer({ maxTraceBytes: '0.0625', maxArtifactBytes: '0.25' });
  const admin = { 'private-token': s.adminToken };
  projectId = (await json(`${s.url}/api/v3/sim/projects`, 'POST', { name: 'limits' }, admin)).body.id;
  runnerToken = (await json(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: s.registrationToken })).body.token;
});
afterAll(() => s?.close());

async function takeBuild() {
  await json(`${s.url}/api/v3/sim/projects/${projectId}/builds`, 'POST', {}, { 'private-token': s.adminToken });
  const r = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runnerToken });
  expect(r.status).toBe(201);
  return r.body as { id: number; token: string };
}
const traceOf = async (id: number) => (await request(`${s.url}/api/v3/sim/builds/${id}/trace`, { headers: { 'private-token': s.adminToken } })).body;
const tmpFiles = () => fs.readdirSync(path.join(s.dataDir, 'tmp'));

test('fractional --max-trace-mb / --max-artifact-mb are honoured to the byte', () => {
  expect(s.config.maxTraceBytes).toBe(TRACE_LIMIT);
  expect(s.config.maxArtifactBytes).toBe(ARTIFACT_LIMIT);
});

test('a trace part that would pass the limit gets 413 and the trace keeps its length', async () => {
  const b = await takeBuild();
  const first = crypto.randomBytes(TRACE_LIMIT - 100);
  expect((await patchTrace(s.url, b.id, b.token, 0, first)).status).toBe(202);
  const over = await patchTrace(s.url, b.id, b.token, first.length, crypto.randomBytes(101));
  expect(over.status).toBe(413);
  expect(JSON.parse(over.body.toString()).message).toMatch(/413/);
  expect((await traceOf(b.id)).equals(first)).toBe(true);
  // Exactly up to the limit is still fine.
  const last = crypto.randomBytes(100);
  expect((await patchTrace(s.url, b.id, b.token, first.length, last)).status).toBe(202);
  expect((await traceOf(b.id)).length).toBe(TRACE_LIMIT);
  // A single part far above the limit (also above the body limit of the route) is refused whole.
  const b2 = await takeBuild();
  const huge = await patchTrace(s.url, b2.id, b2.token, 0, crypto.randomBytes(TRACE_LIMIT * 4));
  expect(huge.status).toBe(413);
  expect((await traceOf(b2.id)).length).toBe(0);
});

test('a full trace over the limit in the final PUT gets 413 and the old trace stays', async () => {
  const b = await takeBuild();
  const part = Buffer.from('kept part\n');
  expect((await patchTrace(s.url, b.id, b.token, 0, part)).status).toBe(202);
  const put = await json(`${s.url}/ci/api/v1/builds/${b.id}.json`, 'PUT', { token: runnerToken, state: 'running', trace: 'x'.repeat(TRACE_LIMIT + 1) });
  expect(put.status).toBe(413);
  expect((await traceOf(b.id)).equals(part)).toBe(true);
  expect(tmpFiles()).toEqual([]);
});

test('an artifact over the limit gets 413 whether Content-Length says so or not, and nothing is stored', async () => {
  const b = await takeBuild();
  // Chunked, as the runner sends it: the server only finds out while streaming.
  const chunked = await uploadArtifact(s.url, b.id, b.token, crypto.randomBytes(ARTIFACT_LIMIT + 4096), { chunk: 16 * 1024 }).done.catch((e: Error) => e);
  // Answered while the body still streams in; the lingering close lets the answer through, not a reset.
  expect(chunked instanceof Error ? chunked.message : chunked.status).toBe(413);
  // With a Content-Length far above the limit: refused up front.
  const boundary = 'limitsboundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.zip"\r\n\r\n`),
    crypto.randomBytes(ARTIFACT_LIMIT * 3),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const sized = await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'build-token': b.token },
    body,
  }).catch((e: Error) => e);
  expect(sized instanceof Error ? sized.message : sized.status).toBe(413);

  const get = await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } });
  expect(get.status).toBe(404);
  const view = await json(`${s.url}/api/v3/sim/builds/${b.id}`, 'GET', undefined, { 'private-token': s.adminToken });
  expect(view.body.artifacts).toBeNull();
  expect(fs.readdirSync(path.join(s.dataDir, 'artifacts'))).toEqual([]);
  expect(tmpFiles()).toEqual([]);

  // GitLab accepted `size < max`: exactly the limit is refused too, one byte less comes back whole.
  const exact = await uploadArtifact(s.url, b.id, b.token, crypto.randomBytes(ARTIFACT_LIMIT)).done.catch((e: Error) => e);
  if (!(exact instanceof Error)) expect(exact.status).toBe(413);
  expect(tmpFiles()).toEqual([]);
  const ok = crypto.randomBytes(ARTIFACT_LIMIT - 1);
  const okUp = await uploadArtifact(s.url, b.id, b.token, ok).done;
  expect(okUp.status, okUp.body.toString()).toBe(201);
  expect((await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } })).body.equals(ok)).toBe(true);
  expect(tmpFiles()).toEqual([]);
});

test('the limits given as serve flags (--max-trace-mb, --max-artifact-mb) are the ones enforced', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-limits-cli-'));
  const child = await spawnServer(['--port', '0', '--data-dir', dir, '--admin-token', 'limits-admin-token-0123', '--registration-token', 'limits-registration-token', '--max-trace-mb', '0.0625', '--max-artifact-mb', '0.25']);
  try {
    const admin = { 'private-token': 'limits-admin-token-0123' };
    const pid = (await json(`${child.url}/api/v3/sim/projects`, 'POST', { name: 'cli' }, admin)).body.id;
    await json(`${child.url}/api/v3/sim/projects/${pid}/builds`, 'POST', {}, admin);
    const rt = (await json(`${child.url}/ci/api/v1/runners/register.json`, 'POST', { token: 'limits-registration-token' })).body.token;
    const b = (await json(`${child.url}/ci/api/v1/builds/register.json`, 'POST', { token: rt })).body;
    expect((await patchTrace(child.url, b.id, b.token, 0, crypto.randomBytes(TRACE_LIMIT + 1))).status).toBe(413);
    expect((await patchTrace(child.url, b.id, b.token, 0, crypto.randomBytes(TRACE_LIMIT))).status).toBe(202);
    const big = await uploadArtifact(child.url, b.id, b.token, crypto.randomBytes(ARTIFACT_LIMIT + 1)).done.catch((e: Error) => e);
    if (!(big instanceof Error)) expect(big.status).toBe(413);
    expect((await uploadArtifact(child.url, b.id, b.token, crypto.randomBytes(ARTIFACT_LIMIT - 1)).done).status).toBe(201);
  } finally {
    await child.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
