// Trace appends across instances on PostgreSQL (server/store/pg/traces.ts) against a real throwaway
// cluster and one traces folder both "instances" (two pools) share:
// - parts of one build sent to both instances at the same moment: the trace is byte-exact, each
//   acknowledged part in it once, none interleaved or overlapping; each wrong offset is answered
//   with a mismatch and a length some acknowledged append committed;
// - a crash between the file write and the commit (bytes past the committed length) is invisible to
//   reads and cut off by the next append; a replace that never committed leaves nothing visible;
// - reads on either instance never go past the committed length.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { Prng } from '../../common/prng.ts';
import { openPgDatabase, PgTraceStore, type PgDatabase } from '../../server/store/pg/index.ts';
import { AppendHandles, TraceFileLostError, type AppendHandlesOptions } from '../../server/store/pg/traces-files.ts';
import { openFilesUnder } from '../helpers/open-files.ts';
import { StorageError } from '../../server/store/ports/storage-error.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;

interface TwoInstances {
  a: PgDatabase;
  b: PgDatabase;
  dir: string;
  storeA: PgTraceStore;
  storeB: PgTraceStore;
  close(): Promise<void>;
}

/** One database and one traces folder, two pools on them; builds 1..builds exist. */
async function twoInstances(builds: number, maxBytes = 64 * 1024 * 1024, handles?: AppendHandlesOptions): Promise<TwoInstances> {
  const name = `tr${++dbCount}`;
  const a = await openPgDatabase(await pg.createDatabase(name), { max: 4, applicationName: 'instance-a' });
  const b = await openPgDatabase(pg.urlFor(name), { max: 4, applicationName: 'instance-b' });
  await a.pool.query(`INSERT INTO projects (id, name, runners_token, runners_token_sha, ci_token, ci_token_sha, created_at) VALUES (1, 'p', 'r', 'rs', 'c', 'cs', 0)`);
  await a.pool.query(
    `INSERT INTO builds (id, project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at)
     SELECT i, 1, 'running', 'b' || i, 'test', 'main', 'a', 'b', 'true', 't' || i, 'ts' || i, 0 FROM generate_series(1, $1::int) i`,
    [builds],
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgtraces-'));
  const opts = { fsync: true, maxBytes, handles };
  const storeA = new PgTraceStore(a.pool, dir, opts);
  const storeB = new PgTraceStore(b.pool, dir, opts);
  return {
    a,
    b,
    dir,
    storeA,
    storeB,
    async close() {
      await storeA.close();
      await storeB.close();
      await a.close();
      await b.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A part that names its writer and number, then random bytes (any byte value), 8..3000 bytes long. */
function part(rnd: Prng, writer: number, n: number): Buffer {
  const head = Buffer.from(`<w${writer}#${n}>`);
  const tail = Buffer.from(Array.from({ length: rnd.int(0, 2990) }, () => rnd.int(0, 255)));
  return Buffer.concat([head, tail]);
}

const committedLength = async (db: PgDatabase, id: number) =>
  Number((await db.pool.query<{ length: number }>('SELECT length FROM build_traces WHERE build_id = $1', [id])).rows[0]?.length ?? 0);

describe.skipIf(missing)(`PostgreSQL traces: one lock per build across instances${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('4 builds, 4 writers each (2 per instance) sending parts at once, wrong offsets among them: byte-exact, no part twice or interleaved', async () => {
    const t = await twoInstances(4);
    try {
      const rnd = new Prng(6);
      const PARTS = 12;
      interface Ok {
        writer: number;
        n: number;
        start: number;
        end: number;
        bytes: Buffer;
      }
      const oks = new Map<number, Ok[]>();
      const mismatches = new Map<number, { sent: number; known: number; got: number }[]>();
      const reads: { build: number; start: number; length: number; body: Buffer }[] = [];
      let contested = 0;
      let wrongOffsets = 0;

      const writer = async (build: number, w: number) => {
        const store = w % 2 ? t.storeB : t.storeA;
        let known = await store.length(build);
        for (let n = 0; n < PARTS; n++) {
          const bytes = part(rnd, w, n);
          // Sometimes a stale or skipped offset first. Every part is 8 bytes or more and lengths
          // only grow, so known+3 and known-3 can never be the true length: always a mismatch.
          if (rnd.chance(0.15)) {
            const sent = known >= 3 && rnd.chance(0.5) ? known - 3 : known + 3;
            const r = await store.append(build, sent, bytes);
            expect(r.ok, `offset ${sent} accepted for build ${build}`).toBe(false);
            if (!r.ok) {
              expect(r.reason).toBe('range');
              mismatches.get(build)!.push({ sent, known, got: r.length });
              known = r.length;
            }
            wrongOffsets++;
          }
          for (;;) {
            const r = await store.append(build, known, bytes);
            if (r.ok) {
              oks.get(build)!.push({ writer: w, n, start: known, end: r.length, bytes });
              known = r.length;
              break;
            }
            expect(r.reason).toBe('range');
            mismatches.get(build)!.push({ sent: known, known, got: r.length });
            contested++;
            known = r.length;
          }
          // A read on the other instance now and then, checked against the final trace below.
          if (rnd.chance(0.3)) {
            const other = w % 2 ? t.storeA : t.storeB;
            const start = rnd.int(0, known);
            const got = await other.read(build, start);
            const body = got.body === null ? Buffer.alloc(0) : Buffer.isBuffer(got.body) ? got.body : await collect(got.body);
            reads.push({ build, start, length: got.length, body });
          }
        }
      };

      const runs: Promise<void>[] = [];
      for (let build = 1; build <= 4; build++) {
        oks.set(build, []);
        mismatches.set(build, []);
        for (let w = 0; w < 4; w++) runs.push(writer(build, w));
      }
      await Promise.all(runs);
      // The test raced: parts were sent at a length another instance had just moved past.
      expect(contested).toBeGreaterThan(0);
      expect(wrongOffsets).toBeGreaterThan(0);

      for (let build = 1; build <= 4; build++) {
        const acked = [...oks.get(build)!].sort((x, y) => x.start - y.start);
        // Every part acknowledged once, and the acknowledged ranges tile the trace with no gap or overlap.
        expect(acked.length).toBe(4 * PARTS);
        expect(new Set(acked.map((o) => `${o.writer}#${o.n}`)).size).toBe(4 * PARTS);
        let at = 0;
        for (const o of acked) {
          expect(o.start, `build ${build}: part w${o.writer}#${o.n} acknowledged at ${o.start}, the trace was ${at} long`).toBe(at);
          expect(o.end).toBe(o.start + o.bytes.length);
          at = o.end;
        }
        const expected = Buffer.concat(acked.map((o) => o.bytes));
        expect(await committedLength(t.a, build)).toBe(expected.length);
        for (const store of [t.storeA, t.storeB]) {
          expect(await store.length(build)).toBe(expected.length);
          expect((await store.readAll(build)).equals(expected), `build ${build} differs from its acknowledged parts`).toBe(true);
        }
        expect(fs.readFileSync(t.storeA.file(build)).equals(expected)).toBe(true);
        // Each writer's parts in the order it sent them.
        for (let w = 0; w < 4; w++) {
          const mine = acked.filter((o) => o.writer === w).map((o) => o.n);
          expect(mine).toEqual([...mine].sort((x, y) => x - y));
        }
        // Each mismatch named a length the trace really had (0 or an acknowledged end), never behind what the sender knew.
        const ends = new Set([0, ...acked.map((o) => o.end)]);
        for (const m of mismatches.get(build)!) {
          expect(ends.has(m.got), `mismatch answered ${m.got}, a length the trace never had`).toBe(true);
          expect(m.got).toBeGreaterThanOrEqual(m.known);
          expect(m.got).not.toBe(m.sent);
        }
        for (const r of reads.filter((x) => x.build === build)) {
          expect(ends.has(r.length), `a read answered length ${r.length}, never committed`).toBe(true);
          expect(r.body.equals(expected.subarray(r.start, r.length))).toBe(true);
        }
      }
    } finally {
      await t.close();
    }
  });

  it('a crash between the file write and the commit: the extra bytes are never read, the next append cuts them and lands at the committed length', async () => {
    const t = await twoInstances(2);
    try {
      expect(await t.storeA.append(1, 0, Buffer.from('hello '))).toEqual({ ok: true, length: 6 });
      // The crash: an instance wrote and fsynced its part, and died before its COMMIT.
      fs.appendFileSync(t.storeA.file(1), 'HALF-WRITTEN PART');
      expect(fs.statSync(t.storeA.file(1)).size).toBe(23);
      for (const store of [t.storeA, t.storeB]) {
        expect(await store.length(1)).toBe(6);
        expect(await store.read(1, 0)).toEqual({ body: Buffer.from('hello '), length: 6 });
        expect(await store.read(1, 6)).toEqual({ body: null, length: 6 });
        expect(await store.read(1, 10)).toEqual({ body: null, length: 6 });
        expect(await store.readAll(1)).toEqual(Buffer.from('hello '));
      }
      // The file's size is no length: an offset after the debris is a mismatch with the committed one.
      expect(await t.storeB.append(1, 23, Buffer.from('x'))).toEqual({ ok: false, length: 6, reason: 'range' });
      expect(await t.storeB.append(1, 6, Buffer.from('world'))).toEqual({ ok: true, length: 11 });
      expect(fs.readFileSync(t.storeA.file(1), 'utf8')).toBe('hello world');
      expect((await t.storeA.readAll(1)).toString()).toBe('hello world');

      // A first append that crashed (file written, no row committed): the trace is empty, and the next append starts at 0.
      fs.writeFileSync(t.storeA.file(2), 'never acknowledged');
      expect(await t.storeA.read(2)).toEqual({ body: null, length: 0 });
      expect(await t.storeB.append(2, 5, Buffer.from('x'))).toEqual({ ok: false, length: 0, reason: 'range' });
      expect(await t.storeB.append(2, 0, Buffer.from('first'))).toEqual({ ok: true, length: 5 });
      expect(fs.readFileSync(t.storeA.file(2), 'utf8')).toBe('first');
    } finally {
      await t.close();
    }
  });

  it('a real failed commit after the write (deferred trigger), and a session killed before its commit: an error, nothing read, the other instance appends at the committed length', async () => {
    const t = await twoInstances(1);
    try {
      // Test-only triggers on this database: the store's own path (write, fsync, UPDATE, COMMIT) runs
      // unchanged and fails where a crash would hit it. 13 and 26 are lengths only these appends reach.
      await t.a.pool.query(`
        CREATE FUNCTION fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.length = 13 THEN RAISE EXCEPTION 'simulated failure at commit'; END IF;
          RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER fail_at_commit AFTER UPDATE ON build_traces
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_at_commit();
        CREATE FUNCTION die_before_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.length = 26 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER die_before_commit BEFORE UPDATE ON build_traces FOR EACH ROW EXECUTE FUNCTION die_before_commit();`);
      expect(await t.storeA.append(1, 0, Buffer.from('0123456789'))).toEqual({ ok: true, length: 10 });

      await expect(t.storeA.append(1, 10, Buffer.from('abc'))).rejects.toThrow(/simulated failure at commit/);
      expect(fs.readFileSync(t.storeA.file(1), 'utf8')).toBe('0123456789abc');
      expect(await t.storeB.read(1)).toEqual({ body: Buffer.from('0123456789'), length: 10 });

      // The pool raises the cut session as an outage (store/pg/storage-errors.ts): a 503 for a request.
      const cut = await t.storeA.append(1, 10, Buffer.from('0123456789ABCDEF')).then(
        () => undefined,
        (err: unknown) => err as StorageError,
      );
      expect(cut).toBeInstanceOf(StorageError);
      expect({ kind: cut?.kind, cause: String((cut?.cause as Error | undefined)?.message) }).toEqual({ kind: 'unavailable', cause: expect.stringMatching(/terminat/i) as unknown });
      expect(fs.readFileSync(t.storeA.file(1), 'utf8')).toBe('01234567890123456789ABCDEF');
      // The dead session's lock went with it: the other instance is not kept waiting.
      expect(await t.storeB.read(1)).toEqual({ body: Buffer.from('0123456789'), length: 10 });
      expect(await t.storeB.append(1, 26, Buffer.from('x'))).toEqual({ ok: false, length: 10, reason: 'range' });
      expect(await t.storeB.append(1, 10, Buffer.from('-tail'))).toEqual({ ok: true, length: 15 });
      expect(fs.readFileSync(t.storeA.file(1), 'utf8')).toBe('0123456789-tail');
      // And instance A's pool recovered from the killed connection.
      expect(await t.storeA.append(1, 15, Buffer.from('!'))).toEqual({ ok: true, length: 16 });
      expect((await t.storeA.readAll(1)).toString()).toBe('0123456789-tail!');
    } finally {
      await t.close();
    }
  });

  it('replace: the other instance reads the new trace whole; a replace that crashed before its commit leaves the old one; appends go on after it', async () => {
    const t = await twoInstances(1);
    try {
      expect(await t.storeA.append(1, 0, Buffer.from('old trace'))).toEqual({ ok: true, length: 9 });
      // A replace that wrote its new file and died before the commit: nothing of it is read.
      fs.writeFileSync(t.storeA.file(1, 1), 'a replace that never committed, longer than the trace');
      expect((await t.storeB.readAll(1)).toString()).toBe('old trace');
      expect(await t.storeB.replace(1, Buffer.from('new'))).toEqual({ ok: true, length: 3 });
      expect((await t.storeA.readAll(1)).toString()).toBe('new');
      expect(fs.existsSync(t.storeA.file(1, 0))).toBe(false);
      expect(await t.storeA.append(1, 9, Buffer.from('!'))).toEqual({ ok: false, length: 3, reason: 'range' });
      expect(await t.storeA.append(1, 3, Buffer.from(' and more'))).toEqual({ ok: true, length: 12 });
      expect((await t.storeB.readAll(1)).toString()).toBe('new and more');
      expect(fs.readFileSync(t.storeA.file(1, 1), 'utf8')).toBe('new and more');
      await t.storeB.remove(1);
      expect(await t.storeA.length(1)).toBe(0);
      expect(await t.storeA.read(1)).toEqual({ body: null, length: 0 });
      expect(fs.existsSync(t.storeA.file(1, 1))).toBe(false);
      expect(await t.storeA.append(1, 0, Buffer.from('again'))).toEqual({ ok: true, length: 5 });
      expect((await t.storeB.readAll(1)).toString()).toBe('again');
      // The trace after a remove is a new file: an append that waited on the row never lands in the one being deleted.
      expect(fs.readFileSync(t.storeA.file(1, 2), 'utf8')).toBe('again');
      await t.storeA.remove(2); // no trace yet: nothing to do
    } finally {
      await t.close();
    }
  });

  it('kept append handles: a trace deleted, renamed over or cut outside Jobscope is reported lost, never written into; handles are bounded and closed when idle', async () => {
    const t = await twoInstances(4, 64 * 1024 * 1024, { max: 2, idleMs: 100 });
    try {
      const file = t.storeA.file(1);
      expect(await t.storeA.append(1, 0, Buffer.from('first'))).toEqual({ ok: true, length: 5 });
      expect(openFilesUnder(t.dir)).toEqual([file]);
      // Deleted: the kept handle's file has no name left; the append reports the loss instead of writing into it.
      fs.rmSync(file);
      await expect(t.storeA.append(1, 5, Buffer.from('second'))).rejects.toBeInstanceOf(TraceFileLostError);
      expect(await t.storeA.length(1)).toBe(5);
      // Renamed over with another file (a restore, say, that holds the acknowledged bytes): appends go on in it.
      fs.writeFileSync(file + '.restored', 'first');
      fs.renameSync(file + '.restored', file);
      expect(await t.storeA.append(1, 5, Buffer.from(' second'))).toEqual({ ok: true, length: 12 });
      expect(fs.readFileSync(file, 'utf8')).toBe('first second');
      // Cut through another descriptor: the kept handle sees the size.
      fs.truncateSync(file, 3);
      await expect(t.storeA.append(1, 12, Buffer.from('!'))).rejects.toBeInstanceOf(TraceFileLostError);
      fs.writeFileSync(file, 'first second');
      // At most `max` handles (least recently used closed first), all closed once idle.
      for (const id of [2, 3, 4]) expect(await t.storeA.append(id, 0, Buffer.from(`build ${id}`))).toEqual({ ok: true, length: 7 });
      expect(openFilesUnder(t.dir).sort()).toEqual([t.storeA.file(3), t.storeA.file(4)]);
      // Idle after 100 ms, swept every 50: closed on the thread pool, which a busy machine may hold up.
      await expect.poll(() => openFilesUnder(t.dir), { timeout: 5_000, interval: 50 }).toEqual([]);
      expect(await t.storeA.append(2, 7, Buffer.from('+'))).toEqual({ ok: true, length: 8 });
      expect((await t.storeB.readAll(2)).toString()).toBe('build 2+');
      await t.storeA.close();
      expect(openFilesUnder(t.dir)).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('too large: an append or replace past the limit is refused with the committed length; the offset is checked first; long reads stream', async () => {
    const t = await twoInstances(2, 100 * 1024);
    try {
      expect(await t.storeA.append(1, 0, Buffer.alloc(90 * 1024, 'a'))).toEqual({ ok: true, length: 90 * 1024 });
      expect(await t.storeB.append(1, 90 * 1024, Buffer.alloc(10 * 1024 + 1, 'b'))).toEqual({ ok: false, length: 90 * 1024, reason: 'too-large' });
      expect(await t.storeB.append(1, 5, Buffer.alloc(20 * 1024, 'b'))).toEqual({ ok: false, length: 90 * 1024, reason: 'range' });
      expect(await t.storeB.append(1, 90 * 1024, Buffer.alloc(10 * 1024, 'b'))).toEqual({ ok: true, length: 100 * 1024 });
      expect(await t.storeB.replace(1, Buffer.alloc(100 * 1024 + 1))).toEqual({ ok: false, length: 100 * 1024, reason: 'too-large' });
      // Past 64 KiB a read is a stream, bounded by the committed length even with debris after it.
      fs.appendFileSync(t.storeA.file(1), 'debris');
      const long = await t.storeA.read(1, 1024);
      expect(long.length).toBe(100 * 1024);
      expect(Buffer.isBuffer(long.body)).toBe(false);
      const streamed = await collect(long.body as NodeJS.ReadableStream);
      expect(streamed.equals(Buffer.concat([Buffer.alloc(89 * 1024, 'a'), Buffer.alloc(10 * 1024, 'b')]))).toBe(true);
      // A build with no trace at all.
      expect(await t.storeA.length(2)).toBe(0);
      expect(await t.storeA.readAll(2)).toEqual(Buffer.alloc(0));
      expect(await t.storeA.append(2, 0, Buffer.alloc(0))).toEqual({ ok: true, length: 0 });
    } finally {
      await t.close();
    }
  });
});

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

// The handles alone (no database): a build finished while one of its parts is being written.
it('a kept append handle forgotten while an append uses it is closed once that append is done, and the append lands', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-handles-'));
  const handles = new AppendHandles();
  try {
    const file = path.join(dir, '1.log');
    await handles.writeAt(1, file, 0, Buffer.from('first'), false);
    expect(openFilesUnder(dir)).toEqual([file]);
    // The append takes the kept handle before its first await: forget() then finds it in use.
    const writing = handles.writeAt(1, file, 5, Buffer.from(' second'), false);
    const forgotten = handles.forget(1);
    await writing;
    await forgotten;
    expect(fs.readFileSync(file, 'utf8')).toBe('first second');
    await expect.poll(() => openFilesUnder(dir), { timeout: 5_000, interval: 20 }).toEqual([]);
    // A part after that opens the file again by name, and keeps the handle as before.
    await handles.writeAt(1, file, 12, Buffer.from('!'), false);
    expect(fs.readFileSync(file, 'utf8')).toBe('first second!');
    expect(openFilesUnder(dir)).toEqual([file]);
  } finally {
    await handles.closeAll();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
