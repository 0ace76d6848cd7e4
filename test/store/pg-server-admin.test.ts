// Admin API users in database mode: a user made through one instance is in the shared
// database, and its PRIVATE-TOKEN works on every instance (admin: 200, not admin: 403, unknown:
// 401), read through the database's users (Store.tokenUsers), not the data dir's SQLite.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { http } from '../helpers/http.ts';
import { control } from '../api/lib.ts';
import { databaseOf } from '../../server/store/index.ts';

const cluster = usePostgres();

describe.skipIf(postgresMissing() !== null)('admin API users on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let sql: pg.Client;
  const asUser = (s: TestServer, token: string, path = '/projects') => http(`${s.url}/api/v3/sim${path}`, { token });

  beforeAll(async () => {
    const url = await cluster.createDatabase('admin_two');
    a = await startServer({}, { database: url });
    b = await startServer({}, { database: url });
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await b?.close();
    await a?.close();
  });

  it("accept an admin user's token on both instances, made on one, and keep the user out of SQLite", async () => {
    const made = await control(a, '/users', { method: 'POST', json: { username: 'ada', admin: true } });
    expect(made.status).toBe(201);
    const token = made.body.private_token as string;
    for (const s of [a, b]) {
      const r = await asUser(s, token);
      expect(r.status).toBe(200);
      expect(Array.isArray(r.body)).toBe(true);
      // The other APIs behind requireAdmin too.
      expect((await http(`${s.url}/api/app/settings`, { token })).status).toBe(200);
      expect(databaseOf(s.server.ctx.store).get('SELECT count(*) AS n FROM users')).toEqual({ n: 0 });
    }
    expect((await sql.query('SELECT admin FROM users WHERE username = $1', ['ada'])).rows).toEqual([{ admin: true }]);
  });

  it("refuse a non-admin user's token with 403 and an unknown one with 401, as JSON", async () => {
    const made = await control(b, '/users', { method: 'POST', json: { username: 'bob', admin: false } });
    expect(made.status).toBe(201);
    for (const s of [a, b]) {
      const r = await asUser(s, made.body.private_token as string);
      expect(r.status).toBe(403);
      expect(typeof r.body.message).toBe('string');
      const unknown = await asUser(s, 'f'.repeat(20));
      expect(unknown.status).toBe(401);
      expect(typeof unknown.body.message).toBe('string');
    }
  });

});
