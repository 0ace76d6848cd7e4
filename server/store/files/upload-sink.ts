// The file end of an artifact upload, fed chunk by chunk by whoever reads the body (the route's form
// parser, or ArtifactStore.stage for a stream): no Writable in between, so a chunk costs a push and
// a count, not a stream hop (docs/benchmark-bounds.md, "Artifact upload and download", has figures).
import fs from 'node:fs';
import { release } from '../../util/released-buffers.ts';
import { TooLargeError, type ArtifactUploadHooks } from '../ports/artifact.ts';

/**
 * Bytes gathered before a writev(2) is issued; the write then takes everything queued, as the bare
 * reference does: fewer, larger writes cost the server less CPU a GiB. A write of only this much
 * suits a machine whose large writes fault their page cache in slowly.
 */
const WRITE_BATCH = 256 * 1024;
/** Bytes queued behind the write in flight at which the feeder is told to pause: as the bare reference holds. */
const HOLD = 4 * WRITE_BATCH;

/**
 * Counts the bytes against the limit and writes them in writev(2)s of what is queued once WRITE_BATCH
 * is, one in flight. write() takes every chunk and says "pause" once HOLD waits behind the write in
 * flight; drain() comes as soon as a write returns with the queue below HOLD again, so the socket
 * keeps flowing during a write, as the bare node:http reference does. Chunks are given back
 * (detached) as soon as their write returned when the feeder vouches nobody else holds them (see
 * util/released-buffers.ts). Every byte is written (write(2) returned) before finish() resolves, so
 * an upload acknowledged after it survives kill -9; with fsync, the file is fsynced too.
 */
export class UploadSink {
  size = 0;
  private queue: Buffer[] = [];
  private queued = 0;
  private fd: number;
  /** Set while a writev is in the thread pool: closing the descriptor under it could let the write land in whatever file reuses the number. */
  private writing = false;
  private wantsDrain = false;
  private failed: Error | null = null;
  /** Set by finish(): called once the queue is empty and nothing is in flight. */
  private drained: ((err?: Error | null) => void) | null = null;
  /** Set by abort() while a write is in flight: closes once it returns. */
  private afterWrite: (() => void) | null = null;
  private aborted: Promise<void> | null = null;

  constructor(
    fd: number,
    private readonly max: number,
    private readonly fsync: boolean,
    private readonly releaseWritten: boolean,
    /** drain: the queue fell below HOLD after write() returned false; error: a write failed while no finish() waited. */
    private readonly hooks: ArtifactUploadHooks,
  ) {
    this.fd = fd;
  }

  /** Takes a chunk (the sink keeps it until written); false: pause the source until drain(). Throws TooLargeError, or the write error. */
  write(chunk: Buffer): boolean {
    if (this.failed) throw this.failed;
    this.size += chunk.length;
    // GitLab accepted only `artifacts.size < max_artifacts_size`: exactly the limit is too large.
    if (this.size >= this.max) throw new TooLargeError(this.max);
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (!this.writing && this.queued >= WRITE_BATCH) this.writeNext();
    if (this.queued < HOLD) return true;
    this.wantsDrain = true;
    return false;
  }

  /** Writes what is queued, fsyncs (with --fsync) and closes the file. */
  finish(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.drained = (err) => {
        if (err) return reject(err);
        const close = () => {
          const fd = this.fd;
          this.fd = -1;
          fs.close(fd, (e) => (e ? reject(e) : resolve()));
        };
        if (!this.fsync) return close();
        fs.fsync(this.fd, (e) => (e ? reject(e) : close()));
      };
      if (this.writing) return;
      if (this.queued > 0) this.writeNext();
      else this.drained(null);
    });
  }

  /** Drops what is queued and closes the file once no write is in flight (never under one). */
  abort(): Promise<void> {
    if (this.aborted) return this.aborted;
    this.queue = [];
    this.queued = 0;
    this.failed ??= new Error('the upload was abandoned');
    this.drained = null;
    const fd = this.fd;
    this.fd = -1;
    this.aborted = new Promise((resolve) => {
      if (fd < 0) return resolve();
      const close = () => fs.close(fd, () => resolve());
      if (this.writing) this.afterWrite = close;
      else close();
    });
    return this.aborted;
  }

  /** Writes all that is queued, then again once WRITE_BATCH more is (or the rest, when finishing). */
  private writeNext(): void {
    const bufs = this.queue;
    this.queue = [];
    this.queued = 0;
    this.writing = true;
    writevAll(this.fd, bufs, (err) => {
      this.writing = false;
      const pending = this.afterWrite;
      this.afterWrite = null;
      if (pending) return pending(); // aborted meanwhile: its close runs now, the write's outcome is moot
      if (err) return this.fail(err);
      if (this.releaseWritten) release(bufs);
      if (this.queued >= WRITE_BATCH || (this.drained && this.queued > 0)) this.writeNext();
      else if (this.drained) this.drained(null);
      if (this.wantsDrain && this.queued < HOLD) {
        this.wantsDrain = false;
        this.hooks.drain();
      }
    });
  }

  /** A failed write fails the upload: through finish()'s promise if it waits, else through the error hook. */
  private fail(err: Error): void {
    this.failed = err;
    const drained = this.drained;
    this.drained = null;
    if (drained) drained(err);
    else this.hooks.error(err);
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
