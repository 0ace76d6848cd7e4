// Response serializers (server/http/lazy-serializers.ts) are compiled once per process for each schema
// and reused by the next server built with the same one: a reused serializer must write what a fresh
// compile writes, and a schema must never get another schema's serializer.
import { expect, test } from 'vitest';
import { Type } from '@sinclair/typebox';
import { lazySerializers } from '../../server/http/lazy-serializers.ts';
import { useServers } from '../helpers/server-set.ts';
import { control, runningBuild } from './lib.ts';

type Serialize = (doc: unknown) => string;
/** What one server's fastify does: a factory per plugin context, then a serializer per route. */
const serializerFor = (schema: unknown): Serialize => {
  const compile = lazySerializers()({}, undefined) as unknown as (route: { schema: unknown; method: string; url: string; httpStatus: string }) => Serialize;
  return compile({ schema, method: 'GET', url: '/x', httpStatus: '200' });
};

test('schemas that differ only in a type or a property each keep their own serializer, server after server', () => {
  const doc = { id: 1, note: null, extra: 'x' };
  const plain = () => Type.Object({ id: Type.Integer(), note: Type.Union([Type.String(), Type.Null()]) });
  const asText = () => Type.Object({ id: Type.String(), note: Type.Union([Type.String(), Type.Null()]) });
  const wider = () => Type.Object({ id: Type.Integer(), note: Type.Union([Type.String(), Type.Null()]), extra: Type.String() });
  for (let server = 0; server < 2; server++) {
    expect(serializerFor(plain())(doc)).toBe('{"id":1,"note":null}');
    expect(serializerFor(asText())(doc)).toBe('{"id":"1","note":null}');
    expect(serializerFor(wider())(doc)).toBe('{"id":1,"note":null,"extra":"x"}');
  }
});

test('a reused serializer of a union still picks the branch each document matches', () => {
  const union = () =>
    Type.Union([Type.Object({ kind: Type.Literal('a'), a: Type.Integer() }), Type.Object({ kind: Type.Literal('b'), b: Type.String() })]);
  for (let server = 0; server < 2; server++) {
    const serialize = serializerFor(union());
    expect(serialize({ kind: 'b', b: 'text', a: 5 })).toBe('{"kind":"b","b":"text"}');
    expect(serialize({ kind: 'a', a: 5, b: 'text' })).toBe('{"kind":"a","a":5}');
  }
});

const servers = useServers({}, 'all');

test('a second server in the process answers a build the way the first does', async () => {
  const shapes: string[][] = [];
  for (let i = 0; i < 2; i++) {
    const s = await servers.start();
    const { build } = await runningBuild(s, { commands: 'echo same' }, 'same');
    const view = await control(s, `/builds/${build.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ id: build.id, status: 'running', commands: 'echo same', artifacts: null, trace_length: 0 });
    shapes.push(Object.keys(view.body as object));
  }
  expect(shapes[1]).toEqual(shapes[0]);
});
