// The data dir holds build traces, artifacts, the database with every token, and logs: only its
// owner may read any of it, whatever the umask. Modes are given where each file or folder is
// created (the umask can only take bits away from them), and a data dir an older version left
// world-readable is tightened when a server takes it.
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** mkdir -p with 0700, and 0700 also when it already existed. */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // Only when needed: a folder mounted read-only (the disk tests do) must not stop a start.
  if ((fs.statSync(dir).mode & 0o777) !== PRIVATE_DIR_MODE) fs.chmodSync(dir, PRIVATE_DIR_MODE);
}

/**
 * Sets 0700 on folders and 0600 on files under `root` (root included). A folder already 0700 is
 * not walked into (the root's own entries are always checked): this version makes every folder
 * 0700 and every file in it 0600, and a folder is only set to 0700 after everything in it, so one
 * found at 0700 holds nothing looser. That keeps a start from stat'ing every trace of a big data
 * dir each time. Symbolic links and sockets (Electron keeps some in its profile folder) are left as
 * they are.
 */
export function tightenTree(root: string): void {
  visit(root, true);
}

function visit(p: string, isRoot: boolean): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return; // removed meanwhile
  }
  const mode = st.mode & 0o777;
  if (st.isFile()) {
    if (mode !== PRIVATE_FILE_MODE) chmod(p, PRIVATE_FILE_MODE);
    return;
  }
  if (!st.isDirectory()) return;
  if (mode !== PRIVATE_DIR_MODE || isRoot) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(p);
    } catch {
      /* unreadable: someone else's folder, see chmod */
    }
    for (const name of names) visit(path.join(p, name), false);
  }
  if (mode !== PRIVATE_DIR_MODE) chmod(p, PRIVATE_DIR_MODE);
}

function chmod(p: string, mode: number): void {
  try {
    fs.chmodSync(p, mode);
  } catch {
    // Someone else's file put in the data dir (EPERM): the server cannot change it, and it is not
    // one the server writes; that must not stop the start.
  }
}
