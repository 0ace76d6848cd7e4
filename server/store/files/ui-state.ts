// The UI's saved state as one small file, <data dir>/ui-state.json, replaced whole on every save
// (written to tmp/ and renamed into place, so a crash leaves the old or the new file, never half).
// A file rather than a table: it is the same kind of thing as settings.json and window-state.json,
// survives "reset data" with them, and needs no migration. Reading never throws: a missing or
// unreadable file reads as nothing saved.
import fs from 'node:fs';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../util/private-files.ts';
import type { SavedUiState, UiStatePort } from '../ports/ports.ts';

export const UI_STATE_FILE = 'ui-state.json';

export class UiStateFile implements UiStatePort {
  private readonly file: string;

  constructor(
    root: string,
    private readonly tmpDir: string,
    private readonly opts: { fsync: boolean },
  ) {
    this.file = path.join(root, UI_STATE_FILE);
  }

  read(): SavedUiState | undefined {
    try {
      const raw = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { values?: unknown; saved_at?: unknown };
      const values = raw.values;
      if (!values || typeof values !== 'object' || Array.isArray(values)) return undefined;
      const savedAt = typeof raw.saved_at === 'number' && Number.isFinite(raw.saved_at) ? raw.saved_at : 0;
      return { values: values as Record<string, unknown>, savedAt };
    } catch {
      return undefined;
    }
  }

  write(values: Record<string, unknown>, savedAt: number): void {
    const tmp = path.join(this.tmpDir, `${UI_STATE_FILE}.${process.pid}.${Date.now()}.tmp`);
    const fd = fs.openSync(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      fs.writeSync(fd, JSON.stringify({ saved_at: savedAt, values }));
      if (this.opts.fsync) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.renameSync(tmp, this.file);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
  }
}
