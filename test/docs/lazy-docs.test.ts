// docs.ts loads @fastify/swagger with the first docs request and hands it the route options and
// plugin scopes its hooks would have seen: the document must be the one the plugin builds when
// registered up front. Both ways over the same routes, with what the replay must carry: shared
// schemas at the root and in a scope ($ref by id), HEAD routes, hidden routes, a prefix.
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { describe, expect, it } from 'vitest';
import { openApiGenerator, registerDocs } from '../../server/http/docs.ts';

const OPTIONS = { openapi: { info: { title: 'Jobscope API', version: '0.1.0' } } };

async function routes(app: FastifyInstance): Promise<void> {
  app.addSchema({ $id: 'Project', type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } });
  app.get('/projects/:id', { schema: { summary: 'A project', tags: ['control'], params: { type: 'object', properties: { id: { type: 'integer' } } }, response: { 200: { $ref: 'Project#' } } } }, async () => ({}));
  app.get('/hidden', { schema: { hide: true } }, async () => ({}));
  await app.register(
    async (scope) => {
      scope.addSchema({ $id: 'Build', type: 'object', properties: { id: { type: 'integer' }, status: { type: 'string', enum: ['pending', 'running'] } } });
      scope.post('/builds/register.json', { schema: { summary: 'Take a build', body: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] }, response: { 201: { $ref: 'Build#' } } } }, async () => ({}));
      scope.patch('/builds/:id/trace.txt', { schema: { summary: 'Append', response: { 202: { type: 'null' } } } }, async () => null);
    },
    { prefix: '/ci/api/v1' },
  );
}

async function eager(): Promise<unknown> {
  const app = Fastify();
  await app.register(swagger, OPTIONS);
  await routes(app);
  await app.ready();
  const doc = app.swagger();
  await app.close();
  return doc;
}

async function lazy(): Promise<{ doc: unknown; yaml: unknown }> {
  const app = Fastify();
  await registerDocs(app, OPTIONS);
  await routes(app);
  await app.ready();
  const generate = await openApiGenerator(app);
  const out = { doc: generate(), yaml: generate({ yaml: true }) };
  await app.close();
  return out;
}

describe('OpenAPI generated on first request (docs.ts)', () => {
  it('is the document @fastify/swagger builds when registered at start', async () => {
    const want = await eager();
    const got = await lazy();
    expect(JSON.stringify(got.doc)).toBe(JSON.stringify(want));
    expect(Object.keys((want as { paths: object }).paths)).toEqual(['/projects/{id}', '/ci/api/v1/builds/register.json', '/ci/api/v1/builds/{id}/trace.txt']);
    expect(Object.keys((want as { components: { schemas: object } }).components.schemas)).toEqual(['def-0', 'def-1']);
    expect(got.yaml).toContain('openapi: 3.');
  });

  it('is refused before the server is ready (the plugin cannot resolve shared schemas then)', async () => {
    const app = Fastify();
    await registerDocs(app, OPTIONS);
    await expect(openApiGenerator(app)).rejects.toThrow(/ready/);
    await app.close();
  });
});
