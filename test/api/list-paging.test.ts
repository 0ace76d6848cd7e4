// The control API's lists of things that grow without bound (runners, projects, users) are paged as
// GitLab pages (page, per_page; X-Total… and Link headers): a fleet of 12,000 runners came back as
// one 11 MB answer. On both stores (backends.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createProject, registerRunner } from '../helpers/fixtures.ts';
import type { RunnerView } from '../../contract/control.ts';
import { eachBackend } from './backends.ts';

const COUNT = 230;

eachBackend((startServer) => {
  let s: TestServer;
  let ids: number[];
  beforeAll(async () => {
    s = await startServer();
    ids = [];
    for (let i = 0; i < COUNT; i++) ids.push((await registerRunner(s, s.registrationToken, { description: `r${i}` })).id);
  }, 120_000);
  afterAll(async () => s?.close());

  const runners = (query = '') => http<RunnerView[]>(`${s.url}/api/v3/sim/runners${query}`, { token: s.adminToken });

  describe('runners listing, paged', () => {
    it('answers 100 by default, with GitLab’s headers', async () => {
      const res = await runners();
      expect(res.status).toBe(200);
      expect(res.body.map((r) => r.id)).toEqual(ids.slice(0, 100));
      expect(Object.fromEntries(['x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page'].map((h) => [h, res.headers.get(h)]))).toEqual({
        'x-total': String(COUNT), 'x-total-pages': '3', 'x-page': '1', 'x-per-page': '100', 'x-next-page': '2', 'x-prev-page': '',
      });
      const link = res.headers.get('link')!;
      expect(link).toContain(`<${s.url}/api/v3/sim/runners?page=2&per_page=100>; rel="next"`);
      expect(link).toContain('rel="first"');
      expect(link).toContain(`<${s.url}/api/v3/sim/runners?page=3&per_page=100>; rel="last"`);
      expect(link).not.toContain('rel="prev"');
    });

    it('following X-Next-Page gives every runner once, in order; the last page has no next', async () => {
      const seen: number[] = [];
      let page = '1';
      while (page !== '') {
        const res = await runners(`?page=${page}&per_page=40`);
        expect(res.status).toBe(200);
        seen.push(...res.body.map((r) => r.id));
        page = res.headers.get('x-next-page')!;
      }
      expect(seen).toEqual(ids);
      const last = await runners('?page=6&per_page=40');
      expect(last.body).toHaveLength(COUNT - 5 * 40);
      expect(last.headers.get('x-prev-page')).toBe('5');
      expect(last.headers.get('link')).toContain('rel="prev"');
      expect(last.headers.get('link')).not.toContain('rel="next"');
    });

    it('per_page up to 1000; a page past the end is empty, not an error; the token is never repeated in a link', async () => {
      const all = await runners('?per_page=1000');
      expect(all.body).toHaveLength(COUNT);
      expect(all.headers.get('x-total-pages')).toBe('1');
      const past = await runners('?page=9');
      expect(past.status).toBe(200);
      expect(past.body).toEqual([]);
      const viaQuery = await http(`${s.url}/api/v3/sim/runners?private_token=${s.adminToken}&per_page=10`);
      expect(viaQuery.status).toBe(200);
      expect(viaQuery.headers.get('link')).not.toContain(s.adminToken);
    });

    it.each(['?per_page=1001', '?per_page=0', '?page=0', '?page=abc', '?per_page=-5', '?per_page=2.5'])('%s is a 400 with a JSON message', async (q) => {
      const res = await runners(q);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: expect.stringMatching(/page/) });
    });
  });

  describe('projects and users, paged the same way', () => {
    it('projects: 100 by default, the rest on the next page', async () => {
      const made: number[] = [];
      for (let i = 0; i < 105; i++) made.push((await createProject(s, `p${i}`)).id);
      const first = await http<{ id: number }[]>(`${s.url}/api/v3/sim/projects`, { token: s.adminToken });
      expect(first.body.map((p) => p.id)).toEqual(made.slice(0, 100));
      expect(first.headers.get('x-total')).toBe('105');
      const second = await http<{ id: number }[]>(`${s.url}/api/v3/sim/projects?page=2`, { token: s.adminToken });
      expect(second.body.map((p) => p.id)).toEqual(made.slice(100));
      expect(second.headers.get('x-next-page')).toBe('');
    }, 60_000);

    it('users: per_page and the headers; a bad page is a 400', async () => {
      for (const name of ['u1', 'u2', 'u3']) expect((await http(`${s.url}/api/v3/sim/users`, { json: { username: name }, token: s.adminToken })).status).toBe(201);
      const res = await http<{ username: string }[]>(`${s.url}/api/v3/sim/users?per_page=2&page=2`, { token: s.adminToken });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-page')).toBe('2');
      expect(res.headers.get('x-per-page')).toBe('2');
      expect(res.body.length).toBeLessThanOrEqual(2);
      expect((await http(`${s.url}/api/v3/sim/users?page=-1`, { token: s.adminToken })).status).toBe(400);
    });
  });
});
