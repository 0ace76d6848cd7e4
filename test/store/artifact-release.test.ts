// The sink gives an upload's chunks back (detaches their ArrayBuffers) once they are on disk, but
// only for a source the route marked as the HTTP parser's own copies, and only whole buffers of a
// size worth it: a caller's buffers, shared or pooled memory and busboy's small lookbehind are
// never emptied. Why it does it at all: server/util/released-buffers.ts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, expect, test } from 'vitest';
import { releaseChunksAfterWrite } from '../../server/util/released-buffers.ts';
import { ArtifactStore } from '../../server/store/files/artifacts.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-release-'));
const store = new ArtifactStore(dir, dir, { fsync: false, maxBytes: 64 * 2 ** 20 });
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** 40 chunks of 64 KiB, each in an ArrayBuffer of its own (as the HTTP parser hands them), plus odd ones. */
function chunks() {
  const whole = Array.from({ length: 40 }, () => crypto.randomBytes(64 * 1024));
  const small = crypto.randomBytes(1024); // own buffer, under the size worth a transfer
  const shared = crypto.randomBytes(128 * 1024);
  const view = shared.subarray(0, 64 * 1024); // a view of part of a buffer: its rest may be someone else's
  const pooled = Buffer.from('pooled bytes from the shared allocation pool');
  return { all: [...whole.slice(0, 20), small, view, pooled, ...whole.slice(20)], whole, small, view, shared, pooled };
}

test('a marked source: every whole chunk of 4 KiB or more is detached after the write, the file holds every byte', async () => {
  const c = chunks();
  const expected = Buffer.concat(c.all); // a copy: the chunks themselves are emptied
  const source = Readable.from(c.all, { objectMode: false });
  releaseChunksAfterWrite(source);
  const staged = await store.stage(source);
  expect(staged.size).toBe(expected.length);
  expect(fs.readFileSync(staged.tmpPath).equals(expected)).toBe(true);
  expect(c.whole.map((b) => b.byteLength)).toEqual(c.whole.map(() => 0));
  expect(c.small.byteLength).toBe(1024);
  expect(c.view.byteLength).toBe(64 * 1024);
  expect(c.shared.byteLength).toBe(128 * 1024);
  expect(c.pooled.toString()).toBe('pooled bytes from the shared allocation pool');
  store.discard(staged);
});

test('an unmarked source keeps all its buffers', async () => {
  const c = chunks();
  const expected = Buffer.concat(c.all);
  const staged = await store.stage(Readable.from(c.all, { objectMode: false }));
  expect(fs.readFileSync(staged.tmpPath).equals(expected)).toBe(true);
  expect(Buffer.concat(c.all).equals(expected)).toBe(true);
  store.discard(staged);
});

test('a marked source that fails mid-upload leaves nothing, and its unwritten chunks are not touched', async () => {
  const c = chunks();
  const source = new Readable({ read() {} });
  releaseChunksAfterWrite(source);
  const outcome = store.stage(source).then(() => 'stored', (err: Error) => err.message);
  source.push(c.whole[0]);
  await new Promise((r) => setImmediate(r));
  source.destroy(new Error('client went away'));
  expect(await outcome).toBe('client went away');
  // Held by the sink's batch (under a write's size), never written, so never given back.
  expect(c.whole[0]!.byteLength).toBe(64 * 1024);
  expect(fs.readdirSync(dir)).toEqual([]);
});
