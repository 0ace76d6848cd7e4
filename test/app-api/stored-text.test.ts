// The app API stores a connection's name, URL and token (monitor_connections): U+0000 in any of them
// is a 400 {"message"} naming the field, before anything is stored, for a GitLab connection and a
// sidekiq one alike, on create and on change (PostgreSQL's text cannot hold it: one rule for both
// stores, server/http/stored-text.ts). On both stores (test/api/backends.ts): with a database the
// connections are its monitor_connections rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { eachBackend } from '../api/backends.ts';
import { http } from '../helpers/http.ts';
import type { ConnectionView } from '../../contract/app.ts';

eachBackend((startServer) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test' });
  });
  afterAll(() => s.close());

  const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });
  const count = async () => ((await api('/connections')).body as ConnectionView[]).length;

  describe('U+0000 in what the app API stores', () => {
    it('a connection whose name, URL or token holds a NUL is a 400 naming the field, and none is made or changed', async () => {
      const before = await count();
      const gitlab = { name: 'gl', base_url: 'https://gitlab.example.invalid', private_token: 'tok' };
      const sidekiq = { kind: 'sidekiq', name: 'sk', redis_url: 'redis://127.0.0.1:1/0' };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...gitlab, name: 'g\u0000l' }, '/name'],
        [{ ...gitlab, base_url: 'https://gitlab.example.invalid/\u0000' }, '/base_url'],
        [{ ...gitlab, private_token: 't\u0000k' }, '/private_token'],
        [{ ...sidekiq, name: '\u0000' }, '/name'],
        [{ ...sidekiq, redis_url: 'redis://127.0.0.1:1/\u0000' }, '/redis_url'],
        [{ ...sidekiq, password: 'p\u0000' }, '/password'],
      ];
      for (const [json, field] of cases) {
        const r = await api('/connections', { method: 'POST', json });
        expect(r.status, JSON.stringify(json)).toBe(400);
        expect(r.body.message, JSON.stringify(json)).toContain(`body${field} must match pattern`);
      }
      expect(await count()).toBe(before);
      const made = await api('/connections', { method: 'POST', json: gitlab });
      expect(made.status).toBe(201);
      const patch = await api(`/connections/${made.body.id}`, { method: 'PATCH', json: { name: 'x\u0000' } });
      expect(patch.status).toBe(400);
      expect(patch.body.message).toContain('body/name must match pattern');
      expect(((await api('/connections')).body as ConnectionView[]).find((c) => c.id === made.body.id)?.name).toBe('gl');
    });
  });
});
