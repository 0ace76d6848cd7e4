// Disk trouble made real: the data dir lives on its own small tmpfs, filled up mid-upload (ENOSPC
// from the kernel, not a fault hook), and parts of it bind-mounted read-only (EROFS). The server
// must answer 507/503 with a message, keep its store whole, and recover once space is back.
// Mounting needs root and a sandbox that allows it; where it is refused those tests are skipped and say so.
// A second real limit needs no privilege and always runs: the server as a child under `prlimit --fsize`
// (RLIMIT_FSIZE, what `ulimit -f` sets), where the kernel refuses writes past the size with EFBIG.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { json, patchTrace, request, spawnServer, uploadArtifact, type Reply } from './support.ts';
import { databaseOf } from '../../server/store/index.ts';

const MOUNT_MB = 8;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-disk-'));
const mnt = path.join(root, 'fs');
const mount = (...args: string[]) => execFileSync('mount', args, { stdio: 'pipe' });
const umount = (dir: string) => execFileSync('umount', [dir], { stdio: 'pipe' });

// Probed at load (to decide what to skip) and undone at once: the real mount happens in beforeAll,
// so a run that filters these tests out leaves nothing mounted.
let canMount = false;
try {
  fs.mkdirSync(mnt);
  mount('-t', 'tmpfs', '-o', `size=${MOUNT_MB}m`, 'tmpfs', mnt);
  umount(mnt);
  canMount = true;
} catch (err) {
  console.log(`[disk] cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}): disk-trouble tests skipped`);
}

const dataDir = path.join(mnt, 'data');
const hog = path.join(mnt, 'hog');
let s: TestServer;
let runnerToken = '';
let projectId = 0;
const admin = () => ({ 'private-token': s.adminToken });
const bound: string[] = [];

/** Fills the file system to within `leave` bytes of full (the kernel says when it is full). */
function fill(leave = 0) {
  const fd = fs.openSync(hog, 'a');
  const block = Buffer.alloc(64 * 1024, 0x68);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
  }
  try {
    for (;;) fs.writeSync(fd, block, 0, 512);
  } catch {
    /* full to the last block */
  }
  fs.closeSync(fd);
  if (leave > 0) fs.truncateSync(hog, Math.max(0, fs.statSync(hog).size - leave));
}
const free = () => fs.rmSync(hog, { force: true });

/** Makes one folder of the data dir read-only through a read-only bind mount over it. */
function readOnly(dir: string) {
  mount('--bind', dir, dir);
  mount('-o', 'remount,bind,ro', dir);
  bound.push(dir);
}
function writable(dir: string) {
  umount(dir);
  bound.splice(bound.indexOf(dir), 1);
}

function expectStorageError(r: Reply, codes: number[]) {
  expect(codes, `status ${r.status}: ${r.body.toString()}`).toContain(r.status);
  const body = JSON.parse(r.body.toString()) as { message: string };
  expect(body.message).toMatch(/free some space|read-only|writable|raise it/);
}

async function takeBuild() {
  const c = await json(`${s.url}/api/v3/sim/projects/${projectId}/builds`, 'POST', {}, admin());
  expect(c.status).toBe(201);
  const r = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runnerToken });
  expect(r.status).toBe(201);
  return r.body as { id: number; token: string };
}
const traceOf = async (id: number) => (await request(`${s.url}/api/v3/sim/builds/${id}/trace`, { headers: admin() })).body;

