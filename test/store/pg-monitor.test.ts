// The PostgreSQL adapters of the monitor's ports (server/store/pg/monitor-{connections,alerts,
// history}.ts) against the SQLite ones (server/store/monitor-*.ts), on a real throwaway cluster:
// one seeded random sequence of calls to connections, alerts and history, made to both stores,
// must get the same answers at every step: fields, order (ties in creation time broken by id byte
// by byte), the JSON text of the last sample as stored, which calls throw (a duplicate id, an alert
// or sample of a connection that does not exist), and what a removed connection takes with it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { outcome } from '../helpers/differential.ts';
import { Prng } from '../../common/prng.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { sqliteMonitorStore } from '../../server/store/sqlite/monitor-store.ts';
import type { AlertsRepo, ConnectionFields, ConnectionsRepo, MonitorHistoryRepo, SampleRow } from '../../server/store/ports/monitor-ports.ts';
import type { Thresholds } from '../../contract/app.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgConnections } from '../../server/store/pg/monitor-connections.ts';
import { PgAlerts } from '../../server/store/pg/monitor-alerts.ts';
import { PgMonitorHistory } from '../../server/store/pg/monitor-history.ts';
import { pgMonitorStore } from '../../server/store/pg/monitor-store.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;

interface Side {
  connections: ConnectionsRepo | PgConnections;
  alerts: AlertsRepo | PgAlerts;
  history: MonitorHistoryRepo | PgMonitorHistory;
}

// Ids that sort differently by bytes than by a linguistic collation (upper before lower, é after z).
const IDS = ['embedded', 'b-remote', 'B-remote', 'a1', 'é-conn', 'z9'];
const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);

/** bytea reads as a Buffer, SQLite's blob as a plain Uint8Array: both compared as their bytes. */
const samplesAsBytes = (rows: Iterable<SampleRow>) => [...rows].map((r) => ({ ...r, data: r.data === null ? null : Array.from(r.data) }));

type Step = { what: string; run: (s: Side) => Promise<unknown> };

function randomFields(rnd: Prng): Partial<ConnectionFields> {
  const f: Partial<ConnectionFields> = {};
  if (rnd.chance(0.5)) f.name = rnd.pick(['prod', 'ünïcode ✓', 'staging "q"']);
  if (rnd.chance(0.3)) f.baseUrl = rnd.pick(['https://gitlab.example.invalid', 'redis://127.0.0.1:6379/2']);
  if (rnd.chance(0.3)) f.token = rnd.pick(['tok-1', '', 'tok-é']);
  if (rnd.chance(0.3)) f.apiVersion = rnd.pick(['v3', 'v4'] as const);
  if (rnd.chance(0.3)) f.segment = rnd.pick(['sidekiq', 'jobqueue', '']);
  if (rnd.chance(0.3)) f.intervalS = rnd.pick([2, 5, 60]);
  if (rnd.chance(0.3)) f.enabled = rnd.chance(0.5);
  return f;
}

