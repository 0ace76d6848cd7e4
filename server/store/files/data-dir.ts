// The data directory: its layout, and the lock that keeps two servers off the same one.
// node-sqlite3-wasm locks a database by creating `<db>.lock/`; a killed process leaves that folder
// behind and the next open would fail with SQLITE_BUSY. Our own pid file says whether the owner
// is still alive, so a restart after `kill -9` clears the stale lock and needs no repair step.
import fs from 'node:fs';
import path from 'node:path';
import { makePrivateDir, tightenTree, PRIVATE_FILE_MODE } from '../../util/private-files.ts';

export interface DataDirLayout {
  root: string;
  dbFile: string;
  tracesDir: string;
  artifactsDir: string;
  tmpDir: string;
  logsDir: string;
  pidFile: string;
  /** Where ui-state.json lives: the root, or in database mode the instance's folder. */
  stateDir: string;
  /** Database mode: this server's name among those sharing the folder (instances/<name>). */
  instance?: string;
}

export function layoutOf(root: string): DataDirLayout {
  return {
    root,
    dbFile: path.join(root, 'jobscope.db'),
    tracesDir: path.join(root, 'traces'),
    artifactsDir: path.join(root, 'artifacts'),
    tmpDir: path.join(root, 'tmp'),
    logsDir: path.join(root, 'logs'),
    pidFile: path.join(root, 'jobscope.pid'),
    stateDir: root,
  };
}

export class DataDirInUseError extends Error {}

/** The pid in a lock file, NaN when there is none. */
export function ownerOf(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return NaN;
  }
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates the folders (0700), tightens what an older version left readable, takes the pid lock and clears locks left by a dead owner. */
export function acquireDataDir(root: string): DataDirLayout {
  const layout = layoutOf(root);
  // Before the folders are made 0700: a folder found at 0700 is taken to hold nothing looser.
  tightenTree(layout.root);
  for (const dir of [layout.root, layout.tracesDir, layout.artifactsDir, layout.tmpDir, layout.logsDir]) makePrivateDir(dir);
  const owner = ownerOf(layout.pidFile);
  if (owner !== process.pid && isAlive(owner)) {
    throw new DataDirInUseError(
      `the data dir ${root} is in use by process ${owner}; stop that server or pass another --data-dir`,
    );
  }
  const shared = liveInstance(root);
  if (shared) throw new DataDirInUseError(`the data dir ${root} is shared by servers on a database (process ${shared} holds one); stop them or pass another --data-dir`);
  fs.writeFileSync(layout.pidFile, String(process.pid), { mode: PRIVATE_FILE_MODE });
  fs.rmSync(`${layout.dbFile}.lock`, { recursive: true, force: true });
  // Uploads interrupted by a crash were never acknowledged: their temp files are garbage.
  for (const name of fs.readdirSync(layout.tmpDir)) fs.rmSync(path.join(layout.tmpDir, name), { force: true, recursive: true });
  return layout;
}

/** The pid of a live server holding a slot of the folder in database mode (data-dir-shared.ts), if any. */
function liveInstance(root: string): number | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(root, 'instances'));
  } catch {
    return undefined;
  }
  for (const n of names) {
    if (!n.endsWith('.pid')) continue;
    const pid = ownerOf(path.join(root, 'instances', n));
    // Also this process's: one process serving a folder in both modes is as wrong as two.
    if (isAlive(pid)) return pid;
  }
  return undefined;
}

export function releaseDataDir(layout: DataDirLayout): void {
  try {
    if (fs.readFileSync(layout.pidFile, 'utf8').trim() === String(process.pid)) fs.rmSync(layout.pidFile);
  } catch {
    /* already gone */
  }
}
