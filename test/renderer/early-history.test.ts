// The dashboard's early history (renderer/views/dashboard/early-history.ts): the request the early
// entry starts before React loads, seen by a plain node:http listener, and when the dashboard's
// query adopts its answer (the same token, connection, range, live, no queues; once) or asks itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { adoptEarlyHistory, arrivedEarlyHistory, startEarlyHistory } from '../../renderer/views/dashboard/early-history.ts';

const seen: { url: string; token: string | undefined }[] = [];
let server: http.Server;
let base = '';
beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', token: req.headers['private-token'] as string | undefined });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ answered: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => {
  vi.unstubAllGlobals();
  seen.length = 0;
});

function storage(values: Record<string, string>) {
  return { getItem: (k: string) => values[k] ?? null };
}

/** A page at `hash` with these storages; fetch goes to the listener (the page's origin). */
function page(hash: string, opts: { session?: Record<string, string>; local?: Record<string, string>; bridge?: object } = {}) {
  const win: Record<string, unknown> = { location: { hash } };
  if (opts.bridge) win.jobscope = opts.bridge;
  vi.stubGlobal('window', win);
  vi.stubGlobal('sessionStorage', storage(opts.session ?? {}));
  vi.stubGlobal('localStorage', storage(opts.local ?? {}));
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', (path: string, init?: RequestInit) => realFetch(base + path, init));
  return win;
}

const settle = () => new Promise((r) => setTimeout(r, 50));

describe('early history', () => {
  it('the sign-in link: asks for the 15 m top-8 history of the embedded connection with the link token; adopted once', async () => {
    const before = Date.now();
    page('#token=abc%20d');
    startEarlyHistory();
    const answer = adoptEarlyHistory('', 'abc d', 'embedded', '15m', null, null);
    expect(answer).toBeDefined();
    const body = (await answer) as { answered: string };
    expect(seen).toHaveLength(1);
    expect(seen[0]!.token).toBe('abc d');
    const u = new URL(seen[0]!.url, base);
    expect(u.pathname).toBe('/api/app/connections/embedded/history');
    expect(body.answered).toBe(seen[0]!.url);
    const from = Number(u.searchParams.get('from'));
    const to = Number(u.searchParams.get('to'));
    expect(to - from).toBe(15 * 60_000);
    expect(to).toBeGreaterThanOrEqual(before);
    expect(u.searchParams.get('points')).toBe('600');
    expect(u.searchParams.get('top')).toBe('8');
    // Taken: the next history call is the query's own.
    expect(adoptEarlyHistory('', 'abc d', 'embedded', '15m', null, null)).toBeUndefined();
  });

  it('the answer as initial data: nothing before it arrived (the query adopts the request instead), then its data and asking time, once', async () => {
    const win = page('#token=tok');
    const before = Date.now();
    startEarlyHistory();
    expect(arrivedEarlyHistory('', 'tok', 'embedded', '15m', null, null)).toBeUndefined();
    await (win.__jobscopeEarlyHistory as { answer: Promise<unknown> }).answer;
    await Promise.resolve();
    expect(arrivedEarlyHistory('', 'tok', 'embedded', '1h', null, null)).toBeUndefined(); // another range: taken, not used
    expect(arrivedEarlyHistory('', 'tok', 'embedded', '15m', null, null)).toBeUndefined();
    startEarlyHistory();
    await (win.__jobscopeEarlyHistory as { answer: Promise<unknown> }).answer;
    await Promise.resolve();
    const got = arrivedEarlyHistory('', 'tok', 'embedded', '15m', null, null);
    expect((got?.data as { answered: string }).answered).toBe(seen[1]!.url);
    expect(got!.at).toBeGreaterThanOrEqual(before);
    expect(arrivedEarlyHistory('', 'tok', 'embedded', '15m', null, null)).toBeUndefined();
    expect(adoptEarlyHistory('', 'tok', 'embedded', '15m', null, null)).toBeUndefined();
  });

  it('remembered connection and range (the view state\'s local copy) and this tab\'s token', async () => {
    page('', { session: { 'jobscope.token': 'tok' }, local: { 'jobscope.ui-state': JSON.stringify({ values: { connection: 'c 2', 'dashboard.range': '6h' }, changedAt: 0 }) } });
    startEarlyHistory();
    await adoptEarlyHistory('', 'tok', 'c 2', '6h', null, null);
    const u = new URL(seen[0]!.url, base);
    expect(u.pathname).toBe('/api/app/connections/c%202/history');
    expect(Number(u.searchParams.get('to')) - Number(u.searchParams.get('from'))).toBe(6 * 3600_000);
  });

  it.each([
    ['another range', ['', 'tok', 'embedded', '1h', null, null]],
    ['another connection', ['', 'tok', 'other', '15m', null, null]],
    ['another token', ['', 'nope', 'embedded', '15m', null, null]],
    ['another backend', ['http://elsewhere', 'tok', 'embedded', '15m', null, null]],
    ['paused', ['', 'tok', 'embedded', '15m', 123, null]],
    ['queues chosen', ['', 'tok', 'embedded', '15m', null, ['a']]],
  ] as const)('not adopted when the query asks for something else: %s', async (_why, args) => {
    const win = page('#/dashboard', { session: { 'jobscope.token': 'tok' } });
    startEarlyHistory();
    const started = win.__jobscopeEarlyHistory as { answer: Promise<unknown> };
    expect(adoptEarlyHistory(...(args as unknown as Parameters<typeof adoptEarlyHistory>))).toBeUndefined();
    await started.answer; // answered before the next test counts requests
  });

  it('not adopted when older than 5 s', async () => {
    const win = page('#token=tok');
    startEarlyHistory();
    const started = win.__jobscopeEarlyHistory as { answer: Promise<unknown> };
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 5001);
    try {
      expect(adoptEarlyHistory('', 'tok', 'embedded', '15m', null, null)).toBeUndefined();
    } finally {
      vi.restoreAllMocks();
    }
    await started.answer;
  });

  it.each([
    ['Electron (the bridge gives the token)', '#token=tok', { bridge: {} }],
    ['another view', '#/builds/3', { session: { 'jobscope.token': 'tok' } }],
    ['no token', '#/dashboard', {}],
  ] as const)('nothing is asked for: %s', async (_why, hash, opts) => {
    const win = page(hash, opts);
    startEarlyHistory();
    await settle();
    expect(seen).toHaveLength(0);
    expect(win.__jobscopeEarlyHistory).toBeUndefined();
  });
});