function planStep(rnd: Prng): Step {
  const roll = rnd.int(0, 99);
  const id = rnd.pick(IDS);
  const at = T0 + rnd.pick([0, 0, 1000, 60_000, 3_600_000]);
  if (roll < 10) {
    const { baseUrl, token, ...rest } = randomFields(rnd);
    const fields = { name: 'c', apiVersion: 'v4' as const, segment: 'sidekiq', intervalS: 5, enabled: true, ...rest, baseUrl: baseUrl ?? 'https://x.invalid', token: token ?? 't', kind: rnd.pick([undefined, 'gitlab', 'sidekiq'] as const) };
    return { what: `connections.create(${id}, ${JSON.stringify(fields)}, +${at - T0})`, run: async (s) => s.connections.create(id, fields, at) };
  }
  if (roll < 14) return { what: `connections.ensureEmbedded(${id})`, run: async (s) => { await s.connections.ensureEmbedded(id, 5, at); return s.connections.list(); } };
  if (roll < 20) {
    const patch = randomFields(rnd);
    return { what: `connections.update(${id}, ${JSON.stringify(patch)})`, run: async (s) => s.connections.update(id, patch) };
  }
  if (roll < 24) {
    const t = rnd.pick<Thresholds>([{ queues: {} }, { queues: { default: { latency: 1.5, backlog: 10 } }, failure_rate: 0.25 }, { queues: { mailers: { backlog: 0 } }, default: { latency: 30 } }]);
    return { what: `connections.setThresholds(${id}, ${JSON.stringify(t)})`, run: async (s) => { await s.connections.setThresholds(id, t); return s.connections.get(id); } };
  }
  if (roll < 32) {
    const error = rnd.pick([null, null, 'connect ECONNREFUSED', 'HTTP 500: ünï']);
    // Key order and spacing of the text must survive: lastSample() answers the text as stored.
    const sample = rnd.pick([undefined, '{"z":1,"a":[1,2.5,null],"q":{"b":"é"}}', '{ "queues": {} }']);
    return {
      what: `connections.setHealth(${id}, +${at - T0}, ${error}, ${sample})`,
      run: async (s) => {
        await s.connections.setHealth(id, at, error, sample);
        return { conn: await s.connections.get(id), last: await s.connections.lastSample(id) };
      },
    };
  }
  if (roll < 35) return { what: 'connections.list()', run: async (s) => s.connections.list() };
  if (roll < 38) {
    // The alert lifecycle: firing ones, resolving, the bound on resolved ones, acknowledging, the board.
    const op = rnd.int(0, 4);
    const ids = [rnd.int(1, 6), rnd.int(1, 6)];
    const n = rnd.pick([0, 1, 3, 500]);
    if (op === 0) return { what: `alerts.firing(${id})`, run: async (s) => s.alerts.firing(id) };
    if (op === 1) return { what: `alerts.resolve(${JSON.stringify(ids)}, +${at - T0})`, run: async (s) => { await s.alerts.resolve(ids, at); return s.alerts.since(0, -1); } };
    if (op === 2) return { what: `alerts.trimResolved(${n})`, run: async (s) => { await s.alerts.trimResolved(n); return s.alerts.since(0, -1); } };
    if (op === 3) return { what: `alerts.acknowledge(${ids[0]}, +${at - T0})`, run: async (s) => s.alerts.acknowledge(ids[0]!, at) };
    return { what: `alerts.board(${n}, 2)`, run: async (s) => s.alerts.board(n, 2) };
  }
  if (roll < 42) {
    return {
      what: `connections.remove(${id})`,
      run: async (s) => ({ removed: await s.connections.remove(id), alerts: await s.alerts.since(0, -1), samples: samplesAsBytes(await s.history.samples(id)), names: [...(await s.history.queueNames(id))] }),
    };
  }
  if (roll < 54) {
    const a = { connectionId: id, kind: rnd.pick(['latency', 'backlog', 'failure_rate'] as const), queue: rnd.pick([null, 'default', 'ünï']), value: rnd.pick([0, 1, 2.75, 1e6]), threshold: rnd.pick([0, 1, 0.5]), at };
    return { what: `alerts.add(${JSON.stringify(a)})`, run: async (s) => s.alerts.add(a) };
  }
  if (roll < 62) {
    const since = rnd.pick([0, 1, 3, 2.5, -1]);
    const limit = rnd.pick([500, 2, 0, -1]);
    const conn = rnd.pick([undefined, '', id]);
    return { what: `alerts.since(${since}, ${limit}, ${conn})`, run: async (s) => s.alerts.since(since, limit, conn) };
  }
  if (roll < 65) {
    const before = T0 + rnd.pick([0, 500.5, 60_000, 4_000_000]);
    return { what: `alerts.deleteBefore(+${before - T0})`, run: async (s) => { await s.alerts.deleteBefore(before); return s.alerts.since(0, -1); } };
  }
  if (roll < 72) {
    const idx = rnd.int(0, 4);
    const name = rnd.pick(['default', 'mailers', 'ünï ✓', '']);
    return { what: `history.setQueueName(${id}, ${idx}, ${name})`, run: async (s) => { await s.history.setQueueName(id, idx, name); return [...(await s.history.queueNames(id))]; } };
  }
  if (roll < 86) {
    const row: SampleRow = {
      tier: rnd.int(0, 1),
      t: T0 + rnd.int(0, 20) * 1000,
      error: rnd.pick([null, null, 'timeout']),
      data: rnd.pick([null, new Uint8Array([1, 2, 3]), new Uint8Array([0, 255, 0, 128]), new Uint8Array(300).fill(7)]),
    };
    return { what: `history.putSample(${id}, tier ${row.tier} t+${row.t - T0})`, run: async (s) => { await s.history.putSample(id, row); return samplesAsBytes(await s.history.samples(id)); } };
  }
  if (roll < 90) {
    const tier = rnd.int(0, 1);
    const t = T0 + rnd.pick([0, 5000, 5000.5, 12_000, 30_000]);
    return { what: `history.deleteBefore(${id}, ${tier}, +${t - T0})`, run: async (s) => { await s.history.deleteBefore(id, tier, t); return samplesAsBytes(await s.history.samples(id)); } };
  }
  if (roll < 95) return { what: `connections.get(${id})`, run: async (s) => ({ conn: await s.connections.get(id), last: await s.connections.lastSample(id) }) };
  return { what: `history of ${id}`, run: async (s) => ({ samples: samplesAsBytes(await s.history.samples(id)), names: [...(await s.history.queueNames(id))] }) };
}

