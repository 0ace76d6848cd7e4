// Build traces for several instances sharing one PostgreSQL database and one traces folder:
// TracesPort's results (store/ports.ts), asynchronous. Not wired to serve yet (see index.ts).
//
// The database is the truth for a trace's length (build_traces.length), not the file: on one server
// (store/traces.ts) one process writes each file and its size is the length; here any instance may
// write, and a file's size says nothing about which of its bytes were acknowledged.
//
// An append locks the build's build_traces row (SELECT … FOR UPDATE) and, holding it, checks the
// offset against the committed length, writes the bytes at that length, fsyncs them, and commits the
// new length. A part arriving at another instance at the same moment waits on the row, then reads the
// length the first one committed: its offset no longer matches, and it gets the 416 with the true
// length. So parts of one build never interleave or overlap, whichever instances they reach.
//
// Why write+fsync first and commit the length second: the length is only ever moved over bytes that
// are already on disk, so an acknowledged append (answered after its COMMIT) is durable; and readers
// read up to the committed length, so an append that has not committed is invisible, never half-seen.
// A crash (or a failed commit) between the two leaves bytes past the committed length that nobody
// reads; the next append, holding the lock (so no writer is mid-append), cuts them off before writing.
// The other order would commit lengths over bytes that may never arrive: readers would see holes.
// Reads do not cut: they hold no lock, and bytes past the length may be another instance's append
// between its fsync and its commit, about to be acknowledged.
//
// The lock is a row of its own table, not the builds row: dispatch, cancel and finish update the
// builds row, and foreign-key checks on it take KEY SHARE; a FOR UPDATE on it held over a write and
// an fsync would make them wait on traces. A row lock also ends with its session if an instance dies.
//
// A replace writes a new file (the next generation's name), fsyncs it, commits the new length and
// generation, and only then deletes the old file: readers see the old trace or the new one, whole.
// Generations only grow (remove moves on too), so a file name is never written again once a
// generation has moved past it; the only file of a later generation that can exist early is a
// replace's that never committed, and the next replace or append overwrites or cuts it.
// Without fsync (--fsync off, the default) the order still holds against a killed process, whose
// writes the kernel keeps; a power cut or a machine crash may then lose acknowledged bytes (as on
// one server), and a file found shorter than its length is reported (TraceFileLostError).
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Pool, PoolClient, QueryResult } from 'pg';
import type { AppendResult } from '../ports/trace.ts';
import type { BuildStatus } from '../ports/build.ts';
import type { Queryable } from './connect.ts';
import { AppendHandles, openForRead, readRange, writeWhole, type AppendHandlesOptions } from './traces-files.ts';
import { inTransactionSteps, type Committed } from './transaction.ts';

/** Reads up to this size are returned as a Buffer, longer ones as a stream (as store/traces.ts). */
const READ_AT_ONCE = 64 * 1024;

interface TraceRow {
  length: number;
  generation: number;
  /** The build's, read with the lock: another instance may have finished it since its token was checked. */
  status: BuildStatus;
}

/** An append's answer and the build's status as its lock read it (GitLab answers it as Build-Status). */
export interface StatusedAppend {
  result: AppendResult;
  status: BuildStatus;
}

/**
 * An integer written into a statement's text, checked to be one. Why text at all: an append is
 * BEGIN, the row lock, the length's UPDATE and COMMIT, and each statement sent alone is a round trip
 * to the cluster and a query's work in pg and in a backend; PostgreSQL runs several statements of one
 * simple query in order, but takes parameters only for one. So the two pairs go as two texts with
 * their integers in them (a build id, a length, a generation: never a client's string).
 */
function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new TypeError(`not an integer: ${n}`);
  return String(n);
}

/**
 * The build's trace row, locked until the transaction ends (`id` from int()), with the build's
 * status in the same statement: the part's token was checked against credentials this instance
 * kept (backend.ts), whose status may be stale, and a read of its own would be another round trip.
 * Only the trace row is locked: the builds row is read as any reader reads it.
 */
const lockRow = (id: string) =>
  `SELECT t.length, t.generation, b.status FROM build_traces t JOIN builds b ON b.id = t.build_id WHERE t.build_id = ${id} FOR UPDATE OF t`;

export interface PgTraceOptions {
  fsync: boolean;
  maxBytes: number;
  /** The kept append handles' limits (traces-files.ts AppendHandles). */
  handles?: AppendHandlesOptions;
}

export class PgTraceStore {
  private readonly handles: AppendHandles;

  constructor(
    private readonly pool: Pool,
    /** The traces folder every instance shares. */
    private readonly dir: string,
    private readonly opts: PgTraceOptions,
  ) {
    this.handles = new AppendHandles(opts.handles);
  }

  /** Closes the append handles it keeps. */
  close(): Promise<void> {
    return this.handles.closeAll();
  }

  /** Closes the build's append handle, if this instance keeps one (its build is finished). */
  release(buildId: number): Promise<void> {
    return this.handles.forget(buildId);
  }

  /** Generation 0 keeps the single server's name (<id>.log); each replace moves to <id>.<generation>.log. */
  file(buildId: number, generation = 0): string {
    const id = Math.trunc(buildId);
    return path.join(this.dir, generation === 0 ? `${id}.log` : `${id}.${generation}.log`);
  }

  /** The committed length (0 for a build with no trace). */
  async length(buildId: number): Promise<number> {
    return (await this.current(this.pool, buildId)).length;
  }

  /** Appends at `start`, which must equal the committed length (GitLab's incremental trace rule). */
  async append(buildId: number, start: number, bytes: Buffer): Promise<AppendResult> {
    return (await this.appendWithStatus(buildId, start, bytes)).result;
  }

