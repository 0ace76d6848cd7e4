// Changes seen across instances: what one `jobscope serve` commits to the shared database,
// the others hear about through LISTEN/NOTIFY and re-emit on an AppEvents-like emitter, so their
// X-GitLab-Last-Update, a trace PATCH's Build-Status: canceled and the UI's live views follow
// changes made on any instance. Not wired to serve yet (see index.ts).
//
// - The notification is sent inside the transaction that makes the change (notify() takes the
//   transaction's client; transaction() runs both): PostgreSQL delivers it at COMMIT and drops it at
//   ROLLBACK, so listeners never hear of a change that did not happen, nor miss one that did (as they
//   could if it were sent after the commit by a process that dies in between).
// - Payloads are kinds and ids (notify-payload.ts), far below PostgreSQL's 8000-byte limit.
// - Each instance tags its payloads with its id and drops its own: its domain already emitted the
//   in-process event when it made the change, and a second one would tick runners' queues twice.
// - LISTEN runs on a connection of its own, not one of the pool's: a pooled client is handed to
//   other queries and released, and a released client's LISTEN would hear for whoever holds it next,
//   or be lost when the pool closes it for idling.
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import type { Client, Notification, Pool, PoolClient } from 'pg';
import { explainConnectError } from './start-errors.ts';
import { checkUrl } from '../database-url.ts';
import { decodeChange, encodeChange, type PgChange, type PgChangeReceived } from './notify-payload.ts';
import { inTransaction } from './transaction.ts';

export { CHANGE_KINDS, PG_NOTIFY_PAYLOAD_LIMIT, type ChangeKind, type PgChange, type PgChangeReceived } from './notify-payload.ts';

/** One channel per database (NOTIFY does not cross databases, so instances of other deployments never hear it). */
export const NOTIFY_CHANNEL = 'jobscope_changes';

export interface PgNotifyEventMap {
  'build:pending': [PgChangeReceived];
  'build:finished': [PgChangeReceived];
  'artifacts:stored': [PgChangeReceived];
  /** The LISTEN connection was lost and is back: changes committed meanwhile were never heard. Re-read. */
  resync: [{ reason: string }];
}

export class PgNotifyEvents extends EventEmitter<PgNotifyEventMap> {}

export interface PgNotifyOptions {
  /** Tags this instance's notifications so it can drop its own; random by default. */
  instanceId?: string;
  /** The LISTEN connection's name in pg_stat_activity; default jobscope/<host>/<pid>/listen. */
  applicationName?: string;
  /** Per connect attempt (default 10 s). */
  connectTimeoutMs?: number;
  /** Reconnect delays: the first, doubled on each failure up to the most (default 100 ms, 5 s), with jitter. */
  backoff?: { minMs?: number; maxMs?: number };
  /**
   * How often the LISTEN connection is asked SELECT 1 (default 15 s); one not answered by the next
   * ask counts as lost. Keepalive alone would take the kernel's ~11 minutes to notice a silent peer.
   */
  heartbeatMs?: number;
  /** The LISTEN connection was lost, a reconnect failed, a payload was not ours or a listener threw. */
  onError?: (err: Error) => void;
  /** Emit on this emitter instead of a new one. */
  events?: PgNotifyEvents;
}

