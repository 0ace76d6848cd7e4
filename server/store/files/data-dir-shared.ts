// The data dir shared by several servers on one database: traces/ and artifacts/ are
// everyone's; each server holds a numbered slot, instances/<name>.pid, and keeps what is its own in
// instances/<name>/ (the SQLite file of its UI state, its logs; the monitor is in the database) and
// its temp uploads in tmp/<name>/. The lowest free slot is taken, so a server restarted on the folder
// gets its UI state and logs back. Slots are chosen under instances/.claim (mkdir is atomic): two servers starting at
// once never take one slot.
import fs from 'node:fs';
import path from 'node:path';
import { makePrivateDir, tightenTree, PRIVATE_FILE_MODE } from '../../util/private-files.ts';
import { DataDirInUseError, isAlive, layoutOf, ownerOf, type DataDirLayout } from './data-dir.ts';

/** A claim folder older than this was left by a crash between mkdir and rmdir (it lives for ms). */
const STALE_CLAIM_MS = 10_000;
const MAX_SLOTS = 1000;

function withClaim<T>(dir: string, fn: () => T): T {
  const claim = path.join(dir, '.claim');
  for (let tries = 0; ; tries++) {
    try {
      fs.mkdirSync(claim);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - fs.statSync(claim).mtimeMs > STALE_CLAIM_MS) fs.rmSync(claim, { recursive: true, force: true });
      } catch {
        /* released meanwhile */
      }
      if (tries > 2000) throw new Error(`could not claim a slot in ${dir}: ${claim} stays`);
      // Held for a few file operations by another server starting: a short busy wait is enough.
      const until = Date.now() + 5;
      while (Date.now() < until) { /* wait */ }
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(claim, { recursive: true, force: true });
  }
}

/** Takes a slot (`name` when given, else the lowest free one) and lays out its folders; throws DataDirInUseError when the folder is a SQLite server's or the named slot is held. */
export function acquireInstanceDir(root: string, name?: string): DataDirLayout {
  const base = layoutOf(root);
  tightenTree(base.root);
  const instancesDir = path.join(root, 'instances');
  for (const dir of [base.root, base.tracesDir, base.artifactsDir, base.tmpDir, instancesDir]) makePrivateDir(dir);
  const soleOwner = ownerOf(base.pidFile);
  // Also this process's: one process serving a folder in both modes is as wrong as two.
  if (isAlive(soleOwner)) {
    throw new DataDirInUseError(`the data dir ${root} is in use by process ${soleOwner} on its own SQLite store; stop it or pass another --data-dir`);
  }
  const slot = withClaim(instancesDir, () => {
    const free = (n: string) => {
      const owner = ownerOf(path.join(instancesDir, `${n}.pid`));
      return owner === process.pid ? false : !isAlive(owner);
    };
    let chosen: string | undefined;
    if (name !== undefined) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new Error(`instance name ${JSON.stringify(name)}: letters, digits, - and _ only`);
      if (!free(name)) throw new DataDirInUseError(`instance ${name} of the data dir ${root} is in use by process ${ownerOf(path.join(instancesDir, `${name}.pid`))}`);
      chosen = name;
    } else {
      for (let n = 1; n <= MAX_SLOTS && chosen === undefined; n++) if (free(String(n))) chosen = String(n);
      if (chosen === undefined) throw new DataDirInUseError(`the data dir ${root} has ${MAX_SLOTS} instances running`);
    }
    fs.writeFileSync(path.join(instancesDir, `${chosen}.pid`), String(process.pid), { mode: PRIVATE_FILE_MODE });
    return chosen;
  });
  const own = path.join(instancesDir, slot);
  const layout: DataDirLayout = {
    ...base,
    dbFile: path.join(own, 'jobscope.db'),
    tmpDir: path.join(base.tmpDir, slot),
    logsDir: path.join(own, 'logs'),
    pidFile: path.join(instancesDir, `${slot}.pid`),
    stateDir: own,
    instance: slot,
  };
  for (const dir of [own, layout.tmpDir, layout.logsDir]) makePrivateDir(dir);
  fs.rmSync(`${layout.dbFile}.lock`, { recursive: true, force: true });
  // Only this slot's temp files: the other servers' uploads are under way in theirs.
  for (const entry of fs.readdirSync(layout.tmpDir)) fs.rmSync(path.join(layout.tmpDir, entry), { force: true, recursive: true });
  return layout;
}
