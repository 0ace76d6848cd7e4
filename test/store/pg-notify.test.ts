// Changes seen across instances on PostgreSQL (server/store/pg/notify.ts), against a real throwaway
// cluster with two instances (each its own pool and LISTEN connection):
// - a change committed on one is heard on the other, and the row is there to read;
// - a rolled-back change is heard by nobody; an instance does not hear its own changes;
// - a LISTEN connection killed by the server comes back and says 'resync', and later changes arrive;
//   one that cannot come back at once (the database refuses connections) keeps trying with backoff;
// - a LISTEN connection whose peer goes silent (a frozen proxy: no error, no data) is found by the
//   heartbeat, replaced, and resyncs;
// - 1,000 changes committed one after another all arrive, in commit order.
// Ordering instead of waiting: PostgreSQL delivers notifications to a session in commit order, so
// "nothing arrived for X" is asserted by committing X, then Y, and seeing Y arrive alone.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { startPgNotify, type PgChangeReceived, type PgNotifyBridge } from '../../server/store/pg/notify.ts';
import { PG_NOTIFY_PAYLOAD_LIMIT, decodeChange, encodeChange } from '../../server/store/pg/notify-payload.ts';
import { waitFor } from '../helpers/wait.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;

interface Instance {
  name: string;
  db: PgDatabase;
  bridge: PgNotifyBridge;
  heard: PgChangeReceived[];
  resyncs: string[];
  errors: Error[];
  close(): Promise<void>;
}

interface InstanceOptions {
  backoff?: { minMs?: number; maxMs?: number };
  heartbeatMs?: number;
  /** b's LISTEN connection goes to this URL (a proxy) instead of the database's. */
  listenUrlB?: (url: string) => string;
}

async function twoInstances(opts: InstanceOptions = {}): Promise<[Instance, Instance]> {
  const database = `n${++dbCount}`;
  const url = await pg.createDatabase(database);
  const start = async (name: string): Promise<Instance> => {
    const db = await openPgDatabase(url, { max: 3, applicationName: `${database}-${name}` });
    const errors: Error[] = [];
    const listenUrl = name === 'b' && opts.listenUrlB ? opts.listenUrlB(url) : url;
    const bridge = await startPgNotify(listenUrl, {
      applicationName: `${database}-${name}-listen`,
      backoff: opts.backoff,
      heartbeatMs: opts.heartbeatMs,
      onError: (e) => errors.push(e),
    });
    const inst: Instance = { name, db, bridge, heard: [], resyncs: [], errors, close: async () => (await bridge.close(), await db.close()) };
    for (const kind of ['build:pending', 'build:finished', 'artifacts:stored'] as const) bridge.events.on(kind, (c) => inst.heard.push(c));
    bridge.events.on('resync', ({ reason }) => inst.resyncs.push(reason));
    return inst;
  };
  return [await start('a'), await start('b')];
}

async function seedProject(inst: Instance) {
  await inst.db.pool.query(`INSERT INTO projects (id, name, runners_token, runners_token_sha, ci_token, ci_token_sha, shared_runners_enabled, created_at)
                             VALUES (1, 'p', 'r', 'rs', 'c', 'cs', true, 0)`);
}

/** Creates a pending build on `inst` and notifies it in the same transaction; returns its id. */
async function createBuild(inst: Instance, name: string): Promise<number> {
  return inst.bridge.transaction(inst.db.pool, async (tx, changed) => {
    const { rows } = await tx.query<{ id: number }>(
      `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at, tag_list)
       VALUES (1, 'pending', $1, 'test', 'main', 'a', 'b', 'true', $1, $1, 0, '[]') RETURNING id`,
      [name],
    );
    changed({ kind: 'build:pending', buildId: rows[0].id, projectId: 1 });
    return rows[0].id;
  });
}

const applicationPids = (name: string) =>
  pg
    .psql(`SELECT pid FROM pg_stat_activity WHERE application_name = '${name}'`)
    .trim()
    .split('\n')
    .filter(Boolean);

