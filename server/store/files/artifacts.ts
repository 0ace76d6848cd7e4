// Artifact archives as files named by a server-made key, never by the client's file name
// (that name is kept in the database and only ever sent back in Content-Disposition).
// An upload streams into tmp/, is renamed into artifacts/ once complete, and only then is the
// database pointed at it: a reader sees the whole archive or none. A crash between the rename and
// the database update leaves an unreferenced file, which `sweep` removes at the next start.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { chunksReleasable, markArchiveRead } from '../../util/released-buffers.ts';
import { PRIVATE_FILE_MODE } from '../../util/private-files.ts';
import { TooLargeError, type ArtifactUpload, type ArtifactUploadHooks, type StagedUpload } from '../ports/artifact.ts';
import { UploadSink } from './upload-sink.ts';

const STREAM_CHUNK = 1024 * 1024;

export { TooLargeError };
export type { StagedUpload };

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

  /**
   * Opens a temp file for an upload fed chunk by chunk (see UploadSink); nothing is visible yet.
   * `releaseWritten`: the feeder vouches that nothing else holds the chunks' memory once written.
   */
  begin(hooks: ArtifactUploadHooks, releaseWritten: boolean): ArtifactUpload {
    const tmpPath = path.join(this.tmpDir, `upload-${crypto.randomBytes(8).toString('hex')}`);
    // Opened here, at once: a lazy open completing after a failed upload's cleanup would leave a stray temp file.
    const fd = fs.openSync(tmpPath, 'wx', PRIVATE_FILE_MODE);
    const abort = async () => {
      await sink.abort();
      fs.rmSync(tmpPath, { force: true });
    };
    // A failed write closes and removes the file before the feeder hears of it.
    const sink: UploadSink = new UploadSink(fd, this.opts.maxBytes, this.opts.fsync, releaseWritten, {
      drain: hooks.drain,
      error: (err) => void abort().then(() => hooks.error(err)),
    });
    return {
      write: (chunk) => sink.write(chunk),
      finish: async () => {
        try {
          await sink.finish();
        } catch (err) {
          await abort();
          throw err;
        }
        return { tmpPath, size: sink.size };
      },
      abort,
    };
  }

  /** Streams `source` into a temp file, refusing more than the limit, with the same flow control. Nothing is visible yet. */
  stage(source: Readable): Promise<StagedUpload> {
    return new Promise((resolve, reject) => {
      let failed = false;
      const fail = (err: Error) => {
        if (failed) return;
        failed = true;
        source.off('data', onData);
        source.destroy();
        void upload.abort().then(() => reject(err));
      };
      const upload = this.begin({ drain: () => source.resume(), error: fail }, chunksReleasable(source));
      const onData = (chunk: Buffer) => {
        try {
          if (!upload.write(chunk)) source.pause();
        } catch (err) {
          fail(err as Error);
        }
      };
      source.on('data', onData);
      source.once('error', fail);
      source.once('close', () => {
        if (!source.readableEnded) fail(new Error('the upload ended early'));
      });
      source.once('end', () => {
        if (!failed) upload.finish().then(resolve, reject);
      });
    });
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

  /** As remove, off the event loop: unlinking a large archive frees its extents in the kernel
   *  (0.1-0.2 s per 256 MiB measured here), which would stall every other request meanwhile. */
  async removeAsync(key: string | null): Promise<void> {
    if (key) await fs.promises.rm(this.pathOf(key), { force: true });
  }

  /** The archive's size on disk: the file, not the stored row, is the truth for what a download sends. */
  size(key: string): number {
    return fs.statSync(this.pathOf(key)).size;
  }

  open(key: string): fs.ReadStream {
    // 1 MiB reads instead of the default 64 KiB: a sixteenth of the thread-pool round trips for an
    // archive of hundreds of MiB, at a bounded 1 MiB per download in flight.
    const stream = fs.createReadStream(this.pathOf(key), { highWaterMark: STREAM_CHUNK });
    const push = stream.push.bind(stream);
    // Marked as they are pushed, so the route can give each back once sent (see sendArtifact).
    stream.push = (chunk: unknown, encoding?: BufferEncoding) => {
      markArchiveRead(chunk);
      return push(chunk, encoding);
    };
    return stream;
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