describe.skipIf(missing)(`PostgreSQL monitor connections, alerts and history${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a seeded random sequence of monitor calls gets the same answers from PostgreSQL as from SQLite, at every step', async () => {
    const seen: Record<string, number> = { created: 0, createThrew: 0, removed: 0, alertAdded: 0, alertThrew: 0, alertsFound: 0, samplePut: 0, sampleThrew: 0, lastSample: 0 };
    let steps = 0;
    for (let seed = 1; seed <= 3; seed++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgmon-'));
      const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
      const pgdb: PgDatabase = await openPgDatabase(await pg.createDatabase(`mo${++dbCount}`), { max: 2 });
      try {
        const a: Side = sqliteMonitorStore(sqlite);
        const b: Side = { connections: new PgConnections(pgdb.pool), alerts: new PgAlerts(pgdb.pool), history: new PgMonitorHistory(pgdb.pool) };
        for (const s of [a, b]) await s.connections.ensureEmbedded('embedded', 5, T0);
        const rnd = new Prng(seed);
        for (let step = 0; step < 300; step++) {
          const plan = planStep(rnd);
          const fromSqlite = await outcome(() => plan.run(a));
          const fromPg = await outcome(() => plan.run(b));
          expect(fromPg, `seed ${seed} step ${step}: ${plan.what}`).toEqual(fromSqlite);
          steps++;
          const ok = 'ok' in fromSqlite ? (fromSqlite.ok as Record<string, unknown> | undefined) : undefined;
          const verb = plan.what.slice(0, plan.what.indexOf('('));
          if (verb === 'connections.create') seen[ok ? 'created' : 'createThrew']!++;
          if (verb === 'connections.remove' && ok?.removed) seen.removed!++;
          if (verb === 'alerts.add') seen[ok !== undefined ? 'alertAdded' : 'alertThrew']!++;
          if (verb === 'alerts.since' && Array.isArray(ok) && ok.length) seen.alertsFound!++;
          if (verb === 'history.putSample') seen['ok' in fromSqlite ? 'samplePut' : 'sampleThrew']!++;
          if ((verb === 'connections.setHealth' || verb === 'connections.get') && ok?.last) seen.lastSample!++;
        }
        // And everything, read back at the end.
        const all = async (s: Side) => ({
          list: await s.connections.list(),
          alerts: await s.alerts.since(0, -1),
          history: await Promise.all(IDS.map(async (id) => ({ samples: samplesAsBytes(await s.history.samples(id)), names: [...(await s.history.queueNames(id))] }))),
        });
        expect(await all(b)).toEqual(await all(a));
      } finally {
        sqlite.close();
        await pgdb.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    // The sequences reached what matters: connections made and refused (a duplicate id), removed
    // with what they held, alerts and samples stored and refused (no such connection), alerts read
    // back, last samples kept.
    expect(steps).toBe(900);
    for (const [k, n] of Object.entries(seen)) expect(n, `${k}: ${JSON.stringify(seen)}`).toBeGreaterThan(2);
  });

  it('text from a remote server with U+0000 in it (an error, a queue name) is stored with U+FFFD in its place, not refused', async () => {
    const pgdb = await openPgDatabase(await pg.createDatabase(`mo${++dbCount}`), { max: 1 });
    try {
      const connections = new PgConnections(pgdb.pool);
      const history = new PgMonitorHistory(pgdb.pool);
      const alerts = new PgAlerts(pgdb.pool);
      await connections.create('r', { name: 'r', baseUrl: 'https://x.invalid', token: 't', apiVersion: 'v4', segment: 'sidekiq', intervalS: 5, enabled: true }, T0);
      await connections.setHealth('r', T0, 'HTTP 500: a\u0000b');
      expect((await connections.get('r'))?.lastError).toBe('HTTP 500: a\uFFFDb');
      await history.setQueueName('r', 0, 'q\u0000');
      expect(await history.queueNames('r')).toEqual([{ idx: 0, name: 'q\uFFFD' }]);
      await history.putSample('r', { tier: 0, t: T0, error: '\u0000', data: null });
      expect((await history.samples('r'))[0]?.error).toBe('\uFFFD');
      const id = await alerts.add({ connectionId: 'r', kind: 'backlog', queue: 'q\u0000', value: 1, threshold: 0, at: T0 });
      expect(await alerts.since(id - 1, 1)).toMatchObject([{ queue: 'q\uFFFD' }]);
    } finally {
      await pgdb.close();
    }
  });

  it('tx(): the writes of a sample commit together, and a throw inside rolls all of them back', async () => {
    const pgdb = await openPgDatabase(await pg.createDatabase(`mo${++dbCount}`), { max: 2 });
    try {
      const store = pgMonitorStore(pgdb.pool);
      await store.connections.ensureEmbedded('embedded', 5, T0);
      const record = (t: number) => async (r: Parameters<Parameters<typeof store.tx>[0]>[0]) => {
        await r.history.setQueueName('embedded', 0, 'default');
        await r.history.putSample('embedded', { tier: 0, t, error: null, data: new Uint8Array([1]) });
        await r.alerts.add({ connectionId: 'embedded', kind: 'backlog', queue: 'default', value: 5, threshold: 1, at: t });
        await r.connections.setHealth('embedded', t, null, '{"queues":{}}');
      };
      await expect(
        store.tx(async (r) => {
          await record(T0)(r);
          throw new Error('the sample failed half way');
        }),
      ).rejects.toThrow('half way');
      expect(await store.history.samples('embedded')).toEqual([]);
      expect(await store.history.queueNames('embedded')).toEqual([]);
      expect(await store.alerts.since(0, -1)).toEqual([]);
      expect(await store.connections.lastSample('embedded')).toBeUndefined();
      await store.tx(record(T0 + 1000));
      expect((await store.history.samples('embedded')).map((r) => r.t)).toEqual([T0 + 1000]);
      expect(await store.history.queueNames('embedded')).toEqual([{ idx: 0, name: 'default' }]);
      expect((await store.alerts.since(0, -1)).length).toBe(1);
      expect(await store.connections.lastSample('embedded')).toEqual({ at: T0 + 1000, json: '{"queues":{}}' });
    } finally {
      await pgdb.close();
    }
  });

  it('connections with the same creation time are listed in id byte order, as on SQLite, also in a database whose collation sorts linguistically', async () => {
    // ICU's en-US puts a1 < b-remote < B-remote < é-conn < z9; bytes put B-remote < a1 < b-remote < z9 < é-conn.
    pg.psql(`CREATE DATABASE mo_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgmon-'));
    const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
    const pgdb = await openPgDatabase(pg.urlFor('mo_icu'), { max: 1 });
    try {
      expect(pg.psql(`SELECT string_agg(x, ' ' ORDER BY x) FROM unnest(ARRAY['a1', 'B-remote', 'b-remote']) x`, 'mo_icu').trim()).toBe('a1 b-remote B-remote');
      const a = sqliteMonitorStore(sqlite).connections;
      const b = new PgConnections(pgdb.pool);
      for (const c of [a, b]) {
        for (const id of ['z9', 'é-conn', 'b-remote', 'B-remote', 'a1']) {
          await c.create(id, { name: id, baseUrl: 'https://x.invalid', token: 't', apiVersion: 'v4', segment: 'sidekiq', intervalS: 5, enabled: true }, T0);
        }
      }
      const ids = (list: { id: string }[]) => list.map((c) => c.id);
      expect(ids(a.list())).toEqual(['B-remote', 'a1', 'b-remote', 'z9', 'é-conn']);
      expect(ids(await b.list())).toEqual(ids(a.list()));
    } finally {
      sqlite.close();
      await pgdb.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
