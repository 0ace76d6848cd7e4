// Artifact archives as files named by a server-made key, never by the client's file name
// (that name is kept in the database and only ever sent back in Content-Disposition).
// An upload streams into tmp/, is renamed into artifacts/ once complete, and only then is the
// database pointed at it: a reader sees the whole archive or none. A crash between the rename and
// the database update leaves an unreferenced file, which `sweep` removes at the next start.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { chunksReleasable, markArchiveRead, release } from '../../util/released-buffers.ts';
import { PRIVATE_FILE_MODE } from '../../util/private-files.ts';
import { TooLargeError, type StagedUpload } from '../ports/artifact.ts';

const STREAM_CHUNK = 1024 * 1024;
/**
 * Bytes gathered from the parser's 64 KiB chunks before a writev(2) is issued; the write then takes
 * everything queued (up to HOLD and a chunk), as the bare reference does: fewer, larger writes cost
 * the server less CPU a GiB. A write of only this much suits a machine whose large writes fault their
 * page cache in slowly (docs/benchmark-bounds.md, "Artifact upload and download", has the figures).
 */
const WRITE_BATCH = 256 * 1024;
/** Bytes queued behind the write in flight before the socket is paused: as the bare reference holds. */
const HOLD = 4 * WRITE_BATCH;

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

  /** Streams `source` into a temp file, refusing more than the limit. Nothing is visible yet. */
  async stage(source: Readable): Promise<StagedUpload> {
    const tmpPath = path.join(this.tmpDir, `upload-${crypto.randomBytes(8).toString('hex')}`);
    // Opened here, not lazily by the stream: a source that fails before a lazy open completes would
    // have the file created after the cleanup below ran, leaving a stray temp file per refused upload.
    const fd = fs.openSync(tmpPath, 'wx', PRIVATE_FILE_MODE);
    const sink = new UploadSink(fd, this.opts.maxBytes, this.opts.fsync, chunksReleasable(source));
    try {
      await pipeline(source, sink);
    } catch (err) {
      sink.destroy();
      fs.rmSync(tmpPath, { force: true });
      throw err;
    }
    return { tmpPath, size: sink.size };
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

/**
 * The file end of an upload: counts the bytes against the limit and writes them in writev(2)s of
 * what is queued once WRITE_BATCH is, one in flight, from a queue of its own. Ours rather than a counting Transform
 * piped into fs.WriteStream because, traced on a 256 MiB upload, that pair cost a stream hop per
 * 64 KiB socket chunk and let the write size follow whatever piled up during the last write (64 KiB
 * to over 1 MiB). A chunk is taken (its callback called at once) while less than HOLD waits behind
 * the write in flight, so the socket keeps flowing during a write and pauses only with HOLD queued;
 * it resumes as soon as a write returns and the queue is below HOLD again, as the bare node:http
 * reference does. (Holding each batch's callback until its write returned, as this sink did, left
 * the stream machinery's 1 MiB buffer to drain completely before the socket was read again, and the
 * file idle while it refilled.) Chunks of a source the route marked are given back (detached) as
 * soon as their write returned (see http/released-buffers.ts). Every byte is written (write(2)
 * returned) before 'finish', so an upload acknowledged after the pipeline settles survives kill -9.
 */
class UploadSink extends Writable {
  size = 0;
  private queue: Buffer[] = [];
  private queued = 0;
  private fd: number;
  /** Set while a writev is in the thread pool: destroy() does not wait for a pending _write, and
   *  closing the descriptor under it could let the write land in whatever file reuses the number. */
  private writing = false;
  private afterWrite: (() => void) | null = null;
  /** The callback of the chunk that filled the queue to HOLD: called once a write makes room. */
  private held: ((err?: Error | null) => void) | null = null;
  /** Called once the queue is empty and nothing is in flight (set by _final). */
  private drained: ((err?: Error | null) => void) | null = null;
  private failed: Error | null = null;

  constructor(
    fd: number,
    private readonly max: number,
    private readonly fsync: boolean,
    private readonly releaseWritten: boolean,
  ) {
    // Small: the queue below is the buffer; this only carries a chunk or two to the next _write.
    super({ highWaterMark: 64 * 1024 });
    this.fd = fd;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.failed) return done(this.failed);
    this.size += chunk.length;
    // GitLab accepted only `artifacts.size < max_artifacts_size`: exactly the limit is too large.
    if (this.size >= this.max) return done(new TooLargeError(this.max));
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (!this.writing && this.queued >= WRITE_BATCH) this.writeNext();
    if (this.queued < HOLD) done();
    else this.held = done;
  }

  override _final(done: (err?: Error | null) => void): void {
    const finish = (err?: Error | null) => {
      if (err) return done(err);
      const close = () => {
        const fd = this.fd;
        this.fd = -1;
        fs.close(fd, (e) => done(e));
      };
      if (!this.fsync) return close();
      fs.fsync(this.fd, (e) => (e ? done(e) : close()));
    };
    if (this.failed) return done(this.failed);
    if (!this.writing && this.queued === 0) return finish();
    this.drained = finish;
    if (!this.writing) this.writeNext();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.queue = [];
    this.queued = 0;
    if (this.fd < 0) return done(err);
    const fd = this.fd;
    this.fd = -1;
    const close = () => fs.close(fd, () => done(err));
    if (this.writing) this.afterWrite = close;
    else close();
  }

  /** Writes all that is queued, then again once WRITE_BATCH more is (or the rest, at the end). */
  private writeNext(): void {
    const bufs = this.queue;
    this.queue = [];
    this.queued = 0;
    this.writing = true;
    writevAll(this.fd, bufs, (err) => {
      this.writing = false;
      const pending = this.afterWrite;
      this.afterWrite = null;
      if (pending) return pending(); // destroyed meanwhile: its close runs now, the write's outcome is moot
      if (err) return this.fail(err);
      if (this.releaseWritten) release(bufs);
      if (this.queued >= WRITE_BATCH || (this.drained && this.queued > 0)) this.writeNext();
      else if (this.drained) {
        const drained = this.drained;
        this.drained = null;
        drained();
      }
      if (this.held && this.queued < HOLD) {
        const held = this.held;
        this.held = null;
        held();
      }
    });
  }

  /** A failed write fails the upload: through the callback the stream is waiting on, if any, else at once. */
  private fail(err: Error): void {
    this.failed = err;
    const cb = this.held ?? this.drained;
    this.held = this.drained = null;
    if (cb) cb(err);
    else this.destroy(err);
  }
}

/** writev(2) until every byte is written: a short write (e.g. the disk filling up) goes on from where it stopped. */
function writevAll(fd: number, bufs: Buffer[], done: (err?: Error | null) => void): void {
  if (bufs.length === 0) return done();
  fs.writev(fd, bufs, (err, written) => {
    if (err) return done(err);
    if (written === 0) return done(new Error('the artifact file accepted no bytes (writev wrote 0)'));
    let i = 0;
    while (i < bufs.length && written >= bufs[i]!.length) written -= bufs[i++]!.length;
    if (i === bufs.length) return done();
    writevAll(fd, [bufs[i]!.subarray(written), ...bufs.slice(i + 1)], done);
  });
}