describe.skipIf(!canMount)('disk trouble on a real small file system', () => {
  beforeAll(async () => {
    mount('-t', 'tmpfs', '-o', `size=${MOUNT_MB}m`, 'tmpfs', mnt);
    s = await startServer({ dataDir, maxArtifactBytes: 64, logLevel: process.env.DISK_LOG ?? 'silent' });
    projectId = (await json(`${s.url}/api/v3/sim/projects`, 'POST', { name: 'disk' }, admin())).body.id;
    runnerToken = (await json(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: s.registrationToken })).body.token;
  });
  afterAll(async () => {
    const quietly = (dir: string) => {
      try {
        umount(dir);
      } catch {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      }
    };
    for (const dir of bound.reverse()) quietly(dir);
    await s?.close().catch(() => undefined);
    if (canMount) quietly(mnt);
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('the disk fills up mid-upload: 507, no temp file, no artifact; after freeing space the upload works', async () => {
    const b = await takeBuild();
    const before = crypto.randomBytes(100_000);
    expect((await uploadArtifact(s.url, b.id, b.token, before).done).status).toBe(201);
    // Bigger than the whole file system: the disk fills while the body streams in.
    const big = crypto.randomBytes((MOUNT_MB + 2) * 1024 * 1024);
    const r = await uploadArtifact(s.url, b.id, b.token, big, { chunk: 64 * 1024 }).done;
    expectStorageError(r, [507]);
    expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);
    // The archive acknowledged before is still the one served, whole.
    const got = await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } });
    expect(got.status).toBe(200);
    expect(got.body.equals(before)).toBe(true);
    const again = crypto.randomBytes(2 * 1024 * 1024);
    expect((await uploadArtifact(s.url, b.id, b.token, again).done).status).toBe(201);
    expect((await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } })).body.equals(again)).toBe(true);
  });

  test('a full disk refuses a trace part with 507 and keeps the trace a clean prefix; the part goes in once space is back', async () => {
    const b = await takeBuild();
    const first = Buffer.from('first part\n');
    expect((await patchTrace(s.url, b.id, b.token, 0, first)).status).toBe(202);
    // A few KiB left: a 64 KiB part gets partly written by the kernel before ENOSPC.
    fill(4096);
    const part = crypto.randomBytes(64 * 1024);
    const r = await patchTrace(s.url, b.id, b.token, first.length, part);
    expectStorageError(r, [507]);
    free();
    expect((await traceOf(b.id)).equals(first)).toBe(true);
    const retry = await patchTrace(s.url, b.id, b.token, first.length, part);
    expect(retry.status).toBe(202);
    expect(retry.headers.range).toBe(`0-${first.length + part.length}`);
    expect((await traceOf(b.id)).equals(Buffer.concat([first, part]))).toBe(true);
  });

  test('a full disk during database writes and a final PUT: 507 or success, never 500, and nothing half-written', async () => {
    const b = await takeBuild();
    fill();
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await request(`${s.url}/api/v3/sim/projects/${projectId}/builds`, {
        method: 'POST',
        headers: { ...admin(), 'content-type': 'application/json' },
        body: JSON.stringify({ count: 50, commands: 'x'.repeat(2000) }),
      });
      statuses.push(c.status);
      // SQLite (WebAssembly) cannot tell a full disk from a failing one: 507 or 503, both with what to do.
      if (c.status !== 201) expectStorageError(c, [507, 503]);
    }
    const put = await request(`${s.url}/ci/api/v1/builds/${b.id}.json`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: runnerToken, state: 'success', trace: 'final trace '.repeat(2000) }),
    });
    if (put.status !== 200) expectStorageError(put, [507, 503]);
    expect(statuses.some((x) => x !== 201) || put.status !== 200, `the full disk was never noticed: ${statuses.join(',')} / ${put.status}`).toBe(true);
    free();
    const view = await json(`${s.url}/api/v3/sim/builds/${b.id}`, 'GET', undefined, admin());
    expect(view.status).toBe(200);
    // The trace is the old one or the whole new one; a refused PUT changed nothing.
    const trace = (await traceOf(b.id)).toString();
    if (put.status === 200) expect(trace).toBe('final trace '.repeat(2000));
    else expect(view.body.status).toBe('running');
    expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);
  });

  test('read-only parts of the data dir: 503 with a message; writable again, everything works', async () => {
    const b = await takeBuild();
    readOnly(path.join(dataDir, 'tmp'));
    const up = await uploadArtifact(s.url, b.id, b.token, crypto.randomBytes(300_000)).done;
    expectStorageError(up, [503]);
    readOnly(path.join(dataDir, 'traces'));
    const t = await patchTrace(s.url, b.id, b.token, 0, Buffer.from('hello'));
    expectStorageError(t, [503]);
    writable(path.join(dataDir, 'traces'));
    writable(path.join(dataDir, 'tmp'));
    expect((await patchTrace(s.url, b.id, b.token, 0, Buffer.from('hello'))).status).toBe(202);
    const content = crypto.randomBytes(300_000);
    expect((await uploadArtifact(s.url, b.id, b.token, content).done).status).toBe(201);
    expect((await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } })).body.equals(content)).toBe(true);
  });

  test('after all that, the store restarts on the same data dir whole', async () => {
    // What must survive (durations tick on running builds, so they are left out; an archive's file
    // listing is derived later by the archive_listing job, which may finish on either side of the restart).
    type V = { id: number; status: string; trace_length: number; artifacts: { files?: unknown } | null; runner_id: unknown };
    const lasting = (bs: V[]) =>
      bs.map((b) => ({
        id: b.id,
        status: b.status,
        trace_length: b.trace_length,
        artifacts: b.artifacts && { ...b.artifacts, files: undefined, files_total: undefined, files_truncated: undefined },
        runner_id: b.runner_id,
      }));
    const listed = lasting((await json(`${s.url}/api/v3/sim/builds?project_id=${projectId}&limit=1000`, 'GET', undefined, admin())).body as V[]);
    await s.close({ keepData: true });
    s = await startServer({ dataDir, maxArtifactBytes: 64, logLevel: process.env.DISK_LOG ?? 'silent' });
    expect(databaseOf(s.server.ctx.store).get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
    const again = lasting((await json(`${s.url}/api/v3/sim/builds?project_id=${projectId}&limit=1000`, 'GET', undefined, admin())).body as V[]);
    expect(again).toEqual(listed);
    const b = await takeBuild();
    expect((await patchTrace(s.url, b.id, b.token, 0, Buffer.from('after restart'))).status).toBe(202);
  });
});

