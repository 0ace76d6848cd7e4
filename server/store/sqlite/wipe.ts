// "Reset data": empties the data dir while no server has it open. Kept: the schema, the instance
// tokens (so runners' registration token and the UI's sign-in stay valid), settings saved from the UI
// and the monitor's connection list (remote GitLab addresses and tokens are configuration, not data).
// Everything else goes: builds, traces, artifacts, runners, projects, users, jobs, history, alerts.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.ts';
import { databaseOf, openStore } from '../index.ts';

const KEEP = new Set(['schema_migrations', 'settings', 'monitor_connections']);

export function wipeData(config: Config): { tables: number } {
  const store = openStore(config);
  const db = databaseOf(store);
  let tables = 0;
  try {
    const names = db
      .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .map((r) => r.name)
      .filter((n) => !KEEP.has(n));
    db.exec('PRAGMA foreign_keys=OFF');
    db.tx(() => {
      for (const name of names) db.exec(`DELETE FROM "${name.replace(/"/g, '""')}"`);
      if (db.get("SELECT 1 AS x FROM sqlite_master WHERE name = 'sqlite_sequence'")) db.exec('DELETE FROM sqlite_sequence');
      if (db.get("SELECT 1 AS x FROM sqlite_master WHERE name = 'monitor_connections'")) {
        db.exec('UPDATE monitor_connections SET last_sample_at = NULL, last_error = NULL, last_sample = NULL');
      }
    });
    db.exec('PRAGMA foreign_keys=ON');
    tables = names.length;
    for (const dir of [store.layout.tracesDir, store.layout.artifactsDir, store.layout.tmpDir]) {
      for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
    }
  } finally {
    store.close();
  }
  return { tables };
}
