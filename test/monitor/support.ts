// Shared by the monitor and app-API tests: a tiny real HTTP server that answers like a GitLab's
// /api/v4/sidekiq/compound_metrics (its answer set by the test), and helpers to reach the monitor.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { Monitor } from '../../server/monitor/monitor.ts';
import type { TestServer } from '../helpers/server.ts';
import { http as request } from '../helpers/http.ts';

export interface FakeGitLab {
  url: string;
  token: string;
  /** What the next request gets: metrics (200 JSON), or a status with a raw body. */
  answer: { metrics: CompoundMetrics } | { status: number; body: string; type?: string };
  requests: { url: string; token: string | undefined }[];
  close(): Promise<void>;
}

export function metrics(queues: Record<string, [number, number]>, jobs: { processed: number; failed: number; enqueued?: number }, busy = 0): CompoundMetrics {
  return {
    queues: Object.fromEntries(Object.entries(queues).map(([n, [backlog, latency]]) => [n, { backlog, latency }])),
    processes: [{ hostname: 'gl-1', pid: 42, tag: 'gitlab', started_at: '2016-06-14T10:45:07.159-05:00', queues: Object.keys(queues), labels: [], concurrency: 25, busy }],
    jobs: { processed: jobs.processed, failed: jobs.failed, enqueued: jobs.enqueued ?? 0 },
  };
}

export async function startFakeGitLab(token = 'glpat-fake-admin-token'): Promise<FakeGitLab> {
  const fake: FakeGitLab = {
    url: '',
    token,
    answer: { metrics: metrics({ default: [0, 0] }, { processed: 0, failed: 0 }) },
    requests: [],
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const sent = req.headers['private-token'];
    fake.requests.push({ url: req.url ?? '', token: typeof sent === 'string' ? sent : undefined });
    if (req.url !== '/api/v4/sidekiq/compound_metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"404 Not Found"}');
      return;
    }
    if (sent !== fake.token) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"401 Unauthorized"}');
      return;
    }
    const a = fake.answer;
    if ('metrics' in a) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a.metrics));
    else res.writeHead(a.status, { 'content-type': a.type ?? 'text/html' }).end(a.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}

export function monitor(s: TestServer): Monitor {
  const m = s.server.ctx.services.get<Monitor>('monitor');
  if (!m) throw new Error('no monitor running');
  return m;
}

/** Adds a remote connection through the API; returns its id. */
export async function addConnection(s: TestServer, body: Record<string, unknown>): Promise<string> {
  const r = await request(`${s.url}/api/app/connections`, { token: s.adminToken, json: { name: 'remote', ...body } });
  if (r.status !== 201) throw new Error(`add connection: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body as { id: string }).id;
}