test.skipIf(canMount)('disk trouble needs a mountable tmpfs (skipped here: see the log line above)', () => {
  fs.rmSync(root, { recursive: true, force: true });
});

let hasPrlimit = false;
try {
  execFileSync('prlimit', ['--version'], { stdio: 'pipe' });
  hasPrlimit = true;
} catch {
  console.log('[disk] no prlimit here: the file-size limit test is skipped');
}

test.skipIf(!hasPrlimit)('a file-size limit on the server process (prlimit --fsize): 507, nothing half-stored, the rest works', async () => {
  const FSIZE = 2 * 1024 * 1024;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-fsize-'));
  const adminToken = 'fsize-admin-token-0123456';
  const child = await spawnServer(['--port', '0', '--data-dir', dir, '--admin-token', adminToken, '--registration-token', 'fsize-registration-token', '--max-artifact-mb', '64'], {
    wrap: ['prlimit', `--fsize=${FSIZE}`],
  });
  try {
    const admin = { 'private-token': adminToken };
    const pid = (await json(`${child.url}/api/v3/sim/projects`, 'POST', { name: 'fsize' }, admin)).body.id;
    await json(`${child.url}/api/v3/sim/projects/${pid}/builds`, 'POST', { count: 2 }, admin);
    const rt = (await json(`${child.url}/ci/api/v1/runners/register.json`, 'POST', { token: 'fsize-registration-token' })).body.token;
    const b = (await json(`${child.url}/ci/api/v1/builds/register.json`, 'POST', { token: rt })).body as { id: number; token: string };
    // An archive larger than any file may grow: refused while it streams.
    const big = await uploadArtifact(child.url, b.id, b.token, crypto.randomBytes(FSIZE + 512 * 1024)).done;
    expectStorageError(big, [507]);
    expect(JSON.parse(big.body.toString()).message).toMatch(/ulimit -f/);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    expect((await request(`${child.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } })).status).toBe(404);
    // A trace part that would take the file past the limit: 507, and the trace stays what it was.
    const first = crypto.randomBytes(FSIZE - 1000);
    expect((await patchTrace(child.url, b.id, b.token, 0, first)).status).toBe(202);
    const over = await patchTrace(child.url, b.id, b.token, first.length, crypto.randomBytes(4096));
    expectStorageError(over, [507]);
    const trace = await request(`${child.url}/api/v3/sim/builds/${b.id}/trace`, { headers: admin });
    expect(trace.body.equals(first)).toBe(true);
    // Smaller things still work.
    const small = crypto.randomBytes(100_000);
    expect((await uploadArtifact(child.url, b.id, b.token, small).done).status).toBe(201);
    expect((await request(`${child.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } })).body.equals(small)).toBe(true);
  } finally {
    await child.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
