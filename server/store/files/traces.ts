// Build traces as plain files, one per build, named by the numeric build id only.
// The file is the truth for a trace's length; no database write happens on the append path.
//
// Appends use synchronous writes on purpose: Node runs one callback at a time, so the
// check "start == current length" and the write that follows cannot interleave with a rival
// part for the same build. One writer per build by construction, with no lock to get wrong.
// A 4 KiB write(2) into the page cache costs microseconds, less than a thread-pool round trip.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { PRIVATE_FILE_MODE } from '../../util/private-files.ts';
import type { AppendResult } from '../ports/trace.ts';

const MAX_OPEN = 256;
/**
 * A read up to this size is done at once: opening a read stream costs a few thread-pool round trips
 * (open, read, close), which made a short trace GET cost ~1.6× a build's detail.
 */
const READ_AT_ONCE = 64 * 1024;
/** Up to this size a replace compares the bytes with the trace before it rewrites it (see replace). */
const COMPARE_AT_MOST = 1024 * 1024;

/** Reads into `buf` from `position` until it is full or the file ends; the bytes read. */
function readInto(fd: number, buf: Buffer, position: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = fs.readSync(fd, buf, got, buf.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

export class TraceStore {
  private readonly lengths = new Map<number, number>();
  /** Open append handles of recently written traces, least recently used first. */
  private readonly fds = new Map<number, number>();

  constructor(
    private readonly dir: string,
    private readonly tmpDir: string,
    private readonly opts: { fsync: boolean; maxBytes: number },
  ) {}

  file(buildId: number): string {
    return path.join(this.dir, `${Math.trunc(buildId)}.log`);
  }

  length(buildId: number): number {
    const cached = this.lengths.get(buildId);
    if (cached !== undefined) return cached;
    let size = 0;
    try {
      size = fs.statSync(this.file(buildId)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.lengths.set(buildId, size);
    return size;
  }

  private fd(buildId: number): number {
    let fd = this.fds.get(buildId);
    if (fd !== undefined) {
      this.fds.delete(buildId);
      this.fds.set(buildId, fd);
      return fd;
    }
    if (this.fds.size >= MAX_OPEN) {
      const [oldest, oldFd] = this.fds.entries().next().value as [number, number];
      this.fds.delete(oldest);
      fs.closeSync(oldFd);
    }
    // Read as well as append: replace reads the trace back through it (see holds).
    fd = fs.openSync(this.file(buildId), 'a+', PRIVATE_FILE_MODE);
    this.fds.set(buildId, fd);
    return fd;
  }

  private forget(buildId: number): void {
    const fd = this.fds.get(buildId);
    if (fd !== undefined) {
      this.fds.delete(buildId);
      try {
        fs.closeSync(fd);
      } catch {
        /* already closed */
      }
    }
    this.lengths.delete(buildId);
  }

  /** Appends `bytes` at `start`, which must equal the current length (GitLab's incremental trace rule). */
  append(buildId: number, start: number, bytes: Buffer): AppendResult {
    const length = this.length(buildId);
    if (start !== length) return { ok: false, length, reason: 'range' };
    if (length + bytes.length > this.opts.maxBytes) return { ok: false, length, reason: 'too-large' };
    if (bytes.length === 0) return { ok: true, length };
    const fd = this.fd(buildId);
    let written = 0;
    try {
      while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written);
      if (this.opts.fsync) fs.fdatasyncSync(fd);
    } catch (err) {
      // A short write (disk full) must not leave unacknowledged bytes counted: cut back to the old length.
      try {
        fs.ftruncateSync(fd, length);
      } catch {
        /* the next length() re-reads the file either way */
      }
      this.forget(buildId);
      throw err;
    }
    this.lengths.set(buildId, length + bytes.length);
    return { ok: true, length: length + bytes.length };
  }

  /**
   * Replaces the whole trace atomically (write a temp file, then rename over the old one). A runner's
   * final update sends the whole trace it has just appended part by part (../shared/spec/
   * real-runner-requests.md): when the file already holds exactly those bytes it is left as it is.
   * Creating and renaming a file held the server's thread ~1 ms when other files were being written
   * (open(2) waits on the folder: 4.4-6.9 % of a simulator run's server thread was this replace);
   * reading the trace back through its open handle costs microseconds.
   */
  replace(buildId: number, bytes: Buffer): AppendResult {
    if (bytes.length > this.opts.maxBytes) return { ok: false, length: this.length(buildId), reason: 'too-large' };
    if (this.holds(buildId, bytes)) return { ok: true, length: bytes.length };
    const tmp = path.join(this.tmpDir, `trace-${Math.trunc(buildId)}-${crypto.randomBytes(6).toString('hex')}`);
    try {
      const fd = fs.openSync(tmp, 'w', PRIVATE_FILE_MODE);
      try {
        fs.writeFileSync(fd, bytes);
        if (this.opts.fsync) fs.fdatasyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      this.forget(buildId);
      fs.renameSync(tmp, this.file(buildId));
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    this.lengths.set(buildId, bytes.length);
    return { ok: true, length: bytes.length };
  }

  /** Whether the trace is exactly `bytes`, read through its open handle; not checked (false) without one. */
  private holds(buildId: number, bytes: Buffer): boolean {
    const fd = this.fds.get(buildId);
    if (fd === undefined || bytes.length > COMPARE_AT_MOST || this.lengths.get(buildId) !== bytes.length) return false;
    const current = Buffer.allocUnsafe(bytes.length);
    try {
      // Cut short outside Jobscope: fewer bytes, and the rewrite puts them back.
      if (readInto(fd, current, 0) < current.length) return false;
    } catch {
      return false; // the rewrite says what is wrong, if anything is
    }
    return current.equals(bytes);
  }

  /**
   * The trace from `start` to the length at the time of the call: up to READ_AT_ONCE bytes (a live
   * tail, most whole traces) read here, synchronously as appends are, so the bytes are those of
   * that length; more as a read stream.
   */
  read(buildId: number, start = 0): { body: Buffer | fs.ReadStream | null; length: number } {
    const length = this.length(buildId);
    if (start >= length) return { body: null, length };
    if (length - start > READ_AT_ONCE) return { body: fs.createReadStream(this.file(buildId), { start, end: length - 1 }), length };
    const body = Buffer.allocUnsafe(length - start);
    const fd = fs.openSync(this.file(buildId), 'r');
    let got: number;
    try {
      got = readInto(fd, body, start);
    } finally {
      fs.closeSync(fd);
    }
    // A file cut short behind our back: what it holds, and a length that says so.
    return { body: body.subarray(0, got), length: start + got };
  }

  readAll(buildId: number): Buffer {
    try {
      return fs.readFileSync(this.file(buildId)).subarray(0, this.length(buildId));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
      throw err;
    }
  }

  remove(buildId: number): void {
    this.forget(buildId);
    fs.rmSync(this.file(buildId), { force: true });
  }

  /** Closes cached handles of a build that will not be appended to soon (it finished). */
  release(buildId: number): void {
    const fd = this.fds.get(buildId);
    if (fd !== undefined) {
      this.fds.delete(buildId);
      fs.closeSync(fd);
    }
  }

  close(): void {
    for (const fd of this.fds.values()) {
      try {
        fs.closeSync(fd);
      } catch {
        /* ignore */
      }
    }
    this.fds.clear();
    this.lengths.clear();
  }
}
