// Every route the server registers is in the OpenAPI document served at /api/docs/json,
// and the browsable page answers. New routes are covered without touching this test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

/** fastify's `/builds/:id/trace.txt` is OpenAPI's `/builds/{id}/trace.txt`. */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const isDocsOrAsset = (url: string) => url.startsWith('/api/docs') || url === '*' || url === '/*' || url.startsWith('/assets');

describe('OpenAPI', () => {
  it('lists every registered route with its method', async () => {
    const res = await http(`${s.url}/api/docs/json`);
    expect(res.status).toBe(200);
    const doc = res.body as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\./);
    const routes = s.server.routes.filter((r) => !r.hidden && !isDocsOrAsset(r.url));
    expect(routes.length).toBeGreaterThan(20);
    const missing = routes.filter((r) => !doc.paths[toOpenApiPath(r.url)]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    const undescribed = routes
      .filter((r) => !(doc.paths[toOpenApiPath(r.url)]?.[r.method.toLowerCase()] as { summary?: string } | undefined)?.summary)
      .map((r) => `${r.method} ${r.url}`);
    expect(undescribed, 'routes without a schema summary').toEqual([]);
  });

  it('documents the GitLab-compatible and control APIs with summaries', async () => {
    const doc = (await http(`${s.url}/api/docs/json`)).body as { paths: Record<string, Record<string, { summary?: string; tags?: string[] }>> };
    for (const [path, method] of [
      ['/ci/api/v1/builds/register.json', 'post'],
      ['/ci/api/v1/builds/{id}/trace.txt', 'patch'],
      ['/ci/api/v1/builds/{id}/artifacts', 'post'],
      ['/api/v3/sim/projects/{id}/builds', 'post'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op!.summary?.length ?? 0).toBeGreaterThan(5);
      expect(op!.tags?.length ?? 0).toBeGreaterThan(0);
    }
  });

  it('serves a browsable page', async () => {
    const res = await fetch(`${s.url}/api/docs/`, { redirect: 'follow' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('swagger');
  });
});
