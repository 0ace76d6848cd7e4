// An artifacts archive's file list is bounded (entries and name bytes, both settings), keeps the
// true count, and stays out of the build list; a huge listing an older version stored in the builds
// row is dropped at start and listed again from the archive. Real zips, uploaded through the runner API.
import path from 'node:path';
import yazl from 'yazl';
import sqlite from 'node-sqlite3-wasm';
import { describe, expect, it } from 'vitest';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http, RUNNER_UA } from '../helpers/http.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const MAX_ENTRIES = 50;
const MAX_NAME_BYTES = 20_000;
const ENTRIES = 400;
const NAME_LEN = 1000; // 400 names of 1000 bytes: 400 KB of names, past both limits

const servers = useServers({ artifactListingMaxEntries: MAX_ENTRIES, artifactListingMaxNameBytes: MAX_NAME_BYTES }, 'all');
const start = (dataDir = tempDir()) => servers.start({ dataDir });

const longName = (i: number) => `dir-${i}/${'x'.repeat(NAME_LEN - `dir-${i}/`.length - 4)}.txt`;

function zipOf(names: string[]): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const name of names) z.addBuffer(Buffer.from(name.slice(0, 10)), name);
  z.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
  });
}

async function buildWithArtifacts(s: TestServer, bytes: Buffer): Promise<number> {
  const project = await createProject(s, 'zips');
  const created = await createBuild(s, project.id);
  const runner = await registerRunner(s);
  const taken = await requestBuild(s, runner.token);
  expect(taken.body.id).toBe(created.id);
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), 'artifacts.zip');
  const res = await fetch(`${s.url}/ci/api/v1/builds/${created.id}/artifacts`, { method: 'POST', body: form, headers: { 'BUILD-TOKEN': taken.body.token, 'user-agent': RUNNER_UA } });
  expect(res.status).toBe(201);
  return created.id as number;
}

type Artifacts = { files?: { name: string; size: number }[] | null; files_total: number | null; files_truncated: boolean };
const detail = async (s: TestServer, id: number) => (await http(`${s.url}/api/v3/sim/builds/${id}`, { token: s.adminToken })).body as { artifacts: Artifacts };

async function listed(s: TestServer, id: number) {
  return waitFor('archive listed', async () => {
    const a = (await detail(s, id)).artifacts;
    return a.files_total !== null && a.files_total !== undefined ? a : undefined;
  }, 15_000, 50);
}

async function listAnswer(s: TestServer) {
  const res = await fetch(`${s.url}/api/v3/sim/builds?limit=100`, { headers: { 'PRIVATE-TOKEN': s.adminToken } });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), builds: JSON.parse(text) as { id: number; artifacts: Artifacts | null }[] };
}

describe('archive listings are bounded', () => {
  const names = Array.from({ length: ENTRIES }, (_, i) => longName(i));

  it('keeps the first entries within both limits, counts them all, and marks the list truncated', async () => {
    const s = await start();
    const id = await buildWithArtifacts(s, await zipOf(names));
    const a = await listed(s, id);
    expect(a.files_total).toBe(ENTRIES);
    expect(a.files_truncated).toBe(true);
    const kept = a.files!;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThanOrEqual(MAX_ENTRIES);
    expect(kept.reduce((n, f) => n + Buffer.byteLength(f.name), 0)).toBeLessThanOrEqual(MAX_NAME_BYTES);
    expect(kept.map((f) => f.name)).toEqual(names.slice(0, kept.length));

    const small = await buildWithArtifacts(s, await zipOf(['a.txt', 'b/c.txt']));
    expect(await listed(s, small)).toMatchObject({ files: [{ name: 'a.txt', size: 5 }, { name: 'b/c.txt', size: 7 }], files_total: 2, files_truncated: false });
  });

  it('the build list carries no file names, only the count', async () => {
    const s = servers.list[0]!;
    const list = await listAnswer(s);
    expect(list.status).toBe(200);
    for (const b of list.builds) {
      expect(b.artifacts).not.toHaveProperty('files');
      expect(b.artifacts?.files_total).toBeTypeOf('number');
    }
    expect(list.bytes).toBeLessThan(20_000);
  });

  it('a huge listing stored in the builds row by an older version is dropped at start and listed again', async () => {
    const dataDir = tempDir();
    let s = await start(dataDir);
    const id = await buildWithArtifacts(s, await zipOf(names));
    await listed(s, id);
    await servers.close(s, { keepData: true });

    // What an older version left: every name in the row (here 20,000 names, ~20 MB), no listing table.
    const db = new sqlite.Database(path.join(dataDir, 'jobscope.db'));
    db.exec('PRAGMA locking_mode=EXCLUSIVE'); // as the server opens it: a WAL database without shared memory
    const huge = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ name: longName(i), size: 1 })));
    db.run('UPDATE builds SET artifacts_listing = ? WHERE id = ?', [huge, id]);
    db.exec('DROP TRIGGER IF EXISTS artifact_listings_follow_archive; DROP TABLE IF EXISTS artifact_listings; DELETE FROM schema_migrations WHERE version IN (5, 6)');
    db.close();

    s = await start(dataDir);
    const list = await listAnswer(s);
    expect(list.status).toBe(200);
    expect(list.bytes).toBeLessThan(20_000);
    const a = await listed(s, id);
    expect(a.files_total).toBe(ENTRIES);
    expect(a.files!.length).toBeLessThanOrEqual(MAX_ENTRIES);
  });
});
