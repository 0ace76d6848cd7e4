// The file side of the PostgreSQL mode's trace store (traces.ts): positioned writes and bounded reads
// on a folder several instances share. Nothing here decides a length: the caller passes the one the
// database holds, and each function keeps to it.
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from '../private-files.ts';

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

/**
 * Writes `bytes` at `length`, the committed length, after cutting off whatever lies past it: bytes an
 * instance wrote and never committed (it crashed, or its commit failed). The caller holds the build's
 * lock, so no other writer is between its write and its commit: what lies past the length is debris.
 * Positioned writes, not O_APPEND: the position comes from the database, not from the file's size.
 */
export async function writeAt(file: string, length: number, bytes: Buffer, fsync: boolean): Promise<void> {
  // Every append but a build's first finds the file there: opened first, created only when missing
  // (O_EXCL: of two first appends, one creates, the other opens), so a part costs one open, not a
  // failed create and an open.
  let handle: FileHandle;
  let created = false;
  try {
    handle = await fsp.open(file, fs.constants.O_WRONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    try {
      handle = await fsp.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, PRIVATE_FILE_MODE);
      created = true;
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
      handle = await fsp.open(file, fs.constants.O_WRONLY);
    }
  }
  try {
    const { size } = await handle.stat();
    if (size < length) throw new TraceFileLostError(file, size, length);
    if (size > length) await handle.truncate(length);
    await writeAll(handle, bytes, length);
    if (fsync) await handle.datasync();
  } finally {
    await handle.close();
  }
  // A new file's name is in the folder, not in the file: without this a power cut could lose it whole.
  if (created && fsync) await syncDir(path.dirname(file));
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
