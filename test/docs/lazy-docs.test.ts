// The API docs are built on their first request (server/http/docs.ts): requests that arrive together
// before it is built share one build, a HEAD answers as a GET does, and a server whose docs were
// built closes them with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

describe('API docs built on first use', () => {
  it('answers requests that arrive together before the build, with the same document', async () => {
    const [a, b, page] = await Promise.all([fetch(`${s.url}/api/docs/json`), fetch(`${s.url}/api/docs/json`), fetch(`${s.url}/api/docs/static/index.html`)]);
    expect([a.status, b.status, page.status]).toEqual([200, 200, 200]);
    const [ja, jb] = [await a.text(), await b.text()];
    await page.arrayBuffer();
    expect(ja).toBe(jb);
    const doc = JSON.parse(ja) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain('/ci/api/v1/builds/register.json');
    // Its own paths are not in it, nor the server's other hidden routes.
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/docs') || p === '/' || p === '/*')).toEqual([]);
    expect(a.headers.get('content-type')).toBe('application/json');
  });

  it('answers HEAD, and an unknown docs file with the JSON 404', async () => {
    const head = await fetch(`${s.url}/api/docs/json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const missing = await fetch(`${s.url}/api/docs/static/no-such-file.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: '404 Not Found' });
  });
});