describe('PostgreSQL notify payloads: ids and kinds, under the 8000-byte limit', () => {
  it('round-trips a change, and the largest one it accepts is far under the limit', () => {
    const big = { kind: 'artifacts:stored' as const, buildId: Number.MAX_SAFE_INTEGER, projectId: Number.MAX_SAFE_INTEGER, status: 'x'.repeat(32) };
    const text = encodeChange('i'.repeat(64), big);
    expect(Buffer.byteLength(text)).toBeLessThan(PG_NOTIFY_PAYLOAD_LIMIT / 10);
    expect(decodeChange(text)).toEqual({ origin: 'i'.repeat(64), ...big });
  });

  it('refuses what is not a change instead of sending it', () => {
    expect(() => encodeChange('a', { kind: 'build:deleted' as never, buildId: 1 })).toThrow(/unknown change kind/);
    expect(() => encodeChange('a', { kind: 'build:pending', buildId: 1.5 })).toThrow(/positive integer/);
    expect(() => encodeChange('a', { kind: 'build:pending', buildId: 1, status: 'x'.repeat(8000) })).toThrow(/bad status/);
    expect(decodeChange('{"o":"a","k":"build:pending","b":"1"}')).toBeNull();
    expect(decodeChange('not json')).toBeNull();
  });
});

