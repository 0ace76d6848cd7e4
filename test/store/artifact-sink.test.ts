// An upload that fails while its file write is still in the thread pool (the client went away, the
// limit was crossed) must not close the file's descriptor under that write: the number can be reused
// at once by another open (the database's file, another upload), and the late write would land there.
// The write is held back here by wrapping node's fs.writev so the failure arrives while it is pending.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, expect, test } from 'vitest';
import { ArtifactStore } from '../../server/store/files/artifacts.ts';

const realWritev = fs.writev;
const realClose = fs.close;
afterEach(() => {
  fs.writev = realWritev;
  fs.close = realClose;
});

test('a failed upload closes its file only after the write in flight has returned', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-sink-'));
  const store = new ArtifactStore(dir, dir, { fsync: false, maxBytes: 64 * 2 ** 20 });
  const events: string[] = [];
  let writeFd = -1;
  let releaseWrite!: () => void;
  const writeHeld = new Promise<void>((resolve) => (releaseWrite = resolve));
  fs.writev = ((fd: number, bufs: NodeJS.ArrayBufferView[], cb: (err: Error | null, n: number) => void) => {
    writeFd = fd;
    events.push('writev start');
    realWritev(fd, bufs, (err, n) => {
      void writeHeld.then(() => {
        events.push('writev done');
        cb(err, n);
      });
    });
  }) as typeof fs.writev;
  fs.close = ((fd: number, cb?: (err: NodeJS.ErrnoException | null) => void) => {
    if (fd === writeFd) events.push('close');
    return realClose(fd, cb);
  }) as typeof fs.close;

  // 512 KiB (two write batches' worth) and then the source fails, as a client that disconnects.
  const source = new Readable({ read() {} });
  source.push(Buffer.alloc(512 * 1024, 1));
  const outcome = store.stage(source).then(() => 'stored', (err: Error) => err.message);
  await new Promise((r) => setTimeout(r, 20));
  expect(events).toEqual(['writev start']);
  source.destroy(new Error('client went away'));
  await new Promise((r) => setTimeout(r, 20));
  expect(events).toEqual(['writev start']); // not closed while the write is pending
  releaseWrite();
  expect(await outcome).toBe('client went away');
  await new Promise((r) => setTimeout(r, 20));
  expect(events).toEqual(['writev start', 'writev done', 'close']);
  expect(fs.readdirSync(dir)).toEqual([]); // the temp file is gone
  fs.rmSync(dir, { recursive: true, force: true });
});

// The sink takes chunks (calls their callbacks) while a write is in flight, so a write can fail with
// no callback of the source's waiting on it: the upload must fail then and there, not be acknowledged.
test('a write that fails while the sink holds no callback fails the upload, closes the file and removes it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-sink-'));
  const store = new ArtifactStore(dir, dir, { fsync: false, maxBytes: 64 * 2 ** 20 });
  let writeFd = -1;
  const closed: number[] = [];
  fs.writev = ((fd: number, _bufs: NodeJS.ArrayBufferView[], cb: (err: Error | null, n: number) => void) => {
    writeFd = fd;
    setTimeout(() => cb(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }), 0), 10);
  }) as typeof fs.writev;
  fs.close = ((fd: number, cb?: (err: NodeJS.ErrnoException | null) => void) => {
    closed.push(fd);
    return realClose(fd, cb);
  }) as typeof fs.close;
  // One batch's worth and a little more, then the source stays open: no callback is held when the write fails.
  const source = new Readable({ read() {} });
  source.push(Buffer.alloc(256 * 1024, 1));
  source.push(Buffer.alloc(1024, 2));
  const outcome = await store.stage(source).then(() => 'stored', (err: Error) => err.message);
  expect(outcome).toMatch(/no space left|ENOSPC|Insufficient Storage|disk/i);
  expect(closed).toContain(writeFd);
  expect(fs.readdirSync(dir)).toEqual([]);
  source.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
});