  /** append(), with the build's status as it was when the append held the trace row. */
  appendWithStatus(buildId: number, start: number, bytes: Buffer): Promise<StatusedAppend> {
    return this.locked(buildId, async ({ length, generation, status }): Promise<Committed<StatusedAppend>> => {
      const answer = (result: AppendResult) => ({ result, status });
      if (start !== length) return { out: answer({ ok: false, length, reason: 'range' }) };
      if (length + bytes.length > this.opts.maxBytes) return { out: answer({ ok: false, length, reason: 'too-large' }) };
      if (bytes.length === 0) return { out: answer({ ok: true, length }) };
      await this.handles.writeAt(buildId, this.file(buildId, generation), length, bytes, this.opts.fsync);
      const next = length + bytes.length;
      return { out: answer({ ok: true, length: next }), then: `UPDATE build_traces SET length = ${int(next)} WHERE build_id = ${int(buildId)}` };
    });
  }

  /** Replaces the whole trace: readers on any instance see the old one or the new one, whole. */
  async replace(buildId: number, bytes: Buffer): Promise<AppendResult> {
    return (await this.replaceIf(buildId, bytes, async () => true))!;
  }

  /**
   * replace(), with `guard` run first in its transaction (holding the trace row): when it answers
   * false nothing is written and the answer is undefined. What the guard changes commits with the
   * trace or not at all: the runner's final PUT finishes its build and stores its trace as one.
   */
  async replaceIf(buildId: number, bytes: Buffer, guard: (tx: PoolClient) => Promise<boolean>): Promise<AppendResult | undefined> {
    if (bytes.length > this.opts.maxBytes) return { ok: false, length: await this.length(buildId), reason: 'too-large' };
    let old = '';
    const result = await this.locked(buildId, async (row, client): Promise<Committed<AppendResult | undefined>> => {
      if (!(await guard(client))) return { out: undefined };
      const next = row.generation + 1;
      await writeWhole(this.file(buildId, next), bytes, this.opts.fsync);
      old = this.file(buildId, row.generation);
      return { out: { ok: true, length: bytes.length }, then: `UPDATE build_traces SET length = ${int(bytes.length)}, generation = ${int(next)} WHERE build_id = ${int(buildId)}` };
    });
    if (!result) return undefined;
    // After the commit: until then the old file was the trace. A crash before this leaves a file no row names.
    await this.handles.forget(buildId);
    await fsp.rm(old, { force: true });
    return result;
  }

  /**
   * The trace from `start` to the committed length: a Buffer up to READ_AT_ONCE bytes, else a stream
   * of an already open file (a replace or remove after this read began does not cut it short).
   */
  async read(buildId: number, start = 0): Promise<{ body: Buffer | Readable | null; length: number }> {
    for (let attempt = 0; ; attempt++) {
      const row = await this.current(this.pool, buildId);
      if (start >= row.length) return { body: null, length: row.length };
      const handle = await openForRead(this.file(buildId, row.generation));
      if (!handle) {
        // A replace (new file) or remove committed between the row and the open: read the row again.
        if (attempt < 3) continue;
        return { body: null, length: start };
      }
      if (row.length - start > READ_AT_ONCE) return { body: handle.createReadStream({ start, end: row.length - 1 }), length: row.length };
      const body = await readRange(handle, start, row.length);
      // A file cut short behind our back: what it holds, and a length that says so (as store/traces.ts).
      return { body, length: start + body.length };
    }
  }

  async readAll(buildId: number): Promise<Buffer> {
    const { body } = await this.read(buildId, 0);
    if (body === null) return Buffer.alloc(0);
    if (Buffer.isBuffer(body)) return body;
    const parts: Buffer[] = [];
    for await (const part of body) parts.push(part as Buffer);
    return Buffer.concat(parts);
  }

  /**
   * Drops the trace: length 0 and the next generation committed first, then the old file deleted.
   * The row is kept and the name moves on, as in replace: deleting the row would let an append that
   * was waiting on it start again at generation 0, in the very file this call is about to delete.
   */
  async remove(buildId: number): Promise<void> {
    const { rows } = await this.pool.query<{ old: number }>(
      'UPDATE build_traces SET length = 0, generation = generation + 1 WHERE build_id = $1 RETURNING generation - 1 AS old',
      [buildId],
    );
    // No row: nothing was ever committed, and debris of a first append is cut by the next one.
    await this.handles.forget(buildId);
    if (rows.length) await fsp.rm(this.file(buildId, rows[0].old), { force: true });
  }

  private async current(db: Queryable, buildId: number): Promise<Omit<TraceRow, 'status'>> {
    const { rows } = await db.query<Omit<TraceRow, 'status'>>('SELECT length, generation FROM build_traces WHERE build_id = $1', [buildId]);
    return rows[0] ?? { length: 0, generation: 0 };
  }

  /**
   * Runs `fn` in a transaction holding the build's trace row (made on the first use), then commits,
   * with the statement `fn` leaves (its length's UPDATE) in the COMMIT's round trip: BEGIN and the
   * lock go as one text, the UPDATE and COMMIT as another (see int()).
   */
  private locked<T>(buildId: number, fn: (row: TraceRow, client: PoolClient) => Promise<Committed<T>>): Promise<T> {
    const id = int(buildId);
    return inTransactionSteps(this.pool, `BEGIN; ${lockRow(id)}`, async (client, [, locked]) => {
      let rows = (locked as QueryResult<TraceRow>).rows;
      if (!rows.length) {
        // Two first appends at once: one inserts, the other's insert waits for it and does nothing.
        await client.query('INSERT INTO build_traces (build_id) VALUES ($1) ON CONFLICT (build_id) DO NOTHING', [buildId]);
        ({ rows } = await client.query<TraceRow>(lockRow(id)));
      }
      return fn(rows[0]!, client);
    });
  }
}
