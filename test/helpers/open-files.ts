// The files this test process holds open (Linux /proc/self/fd): servers under test run in it, so
// this is how a test sees whether a store keeps or releases a descriptor.
import fs from 'node:fs';
import path from 'node:path';

/** The targets of this process's open descriptors (some may close while listing: skipped). */
export function openFiles(): string[] {
  const held: string[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      held.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      /* closed while listing */
    }
  }
  return held;
}

/** How many open descriptors point at `file`. */
export function openHandles(file: string): number {
  return openFiles().filter((f) => f === file).length;
}

/** The open files under `dir`. */
export function openFilesUnder(dir: string): string[] {
  return openFiles().filter((f) => f.startsWith(dir + path.sep));
}