export interface PgNotifyBridge {
  readonly instanceId: string;
  /** Changes committed by other instances, and 'resync'. */
  readonly events: PgNotifyEvents;
  /** Whether the LISTEN connection is up right now. */
  readonly listening: boolean;
  /**
   * Sends the change's notification in tx's open transaction: delivered at its COMMIT, dropped at
   * ROLLBACK. Throws when tx is not in a transaction (the notification would go out at once, ahead
   * of, or without, the change).
   */
  notify(tx: PoolClient, change: PgChange): Promise<void>;
  /**
   * Runs fn in a transaction on one of pool's clients; the changes fn reports through `changed` are
   * notified in the same transaction, just before COMMIT. Rolled back (and nothing notified) when fn
   * or the COMMIT throws.
   */
  transaction<T>(pool: Pool, fn: (tx: PoolClient, changed: (change: PgChange) => void) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Connects the LISTEN connection (throws a PgStoreError saying what to check when it cannot) and returns the bridge. */
export async function startPgNotify(url: string, opts: PgNotifyOptions = {}): Promise<PgNotifyBridge> {
  checkUrl(url);
  const { default: pg } = await import('pg');
  const instanceId = opts.instanceId ?? crypto.randomBytes(6).toString('hex');
  // Fails now, by name, rather than on the first change.
  encodeChange(instanceId, { kind: 'build:pending', buildId: 1 });
  const events = opts.events ?? new PgNotifyEvents();
  const minMs = opts.backoff?.minMs ?? 100;
  const maxMs = Math.max(minMs, opts.backoff?.maxMs ?? 5_000);
  const report = (err: unknown) => opts.onError?.(err instanceof Error ? err : new Error(String(err)));

  let client: Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let failures = 0;
  let heartbeat: NodeJS.Timeout | null = null;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;

  const deliver = (msg: Notification) => {
    if (msg.channel !== NOTIFY_CHANNEL) return;
    const change = decodeChange(msg.payload);
    if (!change) return report(new Error(`notify: ignored a payload that is not a change: ${String(msg.payload).slice(0, 200)}`));
    if (change.origin === instanceId) return;
    // A listener's throw would unwind into the driver's message parsing.
    try {
      events.emit(change.kind, change);
    } catch (err) {
      report(err);
    }
  };

  const connectOnce = async (): Promise<Client> => {
    const c = new pg.Client({
      connectionString: url,
      application_name: opts.applicationName ?? `jobscope/${os.hostname()}/${process.pid}/listen`,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      // This connection mostly waits: keepalive lets the kernel close it once its peer is gone for
      // good; the heartbeat below notices a silent peer sooner.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // Bound before connect: an 'error' nobody listens to would end the process.
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c, new Error('notify: the LISTEN connection ended')));
    c.on('notification', deliver);
    try {
      await c.connect();
      await c.query(`LISTEN ${NOTIFY_CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    return c;
  };

  const lost = (c: Client, err: Error) => {
    if (c !== client || closed) return;
    client = null;
    stopHeartbeat();
    report(err);
    // With the heartbeat's query in flight end() destroys the socket rather than wait for a goodbye.
    c.end().catch(() => undefined);
    reconnect(err.message);
  };

  const stopHeartbeat = () => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
  };

  // A connection whose peer went silent (a cut network, a frozen proxy) raises no error: the socket
  // just stops carrying notifications. A query that is never answered is how it shows.
  const startHeartbeat = (c: Client) => {
    let waiting = false;
    heartbeat = setInterval(() => {
      if (waiting) return lost(c, new Error(`notify: the LISTEN connection did not answer within ${heartbeatMs} ms`));
      waiting = true;
      c.query('SELECT 1').then(
        () => void (waiting = false),
        () => undefined, // a broken connection also emits 'error' or 'end', which handle it
      );
    }, heartbeatMs);
  };

  const reconnect = (reason: string) => {
    // Jitter: after a database restart every instance reconnects, and not all in the same instant.
    const delay = Math.min(maxMs, minMs * 2 ** failures) * (0.5 + Math.random() / 2);
    timer = setTimeout(() => {
      timer = null;
      connectOnce().then(
        (c) => {
          if (closed) return void c.end().catch(() => undefined);
          client = c;
          failures = 0;
          startHeartbeat(c);
          // PostgreSQL delivers a notification only to the sessions listening when it commits; it
          // keeps none for a session that is gone. Changes committed while this instance had no LISTEN
          // connection will never be told to it: a new pending build would stay hidden behind a stale
          // X-GitLab-Last-Update, a cancel would never reach Build-Status. So consumers must assume
          // they missed some and re-read. Emitted after LISTEN is in effect: whatever commits from here
          // on is notified, whatever committed before is in the re-read (some changes may reach a
          // consumer both ways; re-reading and ticking are safe to repeat).
          try {
            events.emit('resync', { reason });
          } catch (err) {
            report(err);
          }
        },
        (err: unknown) => {
          if (closed) return;
          failures++;
          report(err);
          reconnect(reason);
        },
      );
    }, delay);
  };

  try {
    client = await connectOnce();
  } catch (err) {
    throw explainConnectError(err, url);
  }
  startHeartbeat(client);

  const notify = async (tx: PoolClient, change: PgChange) => {
    // 'T' is set by the server's ReadyForQuery after BEGIN; 'I' idle (autocommit), 'E' a failed transaction.
    if (tx.getTransactionStatus() !== 'T') throw new Error('notify: not in a transaction: send the notification in the transaction that makes the change');
    await tx.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, encodeChange(instanceId, change)]);
  };

  return {
    instanceId,
    events,
    get listening() {
      return client !== null;
    },
    notify,
    transaction(pool, fn) {
      return inTransaction(pool, 'BEGIN', async (tx) => {
        const changes: PgChange[] = [];
        const result = await fn(tx, (change) => {
          // Checked when reported, so a bad change fails where it was made.
          encodeChange(instanceId, change);
          changes.push(change);
        });
        for (const change of changes) await notify(tx, change);
        return result;
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      stopHeartbeat();
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
