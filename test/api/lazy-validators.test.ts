// Request validators compile on a route's first request (server/http/lazy-validators.ts): every route's
// schemas must still compile, and the first request to a route must be validated, coerced and refused
// as a validator compiled at start-up would do it.
import { afterAll, beforeAll, expect, test } from 'vitest';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { lazyValidators } from '../../server/http/lazy-validators.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const get = (path: string) => fetch(`${s.url}${path}`, { headers: { 'private-token': s.adminToken } });

test("a route's first requests: coerced, refused with the validator's message, then answered", async () => {
  // Not a number: refused before the handler, with Ajv's message, on the very first request.
  const bad = await get('/api/v3/sim/builds/abc');
  expect(bad.status).toBe(400);
  expect((await bad.json()).message).toMatch(/^400 \(Bad request\) params\/id must /);
  // The same compiled validator coerces a numeric id (the handler looks up a number).
  const missing = await get('/api/v3/sim/builds/999999');
  expect(missing.status).toBe(404);
  const list = await get('/api/v3/sim/builds?limit=nope');
  expect(list.status).toBe(400);
  expect((await list.json()).message).toMatch(/^400 \(Bad request\) querystring\/limit must be integer/);
  expect((await get('/api/v3/sim/builds?limit=2')).status).toBe(200);
});

test("every route's request schemas compile", () => {
  expect(() => s.server.compileValidators()).not.toThrow();
  expect(() => s.server.compileValidators()).not.toThrow(); // nothing left: a no-op
});

test('the same answers as fastify’s own validators, whole request parts coerced in place', async () => {
  const schema = {
    params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
    querystring: Type.Object({ tags: Type.Optional(Type.Array(Type.String())), n: Type.Optional(Type.Integer()) }),
    body: Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  };
  const answers: unknown[][] = [];
  for (const lazy of [false, true]) {
    const validators = lazyValidators();
    const app = Fastify(lazy ? { schemaController: { compilersFactory: { buildValidator: validators.factory } } } : {});
    app.post('/x/:id', { schema }, async (request) => ({ params: request.params, query: request.query, body: request.body }));
    await app.ready();
    const inject = (url: string, payload: unknown) => app.inject({ method: 'POST', url, payload: payload as object });
    const results = [
      await inject('/x/7?tags=a&n=3', { name: 'ok' }),
      await inject('/x/0', { name: 'ok' }),
      await inject('/x/7?n=x', { name: 'ok' }),
      await inject('/x/7', { name: '' }),
      await inject('/x/7', { name: 'ok', extra: 1 }),
    ];
    answers.push(results.map((r) => [r.statusCode, r.json()]));
    await app.close();
  }
  expect(answers[1]).toEqual(answers[0]);
  // The coerced first answer: a number id, the single tag as an array.
  expect(answers[1]![0]).toEqual([200, { params: { id: 7 }, query: { tags: ['a'], n: 3 }, body: { name: 'ok' } }]);
});

test('a headers schema is refused at start (fastify would not lower-case its names for a custom compiler)', async () => {
  const app = Fastify({ schemaController: { compilersFactory: { buildValidator: lazyValidators().factory } } });
  app.get('/h', { schema: { headers: Type.Object({ 'X-Thing': Type.String() }) } }, async () => 'ok');
  await expect(app.ready()).rejects.toThrow(/headers schemas are not supported/);
});
