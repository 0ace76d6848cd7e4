// The file side of the PostgreSQL mode's trace store (traces.ts): positioned writes and bounded reads
// on a folder several instances share. Nothing here decides a length: the caller passes the one the
// database holds, and each function keeps to it.
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../util/private-files.ts';

/** Thrown when a trace file holds fewer bytes than the database says were acknowledged. */
export class TraceFileLostError extends Error {
  constructor(file: string, size: number, length: number) {
    super(
      `Trace file ${file} holds ${size} bytes, fewer than the ${length} the database says were acknowledged: it was cut, replaced or ` +
        'lost outside Jobscope (on a shared volume mounted without fsync, or by a machine crash with --fsync off). Restore it, or replace the trace.',
    );
    this.name = 'TraceFileLostError';
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function writeAll(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position + written);
    written += bytesWritten;
  }
}

/** Opens a trace for an append: opened first, created only when missing (O_EXCL: of two first appends, one creates, the other opens). */
async function openForAppend(file: string): Promise<{ handle: FileHandle; created: boolean }> {
  try {
    return { handle: await fsp.open(file, fs.constants.O_WRONLY), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    return { handle: await fsp.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, PRIVATE_FILE_MODE), created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { handle: await fsp.open(file, fs.constants.O_WRONLY), created: false };
  }
}

interface OpenTrace {
  file: string;
  handle: FileHandle;
  /** Appends using the handle now: it is neither evicted nor closed while they run. */
  busy: number;
  usedAt: number;
  /** Forgotten while an append was using it: closed when that append is done with it. */
  closing?: boolean;
}

export interface AppendHandlesOptions {
  /** At most this many handles stay open (default 256, as store/files/traces.ts). */
  max?: number;
  /** A handle unused this long is closed (default 30 s): another instance's replace may have deleted its file. */
  idleMs?: number;
}

/**
 * Write handles of the traces this instance appended to lately, by build. Each append used to open,
 * stat and close its file: four thread-pool round trips a part, which cost 2.2x the CPU of
 * the two a kept handle needs (fstat, write; a 32-stream loop of 4 KiB parts on this machine:
 * 70 against 32 us a part, all threads). What a fresh open guaranteed, a kept handle checks:
 * - the file the row names: the cache is keyed by file name, and a replace or remove (on any
 *   instance) moves the row's generation, so the name and the handle change with it;
 * - the file still in the folder: a handle whose file was deleted or renamed over outside Jobscope
 *   reports no links, and is reopened by name (so a lost file is reported as before, not written);
 * - the file's size: read from the same handle, as before, for a cut file and for debris.
 * Handles are only used by appends holding the build's row lock, so one build's handle is never used
 * by two appends at once on one instance; the busy count keeps eviction and the idle sweep off a
 * handle another build's append is waiting on.
 */
export class AppendHandles {
  private readonly open = new Map<number, OpenTrace>();
  private readonly max: number;
  private readonly idleMs: number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(opts: AppendHandlesOptions = {}) {
    this.max = opts.max ?? 256;
    this.idleMs = opts.idleMs ?? 30_000;
  }

  /**
   * Writes `bytes` at `length`, the committed length, after cutting off whatever lies past it: bytes an
   * instance wrote and never committed (it crashed, or its commit failed). The caller holds the
   * build's lock, so no other writer is between its write and its commit: what lies past the length
   * is debris. Positioned writes, not O_APPEND: the position comes from the database, not the file.
   */
  async writeAt(buildId: number, file: string, length: number, bytes: Buffer, fsync: boolean): Promise<void> {
    let { entry, created } = await this.acquire(buildId, file);
    let st = await this.statOrDrop(buildId, entry);
    if (st.nlink === 0 && !created) {
      // Deleted or renamed over outside Jobscope since it was opened: the name decides, as a fresh open would.
      this.release(buildId, entry, false);
      ({ entry, created } = await this.acquire(buildId, file));
      st = await this.statOrDrop(buildId, entry);
    }
    try {
      if (st.size < length) throw new TraceFileLostError(file, st.size, length);
      if (st.size > length) await entry.handle.truncate(length);
      await writeAll(entry.handle, bytes, length);
      if (fsync) await entry.handle.datasync();
    } catch (err) {
      // Whatever went wrong, the next append starts from the name again.
      this.release(buildId, entry, false);
      throw err;
    }
    this.release(buildId, entry, true);
    // A new file's name is in the folder, not in the file: without this a power cut could lose it whole.
    if (created && fsync) await syncDir(path.dirname(file));
  }

  /**
   * Closes the build's handle; resolves once it is closed. One an append is using is marked instead
   * and closed when the append is done with it (closing it under the append would fail its write),
   * not left open until the idle sweep.
   */
  forget(buildId: number): Promise<void> {
    const entry = this.open.get(buildId);
    if (!entry) return Promise.resolve();
    if (entry.busy === 0) return this.drop(buildId);
    entry.closing = true;
    return Promise.resolve();
  }

  async closeAll(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((e) => e.handle.close().catch(() => undefined)));
  }

  private async acquire(buildId: number, file: string): Promise<{ entry: OpenTrace; created: boolean }> {
    let entry = this.open.get(buildId);
    if (entry && entry.file !== file) {
      void this.drop(buildId);
      entry = undefined;
    }
    let created = false;
    if (entry) {
      this.open.delete(buildId); // re-inserted below: the map's order is least recently used first
    } else {
      const opened = await openForAppend(file);
      created = opened.created;
      // Another append of this build cannot have opened one meanwhile: it would hold the row lock.
      entry = { file, handle: opened.handle, busy: 0, usedAt: 0 };
      this.evict();
      this.startSweeper();
    }
    entry.busy++;
    entry.usedAt = Date.now();
    this.open.set(buildId, entry);
    return { entry, created };
  }

  private async statOrDrop(buildId: number, entry: OpenTrace) {
    try {
      return await entry.handle.stat();
    } catch (err) {
      this.release(buildId, entry, false);
      throw err;
    }
  }

  /** Done with the handle; `keep` false, or a forget meanwhile, closes it (unless it was already replaced). */
  private release(buildId: number, entry: OpenTrace, keep: boolean): void {
    entry.busy--;
    if ((!keep || (entry.closing && entry.busy === 0)) && this.open.get(buildId) === entry) void this.drop(buildId);
  }

  private drop(buildId: number): Promise<void> {
    const entry = this.open.get(buildId);
    if (!entry) return Promise.resolve();
    this.open.delete(buildId);
    // FileHandle.close waits for operations still running on the handle.
    return entry.handle.close().catch(() => undefined);
  }

  private evict(): void {
    for (const [id, e] of this.open) {
      if (this.open.size < this.max) return;
      if (e.busy === 0) void this.drop(id);
    }
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const before = Date.now() - this.idleMs;
      for (const [id, e] of this.open) if (e.busy === 0 && e.usedAt <= before) void this.drop(id);
      if (!this.open.size) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, Math.max(10, Math.floor(this.idleMs / 2)));
    this.sweeper.unref();
  }
}

/** Writes a whole new file (truncating a leftover of the same name: a replace that never committed). */
export async function writeWhole(file: string, bytes: Buffer, fsync: boolean): Promise<void> {
  const handle = await fsp.open(file, 'w', PRIVATE_FILE_MODE);
  try {
    await writeAll(handle, bytes, 0);
    if (fsync) await handle.datasync();
  } finally {
    await handle.close();
  }
  if (fsync) await syncDir(path.dirname(file));
}

/** Opens a trace for reading; undefined when there is no such file. */
export async function openForRead(file: string): Promise<FileHandle | undefined> {
  try {
    return await fsp.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Bytes [start, end) of an open file, fewer when the file is shorter; closes the handle. */
export async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  try {
    const body = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < body.length) {
      const { bytesRead } = await handle.read(body, got, body.length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return body.subarray(0, got);
  } finally {
    await handle.close();
  }
}
