// The built UI at `/`: files from the UI folder only, a strict CSP, the SPA fallback for client
// routes, and JSON 404s (not index.html) for unknown API paths and missing assets.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { signInLink } from '../../hosts/sign-in.ts';

let s: TestServer;
let ui: string;
/** An inline script as the built index.html holds one (the early entry). */
const INLINE = 'document.documentElement.dataset.theme="light"';
const sha256 = (text: string) => `'sha256-${crypto.createHash('sha256').update(text).digest('base64')}'`;

beforeAll(async () => {
  ui = tempDir('jobscope-ui-');
  fs.mkdirSync(path.join(ui, 'assets'));
  fs.writeFileSync(path.join(ui, 'index.html'), `<!doctype html><title>Jobscope test UI</title><script>${INLINE}</script><script type="module" src="./assets/app-1234.js"></script>`);
  fs.writeFileSync(path.join(ui, 'assets', 'app-1234.js'), 'console.log("hi")');
  fs.writeFileSync(path.join(path.dirname(ui), 'secret-next-to-ui.txt'), 'not for the web');
  s = await startServer({ uiDir: ui, monitorIntervalMs: 3_600_000 });
});
afterAll(async () => {
  await s.close();
  fs.rmSync(ui, { recursive: true, force: true });
  fs.rmSync(path.join(path.dirname(ui), 'secret-next-to-ui.txt'), { force: true });
});

describe('UI serving', () => {
  it('serves index.html at / with a strict CSP', async () => {
    const r = await http(`${s.url}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.body).toContain('Jobscope test UI');
    const csp = r.headers.get('content-security-policy') ?? '';
    for (const d of ["default-src 'self'", "connect-src 'self'", "img-src 'self' data:", "style-src 'self' 'unsafe-inline'", "script-src 'self'", "frame-ancestors 'none'"]) {
      expect(csp).toContain(d);
    }
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("allows index.html's inline script by its hash, and follows the page when it is rebuilt", async () => {
    const scriptSrc = (csp: string | null) => /script-src ([^;]*)/.exec(csp ?? '')![1]!.split(' ');
    let r = await http(`${s.url}/`);
    expect(r.body).toContain(`<script>${INLINE}</script>`);
    expect(scriptSrc(r.headers.get('content-security-policy'))).toEqual(["'self'", sha256(INLINE)]);
    r = await http(`${s.url}/builds/7`); // the SPA fallback serves the same page under the same CSP
    expect(scriptSrc(r.headers.get('content-security-policy'))).toEqual(["'self'", sha256(INLINE)]);

    const index = path.join(ui, 'index.html');
    const before = fs.readFileSync(index, 'utf8');
    const rebuilt = 'document.documentElement.dataset.theme="dark"';
    try {
      fs.writeFileSync(index, before.replace(INLINE, rebuilt));
      r = await http(`${s.url}/`);
      expect(scriptSrc(r.headers.get('content-security-policy'))).toEqual(["'self'", sha256(rebuilt)]);
    } finally {
      fs.writeFileSync(index, before);
    }
  });

  it('serves hashed assets with long caching', async () => {
    const r = await http(`${s.url}/assets/app-1234.js`);
    expect(r.status).toBe(200);
    expect(r.body).toContain('console.log');
    expect(r.headers.get('cache-control')).toMatch(/immutable/);
  });

  it('answers client routes with index.html (SPA fallback)', async () => {
    for (const p of ['/dashboard', '/connections/gl-1/history', '/settings?x=1']) {
      const r = await http(`${s.url}${p}`);
      expect(r.status, p).toBe(200);
      expect(r.body).toContain('Jobscope test UI');
    }
  });

  it('keeps API 404s as JSON and never serves files outside the UI folder', async () => {
    for (const p of ['/api/v3/nothing', '/ci/api/v1/nothing', '/assets/missing.js', '/../secret-next-to-ui.txt', '/%2e%2e/secret-next-to-ui.txt', '/assets/..%2f..%2fsecret-next-to-ui.txt']) {
      const r = await http(`${s.url}${p}`);
      expect(r.status, p).toBe(404);
      expect(r.headers.get('content-type'), p).toMatch(/^application\/json/);
      expect(r.raw.toString(), p).not.toContain('not for the web');
    }
    const bad = await http(`${s.url}/%E0%A4%A`);
    expect(bad.status).toBe(400);
  });

  it('tells how to build the UI when there is none', async () => {
    const bare = await startServer({ uiDir: tempDir('jobscope-no-ui-'), monitorIntervalMs: 3_600_000 });
    try {
      const r = await http(`${bare.url}/`);
      expect(r.status).toBe(404);
      expect(r.body.message).toMatch(/npm run build:ui/);
    } finally {
      await bare.close();
    }
  });

  it('puts the token of the sign-in link in the fragment only', () => {
    const link = signInLink('http://127.0.0.1:8090', 'abc123');
    expect(link).toBe('http://127.0.0.1:8090/#token=abc123');
    const u = new URL(link);
    expect(u.pathname + u.search).toBe('/');
  });
});
