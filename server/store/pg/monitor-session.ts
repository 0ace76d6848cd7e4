// The monitor's own PostgreSQL session: who samples which connection across instances,
// and the changes to connections other instances make, heard at once.
//
// Each connection is sampled by the instance holding a session-level advisory lock on it
// (pg_try_advisory_lock). A lock lives exactly as long as the session that took it: an instance
// that stops, crashes or loses its network loses its session, PostgreSQL frees its locks, and the
// next claim of another instance takes them. No lease row, no expiry to tune, no clock to trust.
//
// Fencing: a sample is written on this same session, in a transaction. While the session lives, it
// holds the lock, so nobody else samples the connection; once it is gone the write fails with it.
// An instance cut off from the database therefore cannot write a sample after another has taken over
// (as it could through the pool, whose other connections know nothing of the lock).
//
// One session per instance, not per connection: its transactions run one at a time (a chain), which
// a sample's few small writes every few seconds per connection do not notice.
import os from 'node:os';
import type { Client, Notification } from 'pg';
import { explainConnectError } from './start-errors.ts';
import { checkUrl } from '../database-url.ts';
import type { Queryable } from './connect.ts';
import type { MonitorSessionOptions } from '../ports/monitor-ports.ts';

/** Connection changes (added, edited, removed): ids only, as notify.ts does for builds. */
export const MONITOR_CHANNEL = 'jobscope_monitor';

const INT8_OID = 20;
const LOCK_CLASS = "hashtext('jobscope-monitor')";
const ORIGIN = /^[0-9a-zA-Z_-]{1,64}$/;

export interface MonitorSession {
  /** Of these connection ids, the ones this session now holds (taken now or before). */
  claim(ids: string[]): Promise<string[]>;
  release(id: string): Promise<void>;
  /** Runs fn in a transaction on the session: it commits only while the session (and its locks) live. */
  write<T>(fn: (db: Queryable) => Promise<T>): Promise<T>;
  /** Tells the other instances a connection changed (after its change committed). */
  announce(db: Queryable, connectionId: string): Promise<void>;
  readonly alive: boolean;
  /** Frees every lock and ends the session; the others take over at their next claim. */
  close(): Promise<void>;
}

export async function openMonitorSession(url: string, opts: MonitorSessionOptions): Promise<MonitorSession> {
  checkUrl(url);
  if (!ORIGIN.test(opts.instanceId)) throw new Error(`monitor session: bad instance id ${JSON.stringify(opts.instanceId)}`);
  const { default: pg } = await import('pg');
  const builtin = pg.types.getTypeParser.bind(pg.types) as (oid: number, format?: string) => unknown;
  const client: Client = new pg.Client({
    connectionString: url,
    application_name: `jobscope/${os.hostname()}/${process.pid}/monitor`,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // bigint as a number, as the pool reads it (connect.ts): epoch ms, alert ids.
    types: { getTypeParser: ((oid: number, format?: string) => (oid === INT8_OID ? Number : builtin(oid, format))) as never },
  });
  const held = new Set<string>();
  let alive = false;
  let closing = false;
  const lost = (err: Error) => {
    if (!alive) return;
    alive = false;
    held.clear();
    client.end().catch(() => undefined);
    if (!closing) opts.onLost(err);
  };
  // Bound before connect: an 'error' nobody listens to would end the process.
  client.on('error', (err) => lost(err));
  client.on('end', () => lost(new Error('monitor session: the connection ended')));
  client.on('notification', (msg: Notification) => {
    if (msg.channel !== MONITOR_CHANNEL || !msg.payload) return;
    let v: { o?: unknown; c?: unknown };
    try {
      v = JSON.parse(msg.payload) as typeof v;
    } catch {
      return opts.onError?.(new Error(`monitor session: ignored a payload that is not ours: ${msg.payload.slice(0, 200)}`));
    }
    if (v.o === opts.instanceId || typeof v.c !== 'string') return;
    try {
      opts.onChange(v.c);
    } catch (err) {
      opts.onError?.(err as Error);
    }
  });
  try {
    await client.connect();
    await client.query(`LISTEN ${MONITOR_CHANNEL}`);
  } catch (err) {
    await client.end().catch(() => undefined);
    throw explainConnectError(err, url);
  }
  alive = true;

  // One statement or transaction at a time on the one client: a BEGIN of one caller must not wrap
  // another's statements.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(() => {
      if (!alive) throw new Error('monitor session: not connected (its locks are gone)');
      return fn();
    });
    chain = run.catch(() => undefined);
    return run;
  };

  return {
    get alive() {
      return alive;
    },
    claim(ids) {
      return serial(async () => {
        const want = ids.filter((id) => !held.has(id));
        if (want.length) {
          // A lock taken twice by one session must be freed twice: only ids not held are asked for.
          const { rows } = await client.query<{ id: string; got: boolean }>(
            `SELECT id, pg_try_advisory_lock(${LOCK_CLASS}, hashtext(id)) AS got FROM unnest($1::text[]) AS id`,
            [want],
          );
          for (const r of rows) if (r.got) held.add(r.id);
        }
        return ids.filter((id) => held.has(id));
      });
    },
    release(id) {
      if (!held.has(id)) return Promise.resolve();
      return serial(async () => {
        if (!held.delete(id)) return;
        await client.query(`SELECT pg_advisory_unlock(${LOCK_CLASS}, hashtext($1))`, [id]);
      });
    },
    write(fn) {
      return serial(async () => {
        await client.query('BEGIN');
        try {
          const out = await fn(client);
          await client.query('COMMIT');
          return out;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      });
    },
    async announce(db, connectionId) {
      await db.query('SELECT pg_notify($1, $2)', [MONITOR_CHANNEL, JSON.stringify({ o: opts.instanceId, c: connectionId })]);
    },
    async close() {
      if (closing) return;
      closing = true;
      if (!alive) return;
      // The others hear '' and claim at once instead of at their next periodic claim.
      await serial(async () => {
        await client.query('SELECT pg_advisory_unlock_all()');
        await client.query('SELECT pg_notify($1, $2)', [MONITOR_CHANNEL, JSON.stringify({ o: opts.instanceId, c: '' })]);
      }).catch(() => undefined);
      alive = false;
      held.clear();
      await client.end().catch(() => undefined);
    },
  };
}
