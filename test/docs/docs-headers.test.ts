// The browsable API docs are a page like the UI: they must not be framed (clickjacking a
// "Try it out" with the admin token) nor sniffed, and run under a CSP that still lets them work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

const paths = ['/api/docs', '/api/docs/', '/api/docs/static/index.html', '/api/docs/static/swagger-initializer.js', '/api/docs/static/swagger-ui.css', '/api/docs/json'];

describe('API docs headers', () => {
  it.each(paths)('%s: CSP, X-Frame-Options DENY, nosniff', async (p) => {
    const res = await fetch(`${s.url}${p}`, { redirect: 'manual' });
    await res.arrayBuffer();
    expect(res.status, p).toBeLessThan(400);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('the page loads only same-origin scripts (no inline script the CSP would block)', async () => {
    let res = await fetch(`${s.url}/api/docs`);
    const html = await res.text();
    expect(res.status).toBe(200);
    for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      expect(m[1], 'scripts come from files').toMatch(/src=/);
      expect(m[2]!.trim()).toBe('');
    }
    res = await fetch(`${s.url}/api/docs/static/swagger-initializer.js`);
    expect(await res.text(), 'the spec comes from this server').toMatch(/url: resolveUrl\('\.\/json'\)/);
  });
});
