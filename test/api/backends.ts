// The runner API suite on both stores: eachBackend runs a file's tests once on SQLite
// and once on PostgreSQL, through the same startServer signature. On PostgreSQL the file's cluster
// (usePostgres: one per file) gets one migrated template database, and each data dir its own copy
// (CREATE DATABASE … TEMPLATE, a file copy with copyStrategy: cheaper than migrating again); a server started again
// on a data dir it has seen gets that data dir's database back, as a restart on SQLite finds its file.
import { describe } from 'vitest';
import pg from 'pg';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { openPgDatabase } from '../../server/store/pg/index.ts';

export type StartServer = typeof startServer;
export type Backend = 'sqlite' | 'postgresql';

// Data dir → its database's URL, for a test that reads the database itself (databaseOf).
const databaseByDataDir = new Map<string, string>();

/** The URL of the PostgreSQL database behind a server eachBackend started; undefined on SQLite. */
export function databaseOf(s: { dataDir: string }): string | undefined {
  return databaseByDataDir.get(s.dataDir);
}

export function eachBackend(body: (start: StartServer, backend: Backend) => void): void {
  describe('sqlite', () => body(startServer, 'sqlite'));
  const missing = postgresMissing();
  // The reason is in the name, so a run without PostgreSQL says why these tests did not run.
  describe.skipIf(missing !== null)(missing === null ? 'postgresql' : `postgresql (skipped: ${missing})`, () => {
    const cluster = usePostgres();
    const databases = new Map<string, string>();
    let template: Promise<void> | undefined;
    let made = 0;
    const makeTemplate = async () => {
      const db = await openPgDatabase(await cluster.createDatabase('jobscope_template'));
      await db.close();
    };
    const freshDatabase = async (): Promise<string> => {
      template ??= makeTemplate();
      await template;
      const name = `jobscope_${++made}`;
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE jobscope_template${cluster.copyStrategy}`);
      } finally {
        await admin.end();
      }
      return cluster.urlFor(name);
    };
    const start: StartServer = async (overrides = {}, deps = {}): Promise<TestServer> => {
      const dataDir = (overrides.dataDir as string | undefined) ?? tempDir();
      let database = databases.get(dataDir);
      if (!database) {
        database = await freshDatabase();
        databases.set(dataDir, database);
        databaseByDataDir.set(dataDir, database);
      }
      return startServer({ ...overrides, dataDir }, { ...deps, database });
    };
    body(start, 'postgresql');
  });
}
