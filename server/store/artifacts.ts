// Artifact archives as files named by a server-made key, never by the client's file name
// (that name is kept in the database and only ever sent back in Content-Disposition).
// An upload streams into tmp/, is renamed into artifacts/ once complete, and only then is the
// database pointed at it: a reader sees the whole archive or none. A crash between the rename and
// the database update leaves an unreferenced file, which `sweep` removes at the next start.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { storageError } from '../http/errors.ts';

const STREAM_CHUNK = 1024 * 1024;

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`413 Request Entity Too Large`);
  }
}

export interface StagedUpload {
  tmpPath: string;
  size: number;
}

export class ArtifactStore {
  constructor(
    private readonly dir: string,
    private readonly tmpDir: string,
    private readonly opts: { fsync: boolean; maxBytes: number },
  ) {}

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  pathOf(key: string): string {
    if (!/^[0-9]+-[0-9a-f]{16}\.bin$/.test(key)) throw new Error(`bad artifact key ${key}`);
    return path.join(this.dir, key);
  }

  /** Streams `source` into a temp file, refusing more than the limit. Nothing is visible yet. */
  async stage(source: Readable): Promise<StagedUpload> {
    const tmpPath = path.join(this.tmpDir, `upload-${crypto.randomBytes(8).toString('hex')}`);
    let size = 0;
    const max = this.opts.maxBytes;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        // GitLab accepted only `artifacts.size < max_artifacts_size`: exactly the limit is too large.
        if (size >= max) done(new TooLargeError(max));
        else done(null, chunk);
      },
    });
    // Opened here, not lazily by the stream: a source that fails before a lazy open completes would
    // have the file created after the cleanup below ran, leaving a stray temp file per refused upload.
    let fd: number;
    try {
      fd = fs.openSync(tmpPath, 'wx');
    } catch (err) {
      throw storageError(err) ?? err;
    }
    // A deeper write buffer lets the stream gather the parser's small chunks into one writev.
    const out = fs.createWriteStream(tmpPath, { fd, highWaterMark: STREAM_CHUNK });
    try {
      await pipeline(source, counter, out);
      if (this.opts.fsync) {
        const fd = fs.openSync(tmpPath, 'r');
        try {
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      }
    } catch (err) {
      fs.rmSync(tmpPath, { force: true });
      throw storageError(err) ?? err;
    }
    return { tmpPath, size };
  }

  /** Moves a staged upload into place under a fresh key and returns the key. */
  commit(buildId: number, staged: StagedUpload): string {
    const key = `${Math.trunc(buildId)}-${crypto.randomBytes(8).toString('hex')}.bin`;
    fs.renameSync(staged.tmpPath, this.pathOf(key));
    if (this.opts.fsync) {
      const fd = fs.openSync(this.dir, 'r');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    return key;
  }

  discard(staged: StagedUpload): void {
    fs.rmSync(staged.tmpPath, { force: true });
  }

  remove(key: string | null): void {
    if (key) fs.rmSync(this.pathOf(key), { force: true });
  }

  open(key: string): fs.ReadStream {
    // 1 MiB reads instead of the default 64 KiB: a sixteenth of the thread-pool round trips for an
    // archive of hundreds of MiB, at a bounded 1 MiB per download in flight.
    return fs.createReadStream(this.pathOf(key), { highWaterMark: STREAM_CHUNK });
  }

  /** Deletes archive files no build points at (left by a crash between rename and commit). */
  sweep(referenced: Set<string>): number {
    let removed = 0;
    for (const name of fs.readdirSync(this.dir)) {
      if (!referenced.has(name)) {
        fs.rmSync(path.join(this.dir, name), { force: true, recursive: true });
        removed++;
      }
    }
    return removed;
  }
}