describe.skipIf(missing)(`PostgreSQL notify across instances${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a change committed on one instance is heard on the other, which can read the row', async () => {
    const [a, b] = await twoInstances();
    try {
      await seedProject(a);
      const id = await createBuild(a, 'first');
      await waitFor('b to hear the build', () => b.heard.length > 0, 20_000, 10);
      expect(b.heard).toEqual([{ origin: a.bridge.instanceId, kind: 'build:pending', buildId: id, projectId: 1 }]);
      const { rows } = await b.db.pool.query<{ name: string; status: string }>('SELECT name, status FROM builds WHERE id = $1', [b.heard[0].buildId]);
      expect(rows).toEqual([{ name: 'first', status: 'pending' }]);

      // Cancel on b, heard on a with the status a trace PATCH answers with.
      await b.bridge.transaction(b.db.pool, async (tx, changed) => {
        await tx.query(`UPDATE builds SET status = 'canceled' WHERE id = $1`, [id]);
        changed({ kind: 'build:finished', buildId: id, projectId: 1, status: 'canceled' });
      });
      await waitFor('a to hear the cancel', () => a.heard.length > 0, 20_000, 10);
      expect(a.heard).toEqual([{ origin: b.bridge.instanceId, kind: 'build:finished', buildId: id, projectId: 1, status: 'canceled' }]);
      // b's own cancel committed between a's two builds: b hears a's second build right after the first.
      const third = await createBuild(a, 'third');
      await waitFor('b to hear the third build', () => b.heard.length > 1, 20_000, 10);
      expect(b.heard.map((c) => c.buildId)).toEqual([id, third]);
      expect(a.errors.concat(b.errors)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a rolled-back change is heard by nobody, and an instance never hears its own', async () => {
    const [a, b] = await twoInstances();
    try {
      await seedProject(a);
      const rolledBack = await a.bridge
        .transaction(a.db.pool, async (tx, changed) => {
          const { rows } = await tx.query<{ id: number }>(
            `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at, tag_list)
             VALUES (1, 'pending', 'doomed', 'test', 'main', 'a', 'b', 'true', 'd', 'd', 0, '[]') RETURNING id`,
          );
          changed({ kind: 'build:pending', buildId: rows[0].id, projectId: 1 });
          // The change and its notification are both in the transaction when it fails.
          await tx.query('SELECT 1/0');
        })
        .then(
          () => null,
          (e: Error) => e.message,
        );
      expect(rolledBack).toMatch(/division by zero/);
      // Own change on a, then one on b: both committed after the rollback, in this order.
      const own = await createBuild(a, 'own');
      const other = await createBuild(b, 'other');
      await waitFor('both to hear the other', () => a.heard.length > 0 && b.heard.length > 0, 20_000, 10);
      // a hears only b's (not its own, committed before it); b hears only a's committed one, not the rolled-back one.
      expect(a.heard.map((c) => c.buildId)).toEqual([other]);
      expect(b.heard.map((c) => c.buildId)).toEqual([own]);
      expect((await a.db.pool.query(`SELECT count(*)::int AS n FROM builds WHERE name = 'doomed'`)).rows[0].n).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a LISTEN connection killed by the server reconnects and says resync; later changes still arrive', async () => {
    const [a, b] = await twoInstances();
    try {
      await seedProject(a);
      const name = `n${dbCount}-b-listen`;
      const [before] = applicationPids(name);
      expect(before).toBeTruthy();
      expect(pg.psql(`SELECT pg_terminate_backend(${before})`).trim()).toBe('t');
      await waitFor('b to resync', () => b.resyncs.length > 0, 20_000, 10);
      expect(b.bridge.listening).toBe(true);
      expect(b.errors.map((e) => e.message).join('\n')).toMatch(/terminat/i);
      const after = applicationPids(name);
      expect(after).toHaveLength(1);
      expect(after[0]).not.toBe(before);
      const id = await createBuild(a, 'after-reconnect');
      await waitFor('b to hear a change after the reconnect', () => b.heard.length > 0, 20_000, 10);
      expect(b.heard.map((c) => c.buildId)).toEqual([id]);
      expect(b.resyncs).toHaveLength(1);
      expect(a.resyncs).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('while the database refuses connections the LISTEN side keeps retrying with backoff, then resyncs once back', async () => {
    const [a, b] = await twoInstances({ backoff: { minMs: 20, maxMs: 200 } });
    const database = `n${dbCount}`;
    try {
      await seedProject(a);
      pg.psql(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`, 'postgres');
      pg.psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${database}-b-listen'`, 'postgres');
      // Lost, then at least three refused attempts (each reported): it keeps trying.
      await waitFor('b to fail to reconnect a few times', () => b.errors.length >= 4, 20_000, 10);
      expect(b.bridge.listening).toBe(false);
      expect(b.resyncs).toEqual([]);
      expect(b.errors.slice(1).every((e) => /not currently accepting connections/.test(e.message))).toBe(true);
      pg.psql(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`, 'postgres');
      await waitFor('b to resync once the database accepts connections', () => b.resyncs.length > 0, 20_000, 10);
      expect(b.resyncs).toHaveLength(1);
      const id = await createBuild(a, 'after-outage');
      await waitFor('b to hear a change after the outage', () => b.heard.length > 0, 20_000, 10);
      expect(b.heard.map((c) => c.buildId)).toEqual([id]);
    } finally {
      pg.psql(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`, 'postgres');
      await a.close();
      await b.close();
    }
  });

  it('notify() outside a transaction throws instead of notifying ahead of the change', async () => {
    const [a, b] = await twoInstances();
    try {
      const tx = await a.db.pool.connect();
      try {
        await expect(a.bridge.notify(tx, { kind: 'build:pending', buildId: 7 })).rejects.toThrow(/not in a transaction/);
      } finally {
        tx.release();
      }
      await seedProject(a);
      const id = await createBuild(a, 'next');
      await waitFor('b to hear the committed build', () => b.heard.length > 0, 20_000, 10);
      expect(b.heard.map((c) => c.buildId)).toEqual([id]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a LISTEN connection whose peer goes silent is found by the heartbeat, replaced, and resyncs', async () => {
    // A TCP proxy for b's LISTEN connection; freeze() stops carrying the bytes of the connections it
    // holds without closing them, as a cut network does. Connections made later pass.
    const held: net.Socket[] = [];
    const proxy = net.createServer((client) => {
      const upstream = net.connect(pg.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      held.push(client, upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.address() as net.AddressInfo).port;
    const freeze = () => {
      for (const s of held.splice(0)) {
        s.unpipe();
        s.pause();
      }
    };
    const [a, b] = await twoInstances({
      // Long enough that a loaded machine does not miss a beat before the freeze.
      heartbeatMs: 500,
      backoff: { minMs: 20, maxMs: 200 },
      listenUrlB: (url) => url.replace(`:${pg.port}/`, `:${proxyPort}/`),
    });
    try {
      await seedProject(a);
      const first = await createBuild(a, 'before-freeze');
      await waitFor('b to hear through the proxy', () => b.heard.length > 0, 20_000, 10);
      freeze();
      await waitFor('b to notice the silent connection and resync', () => b.resyncs.length > 0, 20_000, 10);
      expect(b.errors.map((e) => e.message).join('\n')).toMatch(/did not answer within 500 ms/);
      const second = await createBuild(a, 'after-freeze');
      await waitFor('b to hear a change on the new connection', () => b.heard.length > 1, 20_000, 10);
      expect(b.heard.map((c) => c.buildId)).toEqual([first, second]);
    } finally {
      await a.close();
      await b.close();
      for (const s of held) s.destroy();
      proxy.close();
    }
  });

  it('a burst of 1,000 changes committed one after another all arrive, in commit order', async () => {
    const [a, b] = await twoInstances();
    try {
      const tx = await a.db.pool.connect();
      try {
        for (let i = 1; i <= 1000; i++) {
          await tx.query('BEGIN');
          await a.bridge.notify(tx, { kind: 'build:finished', buildId: i, status: 'success' });
          await tx.query('COMMIT');
        }
      } finally {
        tx.release();
      }
      await waitFor('b to hear 1,000 changes', () => b.heard.length >= 1000, 60_000, 10);
      expect(b.heard.map((c) => c.buildId)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
      expect(b.errors).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
